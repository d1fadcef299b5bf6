#!/usr/bin/env python3
"""Asks conda's classic solver for the answers of change cases (conda_change_cases.json).

    conda_oracle.py DEFINITIONS.json OUT.json     (with a conda checkout on PYTHONPATH)

Not run by CTest: it needs conda itself (26.7.1 was used, run from its source on Debian's
python3 and its python3-pycosat, -boltons, -ruamel.yaml, ... packages), which the project
never vendors. DEFINITIONS is a list of cases {name, about, index, steps: [{add, remove,
update_modifier, history}]} on the corpus indexes (index.json, index2.json, index5.json of
SHARED/corpus/repodata/conda, set by CONDA_TEST_DATA_DIR). Each case runs its steps in turn
through conda.testing.helpers' get_solver* (the channels of conda's own test_solve.py): the
first creates, each later one changes the state the step before left, with the history
conda would have written (the steps' specs, a later spec replacing one of the same name)
unless the step gives its own. A step with "cli": "install" is answered as `conda install`
on the command line answers it (conda/cli/install.py): first a frozen solve
(update_modifier FREEZE_INSTALLED, should_retry_solve), and only when that is unsatisfiable
the update_specs solve (the step then says "retried": "UPDATE_SPECS"); a step with "cli": "env_update" as `conda env update -f FILE` answers it
(conda/env/installers/conda.py: a frozen solve, then update_modifier NULL, which is
context.update_modifier, update_specs); without either a step is solve_final_state's default (update_specs,
the command line's `--update-specs`). OUT holds conda's final states in run_conda_solve.py's
schema; only these answers are committed.
"""
import json
import os
import sys
import tempfile

os.environ.setdefault("CONDA_TEST_DATA_DIR", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "corpus", "repodata", "conda"))
os.environ["CONDA_SOLVER"] = "classic"
os.environ["CONDA_OVERRIDE_CUDA"] = ""
os.environ["CONDA_ADD_PIP_AS_PYTHON_DEPENDENCY"] = "false"

from conda.base.context import reset_context  # noqa: E402

reset_context()
import py  # noqa: E402
from conda.base.constants import UpdateModifier  # noqa: E402
from conda.exceptions import SpecsConfigurationConflictError, UnsatisfiableError  # noqa: E402
from conda.models.match_spec import MatchSpec  # noqa: E402
from conda.testing import helpers  # noqa: E402

INDEXES = {"index.json": ("channel-1", "get_solver"), "index2.json": ("channel-2", "get_solver_2"),
           "index5.json": ("channel-5", "get_solver_5")}


def dist(r):
    return f"{r.channel.name}::{r.name}-{r.version}-{r.build}"


def run_case(c):
    channel, helper = INDEXES[c["index"]]
    state, hist, steps = (), [], []
    for i, st in enumerate(c["steps"]):
        add = [MatchSpec(s) for s in st.get("add", [])]
        rem = [MatchSpec(s) for s in st.get("remove", [])]
        kw = {}
        if "update_modifier" in st:
            kw["update_modifier"] = UpdateModifier[st["update_modifier"]]
        h = [MatchSpec(s) for s in st.get("history", hist)] if state else []
        # conda's History.get_requested_specs_map leaves out the names that are not
        # installed (conda/history.py: "If the package isn't installed in the current
        # environment, then we shouldn't try to force it here"); the helpers patch it to
        # return the history as given, so the filter is applied here (the history file
        # run_conda_solve.py writes still names them)
        inst = {x.name for x in state}
        hsolve = [x for x in h if x.name in inst]
        out = {"line": i + 1, "helper": helper, "channels": [[channel, c["index"]]],
               "noarch": c["index"] != "index.json", "add": st.get("add", []),
               "remove": st.get("remove", []), "installed": [dist(x) for x in state],
               "history": [str(x) for x in h], "call": "solve_final_state",
               "kwargs": {k: v.name for k, v in kw.items()}, "env": {}}
        if st.get("cli"):
            out["cli"] = st["cli"]
        tmp = py.path.local(tempfile.mkdtemp())
        try:
            with getattr(helpers, helper)(tmp, add, rem, prefix_records=state,
                                          history_specs=hsolve) as solver:
                if st.get("cli") == "env_update":
                    # conda/env/installers/conda.py install(): frozen, no retry flag
                    try:
                        final = solver.solve_final_state(
                            update_modifier=UpdateModifier.FREEZE_INSTALLED)
                    except (UnsatisfiableError, SystemExit):
                        out["retried"] = "UPDATE_SPECS"
                        final = solver.solve_final_state(
                            update_modifier=UpdateModifier.UPDATE_SPECS)
                elif st.get("cli") == "install":
                    try:
                        final = solver.solve_final_state(
                            update_modifier=UpdateModifier.FREEZE_INSTALLED,
                            should_retry_solve=True)
                    except (UnsatisfiableError, SpecsConfigurationConflictError):
                        out["retried"] = "UPDATE_SPECS"  # the frozen solve failed
                        final = solver.solve_final_state(
                            update_modifier=UpdateModifier.UPDATE_SPECS)
                else:
                    final = solver.solve_final_state(**kw)
            out["expect"] = {"final": sorted(dist(x) for x in final)}
        except Exception as e:  # conda's answer is the error
            out["expect"] = {"raises": type(e).__name__}
            final = None
        steps.append(out)
        if final is None:
            break
        state = tuple(final)
        names = {x.name: x for x in h}
        names.update((s.name, s) for s in add)
        for s in rem:
            names.pop(s.name, None)
        hist = [str(x) for x in names.values()]
    return {"name": c["name"], "line": 0, "marks": [], "libmamba_differs": None,
            "command": c.get("about", ""), "steps": steps}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    data = {"source": {"repository": "conda/conda", "path": "conda/core/solve.py (classic Solver)",
                       "commit": "26.7.1", "note": "conda's answers, made by conda_oracle.py"},
            "helpers": {}, "tests": [run_case(c) for c in cases]}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

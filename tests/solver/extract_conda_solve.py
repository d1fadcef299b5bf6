#!/usr/bin/env python3
"""Extracts conda's expected solver answers from conda's tests/core/test_solve.py.

    extract_conda_solve.py TEST_SOLVE_PY --commit SHA [-o conda_solve_cases.json]

Reads the test module with Python's `ast` (nothing of it is imported or run) and writes one
JSON data file: for every test function, its marks (skip, skipif, integration, and whether it
marks the libmamba solver as expected to differ) and its solver steps in source order. A step
is one `solve_final_state()` / `solve_for_diff()` call made inside a `with get_solver*(...)`
block: the helper (which names the channels and index files, as conda/testing/helpers.py
builds them), specs_to_add, specs_to_remove, the installed state (prefix_records), the
history specs (History.get_requested_specs_map), the call's keyword arguments, the
environment variables set around it (env_var / env_vars), and what the test asserts:

  {"final": [dist...]}              convert_to_dist_str(final_state) == (...)
  {"unlink": [...], "link": [...]}  solve_for_diff's two tuples (missing key: not asserted)
  {"raises": "UnsatisfiableError"}  pytest.raises(...) around the call
  {"contains": [...], "excludes": [...]}  `spec in` / `'x' not in` convert_to_dist_str(...)
  {"unlink_count": N, "link_count": N, "same_record": true}  len(...) == N; unlink[0] == link[0]

Dists are conda's dist strings as the test writes them ('channel-1::numpy-1.7.1-py33_0');
add_subdir_to_iter() adds "/<context.subdir>" to the channel, which a runner compares
without. An installed state is the expected result of the earlier step the test passes as
prefix_records (conda's own answer, as asserted), so every expected record comes from the
test source. A step the data cannot express (a record list the test edits, a mocked solver,
an installed state no assertion fixes) carries "unexpressible" with the reason.
"""
import argparse
import ast
import json
import sys

# conda/testing/helpers.py: the channels each get_solver* helper builds, in priority order,
# from which index file, and the subdirs it solves for (`context.subdir` alone for channel-1,
# plus noarch for the others); get_solver_cuda adds index.json's feature records.
HELPERS = {
    "get_solver": {"channels": [["channel-1", "index.json"]], "noarch": False},
    "get_solver_cuda": {"channels": [["channel-1", "index.json"]], "noarch": False},
    "get_solver_2": {"channels": [["channel-2", "index2.json"]], "noarch": True},
    "get_solver_4": {"channels": [["channel-4", "index4.json"]], "noarch": True},
    "get_solver_5": {"channels": [["channel-5", "index5.json"]], "noarch": True},
    "get_solver_aggregate_1": {
        "channels": [["channel-2", "index2.json"], ["channel-4", "index4.json"]],
        "noarch": True,
    },
    "get_solver_aggregate_2": {
        "channels": [["channel-4", "index4.json"], ["channel-2", "index2.json"]],
        "noarch": True,
    },
    "get_solver_must_unfreeze": {
        "channels": [["channel-freeze", "helpers.py:get_index_must_unfreeze"]],
        "noarch": False,
    },
}
SOLVER_ARGS = ("specs_to_add", "specs_to_remove", "prefix_records", "history_specs")


class Unknown:
    def __init__(self, why):
        self.why = why


class Result:
    """The not yet asserted result of a step: its final state, or one side of a diff."""

    def __init__(self, step, part):
        self.step, self.part = step, part


def is_libmamba_test(node):
    """`context.solver == "libmamba"` anywhere in the expression."""
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value == "libmamba" for c in n.comparators):
            return True
    return False


def call_name(node):
    f = node.func if isinstance(node, ast.Call) else node
    parts = []
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    return ".".join(reversed(parts))


class Test:
    def __init__(self, fn):
        self.fn = fn
        self.env = {}
        self.steps = []
        self.envvars = [{}]
        self.raises = [None]
        self.notes = []
        self.libmamba = None

    # -- values -------------------------------------------------------------------------
    def value(self, node):
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name == "MatchSpec" and node.args and isinstance(node.args[0], ast.Constant):
                return node.args[0].value
            if name in ("add_subdir_to_iter", "tuple", "list") and node.args:
                return self.value(node.args[0])
            return Unknown(f"the value of {ast.unparse(node)}")
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = [self.value(e) for e in node.elts]
            for v in vals:
                if isinstance(v, (Unknown, Result)):
                    return v if isinstance(v, Unknown) else Unknown("a list holding a result")
            out = []
            for v in vals:
                out.extend(v if isinstance(v, list) else [v])
            return out
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.env.get(node.id, Unknown(f"'{node.id}' is not known here"))
        return Unknown(f"the value of {ast.unparse(node)}")

    def kwarg(self, node):
        if isinstance(node, ast.Attribute):
            return node.attr  # UpdateModifier.UPDATE_DEPS -> "UPDATE_DEPS"
        if isinstance(node, ast.Constant):
            return node.value
        return ast.unparse(node)

    # -- statements ---------------------------------------------------------------------
    def run(self):
        self.block(self.fn.body, None)

    def block(self, stmts, solver):
        for st in stmts:
            self.stmt(st, solver)

    def stmt(self, st, solver):
        if isinstance(st, ast.With):
            self.with_(st, solver)
        elif isinstance(st, ast.Try):
            self.block(st.body, solver)
            self.block(st.finalbody, solver)
        elif isinstance(st, ast.Assign):
            self.assign(st, solver)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            self.call(st.value, solver, None)
        elif isinstance(st, ast.Assert):
            self.assert_(st.test)
        elif isinstance(st, ast.For):
            # for spec in order: assert spec in convert_to_dist_str(state)
            it = self.value(st.iter)
            for inner in st.body:
                if (isinstance(inner, ast.Assert) and isinstance(inner.test, ast.Compare)
                        and isinstance(inner.test.ops[0], ast.In)
                        and isinstance(it, list)):
                    self.expect(inner.test.comparators[0], "contains", it)
                elif isinstance(it, list) or isinstance(it, Unknown):
                    self.note(f"line {st.lineno}: a loop over the result asserts "
                              "something the data does not express")
        elif isinstance(st, ast.FunctionDef):
            self.note(f"line {st.lineno}: a nested function runs the solver "
                      f"('{st.name}'); its calls are not expressed")
        elif isinstance(st, ast.If):
            if is_libmamba_test(st.test):
                self.libmamba = f"line {st.lineno}: {ast.unparse(st.test)}"
            self.block(st.body, solver)

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
            for s in self.steps:
                s.setdefault("notes", [])

    def with_(self, st, solver):
        pushed_env = pushed_raise = 0
        new_solver = solver
        for item in st.items:
            c = item.context_expr
            name = call_name(c) if isinstance(c, ast.Call) else ""
            if name == "env_var" and len(c.args) >= 2:
                e = dict(self.envvars[-1])
                e[self.kwarg(c.args[0])] = self.kwarg(c.args[1])
                self.envvars.append(e)
                pushed_env += 1
            elif name == "env_vars" and c.args and isinstance(c.args[0], ast.Dict):
                e = dict(self.envvars[-1])
                for k, v in zip(c.args[0].keys, c.args[0].values):
                    e[self.kwarg(k)] = self.kwarg(v)
                self.envvars.append(e)
                pushed_env += 1
            elif name == "pytest.raises" and c.args:
                self.raises.append(call_name(c.args[0]))
                pushed_raise += 1
            elif name in HELPERS:
                new_solver = self.solver_ctx(name, c)
            else:
                self.note(f"line {st.lineno}: `with {ast.unparse(c)}` is not expressed")
        self.block(st.body, new_solver)
        for _ in range(pushed_env):
            self.envvars.pop()
        for _ in range(pushed_raise):
            self.raises.pop()

    def solver_ctx(self, helper, c):
        args = {}
        for i, a in enumerate(c.args[1:]):
            if i < len(SOLVER_ARGS):
                args[SOLVER_ARGS[i]] = a
        for kw in c.keywords:
            args[kw.arg] = kw.value
        ctx = {"helper": helper, "line": c.lineno, "why": []}
        for key in SOLVER_ARGS:
            v = self.value(args[key]) if key in args else []
            if isinstance(v, Result):
                v = Unknown(f"{key} is a result no assertion of the test fixes")
            if isinstance(v, Unknown):
                ctx["why"].append(f"{key}: {v.why}")
                v = None
            elif isinstance(v, str):
                v = [v]
            ctx[key] = v
        return ctx

    def new_step(self, solver, call):
        if solver is None:
            self.note(f"line {call.lineno}: a solver made outside the get_solver helpers")
            return None
        kwargs = {kw.arg: self.kwarg(kw.value) for kw in call.keywords}
        step = {
            "line": call.lineno,
            "helper": solver["helper"],
            "channels": HELPERS[solver["helper"]]["channels"],
            "noarch": HELPERS[solver["helper"]]["noarch"],
            "add": solver["specs_to_add"],
            "remove": solver["specs_to_remove"],
            "installed": solver["prefix_records"],
            "history": solver["history_specs"],
            "call": call.func.attr,
            "kwargs": kwargs,
            "env": dict(self.envvars[-1]),
            "expect": {},
        }
        if solver["why"]:
            step["unexpressible"] = "; ".join(solver["why"])
        if self.raises[-1]:
            step["expect"]["raises"] = self.raises[-1]
        self.steps.append(step)
        return step

    def call(self, call, solver, targets):
        name = call_name(call)
        if name in ("solver.solve_final_state", "solver.solve_for_diff"):
            step = self.new_step(solver, call)
            if step is None:
                return
            if targets is None:
                return
            if name.endswith("solve_for_diff"):
                if isinstance(targets, ast.Tuple) and len(targets.elts) == 2:
                    for t, part in zip(targets.elts, ("unlink", "link")):
                        self.env[t.id] = Result(step, part)
            elif isinstance(targets, ast.Name):
                self.env[targets.id] = Result(step, "final")
        elif name.startswith("solver.") or name.startswith("ssc."):
            if solver is not None and self.steps:
                self.steps[-1]["unexpressible"] = (
                    f"line {call.lineno}: the test changes the solver's state "
                    f"({ast.unparse(call.func)})")
        elif name == "request.applymarker" and is_libmamba_test(call):
            self.libmamba = f"line {call.lineno}: {ast.unparse(call)}"

    def assign(self, st, solver):
        t = st.targets[0]
        if isinstance(st.value, ast.Call) and call_name(st.value).startswith("solver."):
            self.call(st.value, solver, t)
            return
        if isinstance(t, ast.Name):
            v = self.value(st.value)
            if isinstance(v, Unknown) and isinstance(st.value, ast.Call):
                v = Unknown(f"'{t.id}' is made by {ast.unparse(st.value.func)}()")
            self.env[t.id] = v
        elif isinstance(t, ast.Attribute) and ast.unparse(t) == "sys.prefix":
            # sys.prefix = tmpdir.strpath: the environment is conda's own (base) one
            if ast.unparse(st.value) == "tmpdir.strpath":
                self.envvars[-1]["sys.prefix"] = "the environment"
            else:
                self.envvars[-1].pop("sys.prefix", None)
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            self.env[t.value.id] = Unknown(f"the test edits '{t.value.id}' by hand")

    def result_of(self, node):
        """The Result a `convert_to_dist_str(x)` or `x` expression names, or None."""
        if isinstance(node, ast.Call) and call_name(node) == "convert_to_dist_str":
            node = node.args[0]
        if isinstance(node, ast.Name):
            v = self.env.get(node.id)
            if isinstance(v, Result):
                return node.id, v
        return None, None

    def expect(self, node, kind, value):
        var, res = self.result_of(node)
        if res is None:
            return
        exp = res.step["expect"]
        if kind == "equals":
            if isinstance(value, Unknown):
                res.step["unexpressible"] = f"the expected value: {value.why}"
                return
            exp["final" if res.part == "final" else res.part] = value
            if res.part == "final":
                self.env[var] = value
            elif res.part == "link" and res.step["installed"] == []:
                self.env[var] = value  # from an empty prefix the links are the state
        elif kind == "contains":
            exp.setdefault("contains", []).extend(value)
        elif kind == "excludes":
            exp.setdefault("excludes", []).append(value)

    def assert_(self, test):
        # assert unlink[0] == link[0]: the same record leaves and comes back
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and
                isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Subscript) and
                isinstance(test.comparators[0], ast.Subscript)):
            a = self.result_of(test.left.value)[1]
            b = self.result_of(test.comparators[0].value)[1]
            if a is not None and b is not None and a.step is b.step:
                a.step["expect"]["same_record"] = True
                return
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, right = test.ops[0], test.comparators[0]
            if isinstance(op, ast.Eq):
                self.expect(test.left, "equals", self.value(right))
                return
            if isinstance(op, ast.NotIn) and isinstance(test.left, ast.Constant):
                self.expect(right, "excludes", test.left.value)
                return
        # assert len(unlink) == len(link) == N
        if (isinstance(test, ast.Compare) and all(isinstance(o, ast.Eq) for o in test.ops)
                and isinstance(test.comparators[-1], ast.Constant)):
            n = test.comparators[-1].value
            sides = [test.left] + test.comparators[:-1]
            res = [self.result_of(x.args[0]) if isinstance(x, ast.Call) and
                   call_name(x) == "len" and x.args else (None, None) for x in sides]
            if all(r[1] is not None for r in res) and isinstance(n, int):
                for _, r in res:
                    r.step["expect"][r.part + "_count"] = n
                return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            var, res = self.result_of(test.operand)
            if res is not None:
                self.expect(test.operand, "equals", [])
                return
        # an assertion on a result the data does not express (len(), consistency, ...)
        for n in ast.walk(test):
            if isinstance(n, ast.Name) and isinstance(self.env.get(n.id), Result):
                st = self.env[n.id].step
                st.setdefault("also_asserts", []).append(ast.unparse(test))
                return


def marks_of(fn):
    marks, libmamba = [], None
    for d in fn.decorator_list:
        name = call_name(d)
        if not name.startswith("pytest.mark."):
            continue
        mark = {"mark": name[len("pytest.mark."):]}
        if isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "reason" and isinstance(kw.value, ast.Constant):
                    mark["reason"] = kw.value.value
            if d.args:
                mark["condition"] = ast.unparse(d.args[0])
            if is_libmamba_test(d):
                libmamba = f"line {d.lineno}: {ast.unparse(d)}"
        marks.append(mark)
    return marks, libmamba


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("test_solve")
    ap.add_argument("--commit", required=True, help="conda/conda commit the file is from")
    ap.add_argument("--note", default="", help="a note on the copy that was read")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    with open(a.test_solve, encoding="utf-8") as f:
        tree = ast.parse(f.read(), a.test_solve)
    tests = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
            continue
        t = Test(fn)
        t.run()
        marks, lm = marks_of(fn)
        entry = {"name": fn.name, "line": fn.lineno, "marks": marks,
                 "libmamba_differs": lm or t.libmamba, "steps": t.steps}
        if t.notes:
            entry["notes"] = t.notes
        for s in t.steps:
            s.pop("notes", None)
        tests.append(entry)
    out = {
        "source": {
            "repository": "conda/conda",
            "path": "tests/core/test_solve.py",
            "commit": a.commit,
            "note": a.note,
            "extracted_by": "tests/solver/extract_conda_solve.py (Python ast; nothing run)",
            "helpers": "conda/testing/helpers.py: channel names, index files, subdirs",
        },
        "helpers": HELPERS,
        "tests": tests,
    }
    text = json.dumps(out, indent=1) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    n = sum(len(t["steps"]) for t in tests)
    print(f"{len(tests)} tests, {n} solver steps", file=sys.stderr)


if __name__ == "__main__":
    main()

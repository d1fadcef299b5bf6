#!/usr/bin/env python3
"""Asks conda for the link and unlink orders `unit.test_linkorder` checks menv's against.

    linkorder_oracle.py OUT.json [REALSETS.json]     (with a conda checkout on PYTHONPATH)
    linkorder_oracle.py steps OUT.json STEP=CONDA_META_DIR ...

Not run by CTest: it needs conda itself (26.7.1 was used, run from its source on Debian's
python3 and its python3-boltons, -ruamel.yaml, ... packages), which the project never
vendors; only its answers (linkorder_cases.json) are committed.

Each case is a set of package records (name, version, build, channel with its subdir,
depends). "create" cases: conda's order of the set, `PrefixGraph(records).graph`
(conda/models/prefix_graph.py, allow_cycles as by default), which is the link order of a new
environment. "change" cases: an installed set and a final one, answered by conda's own
`conda.core.solve.diff_for_unlink_link_precs` (the installed records given as the prefix's,
the final ones toposorted as `Solver.solve_final_state` returns them): its unlink and link
tuples, in order. The sets are random (seeded: the same file every run), with python/pip
and menuinst among the names, dependency cycles, self dependencies, duplicate and
versioned dependencies, names outside the set and records of two channels and subdirs
(the tie of a cycle's break is the dist_str); REALSETS (optional) adds whole environments
({"name": [records]}, e.g. the toolchain and torch environments' conda-meta records).

`steps`: the unlink and link order of each step of a run, from the conda-meta/ folder after
each step (copies; the first step starts from an empty prefix), as
diff_for_unlink_link_precs orders them: {STEP: {"unlink": [dist...], "link": [dist...]}}
(toolchain.conda_diff's conda_answers/link_order.json).
"""
import json
import random
import sys
from unittest import mock

from conda.base.context import context, reset_context
from conda.core import solve
from conda.models.prefix_graph import PrefixGraph
from conda.models.records import PackageRecord, PrefixRecord

NAMES = ["python", "pip", "setuptools", "wheel", "menuinst", "numpy", "libgcc-ng", "zlib",
         "openssl", "ca-certificates", "a", "b", "c", "d", "e", "f", "g", "h", "x-y", "x_y",
         "x", "xz", "zstd", "_libgcc_mutex", "python_abi", "tzdata", "ncurses", "readline"]
CHANNELS = [("file:///c/a", "linux-64"), ("file:///c/a", "noarch"), ("file:///c/b", "linux-64")]


def record(d, prefix=False):
    cls = PrefixRecord if prefix else PackageRecord
    return cls(name=d["name"], version=d["version"], build=d["build"], build_number=0,
               channel=d["channel"], subdir=d["subdir"], depends=d["depends"],
               fn="%s-%s-%s.conda" % (d["name"], d["version"], d["build"]))


def dist(r):
    return "%s-%s-%s" % (r.name, r.version, r.build)


def random_set(rng, names, ncycle):
    recs = []
    for name in names:
        ch, sub = rng.choice(CHANNELS)
        recs.append({"name": name, "version": "%d.%d" % (rng.randint(0, 3), rng.randint(0, 9)),
                     "build": rng.choice(["0", "h1_0", "py_0"]), "channel": ch + "/" + sub,
                     "subdir": sub, "depends": []})
    for i, r in enumerate(recs):
        for _ in range(rng.randint(0, 4)):
            # mostly down the list (a DAG), sometimes up (a cycle), sometimes itself or outside
            k = rng.random()
            if k < ncycle:
                dep = rng.choice(names)
            elif k < ncycle + 0.05:
                dep = "__glibc >=2.17"
            elif i + 1 < len(names):
                dep = rng.choice(names[i + 1:])
            else:
                continue
            if rng.random() < 0.3 and not dep.startswith("__"):
                dep += rng.choice([" >=0", " *", " >=0,<9"])
            r["depends"].append(dep)
            if rng.random() < 0.05:
                r["depends"].append(dep)
    if "python" in names and "pip" in names:
        py = next(r for r in recs if r["name"] == "python")
        pip = next(r for r in recs if r["name"] == "pip")
        py["depends"].append("pip")
        pip["depends"].append("python")
    return recs


def create_order(recs):
    return [dist(r) for r in PrefixGraph([record(d) for d in recs]).graph]


def change_order(inst, final):
    installed = [record(d, True) for d in inst]
    fin = tuple(PrefixGraph([record(d) for d in final]).graph)

    class Data:
        def __init__(self, *a, **k):
            pass

        def iter_records(self):
            return iter(installed)
    with mock.patch.object(solve, "PrefixData", Data):
        unlink, link = solve.diff_for_unlink_link_precs("/nowhere", fin)
    return [dist(r) for r in unlink], [dist(r) for r in link]


def meta_records(d):
    import glob
    import os
    out = []
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(f) as g:
            r = json.load(g)
        out.append({k: r.get(k) for k in ("name", "version", "build", "channel", "subdir",
                                          "depends")})
    return out


def steps(out, args):
    res, before = {}, []
    for a in args:
        step, d = a.split("=", 1)
        after = meta_records(d)
        unlink, link = change_order(before, after)
        res[step] = {"unlink": unlink, "link": link}
        before = after
    with open(out, "w") as f:
        json.dump({"conda": "26.7.1", "steps": res}, f, indent=1)
        f.write("\n")


def main():
    reset_context([])
    if sys.argv[1] == "steps":
        return steps(sys.argv[2], sys.argv[3:])
    assert context.allow_cycles
    rng = random.Random(20261203)
    cases = []
    for n in range(120):
        names = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        if "menuinst" in names and "python" not in names:
            names.remove("menuinst")  # conda raises: "Found menuinst without Python"
        if not names:
            continue
        recs = random_set(rng, names, rng.choice([0.0, 0.05, 0.2, 0.5]))
        rng.shuffle(recs)
        cases.append({"name": "random-%d" % n, "records": recs, "order": create_order(recs)})
    for n in range(50):
        names = rng.sample(NAMES, rng.randint(2, len(NAMES)))
        if "menuinst" in names and "python" not in names:
            names.remove("menuinst")
        inst = random_set(rng, names, rng.choice([0.0, 0.05, 0.2]))
        # the final set: some removed, some replaced by another version, some new
        final = []
        for r in inst:
            k = rng.random()
            if k < 0.2:
                continue
            if k < 0.4:
                r = dict(r, version=r["version"] + ".1", depends=list(r["depends"]))
            final.append(r)
        if not any(r["name"] == "python" for r in final):
            final = [r for r in final if r["name"] != "menuinst"]
        extra = [x for x in NAMES if x not in names and x != "menuinst"]
        for name in rng.sample(extra, min(len(extra), rng.randint(0, 4))):
            ch, sub = rng.choice(CHANNELS)
            final.append({"name": name, "version": "1.0", "build": "0", "channel": ch + "/" + sub,
                          "subdir": sub,
                          "depends": rng.sample([r["name"] for r in final] or ["zz"], 1)})
        rng.shuffle(inst)
        rng.shuffle(final)
        unlink, link = change_order(inst, final)
        cases.append({"name": "change-%d" % n, "installed": inst, "final": final,
                      "unlink": unlink, "link": link})
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            for name, recs in json.load(f).items():
                recs = [{k: r.get(k) for k in ("name", "version", "build", "channel", "subdir",
                                               "depends")} for r in recs]
                cases.append({"name": name, "records": recs, "order": create_order(recs)})
    with open(sys.argv[1], "w") as f:
        json.dump({"conda": "26.7.1", "cases": cases}, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

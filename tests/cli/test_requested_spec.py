#!/usr/bin/env python3
"""cli.requested_spec: conda-meta's requested_spec is the spec of this command only (issue 24).
conda 26.7.1 writes a record's requested_spec/requested_specs from the transaction's own
specs (link.py's match_specs_to_dists): a package the command relinks as a dependency gets
`_requested_specs: []`, even when the user asked for it by name before. The case: `create a b`
(a needs b; b-1.0), then b-2.0 and c (needs b >=2) join the channel and `install c` replaces
b-1.0 by b-2.0. Every conda-meta/*.json is compared byte for byte with conda's
(requested_spec_conda.json: conda's files, the package cache written PKGS, the channel CHAN):
b-2.0's record has no requested_spec (menv used to carry b-1.0's "b" over), c's is "c" and
a's, untouched, keeps "a"."""
import json
import os

import menvtest
from menvtest import build_tar_bz2

HERE = os.path.dirname(os.path.abspath(__file__))


def packages(chan, pk):
    # info/index.json alone, as the packages conda's answers (their md5, sha256 and size)
    # were recorded with
    for name, ver, deps in pk:
        build_tar_bz2(os.path.join(chan, "linux-64", "%s-%s-0.tar.bz2" % (name, ver)),
                      {"name": name, "version": ver, "build": "0", "build_number": 0,
                       "depends": deps, "subdir": "linux-64"}, file_list=False)


def body(t):
    with open(os.path.join(HERE, "requested_spec_conda.json"), encoding="utf-8") as f:
        want = json.load(f)["records"]
    chan = os.path.join(t.tmp, "chan")
    env = os.path.join(t.tmp, "env")
    t.set_rc("add_pip_as_python_dependency: false\n")
    packages(chan, [("a", "1.0", ["b"]), ("b", "1.0", [])])
    t.index(chan)
    t.menv_ok("create", "-y", "-p", env, "--override-channels", "-c", chan, "a", "b")
    packages(chan, [("b", "2.0", []), ("c", "1.0", ["b >=2"])])
    t.index(chan)
    t.menv_ok("install", "-y", "-p", env, "--override-channels", "-c", chan, "c")
    meta = os.path.join(env, "conda-meta")
    got = sorted(f for f in os.listdir(meta) if f.endswith(".json"))
    t.eq(got, sorted(want), "conda-meta's records after install c")
    for fn in sorted(want):
        path = os.path.join(meta, fn)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read().replace(t.pkgs, "PKGS").replace("file://" + chan, "CHAN")
        t.eq(text, want[fn], "conda-meta/%s as conda writes it" % fn)
    with open(os.path.join(meta, "b-2.0-0.json"), encoding="utf-8") as f:
        rec = json.load(f)
    t.eq((rec.get("requested_spec"), rec.get("requested_specs"), rec.get("_requested_specs")),
         (None, None, []), "b-2.0, replaced as c's dependency: no requested_spec")


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""solver.underscore_order: conda's VersionOrder puts an openssl-like trailing underscore below
a pre-release of the same version (1.1dev1 < 1.1_ < 1.1a1 < 1.1, conda/models/version.py),
where libsolv's conda comparison reads "1.1_" as "1.1" (above 1.1a1). On a channel of ossl
1.1dev1, 1.1_ and 1.1a1, each answer below is conda 26.7.1's (`conda create --dry-run --json`
and `conda search --json`, classic solver, recorded once):
- `ossl`: the newest is 1.1a1;
- `lower` (depends `ossl <1.1a1`): 1.1_ (libsolv alone: 1.1dev1);
- `atleast` (depends `ossl >=1.1_`): 1.1a1 (libsolv alone: 1.1_);
- `below` (depends `ossl <1.1_`): 1.1dev1 (libsolv alone: 1.1a1);
- `ossl >=1.1_,<1.1a1` requested: 1.1_;
- `ossl=1.1_ below` is unsatisfiable, and the problem names `ossl <1.1_` as written;
- `menv search ossl` lists 1.1a1, 1.1_, 1.1dev1 (newest first: conda's order reversed).
Usage: test_underscore_order.py MENV
"""
import json
import os
import subprocess
import sys
import tempfile

# conda 26.7.1's answers: spec -> the (name, version) it links
CONDA = {
    "ossl": [("ossl", "1.1a1")],
    "lower": [("lower", "1.0"), ("ossl", "1.1_")],
    "atleast": [("atleast", "1.0"), ("ossl", "1.1a1")],
    "below": [("below", "1.0"), ("ossl", "1.1dev1")],
    "ossl >=1.1_,<1.1a1": [("ossl", "1.1_")],
}
CONDA_SEARCH = ["1.1dev1", "1.1_", "1.1a1"]  # conda search's order, oldest first


def main():
    menv = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="menv-underscore-")
    chan = os.path.join(tmp, "chan")
    pkgs = {}
    for name, ver, deps in (("ossl", "1.1_", []), ("ossl", "1.1a1", []), ("ossl", "1.1dev1", []),
                            ("lower", "1.0", ["ossl <1.1a1"]), ("atleast", "1.0", ["ossl >=1.1_"]),
                            ("below", "1.0", ["ossl <1.1_"])):
        pkgs[f"{name}-{ver}-0.tar.bz2"] = {"name": name, "version": ver, "build": "0",
                                           "build_number": 0, "depends": deps,
                                           "subdir": "linux-64"}
    for sd, p in (("linux-64", pkgs), ("noarch", {})):
        os.makedirs(os.path.join(chan, sd))
        with open(os.path.join(chan, sd, "repodata.json"), "w", encoding="utf-8") as f:
            json.dump({"info": {"subdir": sd}, "packages": p}, f)
    rc = os.path.join(tmp, "condarc")
    with open(rc, "w", encoding="utf-8") as f:
        f.write("add_pip_as_python_dependency: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "MENV"))}
    env.update(HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"),
               CONDA_OVERRIDE_CUDA="")
    fails = []
    for spec, want in CONDA.items():
        p = subprocess.run([menv, "create", "--dry-run", "--json", "-p", os.path.join(tmp, "env"),
                            "--override-channels", "-c", chan, spec],
                           env=env, capture_output=True, text=True)
        got = None
        if p.returncode == 0:
            got = sorted((r["name"], r["version"]) for r in json.loads(p.stdout)["actions"]["LINK"])
        ok = got == want
        print(("ok   " if ok else "FAIL ") + f"create {spec}: {got}" +
              ("" if ok else f" (conda: {want}) {p.stderr.strip()[:300]}"))
        if not ok:
            fails.append(spec)
    # `ossl=1.1_ below` cannot be solved (conda too); the problem names conda's version text
    p = subprocess.run([menv, "create", "--dry-run", "-p", os.path.join(tmp, "env"),
                        "--override-channels", "-c", chan, "ossl=1.1_", "below"],
                       env=env, capture_output=True, text=True)
    ok = p.returncode != 0 and "ossl <1.1_" in p.stderr and "^" not in p.stderr
    print(("ok   " if ok else "FAIL ") + "ossl=1.1_ below: unsatisfiable, naming `ossl <1.1_`" +
          ("" if ok else f"\n     exit {p.returncode}: {p.stderr.strip()[-400:]}"))
    if not ok:
        fails.append("problem text")
    p = subprocess.run([menv, "search", "--json", "--override-channels", "-c", chan, "ossl"],
                       env=env, capture_output=True, text=True)
    got = None
    if p.returncode == 0:
        out = json.loads(p.stdout)
        recs = out.get("ossl", out) if isinstance(out, dict) else out
        got = [r["version"] for r in recs]
    want = list(reversed(CONDA_SEARCH))
    ok = got == want
    print(("ok   " if ok else "FAIL ") + f"search ossl: {got}" + ("" if ok else f" (want {want})"))
    if not ok:
        fails.append("search")
    print(f"\n{len(fails)} failed" if fails else "\nall passed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

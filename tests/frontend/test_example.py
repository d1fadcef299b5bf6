#!/usr/bin/env python3
"""toolchain.example_frontend: a second front end (tests/frontend/example.c) creates the
toolchain environment from ops/environment.yml and installs one more package from a second
channel (conda's test recipe `dependency` 2.0) through libmenv alone. Asserts the records
it made (python 3.9.2, cudatoolkit 11.8.89, gxx_linux-64 11.3.0, dependency 2.0), nvcc and
the env's g++ in place, the two history revisions, and that the menv CLI reads the same
environment back (menv list --json); and that the CLI's plan of that environment fits 80
and 120 columns."""
import json
import shutil
import os
import subprocess
import sys
import tempfile

example, menv, channel, envfile, shared = sys.argv[1:6]
failed, passed = [], []


def check(ok, what, detail=""):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    (passed if ok else failed).append(what)
    if not ok:
        if detail:
            print("      " + str(detail).replace("\n", "\n      "))


with tempfile.TemporaryDirectory(prefix="menv-example-") as tmp:
    env = dict(os.environ, HOME=tmp, MENV_ROOT_PREFIX=os.path.join(tmp, "root"),
               MENV_SMOKE_CHECK="false")
    prefix = os.path.join(tmp, "root", "envs", "ops")
    # the file names its channel ./menv-toolchain, as the README's main job lays it out
    os.symlink(os.path.abspath(channel), os.path.join(tmp, "menv-toolchain"))
    # the package installed afterwards comes from a second channel: conda's own test recipe
    extra = os.path.join(tmp, "extra", "noarch")
    os.makedirs(extra)
    shutil.copy(os.path.join(shared, "corpus", "packages", "conda", "test-recipes", "noarch",
                             "dependency-2.0-0.conda"), extra)
    subprocess.run([menv, "index", os.path.dirname(extra)], check=True, capture_output=True)
    r = subprocess.run([example, "file://" + os.path.dirname(extra), envfile, prefix,
                        "dependency"], env=env, cwd=tmp, capture_output=True, text=True,
                       timeout=600)
    check(r.returncode == 0, "the example front end exits 0", r.stdout + r.stderr)
    lines = r.stdout.splitlines()
    check(any(l.startswith("example: create: plan of ") for l in lines) and
          any(l.startswith("example: install: plan of 1 to link, 0 to unlink") for l in lines),
          "it drew its own plan lines (create, then 1 package to link)", r.stdout)
    recs = {}
    meta = os.path.join(prefix, "conda-meta")
    for fn in sorted(os.listdir(meta)) if os.path.isdir(meta) else []:
        if fn.endswith(".json"):
            j = json.load(open(os.path.join(meta, fn)))
            recs[j["name"]] = j["version"]
    for name, ver in (("python", "3.9.2"), ("cudatoolkit", "11.8.89"),
                      ("gxx_linux-64", "11.3.0"), ("dependency", "2.0")):
        check(recs.get(name) == ver, "conda-meta holds %s %s" % (name, ver), recs.get(name))
    check(os.access(os.path.join(prefix, "bin", "nvcc"), os.X_OK) and
          os.access(os.path.join(prefix, "bin", "g++"), os.X_OK),
          "bin/nvcc and bin/g++ are in the environment")
    hist = open(os.path.join(meta, "history")).read() if os.path.isdir(meta) else ""
    check(hist.count("==> ") == 2 and "# cmd: menv-example install" in hist and
          "# update specs: ['dependency']" in hist,
          "conda-meta/history has the two revisions the library wrote", hist[-400:])
    # the CLI's plan of the same environment from its file:// channel fits 80 and 120
    # columns without a wrapped line (issue "At the terminal")
    for cols in (80, 120):
        r = subprocess.run([menv, "create", "-n", "plan", "--dry-run", "-f", envfile],
                           env=dict(env, COLUMNS=str(cols)), cwd=tmp, capture_output=True,
                           text=True, timeout=300)
        wide = [l for l in r.stdout.split("\n") if len(l) > cols]
        check(r.returncode == 0 and "Install (39 packages)" in r.stdout and not wide,
              "the toolchain plan fits %d columns" % cols, "\n".join(wide) or r.stderr)
    r = subprocess.run([menv, "list", "-p", prefix, "--json"], env=env, capture_output=True,
                       text=True, timeout=60)
    listed = {p["name"]: p["version"] for p in json.loads(r.stdout or "[]")
              if p.get("channel") != "pypi"}
    check(r.returncode == 0 and listed == recs, "menv list reads the same records back",
          r.stderr)

print("%d passed, %d failed" % (len(passed), len(failed)))
sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""The real pytorch channel snapshot (shared/corpus/repodata/rattler/channels/pytorch, up to
Oct 2023) picks the CUDA or the CPU build of pytorch like conda:

  pytorch pytorch-cuda=11.8, __cuda=11.8      -> a cuda11.8 build with pytorch-mutex cuda
  pytorch cpuonly                              -> a cpu build with pytorch-mutex cpu
  pytorch pytorch-cuda=11.8, no CUDA driver    -> unsatisfiable, and the error names __cuda

The snapshot holds only the pytorch channel's linux-64 subdir; the names it depends on that
live elsewhere (python and its libraries, nvidia's cuda-* packages, the noarch pytorch-mutex
and cpuonly) come from a stub channel made here. Its stubs carry no dependencies except:
nvidia's CUDA runtime stubs depend on `__cuda` (they need a driver), pytorch-mutex's cpu
build carries the track feature `pytorch-mutex` and cpuonly depends on `pytorch-mutex 1.0 cpu`,
as in the pytorch channel.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

menv, shared = sys.argv[1], sys.argv[2]
snap = os.path.join(shared, "corpus/repodata/rattler/channels/pytorch/linux-64/repodata.json")
failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    print(("ok   " if ok else "FAIL ") + what)
    checks += 1
    failures += 0 if ok else 1


with open(snap) as f:
    data = json.load(f)
recs = list(data.get("packages", {}).values()) + list(data.get("packages.conda", {}).values())
have = {r["name"] for r in recs}
constraints = {}
for r in recs:
    for d in r.get("depends") or []:
        parts = d.split(" ", 1)
        constraints.setdefault(parts[0], []).append(parts[1] if len(parts) > 1 else "")
special = {"pytorch-mutex", "cpuonly"}
stubs = []
for name, cons in sorted(constraints.items()):
    if name in have or name in special or name.startswith("__"):
        continue
    versions, builds = {"0.1", "9999"}, {"stub_0"}
    for c in cons:
        parts = c.split(" ")
        for v in re.findall(r"\d+(?:\.\d+)*", parts[0]):
            versions.update({v, v + ".1", v + ".99"})
        if len(parts) > 1:  # a build string asked for, e.g. "blas * mkl"
            builds.add(parts[1].replace("*", ""))
    cuda = re.match(r"(cuda-|libcu|libnpp|libnvjpeg|libnvjitlink)", name)
    for v in sorted(versions):
        for b in sorted(builds):
            stubs.append({"name": name, "version": v, "build": b, "build_number": 0,
                          "depends": ["__cuda"] if cuda else [], "subdir": "noarch"})
stubs += [
    {"name": "pytorch-mutex", "version": "1.0", "build": "cuda", "build_number": 100,
     "depends": [], "subdir": "noarch"},
    {"name": "pytorch-mutex", "version": "1.0", "build": "cpu", "build_number": 100,
     "depends": [], "track_features": "pytorch-mutex", "subdir": "noarch"},
    {"name": "cpuonly", "version": "2.0", "build": "0", "build_number": 0,
     "depends": ["pytorch-mutex 1.0 cpu"], "subdir": "noarch"},
]

with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(f"{tmp}/pytorch/linux-64")
    os.makedirs(f"{tmp}/pytorch/noarch")
    os.makedirs(f"{tmp}/deps/noarch")
    os.makedirs(f"{tmp}/deps/linux-64")
    os.symlink(snap, f"{tmp}/pytorch/linux-64/repodata.json")
    json.dump({"packages": {}}, open(f"{tmp}/pytorch/noarch/repodata.json", "w"))
    json.dump({"packages": {}}, open(f"{tmp}/deps/linux-64/repodata.json", "w"))
    json.dump({"info": {"subdir": "noarch"},
               "packages": {f"{s['name']}-{s['version']}-{s['build']}.tar.bz2": s for s in stubs}},
              open(f"{tmp}/deps/noarch/repodata.json", "w"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "MENV"))}
    env.update(HOME=tmp, MENV_ROOT_PREFIX=f"{tmp}/root", CONDA_OVERRIDE_GLIBC="2.36",
               CONDA_OVERRIDE_LINUX="6.1")

    def solve(specs, cuda):
        e = dict(env, CONDA_OVERRIDE_CUDA=cuda)
        cmd = [menv, "create", "--dry-run", "--json", "-q", "-p", f"{tmp}/env",
               "--override-channels", "-c", f"{tmp}/pytorch", "-c", f"{tmp}/deps"] + specs
        p = subprocess.run(cmd, env=e, capture_output=True, text=True)
        picked = {}
        if p.returncode == 0:
            picked = {r["name"]: r for r in json.loads(p.stdout)["actions"]["LINK"]}
        return p, picked

    p, got = solve(["pytorch", "pytorch-cuda=11.8"], "11.8")
    build = got.get("pytorch", {}).get("build_string", "")
    check(p.returncode == 0 and "cuda11.8" in build,
          f"pytorch pytorch-cuda=11.8 with __cuda=11.8 picks a CUDA 11.8 build ({build or p.stderr.strip()})")
    check(got.get("pytorch-mutex", {}).get("build_string") == "cuda", "  with pytorch-mutex cuda")
    check(got.get("pytorch", {}).get("channel") == f"file://{tmp}/pytorch",
          "  from the pytorch channel")
    newest = max((r for r in recs if r["name"] == "pytorch" and "cuda11.8" in r["build"]),
                 key=lambda r: [int(x) for x in r["version"].split(".")])
    check(got.get("pytorch", {}).get("version") == newest["version"],
          f"  the newest pytorch with a cuda11.8 build ({newest['version']})")

    p, got = solve(["pytorch", "cpuonly"], "11.8")
    build = got.get("pytorch", {}).get("build_string", "")
    check(p.returncode == 0 and "cpu" in build and "cuda" not in build,
          f"pytorch cpuonly picks a CPU build ({build or p.stderr.strip()})")
    check(got.get("pytorch-mutex", {}).get("build_string") == "cpu", "  with pytorch-mutex cpu")

    p, got = solve(["pytorch", "pytorch-cuda=11.8"], "")
    err = p.stderr.strip().splitlines()
    check(p.returncode != 0 and len(err) == 1 and "__cuda" in err[0],
          f"without a CUDA driver the one-line error names __cuda ({err[0] if err else ''})")

print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)

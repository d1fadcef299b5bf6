#!/usr/bin/env python3
"""cli.clean_users: `menv clean --packages` keeps every package some environment uses, for
each kind of environment that can use the cache, and removes the one nobody uses:
- base (the root prefix itself, which is in no registry),
- a -p environment outside every envs directory, known only from ~/.conda/environments.txt,
- an environment in the envs_dirs of .condarc, not in the registry (found by listing the
  directory).
Each package is used by exactly one of them. Afterwards each environment's program still
runs and prints what the package file says it prints; the unused package is gone."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "install"))
import menvtest  # noqa: E402
from insttest import pkg  # noqa: E402

KINDS = ("base", "pdir", "envsdir", "unused")


def body(t):
    src = os.path.join(t.tmp, "src")
    files = []
    for k in KINDS:
        files.append(pkg(src, "only-" + k, "1.0", files={
            "bin/only-" + k: {"data": "#!/bin/sh\necho only-%s works \"$@\"\n" % k,
                              "mode": 0o755}}))
    chan = t.make_channel("chan", {"linux-64": files, "noarch": []})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    envsdir = os.path.join(t.tmp, "more-envs")
    # the root prefix from .condarc (MENV_ROOT_PREFIX would set envs_dirs to <root>/envs)
    t.set_rc("root_prefix: %s\nenvs_dirs:\n  - %s\n" % (t.root, envsdir))
    E = {"MENV_ROOT_PREFIX": ""}

    # base: the root prefix
    os.makedirs(os.path.join(t.root, "conda-meta"), exist_ok=True)
    t.menv_ok("install", "-n", "base", *C, "only-base", env=E)
    # a -p environment outside every envs directory
    pdir = os.path.join(t.tmp, "elsewhere", "penv")
    t.menv_ok("create", "-p", pdir, *C, "only-pdir", env=E)
    # an environment of envs_dirs
    t.menv_ok("create", "-n", "inenvsdir", *C, "only-envsdir", env=E)
    named = os.path.join(envsdir, "inenvsdir")
    t.check(os.path.isdir(os.path.join(named, "conda-meta")),
            "create -n puts the environment in envs_dirs", os.listdir(t.tmp))
    # a package nobody uses any more
    gone = os.path.join(t.tmp, "gone")
    t.menv_ok("create", "-p", gone, *C, "only-unused", env=E)
    t.menv_ok("remove", "-p", gone, "--all", "-y", "-q", env=E)

    # the registry names only the -p environment: base and the envs_dirs one must be found
    # without it
    reg = os.path.join(t.home, ".conda", "environments.txt")
    menvtest.write_text(reg, pdir + "\n")

    dists = {k: "only-%s-1.0-0" % k for k in KINDS}
    for k in KINDS:
        t.check(os.path.isdir(os.path.join(t.pkgs, dists[k])), "%s's package is extracted" % k)
    r = t.menv_ok("clean", "--packages", "--json", env=E)
    removed = sorted(os.path.basename(x["path"]) for x in r.json()["removed"])
    t.eq(removed, [dists["unused"]], "clean --packages removes only the unused package")
    for k, prefix in (("base", t.root), ("pdir", pdir), ("envsdir", named)):
        t.check(os.path.isdir(os.path.join(t.pkgs, dists[k])),
                "clean --packages keeps the package used only by %s" % k, removed)
        r = t.menv_run("run", "-p", prefix, "only-" + k, "x", env=E)
        t.eq((r.rc, r.out), (0, "only-%s works x\n" % k), "the %s environment still runs its "
             "program" % k)
    t.check(not os.path.exists(os.path.join(t.pkgs, dists["unused"])),
            "the unused package is gone from the cache")


menvtest.main(body)

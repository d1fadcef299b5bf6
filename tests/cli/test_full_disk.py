#!/usr/bin/env python3
"""cli.full_disk (BR-032 a, b; the install-engine issue's full-disk test): the root prefix
(package cache and environments) on a 4 MiB tmpfs.

(a) installing a package that extracts to 3 MB of incompressible data into an existing
    environment runs out of space: a clear one-line error naming the space, a non-zero exit,
    the environment exactly as before, no extracted or half-extracted package left in the
    cache (the verified package file may stay);
(b) with the filesystem enlarged, the same command succeeds without any manual cleanup.
Skipped (77) where a tmpfs cannot be mounted."""
import os
import random
import subprocess

import menvtest
from menvtest import build_tar_bz2


def body(t):
    mnt = os.path.join(t.tmp, "small")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4M", "tmpfs", mnt],
                      capture_output=True).returncode != 0:
        raise menvtest.Skip("cannot mount a tmpfs here")
    try:
        root = os.path.join(mnt, "root")
        P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
        chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]},
                              index=False)
        rnd = random.Random(7)
        blob = bytes(rnd.getrandbits(8) for _ in range(3 * 1024 * 1024))
        build_tar_bz2(os.path.join(chan, "noarch", "bigpkg-1.0-0.tar.bz2"),
                      {"name": "bigpkg", "version": "1.0", "build": "0", "build_number": 0,
                       "depends": [], "subdir": "noarch"}, {"share/big.bin": blob})
        t.index(chan)
        env = {"MENV_ROOT_PREFIX": root}
        C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
        t.menv_ok("create", "-n", "upd", *C, "dependency", env=env)
        prefix = os.path.join(root, "envs", "upd")
        before = menvtest.tree_snapshot(prefix)

        r = t.menv_run("install", "-n", "upd", *C, "bigpkg", env=env)
        t.one_line_error(r, "BR-032 (a): out of space", [("space", "No space")],
                         nonzero_only=True)
        t.eq(menvtest.tree_snapshot(prefix), before,
             "BR-032 (a): the environment is exactly as before")
        # a complete, verified package file may stay; no extracted or half-extracted dir
        t.pkgs = os.path.join(root, "pkgs")
        t.no_cache_entry("bigpkg-1.0-0.tar.bz2", "BR-032 (a)",
                         menvtest.sha256_file(os.path.join(chan, "noarch",
                                                           "bigpkg-1.0-0.tar.bz2")))

        subprocess.run(["mount", "-o", "remount,size=32M", mnt], check=True)
        t.menv_ok("install", "-n", "upd", *C, "bigpkg", env=env)
        t.check(os.path.getsize(os.path.join(prefix, "share", "big.bin")) == len(blob),
                "BR-032 (b): with room, the same install succeeds without cleanup")
    finally:
        subprocess.run(["umount", "-l", mnt], capture_output=True)


menvtest.main(body)

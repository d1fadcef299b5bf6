#!/usr/bin/env python3
"""cli.interrupt: Ctrl-C and SIGTERM are honoured within half a second in every phase
(issue 14, "Limits instead of crashes"): exit 130, the prefix rolled back (none left for a
create), nothing partial left under a final name in the package cache.

- during a large package download from a slow loopback HTTP server (rate-limited);
- during the extraction of a large .tar.bz2 (incompressible payload built here);
- an interrupted download keeps its `.partial` (the package's first bytes) for the next run
  to continue; nothing is left under the package's final name, no extraction directory;
- an install into an environment interrupted during its download leaves it unchanged;
- the figure (seconds from the signal to the exit) is printed; the assertion is < 2 s so a
  loaded CI machine stays green.
"""
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time

import menvtest
from menvtest import sha256_file, tree_snapshot, write_json

RATE = 2 << 20  # bytes per second the slow server sends
MIB = 16  # the package's payload


def big_package(path, mib):
    """A .tar.bz2 holding `mib` MiB of incompressible bytes (slow to decompress)."""
    data = hashlib.shake_256(b"menv").digest(mib << 20)
    idx = {"name": "big", "version": "1.0", "build": "0", "build_number": 0,
           "depends": [], "subdir": "noarch", "noarch": "generic"}
    with tarfile.open(path, "w:bz2", compresslevel=1) as tf:
        for name, blob in (("info/index.json", json.dumps(idx).encode()),
                           ("info/files", b"share/big/blob\n"),
                           ("share/big/blob", data)):
            ti = tarfile.TarInfo(name)
            ti.size = len(blob)
            ti.mode = 0o644
            ti.mtime = 1700000000
            tf.addfile(ti, io.BytesIO(blob))


def small_package(path):
    idx = {"name": "small", "version": "1.0", "build": "0", "build_number": 0,
           "depends": [], "subdir": "noarch", "noarch": "generic"}
    with tarfile.open(path, "w:bz2") as tf:
        for name, blob in (("info/index.json", json.dumps(idx).encode()),
                           ("info/files", b"share/small/hello\n"),
                           ("share/small/hello", b"hello\n")):
            ti = tarfile.TarInfo(name)
            ti.size = len(blob)
            ti.mode = 0o644
            ti.mtime = 1700000000
            tf.addfile(ti, io.BytesIO(blob))


def channel(t, chan, pkgs):
    recs = {}
    for pkg in pkgs:
        name = os.path.basename(pkg).split("-")[0]
        recs[os.path.basename(pkg)] = {"name": name, "version": "1.0", "build": "0",
                                       "build_number": 0, "depends": [], "subdir": "noarch",
                                       "noarch": "generic", "size": os.path.getsize(pkg),
                                       "sha256": sha256_file(pkg)}
    write_json(os.path.join(chan, "noarch", "repodata.json"),
               {"info": {"subdir": "noarch"}, "repodata_version": 1, "packages.conda": {},
                "packages": recs})
    os.makedirs(os.path.join(chan, "linux-64"), exist_ok=True)
    write_json(os.path.join(chan, "linux-64", "repodata.json"),
               {"info": {"subdir": "linux-64"}, "repodata_version": 1, "packages": {},
                "packages.conda": {}})


def interrupt(t, what, args, ready, sig=signal.SIGINT):
    """Starts menv, waits for ready() (a phase began), sends `sig`; returns (rc, seconds from
    the signal to the exit, stderr)."""
    proc = subprocess.Popen([t.menv, *args], env=t.environ(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not ready():
        time.sleep(0.01)
    started = proc.poll() is None and ready()
    t.check(started, "%s: the phase began before menv ended" % what)
    out, err, took, _ = menvtest.signal_and_wait(proc, sig, 30)
    t.note("%s: exit %d %.3f s after the signal" % (what, proc.returncode, took))
    return proc.returncode, took, err.decode("utf-8", "replace")


def body(t):
    pkgdir = os.path.join(t.tmp, "srv", "chan", "noarch")
    os.makedirs(pkgdir)
    pkg = os.path.join(pkgdir, "big-1.0-0.tar.bz2")
    big_package(pkg, MIB)
    small = os.path.join(pkgdir, "small-1.0-0.tar.bz2")
    small_package(small)
    channel(t, os.path.join(t.tmp, "srv", "chan"), [pkg, small])
    fn = os.path.basename(pkg)
    partial = os.path.join(t.pkgs, fn + ".partial")
    srv = menvtest.serve_slow(os.path.join(t.tmp, "srv"), RATE // 20, 0.05)  # RATE B/s
    try:
        url = "http://127.0.0.1:%d/chan" % srv.server_address[1]
        for sig in (signal.SIGINT, signal.SIGTERM):
            name = signal.Signals(sig).name
            p = os.path.join(t.tmp, "envs", "dl-" + name)
            # a first interruption keeps the .partial to continue from: wait for growth
            kept = os.path.getsize(partial) if os.path.exists(partial) else 0
            rc, took, err = interrupt(
                t, "download, " + name,
                ["create", "-q", "-y", "-p", p, "-c", url, "--override-channels", "big"],
                lambda: os.path.exists(partial) and os.path.getsize(partial) > kept + (1 << 20),
                sig)
            t.eq(rc, 130, "download, %s: exit status 130" % name)
            t.check(took < 2.0, "download, %s: exits within 2 s (%.3f s)" % (name, took))
            t.no_prefix_left(p, "download, " + name)
            t.check(not os.path.exists(os.path.join(t.pkgs, fn)),
                    "download, %s: no package file under its final name" % name)
            with open(pkg, "rb") as f, open(partial, "rb") as g:
                kept = g.read()
                t.check(len(kept) > 0 and f.read(len(kept)) == kept,
                        "download, %s: the kept .partial is the package's first %d bytes "
                        "(continued by the next run)" % (name, len(kept)))

        # an install into an environment: interrupted during the download, it is unchanged
        e = os.path.join(t.tmp, "envs", "e")
        t.menv_ok("create", "-q", "-y", "-p", e, "-c", url, "--override-channels", "small")
        before = tree_snapshot(e)
        kept = os.path.getsize(partial) if os.path.exists(partial) else 0
        rc, took, err = interrupt(
            t, "install, download",
            ["install", "-q", "-y", "-p", e, "-c", url, "--override-channels", "big"],
            lambda: os.path.exists(partial) and os.path.getsize(partial) > kept + (1 << 20))
        t.eq(rc, 130, "install, download: exit status 130")
        t.check(took < 2.0, "install, download: exits within 2 s (%.3f s)" % took)
        t.eq(tree_snapshot(e), before, "install, download: the environment is unchanged")
    finally:
        srv.shutdown()

    # extraction: the package file is in the cache already (verified), only extraction runs
    os.makedirs(t.pkgs, exist_ok=True)
    chan = os.path.join(t.tmp, "srv", "chan")
    with open(pkg, "rb") as src, open(os.path.join(t.pkgs, fn), "wb") as dst:
        dst.write(src.read())

    def extracting():
        return any(n.startswith(".big-1.0-0.tmp-") for n in os.listdir(t.pkgs))

    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        p = os.path.join(t.tmp, "envs", "x-" + name)
        rc, took, err = interrupt(
            t, "extraction, " + name,
            ["create", "-q", "-y", "-p", p, "-c", t.url(chan), "--override-channels", "big"],
            extracting, sig)
        t.eq(rc, 130, "extraction, %s: exit status 130" % name)
        t.check(took < 2.0, "extraction, %s: exits within 2 s (%.3f s)" % (name, took))
        t.no_prefix_left(p, "extraction, " + name)
        t.check(not os.path.exists(os.path.join(t.pkgs, "big-1.0-0")),
                "extraction, %s: no extracted directory under its final name" % name)
        t.check(not extracting(), "extraction, %s: its temporary directory is removed" % name)
    t.menv_ok("create", "-q", "-y", "-p", os.path.join(t.tmp, "envs", "after"), "-c",
              t.url(chan), "--override-channels", "big")
    t.eq(sha256_file(os.path.join(t.tmp, "envs", "after", "share", "big", "blob")),
         hashlib.sha256(hashlib.shake_256(b"menv").digest(MIB << 20)).hexdigest(),
         "after the interruptions a create installs the package whole")


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.tmpdir: menv's temporary files and folders live under $TMPDIR and are removed, also
after a kill (issue 22).

- `menv mirror` killed (SIGKILL) while it downloads from a slow loopback server leaves its
  staging folder `TMPDIR/menv-mirror-<pid>-*`; the next mirror removes it (and the dead
  process's lock file) and leaves nothing of its own: TMPDIR holds no menv entry after it;
- only dead processes' entries go: a live process's (this test holds the lock of its own
  pid), an older menv's without a pid, and one whose pid has no lock file all stay;
- the pip step writes its requirements under $TMPDIR (a stand-in python records the -r
  path) and removes them;
- a pipe given as -f is copied under $TMPDIR and the copy removed.
"""
import fcntl
import os
import signal
import subprocess
import tarfile
import time

import menvtest
from menvtest import build_tar_bz2, write_text


def menv_entries(tmpdir):
    return sorted(n for n in os.listdir(tmpdir) if n.startswith(("menv-", ".menv-")))


def body(t):
    tmpdir = os.path.join(t.tmp, "tmpdir")
    os.makedirs(tmpdir)
    env = {"TMPDIR": tmpdir}
    chan = os.path.join(t.tmp, "chan")
    build_tar_bz2(os.path.join(chan, "linux-64", "big-1.0-0.tar.bz2"),
                  {"name": "big", "version": "1.0", "build": "0", "build_number": 0,
                   "depends": [], "subdir": "linux-64"},
                  files={"share/big.bin": os.urandom(256 << 10)})
    t.index(chan)
    srv = menvtest.serve_slow(t.tmp, 4096, 0.5)  # package files at 8 KB/s
    url = "http://127.0.0.1:%d/chan" % srv.server_address[1]

    # what must survive the sweep: a live process's entries (this test's pid, its lock held),
    # an older menv's (no pid in the name), a pid without a lock file
    mine = os.path.join(tmpdir, "menv-mirror-%d-abcdef" % os.getpid())
    os.makedirs(os.path.join(mine, "pkgs"))
    lockf = open(os.path.join(tmpdir, ".menv-%d.lock" % os.getpid()), "w")
    fcntl.flock(lockf, fcntl.LOCK_SH)
    old = os.path.join(tmpdir, "menv-mirror-Zq3xY9")
    os.makedirs(old)
    nolock = os.path.join(tmpdir, "menv-mirror-999999999-abcdef")
    os.makedirs(nolock)
    keep = menv_entries(tmpdir)

    dest = os.path.join(t.tmp, "dest")
    p = subprocess.Popen([t.menv, "mirror", "-c", url, "--platform", "linux-64", dest],
                         env=t.environ(env), cwd=t.tmp, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    stage = None
    deadline = time.time() + 60
    while stage is None and p.poll() is None and time.time() < deadline:
        new = [n for n in menv_entries(tmpdir) if n.startswith("menv-mirror-") and
               n not in keep]
        stage = new[0] if new else None
        time.sleep(0.05)
    time.sleep(0.5)
    killed = p.poll() is None
    p.send_signal(signal.SIGKILL)
    p.wait()
    t.check(killed and stage is not None,
            "the mirror was killed while its staging folder existed", menv_entries(tmpdir))
    t.check(stage is not None and stage.startswith("menv-mirror-%d-" % p.pid) and
            os.path.isdir(os.path.join(tmpdir, stage)),
            "the killed mirror's staging folder is under TMPDIR, named with its pid",
            menv_entries(tmpdir))
    t.check(os.path.exists(os.path.join(tmpdir, ".menv-%d.lock" % p.pid)),
            "the killed mirror's lock file is under TMPDIR", menv_entries(tmpdir))

    # the next run: fast, from the folder (a file:// channel)
    r = t.menv_run("mirror", "-c", t.url(chan), "--platform", "linux-64",
                   os.path.join(t.tmp, "dest2"), env=env)
    t.eq(r.rc, 0, "the next mirror: exit 0")
    t.eq(menv_entries(tmpdir), keep,
         "the next mirror removed the dead one's folder and lock, kept the others, "
         "and left nothing of its own")
    fcntl.flock(lockf, fcntl.LOCK_UN)
    lockf.close()

    # the pip step's requirements under TMPDIR: a python that records its arguments
    seen = os.path.join(t.tmp, "pip-args")
    fake = "#!/bin/sh\nfor a; do case $a in */requirements.txt) dirname \"$a\" >> %s;; " \
           "esac; done\nexit 0\n" % seen
    ti = tarfile.TarInfo("bin/python")
    ti.size, ti.mode, ti.mtime = len(fake), 0o755, 1700000000
    build_tar_bz2(os.path.join(chan, "linux-64", "python-3.99-0.tar.bz2"),
                  {"name": "python", "version": "3.99", "build": "0", "build_number": 0,
                   "depends": [], "subdir": "linux-64"}, extra_members=[(ti, fake.encode())])
    build_tar_bz2(os.path.join(chan, "linux-64", "pip-99-0.tar.bz2"),
                  {"name": "pip", "version": "99", "build": "0", "build_number": 0,
                   "depends": ["python"], "subdir": "linux-64"},
                  files={"share/pip.txt": b"stand-in\n"})
    t.index(chan)
    envfile = os.path.join(t.tmp, "environment.yml")
    write_text(envfile, "channels: [%s]\ndependencies:\n  - python\n  - pip:\n"
               "    - somepkg==1.0\n" % t.url(chan))
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "penv"), "-f", envfile, "-q",
                   "--no-smoke-check", "--override-channels", env=env)
    dirs = open(seen).read().split() if os.path.exists(seen) else []
    t.check(bool(dirs), "the pip step ran the environment's python", r)
    t.check(dirs and all(d.startswith(tmpdir + "/menv-pip-") for d in dirs),
            "the pip step's requirements are under TMPDIR", dirs)
    t.eq([n for n in menv_entries(tmpdir) if n not in keep], [],
         "after the pip step: nothing new of menv's under TMPDIR")

    # a pipe as -f: read once, kept as a copy under TMPDIR, removed
    r = subprocess.run("%s create -p %s --dry-run -q --override-channels -f <(cat %s)" % (
        t.menv, os.path.join(t.tmp, "fenv"), envfile), shell=True, executable="/bin/bash",
        env=t.environ(env), cwd=t.tmp, capture_output=True)
    t.eq(r.returncode, 0, "create --dry-run -f <(...): exit 0") or print(r.stderr)
    t.eq([n for n in menv_entries(tmpdir) if n not in keep], [],
         "-f from a pipe: its copy under TMPDIR removed")


if __name__ == "__main__":
    menvtest.main(body)

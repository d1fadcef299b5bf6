#!/usr/bin/env python3
"""cli.pip_sigint: Ctrl-C (SIGINT) while the `pip:` step of `env update -f` runs.

Seen by a tester: menv took back the pip step, then crashed (SIGSEGV, exit 139) in
menv_prefix_records_load: once Ctrl-C had set the cancel flag every JSON read failed with
EINTR, and the undo's record read wrote that error through a NULL `err`. Now: exit 130, one
error line saying the environment is as it was, the environment byte for byte as before,
and no pip step left for the next command to take back."""
import os
import signal
import subprocess
import tarfile
import time

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")

# a stand-in for `python -m pip install|uninstall`: install writes a dist-info folder for each
# NAME==VERSION line, then waits (so that Ctrl-C finds pip half-way); uninstall removes them
FAKE_PIP = r"""#!/bin/sh
prefix=$(cd "$(dirname "$0")/.." && pwd)
sp="$prefix/lib/python3.9/site-packages"
if [ "$1 $2 $3" = "-m pip uninstall" ]; then
    shift 3
    for a in "$@"; do case "$a" in -*) ;; *) rm -rf "$sp/$a"-*.dist-info;; esac; done
    exit 0
fi
[ "$1 $2 $3" = "-m pip install" ] || exit 3
req=
while [ $# -gt 0 ]; do [ "$1" = -r ] && req=$2; shift; done
mkdir -p "$sp"
while read -r line; do
    case "$line" in *==*)
        n=${line%%==*}; v=${line#*==}; d="$sp/$n-$v.dist-info"
        mkdir -p "$d"
        printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$n" "$v" > "$d/METADATA";;
    esac
done < "$req"
touch "$prefix/../pip-started"
sleep 30
"""


def fake_python(path):
    ti = tarfile.TarInfo("bin/python")
    data = FAKE_PIP.encode()
    ti.size, ti.mode, ti.mtime = len(data), 0o755, 1700000000
    return menvtest.build_conda(path, {"name": "python", "version": "3.9.0", "build": "0",
                                       "build_number": 0, "depends": [], "subdir": "linux-64"},
                                [(ti, data)])


def body(t):
    chan = t.make_channel("chan", {"noarch": [os.path.join(t.corpus, R, "dependency-1.0-0.conda")],
                                   "linux-64": []})
    fake_python(os.path.join(chan, "linux-64", "python-3.9.0-0.conda"))
    t.index(chan)
    head = "name: e\nchannels: [%s, nodefaults]\ndependencies:\n  - python\n" % t.url(chan)
    f0 = os.path.join(t.tmp, "e0.yml")
    f1 = os.path.join(t.tmp, "e1.yml")
    menvtest.write_text(f0, head)
    menvtest.write_text(f1, head + "  - dependency\n  - pip:\n    - slowpkg==1.0\n")
    t.menv_ok("create", "-q", "-y", "-f", f0)
    e = os.path.join(t.envs, "e")
    before = menvtest.tree_snapshot(e)
    started = os.path.join(t.envs, "pip-started")
    p = subprocess.Popen([t.menv, "env", "update", "-y", "-f", f1], env=t.environ(),
                         cwd=t.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(600):
        if os.path.exists(started) or p.poll() is not None:
            break
        time.sleep(0.05)
    t.check(os.path.exists(started), "the pip step started")
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    lines = err.decode("utf-8", "replace").splitlines()
    t.eq(p.returncode, 130, "Ctrl-C during the pip step exits 130 (not a crash)")
    t.check(lines and lines[-1].startswith("menv: error: ") and "as it was" in lines[-1]
            and "interrupted" in lines[-1], "one error line: interrupted, the environment is "
            "as it was", lines[-3:])
    t.check(not os.path.exists(os.path.join(e, "conda-meta", ".menv-pip-pending")),
            "no pip step left for the next command to take back")
    snap = menvtest.tree_snapshot(e)
    # the conda part went back to its revision (history records that): every path and file
    # size as before, history and menv's own markers aside
    def shape(s):
        return {k: v[:2] for k, v in s.items()
                if not os.path.basename(k).startswith(".menv") and k != "conda-meta/history"}
    t.eq(shape(snap), shape(before), "the environment's paths and file sizes are as before")
    r = t.menv_ok("list", "-n", "e")
    t.check("took back" not in r.err and "slowpkg" not in r.out,
            "the next command has nothing to take back and lists no slowpkg", r)


if __name__ == "__main__":
    menvtest.main(body, "pip_sigint")

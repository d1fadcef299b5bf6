#!/usr/bin/env python3
"""cli.signals: signals reach menv's children (issue 22, "Signals reach children").

Link scripts (pre-link, post-link, pre-unlink) run `sleep 60` in the background and wait for
it. For each phase, and for SIGINT and SIGTERM sent to menv alone (as `kill` does; the
terminal's Ctrl-C reaches menv's process group, where the script is not):
- menv exits 130 within seconds (not after the script's 60 s), one error line;
- no process the script started is left (/proc);
- the prefix is as before: a create leaves none, an install or remove gives back the
  environment byte for byte (tree snapshot, lock files aside).
SIGKILL of menv during a post-link script: the script and its `sleep` die with it (the
supervisor's PDEATHSIG), and the next command rolls the environment back.
Ctrl-C while menv waits on a FIFO given as -f (no writer yet): exit 130, one line.
"""
import os
import signal
import subprocess
import time

import menvtest
from menvtest import build_tar_bz2, left_running, tree_snapshot

SCRIPT = """echo $$ >> {mark}/pids
sleep 60 &
echo $! >> {mark}/pids
echo started > {mark}/started-{name}
wait
"""


def channel(t, mark):
    chan = os.path.join(t.tmp, "chan")
    pkgs = [("base", None), ("slowpost", "post-link"), ("slowpre", "pre-link"),
            ("slowunlink", "pre-unlink")]
    for name, action in pkgs:
        files = {"share/%s.txt" % name: b"x\n"}
        if action:
            files["bin/.%s-%s.sh" % (name, action)] = SCRIPT.format(mark=mark,
                                                                    name=name).encode()
        build_tar_bz2(os.path.join(chan, "linux-64", "%s-1.0-0.tar.bz2" % name),
                      {"name": name, "version": "1.0", "build": "0", "build_number": 0,
                       "depends": [], "subdir": "linux-64"}, files=files)
    t.index(chan)
    return chan


def reset(mark):
    for n in os.listdir(mark):
        os.unlink(os.path.join(mark, n))


def check_stopped(t, what, rc, took, err, mark):
    t.eq(rc, 130, "%s: exit 130" % what)
    t.check(took < 10, "%s: stopped within 10 s, not after the script's 60 s (%.1f s)" %
            (what, took))
    lines = [l for l in err.splitlines() if l.strip()]
    t.check(len(lines) == 1 and lines[0].startswith("menv: error: ") and
            "interrupted" in lines[0], "%s: one error line saying interrupted" % what, err)
    left, pids = left_running(mark)
    t.check(len(pids) == 2, "%s: the script started (its pids recorded)" % what, pids)
    t.eq(left, [], "%s: no process of the script left running" % what)


def body(t):
    mark = os.path.join(t.tmp, "mark")
    os.makedirs(mark)
    chan = channel(t, mark)
    c = ["-c", t.url(chan), "--override-channels", "-y", "-q", "--no-smoke-check"]
    env = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-p", env, "base", *c)
    t.menv_ok("install", "-p", env, "slowunlink", *c)
    reset(mark)

    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        # create: post-link
        new = os.path.join(t.tmp, "new")
        rc, took, err = t.signal_when("create, post-link, %s" % name,
                                    ["create", "-p", new, "slowpost"] + c,
                                    os.path.join(mark, "started-slowpost"), sig)
        check_stopped(t, "create, post-link, %s" % name, rc, took, err, mark)
        t.no_prefix_left(new, "create, post-link, %s" % name)
        reset(mark)
        # install: pre-link and post-link; remove: pre-unlink
        for phase, args, pkg in (("pre-link", ["install", "-p", env, "slowpre"], "slowpre"),
                                 ("post-link", ["install", "-p", env, "slowpost"], "slowpost"),
                                 ("pre-unlink", ["remove", "-p", env, "slowunlink"],
                                  "slowunlink")):
            what = "%s, %s, %s" % (args[0], phase, name)
            before = tree_snapshot(env)
            rc, took, err = t.signal_when(what, args + (["-y", "-q"] if args[0] == "remove" else c),
                                        os.path.join(mark, "started-" + pkg), sig)
            check_stopped(t, what, rc, took, err, mark)
            t.eq(tree_snapshot(env), before, "%s: the environment rolled back" % what)
            reset(mark)

    # SIGKILL of menv: the script's processes die with it; the next command rolls back
    before = tree_snapshot(env)
    p = subprocess.Popen([t.menv, "install", "-p", env, "slowpost"] + c, env=t.environ(),
                         cwd=t.tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ready = os.path.join(mark, "started-slowpost")
    deadline = time.time() + 60
    while not os.path.exists(ready) and p.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    p.kill()
    p.wait()
    left, pids = left_running(mark)
    t.check(len(pids) == 2, "SIGKILL during post-link: the script started", pids)
    t.eq(left, [], "SIGKILL during post-link: no process of the script outlives menv")
    r = t.menv_run("list", "-p", env)
    t.eq(r.rc, 0, "after SIGKILL: the next command runs")
    t.eq({k: v for k, v in tree_snapshot(env).items() if not k.startswith("conda-meta/.menv")},
         {k: v for k, v in before.items() if not k.startswith("conda-meta/.menv")},
         "after SIGKILL: the next command rolled the environment back")
    reset(mark)

    # a FIFO as -f: menv waits in open() for a writer
    fifo = os.path.join(t.tmp, "env.fifo")
    os.mkfifo(fifo)
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        p = subprocess.Popen([t.menv, "create", "-p", os.path.join(t.tmp, "f"), "-f", fifo],
                             env=t.environ(), cwd=t.tmp, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        time.sleep(1.0)
        out, err, _, _ = menvtest.signal_and_wait(p, sig, 20)
        err = err.decode(errors="replace")
        t.eq(p.returncode, 130, "-f FIFO without a writer, %s: exit 130" % name)
        lines = err.splitlines()
        t.check(len(lines) == 1 and lines[0].startswith("menv: error: ") and
                "interrupted" in lines[0], "-f FIFO, %s: one error line" % name, err)
        t.no_prefix_left(os.path.join(t.tmp, "f"), "-f FIFO, %s" % name)


if __name__ == "__main__":
    menvtest.main(body)

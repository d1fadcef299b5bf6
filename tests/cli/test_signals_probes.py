#!/usr/bin/env python3
"""cli.signals_probes: signals reach the children that are no link script (issue 22, "Signals
reach children", as a kind): the smoke check's build steps, doctor's nvcc/g++ probes and the
activate.d scripts `menv run` sources first.

Each child runs `sleep 60` in the background and waits for it. For SIGINT and SIGTERM sent to
menv alone (as `kill` does; the terminal's Ctrl-C reaches menv's group, where the child is
not): menv exits 130 within seconds, one error line saying interrupted, no process the child
started is left (/proc), and the smoke check leaves no build folder in TMPDIR. SIGKILL of
menv: the child and its `sleep` die with it (PDEATHSIG).
"""
import os
import signal
import subprocess

import menvtest
from menvtest import left_running, write_text

SCRIPT = """echo $$ >> {mark}/pids
sleep 60 &
echo $! >> {mark}/pids
echo started > {mark}/started
wait
"""


def stop(t, what, args, env, mark, sig):
    """Starts menv, sends `sig` once the child started; returns (rc, seconds, stderr)."""
    for n in os.listdir(mark):
        os.unlink(os.path.join(mark, n))
    rc, took, err = t.signal_when(what, args, os.path.join(mark, "started"), sig, env)
    if sig != signal.SIGKILL:
        t.eq(rc, 130, "%s: exit 130" % what)
        t.check(took < 10, "%s: stopped within 10 s, not after the child's 60 s (%.1f s)"
                % (what, took))
        lines = [l for l in err.splitlines() if l.strip()]
        t.check(bool(lines) and lines[-1].startswith("menv: error: ") and
                "interrupted" in lines[-1] and
                sum(l.startswith("menv: error: ") for l in lines) == 1,
                "%s: one error line saying interrupted" % what, err)
    left, pids = left_running(mark)
    t.check(len(pids) == 2, "%s: the child started (its pids recorded)" % what, pids)
    t.eq(left, [], "%s: no process of the child left running" % what)
    return rc, took, err


def body(t):
    mark = os.path.join(t.tmp, "mark")
    tmpdir = os.path.join(t.tmp, "tmpdir")
    ops = os.path.join(t.tmp, "ops")
    for d in (mark, tmpdir, ops):
        os.makedirs(d)
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    prefix = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-p", prefix, "-c", t.url(chan), "--override-channels", "-y", "-q",
              "dependency")
    slow = SCRIPT.format(mark=mark)

    def tool(path, text):
        write_text(path, text)
        os.chmod(path, 0o755)

    # smoke: a quick toolchain probe, then a configure step that hangs
    tool(os.path.join(prefix, "bin", "nvcc"),
         "#!/bin/sh\necho 'Build cuda_11.8.r11.8/compiler.31833905_0'\n")
    tool(os.path.join(prefix, "bin", "g++"), "#!/bin/sh\necho 11.3.0\n")
    tool(os.path.join(ops, "configure"), "#!/bin/sh\n" + slow)
    env = {"TMPDIR": tmpdir, "MENV_OPS_DIR": ops}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        what = "smoke, configure, %s" % signal.Signals(sig).name
        stop(t, what, ["smoke", "-p", prefix], env, mark, sig)
        if sig != signal.SIGKILL:
            t.eq(os.listdir(tmpdir), [], "%s: no build folder left in TMPDIR" % what)
        for n in os.listdir(tmpdir):  # a SIGKILL's is the next command's to remove
            subprocess.run(["rm", "-rf", os.path.join(tmpdir, n)])

    # doctor: the nvcc probe hangs, then (nvcc quick again) the g++ probe
    for exe in ("nvcc", "g++"):
        tool(os.path.join(prefix, "bin", exe), "#!/bin/sh\n" + slow)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            stop(t, "doctor, %s probe, %s" % (exe, signal.Signals(sig).name),
                 ["doctor", "-p", prefix], env, mark, sig)
        tool(os.path.join(prefix, "bin", "nvcc"),
             "#!/bin/sh\necho 'Build cuda_11.8.r11.8/compiler.31833905_0'\n")

    # run: an activate.d script hangs
    actd = os.path.join(prefix, "etc", "conda", "activate.d")
    os.makedirs(actd)
    write_text(os.path.join(actd, "slow.sh"), slow)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        stop(t, "run, activate.d, %s" % signal.Signals(sig).name,
             ["run", "-p", prefix, "true"], env, mark, sig)


if __name__ == "__main__":
    menvtest.main(body)

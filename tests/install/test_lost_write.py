"""No lost write between commands on one environment (issue 22): `menv install -n src pc`
waiting for src's lock while `menv rename -n src dst` clones it used to report success while
rename removed src and `pc` was in neither. Now the rename holds src's lock through the clone
and the removal, and a command that waited for a prefix's lock re-validates it: the install
fails with one line naming src, and nothing claims a change that is nowhere. The other order
(the install holds the lock, the rename waits) carries `pc` into dst. The interleaving is made
deterministic with MENV_TEST_GATE_RENAME (a FIFO the rename reads while holding src's lock)."""
import os
import subprocess
import time

from insttest import main, pkg, records


def wait_for(cond, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "one", "1.0", files={"share/one.txt": "one\n"})
    pkg(ch, "pc", "1.0", files={"share/pc.txt": "pc\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    src, dst = os.path.join(t.envs, "src"), os.path.join(t.envs, "dst")
    lockfile = os.path.join(src, "conda-meta", ".menv.lock")

    # ---- rename holds src; install waits; rename finishes: install fails, nothing lost
    t.menv_ok("create", "-n", "src", *c, "one")
    t.menv_ok("create", "-p", os.path.join(t.tmp, "warm"), *c, "pc")  # pc in the cache
    gate = os.path.join(t.tmp, "gate")
    os.mkfifo(gate)
    ren = subprocess.Popen([t.menv, "rename", "-n", "src", "dst"],
                           env=t.environ({"MENV_TEST_GATE_RENAME": gate}),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the rename holds src's lock (it wrote its pid into the lock file) and waits at the gate
    wait_for(lambda: os.path.exists(lockfile) and
             open(lockfile).read().strip() == str(ren.pid), "the rename to lock src")
    ins = subprocess.Popen([t.menv, "install", "-n", "src", *c, "pc"], env=t.environ(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = ins.stderr.readline().decode()
    t.check("waiting for another menv process (pid %d)" % ren.pid in line,
            "install says it waits for the rename", line)
    with open(gate, "w") as g:
        g.write("go\n")
    rout, rerr = ren.communicate(timeout=60)
    iout, ierr = ins.communicate(timeout=60)
    t.eq(ren.returncode, 0, "rename succeeds")
    t.check(ins.returncode != 0, "install does not report success on a renamed environment",
            ierr)
    lines = ierr.decode().strip().splitlines()
    t.eq(lines[-1:], ["menv: error: '%s' was removed (or renamed) by another menv process "
                      "while this one waited for it: nothing was changed" % src],
         "install: one line naming src")
    t.check(not os.path.exists(src), "src is gone")
    t.eq(sorted(records(dst)), ["one"], "dst is src's clone, without pc")
    t.check(not os.path.exists(os.path.join(dst, "share", "pc.txt")), "pc's file nowhere")

    # ---- install holds dst; rename waits, then clones what the install made
    pause = subprocess.Popen([t.menv, "install", "-n", "dst", *c, "pc"],
                             env=t.environ({"MENV_TEST_PAUSE_BEFORE_LINK": "2"}),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lf2 = os.path.join(dst, "conda-meta", ".menv.lock")
    wait_for(lambda: os.path.exists(lf2) and open(lf2).read().strip() == str(pause.pid),
             "the install to lock dst")
    r = t.menv_run("rename", "-n", "dst", "third")
    pause.communicate(timeout=60)
    t.eq((pause.returncode, r.rc), (0, 0), "install and the waiting rename both succeed")
    t.check("waiting for another menv process (pid %d)" % pause.pid in r.err,
            "the rename said it waits", r.err)
    third = os.path.join(t.envs, "third")
    t.eq(sorted(records(third)), ["one", "pc"], "the rename cloned the install's change")
    t.check(not os.path.exists(dst), "dst is gone")


if __name__ == "__main__":
    main(body, "lost_write")

"""doctor --fix as one change (issue 22): a corrupt record whose package the cache holds is set
aside and the package linked again under an intent record, so a SIGKILL at any crash point
leaves the FULL prefix (paths, modes, hashes, links) as before or as after, and the next command
says which; without the package in the cache the record stays and a second --fix still
reports the problem (before: it was set aside, the second --fix said 0 problems and `list` no
longer showed the package whose files remained). `menv clean --all` during the repair waits
for doctor's hold on the package cache's users lock instead of removing the package it is
about to link (MENV_TEST_GATE_RELINK makes the interleaving deterministic)."""
import os
import shutil
import subprocess
import time

from insttest import PH, main, pkg
from insttest import snapshot_undated as snapshot

BAD = '{"name": "app", "version": '


def users_lock_held_by(t, pid):
    ino = os.stat(os.path.join(t.pkgs, ".menv-users.lock")).st_ino
    for line in open("/proc/locks"):
        f = line.split()
        if f[1] == "FLOCK" and f[4] == str(pid) and f[5].split(":")[-1] == str(ino):
            return True
    return False


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={"etc/app.conf": {"data": "prefix=%s\n" % PH, "placeholder": PH},
                                "share/app/a.txt": "a\n", "bin/tool": {"data": "#!/bin/sh\n",
                                                                      "mode": 0o755}})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "o\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    p = os.path.join(t.envs, "d")
    t.menv_ok("create", "-n", "d", *c, "app", "other")
    rec = os.path.join(p, "conda-meta", "app-1.0-0.json")
    with open(rec, "w") as f:
        f.write(BAD)
    pristine = os.path.join(t.tmp, "pristine")
    shutil.copytree(p, pristine, symlinks=True)

    def restore():
        shutil.rmtree(p)
        shutil.copytree(pristine, p, symlinks=True)

    before = snapshot(p)
    r = t.menv_run("doctor", "-n", "d", "--fix")
    t.eq(r.rc, 0, "doctor --fix repairs the corrupt record")
    after = snapshot(p)
    t.check("conda-meta/app-1.0-0.json.corrupt" in after and
            after["conda-meta/app-1.0-0.json"] != before["conda-meta/app-1.0-0.json"],
            "after: a new record, the corrupt one set aside")
    r = t.menv_ok("list", "-n", "d", "--json")
    t.eq(sorted(x["name"] for x in r.json()), ["app", "other"], "list shows app again")

    n, seen = 1, []
    while n < 200:
        restore()
        r = t.menv_run("doctor", "-n", "d", "--fix", env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            t.eq(snapshot(p), after, "doctor --fix not killed (N=%d) ends in the after state" % n)
            break
        if not t.check(r.rc == -9, "doctor --fix killed at point %d" % n, r):
            break
        nxt = t.menv_run("list", "-n", "d")
        got = snapshot(p)
        which = "before" if got == before else "after" if got == after else None
        t.check(which is not None, "doctor --fix: kill at point %d leaves the before or the "
                "after prefix" % n, "%s\n%s" % (sorted(set(got.items()) ^ set(before.items()))[:6],
                                                 nxt))
        said = [l for l in nxt.err.splitlines() if "interrupted" in l]
        if which == "after":
            t.check(said and "finished" in said[0] or not said,
                    "point %d: says finished (or nothing was pending)" % n, nxt.err)
        elif said:
            t.check("rolled back" in said[0], "point %d: says rolled back" % n, nxt.err)
        seen.append("%d:%s" % (n, (which or "?")[0]))
        t.check(not os.path.exists(os.path.join(p, "conda-meta", ".menv-doctor")),
                "point %d: no intent record left" % n)
        n += 1
    t.note("doctor --fix: %d crash points: %s" % (n - 1, " ".join(seen)))
    t.check(n - 1 >= 5, "at least 5 crash points (%d)" % (n - 1))

    # ---- the package is not in the cache: the record stays, the problem is reported again
    restore()
    saved = os.path.join(t.tmp, "saved-pkgs")
    shutil.copytree(t.pkgs, saved, symlinks=True)
    for n_ in os.listdir(t.pkgs):
        if n_.startswith("app-1.0-0"):
            q = os.path.join(t.pkgs, n_)
            shutil.rmtree(q) if os.path.isdir(q) else os.unlink(q)
    r1 = t.menv_run("doctor", "-n", "d", "--fix")
    r2 = t.menv_run("doctor", "-n", "d", "--fix")
    t.eq((r1.rc, r2.rc), (1, 1), "no package in the cache: both --fix runs exit 1")
    t.check("0 problems" not in r2.out and "app-1.0-0.json" in r2.out,
            "the second --fix still names the corrupt record", r2.out)
    t.eq(snapshot(p), before, "the prefix is as before (the record was not set aside)")
    shutil.rmtree(t.pkgs)
    shutil.copytree(saved, t.pkgs, symlinks=True)

    # ---- clean --all while doctor --fix is about to relink: clean waits, the package stays
    restore()
    gate = os.path.join(t.tmp, "gate")
    os.mkfifo(gate)
    doc = subprocess.Popen([t.menv, "doctor", "-n", "d", "--fix"],
                           env=t.environ({"MENV_TEST_GATE_RELINK": gate}),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and not (os.path.exists(os.path.join(t.pkgs, ".menv-users.lock"))
                                          and users_lock_held_by(t, doc.pid)):
        time.sleep(0.02)
    t.check(users_lock_held_by(t, doc.pid), "doctor --fix holds the cache's users lock")
    cl = subprocess.Popen([t.menv, "clean", "--all", "-y"], env=t.environ(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = cl.stderr.readline().decode()
    t.check("its users lock held by pid %d" % doc.pid in line,
            "clean waits for doctor", line)
    with open(gate, "w") as g:
        g.write("go\n")
    do, de = doc.communicate(timeout=60)
    co, ce = cl.communicate(timeout=60)
    t.eq((doc.returncode, cl.returncode), (0, 0), "doctor --fix and clean both succeed")
    t.eq(snapshot(p), after, "the repair completed: the after prefix")
    t.check(os.path.isdir(os.path.join(t.pkgs, "app-1.0-0")),
            "clean kept the package the repaired environment uses")


if __name__ == "__main__":
    main(body, "doctor_fix")

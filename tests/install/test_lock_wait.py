"""Waiting on a lock says who holds it: a create whose package-cache lock (<pkgs>/.menv.lock)
another process holds prints once "waiting for the package cache lock held by pid N" and
completes when it is released; an install into a prefix another process has locked names that
process; a lock taken by menv holds menv's pid."""
import os
import subprocess
import sys
import time

from insttest import main, pkg, records

HOLD = r"""
import fcntl, sys
f = open(sys.argv[1], "a+")
fcntl.flock(f, fcntl.LOCK_EX)
if len(sys.argv) > 2:          # a stale pid in the file: /proc/locks names the real holder
    f.seek(0); f.truncate(); f.write(sys.argv[2]); f.flush()
print("locked", flush=True)
sys.stdin.read()
"""


def hold(path, *extra):
    """A python process holding flock(LOCK_EX) on `path` until its stdin is closed."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, path, *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    if p.stdout.readline().strip() != b"locked":
        raise RuntimeError("the lock holder did not start")
    return p


def waited(t, holder, cmd, what, line):
    """Runs `cmd` while `holder` holds its lock: it must still run after 1.5 s, print `line`
    once, and succeed once the holder lets go."""
    p = subprocess.Popen([t.menv, *cmd], env=t.environ(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    time.sleep(1.5)
    t.check(p.poll() is None, "%s: still waiting while the lock is held" % what)
    holder.stdin.close()
    holder.wait(timeout=10)
    out, err = p.communicate(timeout=120)
    err = err.decode()
    t.eq(p.returncode, 0, "%s: completes once the lock is released" % what)
    t.eq([l for l in err.splitlines() if "waiting" in l], [line],
         "%s: one line names the holder" % what)
    return p


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base/a.txt": "base one\n"})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"})
    t.index(ch)
    c = ["-c", t.url(ch), "--override-channels"]
    os.makedirs(t.pkgs, exist_ok=True)

    # the package cache lock, held by a python process
    h = hold(os.path.join(t.pkgs, ".menv.lock"))
    waited(t, h, ["create", "-q", "-n", "a", *c, "base"], "create",
           "menv: waiting for the package cache lock held by pid %d" % h.pid)
    p = os.path.join(t.envs, "a")
    t.eq(sorted(records(p)), ["base"], "create: the environment has its package")
    t.eq(open(os.path.join(p, "share/base/a.txt")).read(), "base one\n", "create: its file")

    # menv writes its pid into the locks it takes
    r = subprocess.run([t.menv, "install", "-q", "-n", "a", *c, "other"], env=t.environ(),
                       capture_output=True)
    t.eq(r.returncode, 0, "install other")
    q = subprocess.Popen([t.menv, "install", "-q", "-n", "a", *c, "--force-reinstall", "base"],
                         env=t.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    q.communicate(timeout=120)
    t.eq(q.returncode, 0, "reinstall base")
    t.eq(open(os.path.join(t.pkgs, ".menv.lock")).read(), "%d\n" % q.pid,
         "the package cache lock file holds the pid of the last menv that took it")
    t.eq(open(os.path.join(p, "conda-meta", ".menv.lock")).read(), "%d\n" % q.pid,
         "the prefix lock file holds the pid of the last menv that took it")

    # the prefix lock, held by a python process that left a wrong pid in the file
    h = hold(os.path.join(p, "conda-meta", ".menv.lock"), "999999\n")
    waited(t, h, ["remove", "-q", "-n", "a", "other"], "remove",
           "menv: waiting for another menv process (pid %d) to finish with '%s' "
           "(use --no-wait to fail instead)" % (h.pid, p))
    t.eq(sorted(records(p)), ["base"], "remove: 'other' is gone")

    # the users lock held exclusively (as menv clean does): a create names the holder
    h = hold(os.path.join(t.pkgs, ".menv-users.lock"))
    waited(t, h, ["create", "-q", "-n", "b", *c, "other"], "create during a clean",
           "menv: waiting for menv clean to finish with the package cache: its users lock "
           "held by pid %d" % h.pid)
    t.eq(sorted(records(os.path.join(t.envs, "b"))), ["other"], "create b")


if __name__ == "__main__":
    main(body, "lock_wait")

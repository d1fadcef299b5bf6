"""Temporary folders live under $TMPDIR and are removed, also after a kill (issue 22, "Types"),
for every command that makes them, not only `mirror` (cli.tmpdir):
- `rename` killed at each of its crash points: its clone's lock file is under TMPDIR; the
  next menv command, whatever it is (`env list`), removes what the dead one left;
- the smoke check killed (SIGKILL) inside its configure step, which writes a temporary of its
  own into $TMPDIR as a compiler does: the build folder and the step's temporary are under
  TMPDIR and the next smoke check removes both;
- the pip step of `create -f` killed inside pip, which also writes a temporary of its own
  (pip's build folders): after the next create, TMPDIR is empty.
In every case the TMPDIR the children see is menv's own folder under $TMPDIR, and nothing of
the killed run's pid is left in /tmp (outside $TMPDIR): TMPDIR is empty once the next
command ran, down to the last entry, not only menv's names."""
import glob
import os
import shutil
import signal

from insttest import main, pkg
from menvtest import write_text

# a child that writes a temporary of its own where $TMPDIR says (as gcc, nvcc and pip do),
# records what it saw, then hangs when MARK/hang exists (until killed with menv)
CHILD = r'''T="${TMPDIR:-/tmp}/child-tmp-$$"; mkdir -p "$T"; echo x > "$T/obj"
echo "$TMPDIR" >> %(mark)s/tmpdirs
if [ -e %(mark)s/hang ]; then
	echo $$ >> %(mark)s/pids; sleep 60 & echo $! >> %(mark)s/pids
	echo started > %(mark)s/started; wait
fi
rm -rf "$T"
'''


def body(t):
    tmpdir = os.path.join(t.tmp, "tmpdir")
    mark = os.path.join(t.tmp, "mark")
    os.makedirs(tmpdir)
    os.makedirs(mark)
    env = {"TMPDIR": tmpdir}
    child = CHILD % {"mark": mark}

    def in_tmp(pid):
        return sorted(glob.glob("/tmp/menv-*-%d-*" % pid) + glob.glob("/tmp/.menv-%d.lock" % pid))

    def reset_mark():
        for n in os.listdir(mark):
            os.unlink(os.path.join(mark, n))

    def children_saw(what):
        seen = open(os.path.join(mark, "tmpdirs")).read().split() \
            if os.path.exists(os.path.join(mark, "tmpdirs")) else []
        t.check(bool(seen) and all(s.startswith(tmpdir + "/menv-") for s in seen),
                "%s: the children's TMPDIR is menv's folder under $TMPDIR" % what, seen)

    # ---- rename, killed at each crash point
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={"share/app.txt": "app\n"})
    python = "#!/bin/sh\n[ \"$1\" = -m ] && [ \"$2\" = pip ] || exit 0\n" + child + \
        "SP=\"$(dirname \"$0\")/../lib/python3.9/site-packages\"; mkdir -p \"$SP/q\"\n" \
        "echo > \"$SP/q/__init__.py\"; mkdir -p \"$SP/q-1.0.dist-info\"\n" \
        "printf 'Metadata-Version: 2.1\\nName: q\\nVersion: 1.0\\n' > " \
        "\"$SP/q-1.0.dist-info/METADATA\"\nprintf 'q/__init__.py,,\\n' > " \
        "\"$SP/q-1.0.dist-info/RECORD\"\necho pip > \"$SP/q-1.0.dist-info/INSTALLER\"\nexit 0\n"
    pkg(ch, "python", "3.9.2", files={"bin/python": {"data": python, "mode": 0o755}})
    pkg(ch, "pip", "23.0", depends=["python"], files={"share/pip.txt": "pip\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    t.menv_ok("create", "-n", "src", *c, "app")
    saved = os.path.join(t.tmp, "saved")
    shutil.copytree(t.envs, saved, symlinks=True)
    reg = os.path.join(t.home, ".conda", "environments.txt")
    reg_text = open(reg).read()
    points = 0
    for n in range(1, 100):
        shutil.rmtree(t.envs)
        shutil.copytree(saved, t.envs, symlinks=True)
        write_text(reg, reg_text)
        r = t.menv_run("rename", "-n", "src", "dst", env=dict(env, MENV_TEST_CRASH_AFTER=str(n)))
        if r.rc == 0:
            t.eq(os.listdir(tmpdir), [], "rename not killed: TMPDIR empty after it")
            break
        if not t.check(r.rc == -9, "rename: killed at point %d" % n, r):
            break
        points += 1
        left = os.listdir(tmpdir)
        t.check(left and all(x.startswith(("menv-rename-", ".menv-")) for x in left),
                "rename, point %d: what it left is its own, under TMPDIR" % n, left)
        # the next run, whatever it is (here one that makes no temporary of its own)
        t.menv_ok("env", "list", env=env)
        t.eq(os.listdir(tmpdir), [], "rename, point %d: the next run (env list) emptied "
             "TMPDIR" % n)
    t.check(points >= 5, "rename: killed at %d points" % points)

    # ---- the smoke check, killed inside configure
    ops = os.path.join(t.tmp, "ops")
    os.makedirs(ops)
    write_text(os.path.join(ops, "configure"), "#!/bin/sh\n" + child +
               "mkdir -p \"$1\"; printf 'all:\\n\\t@true\\n' > \"$1/Makefile\"\n"
               "echo 'configure: targets host'\n")
    write_text(os.path.join(ops, "run-tests"), "#!/bin/sh\necho '[ops] PASS x'\nexit 0\n")
    for f in ("configure", "run-tests"):
        os.chmod(os.path.join(ops, f), 0o755)
    prefix = os.path.join(t.envs, "x")
    if not os.path.exists(prefix):
        t.menv_ok("create", "-n", "x", *c, "app", env=env)
    for tool, text in (("nvcc", "echo 'Cuda compilation tools, release 11.8, V11.8.89'"),
                       ("g++", "echo 11.3.0"), ("ninja", "exit 0"), ("make", "exit 0")):
        write_text(os.path.join(prefix, "bin", tool), "#!/bin/sh\n%s\n" % text)
        os.chmod(os.path.join(prefix, "bin", tool), 0o755)
    senv = dict(env, MENV_OPS_DIR=ops)
    reset_mark()
    write_text(os.path.join(mark, "hang"), "")
    rc, _, err = t.signal_when("smoke, configure", ["smoke", "-p", prefix],
                               os.path.join(mark, "started"), signal.SIGKILL, senv)
    t.eq(rc, -9, "smoke: killed")
    left = os.listdir(tmpdir)
    t.check(any(x.startswith("menv-smoke-") for x in left),
            "smoke: the killed check's build folder is under TMPDIR", left)
    children_saw("smoke")
    for x in left:
        if x.startswith("menv-smoke-"):
            pid = int(x.split("-")[2])
            t.eq(in_tmp(pid), [], "smoke: nothing of the killed menv (pid %d) in /tmp" % pid)
    os.unlink(os.path.join(mark, "hang"))
    r = t.menv_run("smoke", "-p", prefix, env=senv)
    t.check(r.rc == 0, "smoke: the next check passes", r)
    t.eq(os.listdir(tmpdir), [], "smoke: the next check emptied TMPDIR (the dead build "
         "folder and its step's temporary)")

    # ---- the pip step of create -f, killed inside pip
    envfile = os.path.join(t.tmp, "environment.yml")
    write_text(envfile, "channels: [%s, nodefaults]\ndependencies:\n  - python\n  - pip\n"
               "  - pip:\n    - q==1.0\n" % t.url(ch))
    reset_mark()
    write_text(os.path.join(mark, "hang"), "")
    rc, _, err = t.signal_when("create -f, pip", ["create", "-q", "-n", "w", "-f", envfile],
                               os.path.join(mark, "started"), signal.SIGKILL, env)
    t.eq(rc, -9, "create -f: killed inside pip")
    left = os.listdir(tmpdir)
    t.check(any(x.startswith("menv-pip-") for x in left),
            "create -f: the killed pip step's folder is under TMPDIR", left)
    children_saw("create -f, pip")
    dead = [int(x.split("-")[2]) for x in left if x.startswith("menv-pip-")]
    os.unlink(os.path.join(mark, "hang"))
    r = t.menv_run("create", "-q", "-n", "w", "-f", envfile, env=env)
    t.check(r.rc == 0, "create -f: the next create succeeds", r)
    t.check(os.path.exists(os.path.join(t.envs, "w", "lib", "python3.9", "site-packages",
                                        "q-1.0.dist-info", "METADATA")),
            "create -f: the next create ran the pip step")
    t.eq(os.listdir(tmpdir), [], "create -f: the next create emptied TMPDIR (the dead pip "
         "step's folder and pip's own temporary)")
    for pid in dead:
        t.eq(in_tmp(pid), [], "create -f: nothing of the killed menv (pid %d) in /tmp" % pid)


if __name__ == "__main__":
    main(body, "tmpdir_kill")

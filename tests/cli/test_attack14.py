"""A fourteenth outside attack, on renameforce's settling of an interrupted `rename --force`
(an aside folder `.NAME.menv-replaced-TOKEN` holding conda-meta/.menv-replaced, "SRC\\nTOKEN").

- aside_other_name: the aside folder of a missing prefix was found by the prefix of its name
  only (".%.200s.menv-replaced-": the name cut to 200 bytes, any token after it), its marker's
  token never compared with the folder's: a missing environment whose name shares 200 bytes
  with another's (or is that name with ".menv-replaced-..." after it) took the other's old
  environment: `list -n OTHER` moved the old environment of an interrupted `rename --force`
  onto a name it never had. The aside folder is now exactly ".NAME.menv-replaced-TOKEN" with
  TOKEN its marker's.
- pid_reuse: the settle skipped a rename whose token's pid is this process's own (meant for
  the rename's own clone); an interrupted rename whose pid a later command happens to get
  (pids are reused) was left unsettled: `create -n e2` then made a new e2 beside the hidden old
  one. Only the rename this process is running is skipped now (its token, not its pid).
"""
import os
import shutil
import subprocess
import sys

import menvtest
from menvtest import two_package_channel, write_text


def interrupted(t, C, dest):
    """e1 and `dest` made, `rename -n e1 dest --force` killed where the old `dest` is aside and
    no `dest` stands; returns the aside folder's name (None: no such kill point)."""
    for k in range(1, 60):
        shutil.rmtree(t.root, ignore_errors=True)
        t.menv_ok("create", "-y", "-q", "-n", "e1", *C, "a")
        t.menv_ok("create", "-y", "-q", "-n", dest, *C, "b")
        write_text(os.path.join(t.envs, dest, "old"), "mine\n")
        r = t.menv_run("rename", "-n", "e1", dest, "--force",
                       env={"MENV_TEST_CRASH_AFTER": str(k)})
        if r.rc == 0:
            return None
        aside = [n for n in os.listdir(t.envs) if n.startswith(".%s.menv-replaced-" % dest)]
        if aside and not os.path.exists(os.path.join(t.envs, dest)):
            return aside[0]
    return None


def case_aside_other_name(t):
    C = two_package_channel(t)
    for dest, other in (("e2.menv-replaced-x", "e2"),):
        aside = interrupted(t, C, dest)
        if not t.check(aside, "%s: a kill point with the old one aside" % dest[:8]):
            continue
        # the source removed by hand: the old one is to be moved back to its own name
        shutil.rmtree(os.path.join(t.envs, "e1"))
        r = t.menv_run("list", "-n", other)
        t.check(r.rc != 0 and not os.path.exists(os.path.join(t.envs, other)),
                "%s: list -n %s names no environment (none was ever made)" % (dest[:8],
                                                                           other[:8]), r)
        t.check(os.path.exists(os.path.join(t.envs, aside)) or
                os.path.exists(os.path.join(t.envs, dest, "old")),
                "%s: the old environment stays its own" % dest[:8])
        # naming it settles it: the old one is back under its own name (its own marker)
        r = t.menv_run("list", "-n", dest)
        t.check(os.path.exists(os.path.join(t.envs, dest, "old")),
                "%s: list -n of it rolls it back" % dest[:8], r)


def case_pid_reuse(t):
    C = two_package_channel(t)
    aside = interrupted(t, C, "e2")
    if not t.check(aside, "a kill point with the old e2 aside"):
        return
    e1, e2 = os.path.join(t.envs, "e1"), os.path.join(t.envs, "e2")
    old = aside[len(".e2.menv-replaced-"):]
    # the killed rename's pid is the one the next command gets: its token says so ($$ of the
    # shell that execs menv)
    script = r'''set -e
new="$$-1"
for f in "$E1/conda-meta/.menv-rename" "$ENVS/$ASIDE/conda-meta/.menv-replaced"; do
  sed "s/$OLD/$new/" "$f" > "$f.t"; mv "$f.t" "$f"
done
mv "$ENVS/$ASIDE" "$ENVS/.e2.menv-replaced-$new"
exec "$MENV" create -y -q -n e2 "$@"
'''
    env = t.environ({"E1": e1, "ENVS": t.envs, "ASIDE": aside, "OLD": old, "MENV": t.menv})
    p = subprocess.run(["sh", "-c", script, "sh"] + C + ["a"], capture_output=True, env=env,
                       cwd=t.tmp)
    err = p.stderr.decode("utf-8", "replace")
    t.check("rolled back the interrupted rename" in err, "create -n e2 settles the rename", err)
    t.check(os.path.exists(os.path.join(e2, "old")), "the old e2 is back")
    t.eq([n for n in os.listdir(t.envs) if ".menv-replaced-" in n], [], "no aside left")


def forge(t, name, src, token):
    a = os.path.join(t.envs, ".%s.menv-replaced-%s" % (name, token))
    os.makedirs(os.path.join(a, "conda-meta"), exist_ok=True)
    with open(os.path.join(a, "conda-meta", ".menv-replaced"), "wb") as f:
        f.write(src + b"\n" + token.encode() + b"\n")
    return a


def case_marker_control(t):
    t.menv_ok("create", "-y", "-q", "-n", "e1")
    a = forge(t, "e9", b"/x/\x1b[31mEVIL\x1b]0;title\x07", "1-1")
    r = t.menv_run("list", "-n", "e9")
    t.check("\x1b" not in r.err and "\x07" not in r.err, "no control character printed", r)
    t.check(os.path.isdir(a) and not os.path.exists(os.path.join(t.envs, "e9")),
            "a marker naming no prefix menv makes is no rename: the folder left alone", r)


def case_concurrent_settle(t):
    t.menv_ok("create", "-y", "-q", "-n", "e1")
    fails = []
    for i in range(20):
        shutil.rmtree(os.path.join(t.envs, "e9"), ignore_errors=True)
        forge(t, "e9", os.path.join(t.tmp, "gone").encode(), "1-1")
        ps = [subprocess.Popen([t.menv, "list", "-n", "e9"], env=t.environ(), cwd=t.tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]
        for p in ps:
            out, err = p.communicate()
            if p.returncode:
                fails.append(err.decode("utf-8", "replace"))
        if not os.path.isdir(os.path.join(t.envs, "e9", "conda-meta")):
            fails.append("run %d: no e9 after it" % i)
    t.eq(fails, [], "two commands settling e9 at once both succeed")


def case_crash_settle(t):
    # the settle has no kill points of its own: its steps' states are made by hand (the old
    # e2 moved back, marks not yet dropped; a clone's staging folder left too)
    C = two_package_channel(t)
    aside = interrupted(t, C, "e2")
    if not t.check(aside, "a kill point with the old e2 aside"):
        return
    e2 = os.path.join(t.envs, "e2")
    os.rename(os.path.join(t.envs, aside), e2)
    for first in ("e1", "e2"):
        r = t.menv_run("list", "-n", first)
        t.check(r.rc == 0, "list -n %s after a settle killed midway" % first, r)
    t.check(os.path.exists(os.path.join(e2, "old")), "the old e2 stands")
    t.check(os.path.exists(os.path.join(t.envs, "e1", "share", "a.txt")), "e1 stands")
    t.eq(sorted(n for n in os.listdir(t.envs) if ".menv-" in n), [], "nothing left beside")
    for p, m in ((e2, ".menv-replaced"), (os.path.join(t.envs, "e1"), ".menv-rename")):
        t.check(not os.path.exists(os.path.join(p, "conda-meta", m)), "%s dropped" % m)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

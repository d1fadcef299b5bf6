"""Kill series of `menv mirror` (into a folder) and `menv index` (issue 22): SIGKILL at each
crash point (MENV_TEST_CRASH_AFTER=N: before each package is copied, before each subdir's
repodata.json is written) of a mirror and an index that change a channel folder (two subdirs;
one package replaced, two added). After every kill each subdir's repodata.json is whole and
is the old one or the new one, every package it lists is there with its sha256 (half a mirror
is never presented as complete), the same command run again succeeds and ends in the new
state, and nothing is left in $TMPDIR (the mirror's staging folder goes with the next
command's sweep). The part names the command (python3 test_kill_mirror.py MENV SHARED PART)."""
import hashlib
import json
import os
import shutil

from insttest import main, pkg


def channel(t, name, versions):
    ch = os.path.join(t.tmp, name)
    for v in versions:
        pkg(ch, "base", v, files={"share/base/a.txt": "base %s\n" % v})
        pkg(ch, "tool", v, subdir="linux-64", files={"share/tool/t.txt": "tool %s\n" % v})
    t.index(ch)
    return ch


def observe(t, dest):
    """{subdir: sorted package names its repodata.json lists}; a check fails for a torn or
    missing index or a listed package missing or of other bytes."""
    got = {}
    for sd in sorted(os.listdir(dest)):
        p = os.path.join(dest, sd, "repodata.json")
        if not os.path.isdir(os.path.join(dest, sd)) or not os.path.exists(p):
            continue
        try:
            with open(p) as fh:
                rd = json.load(fh)
        except ValueError as e:
            t.check(False, "%s: a whole JSON document" % p, e)
            got[sd] = "torn"
            continue
        recs = dict(rd.get("packages", {}), **rd.get("packages.conda", {}))
        for fn, r in recs.items():
            f = os.path.join(dest, sd, fn)
            ok = os.path.isfile(f)
            if ok:
                with open(f, "rb") as fh:
                    ok = hashlib.sha256(fh.read()).hexdigest() == r.get("sha256")
            t.check(ok, "%s/%s: listed, there with its sha256" % (sd, fn))
        got[sd] = sorted(recs)
    return got


def series(t, what, cmd, dest, old):
    """old: a folder copied to dest before each run."""
    td = os.path.join(t.tmp, "td")
    env = {"TMPDIR": td}

    def restore():
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(old, dest)
        shutil.rmtree(td, ignore_errors=True)
        os.makedirs(td)

    restore()
    before = observe(t, dest)
    t.menv_ok(*cmd, env=env)
    after = observe(t, dest)
    t.check(before != after, "%s: changes the channel" % what, (before, after))
    seen = []
    for n in range(1, 60):
        restore()
        r = t.menv_run(*cmd, env=dict(env, MENV_TEST_CRASH_AFTER=str(n)))
        if r.rc == 0:
            t.eq(observe(t, dest), after, "%s: the run not killed (N=%d) ends new" % (what, n))
            break
        if not t.check(r.rc == -9, "%s: killed at point %d (exit %s)" % (what, n, r.rc), r):
            break
        got = observe(t, dest)
        for sd in sorted(set(before) | set(after)):
            t.check(got.get(sd) in (before.get(sd), after.get(sd)),
                    "%s: point %d: %s is the old index or the new one" % (what, n, sd),
                    "got %s\nold %s\nnew %s" % (got.get(sd), before.get(sd), after.get(sd)))
        seen.append("%d:%s" % (n, "".join("o" if got.get(sd) == before.get(sd) else "n"
                                         for sd in sorted(after))))
        r = t.menv_run(*cmd, env=env)
        t.eq(r.rc, 0, "%s: point %d: the next run succeeds" % (what, n))
        t.eq(observe(t, dest), after, "%s: point %d: the next run ends new" % (what, n))
        t.eq(os.listdir(td), [], "%s: point %d: nothing left in $TMPDIR" % (what, n))
    else:
        t.check(False, "%s: a run completes" % what)
    t.check(len(seen) >= 2, "%s: killed at two points at least" % what, seen)
    t.note("%s: %d crash points: %s" % (what, len(seen), " ".join(seen)))


def body(t, part):
    src = channel(t, "src", ("1.0", "2.0", "3.0"))
    old = os.path.join(t.tmp, "old")
    if part == "mirror":
        # the old mirror: 1.0 only
        channel(t, "old", ("1.0",))
        dest = os.path.join(t.tmp, "dest")
        series(t, "mirror", ["mirror", "-c", t.url(src),
                             "--platform", "linux-64", dest], dest, old)
    else:
        # the old index lists 1.0; 2.0 and 3.0 were copied in since, 1.0 of noarch replaced
        shutil.copytree(src, old)
        idx = channel(t, "idx1", ("1.0",))
        for sd in ("noarch", "linux-64"):
            shutil.copyfile(os.path.join(idx, sd, "repodata.json"),
                            os.path.join(old, sd, "repodata.json"))
        dest = os.path.join(t.tmp, "dest")
        series(t, "index", ["index", dest], dest, old)


if __name__ == "__main__":
    main(body)

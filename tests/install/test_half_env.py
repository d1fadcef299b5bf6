"""install.half_env: environments half there are removed whole and never listed as usable.

1. A corrupt record: an environment whose conda-meta/<dist>.json is not JSON (and whose
   package has left the package cache, so nothing could repair it) is removed by `env
   remove` and `remove --all` (they stopped on the parse error): exit 0, a warning naming the
   record, the prefix gone, the registry without it, and nothing outside the prefix touched
   (a link inside it to a folder outside keeps that folder's files; a bystander environment
   stays byte for byte). A record that is JSON but not a record (`[]`) is the same.
2. A create killed (MENV_TEST_CRASH_AFTER=N, SIGKILL) at each of its crash points: `env list`
   (text and --json) never shows the half-made environment (it showed one renamed into place
   whose journal had not committed, until the next command removed it); then `env remove`,
   `list` and `shell activate` on it say "not found" with the cause ("an interrupted create
   left it incomplete") or, when the create had committed, work; nothing of it is left.
   A registered prefix holding conda-meta/ but no conda-meta/history (conda's
   is_conda_environment is that file) is not listed, and `env remove -p` removes it.
"""
import hashlib
import json
import os
import shutil

from insttest import main, pkg


def tree(top):
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if n == ".menv.lock":
                continue
            if os.path.islink(p):
                out[os.path.relpath(p, top)] = "l:" + os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[os.path.relpath(p, top)] = hashlib.sha256(f.read()).hexdigest()
            else:
                out[os.path.relpath(p, top)] = "d"
    return out


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={"share/app/app.txt": "app\n", "bin/app": "#!/bin/sh\n"})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"})
    t.index(ch)
    c = ["-q", "-y", "-c", t.url(ch), "--override-channels"]
    reg = os.path.join(t.home, ".conda", "environments.txt")

    def registered():
        return [l.strip() for l in open(reg)] if os.path.exists(reg) else []

    def listed():
        r = t.menv_ok("env", "list", "--json")
        text = t.menv_ok("env", "list").out
        paths = sorted(p for p in r.json()["envs"] if p != t.root)
        t.eq(sorted(l.split()[-1] for l in text.splitlines()[2:]
                    if l.split() and l.split()[-1] != t.root), paths,
             "env list and env list --json show the same environments")
        return paths

    t.menv_ok("create", "-n", "keep", *c, "other")
    keep = os.path.join(t.envs, "keep")
    outside = os.path.join(t.tmp, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "precious.txt"), "w") as f:
        f.write("precious\n")

    # ---- 1. corrupt records
    for label, cmd, content in (("env remove, not JSON", ["env", "remove"], b'{"name": "app", '),
                                ("remove --all, not JSON", ["remove", "--all"], b"\x00\xff{"),
                                ("env remove, JSON but no record", ["env", "remove"], b"[]\n")):
        p = os.path.join(t.tmp, "bad-env")
        t.menv_ok("create", "-p", p, *c, "app")
        rec = os.path.join(p, "conda-meta", "app-1.0-0.json")
        with open(rec, "wb") as f:
            f.write(content)
        os.symlink(outside, os.path.join(p, "link-out"))
        for n in os.listdir(t.pkgs):   # the package has left the cache too
            if n.startswith("app-1.0-0"):
                q = os.path.join(t.pkgs, n)
                shutil.rmtree(q) if os.path.isdir(q) and not os.path.islink(q) else os.remove(q)
        keep_before, out_before = tree(keep), tree(outside)
        t.check(p in registered(), "%s: the environment is registered" % label)
        r = t.menv_run(*cmd, "-y", "-p", p)
        t.eq(r.rc, 0, "%s: exit 0" % label)
        if r.rc:
            print(r)
        warn = [l for l in r.err.splitlines() if l.startswith("menv: warning: ")]
        t.check(len(warn) == 1 and rec in warn[0] and "not a readable package record" in warn[0],
                "%s: one warning naming the record" % label, r.err)
        t.check(not os.path.lexists(p), "%s: the prefix is gone" % label)
        t.check(p not in registered(), "%s: the registry no longer names it" % label,
                registered())
        t.eq(tree(outside), out_before, "%s: the folder a link inside pointed at is untouched"
             % label)
        t.eq(tree(keep), keep_before, "%s: a bystander environment is untouched" % label)
        t.eq(listed(), [keep], "%s: env list shows the bystander only" % label)
        t.menv_ok("create", "-n", "tmp-restock", *c, "app")   # the cache holds app again
        t.menv_ok("env", "remove", "-y", "-n", "tmp-restock")

    # ---- 2. a create killed at each crash point
    x = os.path.join(t.envs, "x")
    n, points, finished, halves = 1, 0, 0, 0
    while n < 100:
        r = t.menv_run("create", "-n", "x", *c, "app", env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            t.check(os.path.isfile(os.path.join(x, "conda-meta", "history")),
                    "the create not killed (N=%d) made x" % n, r)
            break
        if not t.check(r.rc == -9, "create killed at point %d" % n, r):
            break
        points += 1
        # whole: conda-meta/history there and no journal, or one that committed (its last
        # record 'K'), and no `.menv-creating` mark (dropped after its last step, the
        # registry line); a journal starting with the create's 'N' record that did not
        # commit, or the mark, is a half-made environment
        journal = os.path.join(x, "conda-meta", ".menv-txn", "journal")
        recs = [r for r in open(journal, "rb").read().split(b"\0")[:-1]] \
            if os.path.isfile(journal) else []
        existed = os.path.isdir(x)
        marked = os.path.exists(os.path.join(x, "conda-meta", ".menv-creating"))
        whole = os.path.isfile(os.path.join(x, "conda-meta", "history")) and (
            not recs or recs[-1][:1] == b"K") and not marked
        half = existed and ((recs[:1] and recs[0][:1] == b"N") or marked) and not whole
        halves += 1 if half else 0
        shown = listed()
        t.eq(shown, [keep, x] if whole else [keep],
             "point %d: env list shows the environment only when it is whole" % n)
        for i, cmd in enumerate((["shell", "activate", "--shell", "bash", "x"],
                                 ["list", "-n", "x"], ["env", "remove", "-y", "-n", "x"])):
            rr = t.menv_run(*cmd)
            if whole:
                t.eq(rr.rc, 0, "point %d: the committed create is finished and works: menv %s"
                     % (n, " ".join(cmd[:2])))
                continue
            if rr.rc == 0:
                continue
            last = rr.err.splitlines()[-1] if rr.err else ""
            t.eq(rr.rc, 1, "point %d: menv %s on the half environment: exit 1" % (n, cmd[0]))
            t.check(last.startswith("menv: error: ") and "not found" in last
                    and "not a conda environment" not in last,
                    "point %d: menv %s: says 'not found'" % (n, " ".join(cmd[:2])), rr.err)
            if i == 0 and half:
                # the first command that touches it removes it and says why
                t.check("interrupted create left it incomplete" in last,
                        "point %d: the first command says an interrupted create left it "
                        "incomplete" % n, rr.err)
        finished += 1 if whole else 0
        t.check(not os.path.lexists(x), "point %d: nothing of x is left" % n)
        t.eq([e for e in os.listdir(t.envs) if e.startswith(".x.")], [],
             "point %d: no staging folder left once env list ran" % n)
        t.check(x not in registered(), "point %d: x is not registered" % n)
        n += 1
    t.check(points >= 5, "create has crash points (%d)" % points)
    t.check(halves >= 1, "at least one crash point leaves a half-made environment in place (%d)"
            % halves)
    t.note("create: %d crash points, %d left a half-made environment in place, %d after the "
           "commit" % (points, halves, finished))
    t.menv_ok("env", "remove", "-y", "-n", "x")

    # ---- a registered prefix with conda-meta/ but no history: not listed, removable
    p = os.path.join(t.tmp, "nohist")
    t.menv_ok("create", "-p", p, *c, "app")
    os.remove(os.path.join(p, "conda-meta", "history"))
    t.check(p in registered(), "no history: still registered")
    t.eq(listed(), [keep], "no history: not listed (conda's is_conda_environment)")
    t.menv_ok("env", "remove", "-y", "-p", p)
    t.check(not os.path.lexists(p), "no history: env remove -p removed it")
    t.check(p not in registered(), "no history: the registry no longer names it")
    # a folder without conda-meta/ is never removed
    q = os.path.join(t.tmp, "notenv")
    os.makedirs(os.path.join(q, "data"))
    r = t.menv_run("env", "remove", "-y", "-p", q)
    t.check(r.rc == 1 and os.path.isdir(os.path.join(q, "data")),
            "a folder without conda-meta/ is refused and kept", r)


if __name__ == "__main__":
    main(body, "half_env")

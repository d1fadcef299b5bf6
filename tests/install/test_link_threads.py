"""A create's packages linked on threads (issue 25, envs/linkpool.c): the prefix of a parallel
link (MENV_LINK_THREADS=4) is the serial one's (MENV_LINK_THREADS=1) path for path (kind,
mode, sha256 or link target, which files share an inode), with the same conda-meta records
and history; packages that write one path (a clobber) link one after the other as conda
orders them, with the same ClobberWarning and the later package's file; a SIGKILL at every
crash point of a parallel link, and a Ctrl-C in the middle of one, leave no prefix and no
staging directory (or the whole prefix, past its rename) once the next command ran."""
import json
import os
import shutil

from insttest import PH, diff, main, pkg, snapshot

N = 12  # packages beside `core`


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "core", "1.0", files={
        "lib/libcore.so": b"\x7fELF" + b"\0" * 40,
        "lib/libcore.so.1": {"symlink": "libcore.so"},
        "lib/pkgconfig/core.pc": {"data": "prefix=%s\nlibdir=${prefix}/lib\n" % PH,
                                  "placeholder": PH},
        "bin/core": {"data": "#!/bin/sh\necho core\n", "mode": 0o755},
        "etc/core.conf": {"data": "core\n", "no_link": True},
        "share/doc/core/README": "core\n"})
    names = []
    for i in range(N):
        name = "part%02d" % i
        names.append(name)
        files = {
            "lib/lib%s.so" % name: b"\x7fELF" + bytes([i]) * 30,
            "include/%s/%s.h" % (name, name): "#define N %d\n" % i,
            "share/doc/%s/README" % name: "%s\n" % name,
            "share/deep/a/b/c/%s.txt" % name: "deep %d\n" % i,
            "bin/%s" % name: {"data": "#!/bin/sh\necho %d\n" % i, "mode": 0o755},
        }
        if i % 3 == 0:
            files["etc/%s.conf" % name] = {"data": "home=%s/%s\n" % (PH, name),
                                           "placeholder": PH}
        if i % 4 == 1:
            files["lib/lib%s.so.1" % name] = {"symlink": "lib%s.so" % name}
        pkg(ch, name, "1.0", depends=["core"], files=files)
    pkg(ch, "meta", "1.0", depends=names, files={
        "bin/.meta-post-link.sh": "ls \"$PREFIX/share/doc\" > \"$PREFIX/share/meta-docs\"\n"})
    # ships part03's README: the two cannot link at once
    pkg(ch, "clash", "1.0", depends=["part03"], files={"share/doc/part03/README": "clash\n"})
    t.index(ch)
    return t.url(ch)


def state(prefix):
    """The payload (with the groups of files sharing an inode), every record's contents and
    the history with its block headers' times left out."""
    snap = snapshot(prefix, hardlinks=True)
    meta = {}
    for k in sorted(snap):
        if k.startswith("conda-meta/") and k.endswith(".json"):
            with open(os.path.join(prefix, k)) as f:
                meta[k] = json.load(f)
    with open(os.path.join(prefix, "conda-meta", "history")) as f:
        hist = ["==> <==" if line.startswith("==> ") else line.rstrip("\n") for line in f]
    payload = {k: v for k, v in snap.items() if not k.startswith("conda-meta")}
    return payload, meta, hist


def strays(t, prefix):
    return [n for n in os.listdir(os.path.dirname(prefix)) if ".menv-tmp-" in n]


def body(t):
    c = ["-q", "-c", channel(t), "--override-channels"]
    p = os.path.join(t.tmp, "envs", "e")
    log = os.path.join(t.tmp, "threads.log")

    def create(threads, *specs, env=None):
        if os.path.lexists(p):
            shutil.rmtree(p)
        if os.path.exists(log):
            os.remove(log)
        e = dict(env or {}, MENV_LINK_THREADS=str(threads), MENV_TEST_LINK_THREADS_LOG=log)
        r = t.menv_run("create", "-p", p, *c, *specs, env=e)
        used = open(log).read().split() if os.path.exists(log) else []
        return r, used

    # ---- disjoint packages: the parallel prefix is the serial one
    r, used = create(1, "meta")
    if not t.check(r.rc == 0, "serial create", r):
        return
    t.eq(used, [], "MENV_LINK_THREADS=1 links one package after the other")
    serial = state(p)
    t.eq(len(serial[1]), N + 2, "records of core, meta and the %d parts" % N)
    t.check("share/meta-docs" in serial[0], "meta's post-link script ran")
    for threads in (2, 4):
        r, used = create(threads, "meta")
        if not t.check(r.rc == 0, "create with %d threads" % threads, r):
            return
        t.eq(used, [str(threads)], "the create linked on %d threads" % threads)
        got = state(p)
        t.check(got == serial, "%d threads: the same payload, records and history as the "
                "serial create" % threads, diff(serial[0], got[0]) +
                ("" if got[1] == serial[1] else "\nrecords differ") +
                ("" if got[2] == serial[2] else "\nhistory differs"))
    # a payload file checked by value, not only against the serial run
    with open(os.path.join(p, "etc", "part03.conf")) as f:
        t.eq(f.read(), "home=%s/part03\n" % p, "the placeholder was replaced")
    t.eq(os.readlink(os.path.join(p, "lib", "libpart01.so.1")), "libpart01.so",
         "a package's link is a link")

    # ---- two packages ship one path: serial, conda's order, the later one's bytes
    r1, used1 = create(1, "meta", "clash")
    ref = state(p) if r1.rc == 0 else None
    r4, used4 = create(4, "meta", "clash")
    if t.check(r1.rc == 0 and r4.rc == 0, "creates with a clobber", str(r1) + str(r4)):
        t.eq(used4, [], "packages sharing a path are not linked on threads")
        t.check(state(p) == ref, "with a clobber: the serial prefix")
        with open(os.path.join(p, "share", "doc", "part03", "README")) as f:
            t.eq(f.read(), "clash\n", "the later package's file (clash links after part03)")
        t.check("ClobberWarning" in r4.err and "share/doc/part03/README" in r4.err,
                "the clobber is reported", r4)

    # ---- a kill at every crash point of a parallel create: nothing left behind
    n, points = 1, 0
    while n < 400:
        r, used = create(4, "meta", env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            t.check(state(p) == serial, "the create completes with the serial prefix when not "
                    "killed")
            break
        if not t.check(r.rc == -9, "killed at step %d (exit %s)" % (n, r.rc), r):
            break
        points += 1
        # the next command on the prefix recovers: no prefix, or the whole one (a kill after
        # the staging directory was renamed into place finishes or removes it)
        r2 = t.menv_run("list", "-p", p)
        t.check(not os.path.lexists(p) or state(p) == serial,
                "step %d: after a kill the prefix is absent or complete" % n, r2)
        if os.path.lexists(p):
            shutil.rmtree(p)
        r3 = t.menv_run("create", "-p", p, *c, "core")
        t.check(r3.rc == 0, "step %d: a create after the kill" % n, r3)
        t.eq(strays(t, p), [], "step %d: the next create removed the staging directory" % n)
        n += 1
    t.check(points >= 5 * N, "a crash point for each file linked on threads (%d)" % points)
    t.note("parallel create: %d crash points" % points)

    # ---- Ctrl-C in the middle of the parallel link
    for step in (N, 3 * N):
        r, used = create(4, "meta", env={"MENV_TEST_CRASH_AFTER": str(step),
                                         "MENV_TEST_CRASH_SIGNAL": "INT"})
        t.eq(r.rc, 130, "Ctrl-C at step %d: exit 130" % step)
        t.check("interrupted" in r.err and "was not created" in r.err,
                "Ctrl-C at step %d: says the prefix was not created" % step, r)
        t.check(not os.path.lexists(p), "Ctrl-C at step %d: no prefix" % step)
        t.eq(strays(t, p), [], "Ctrl-C at step %d: no staging directory" % step)


if __name__ == "__main__":
    main(body)

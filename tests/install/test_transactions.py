"""Transactions: Ctrl-C in the middle of an install leaves the prefix byte-identical; SIGKILL at
every journaled step of create, install and remove (MENV_TEST_CRASH_AFTER=N) is finished or
rolled back by the next menv command to exactly the before or the after state; the package
cache still verifies; two installs into one prefix wait for each other (or fail cleanly with
--no-wait); four creates from one cold cache extract each package once."""
import os
import shutil
import signal
import subprocess
import time

from insttest import PH, diff, main, pkg, records, snapshot, state, verify_cache


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base/a.txt": "base one\n",
                                 "share/base/old-only.txt": "gone in 2.0\n",
                                 "bin/base-tool": {"data": "#!/bin/sh\necho 1\n", "mode": 0o755}})
    pkg(ch, "base", "2.0", files={"share/base/a.txt": "base two\n",
                                 "share/base/new.txt": "new\n",
                                 "lib/deep/er/x.so": b"\x7fELF" + b"\0" * 20,
                                 "bin/base-tool": {"data": "#!/bin/sh\necho 2\n", "mode": 0o755}})
    pkg(ch, "app", "1.0", depends=["base"], files={
        "share/app/app.txt": "app\n",
        "etc/app.conf": {"data": "prefix=%s\n" % PH, "placeholder": PH},
        "bin/.app-post-link.sh": "echo linked > \"$PREFIX/share/app/post-linked\"\n"})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"})
    t.index(ch)
    return t.url(ch)


def crash_series(t, what, prefix, pristine, cmd, before, after, env=None, create=False):
    """Runs cmd with MENV_TEST_CRASH_AFTER=1,2,... until it completes; after each crash the
    next menv command must leave `before` or `after`. Returns the number of crash points."""
    n, points, seen = 1, 0, set()
    while n < 500:
        if os.path.lexists(prefix):
            shutil.rmtree(prefix)
        for stray in os.listdir(os.path.dirname(prefix)):
            if ".menv-tmp-" in stray:
                shutil.rmtree(os.path.join(os.path.dirname(prefix), stray))
        if pristine:
            shutil.copytree(pristine, prefix, symlinks=True)
        e = dict(env or {}, MENV_TEST_CRASH_AFTER=str(n))
        r = t.menv_run(*cmd, env=e)
        if r.rc == 0:
            t.eq(state(prefix), after, "%s: completes when not killed" % what)
            break
        if not t.check(r.rc == -9, "%s: killed at step %d (exit %s)" % (what, n, r.rc), r):
            break
        points += 1
        # the next command recovers
        r2 = t.menv_run("list", "-p", prefix)
        if create and not os.path.exists(prefix):
            got = "absent"
        else:
            got = state(prefix)
        ok = got == before or got == after
        if not ok:
            t.check(False, "%s: after a kill at step %d the prefix is the before or the after "
                    "state" % (what, n), diff(before[0] if before != "absent" else {},
                                              got[0] if got != "absent" else {}) + "\n" + str(r2))
        seen.add("before" if got == before else "after")
        t.check(not os.path.exists(os.path.join(prefix, "conda-meta", ".menv-txn")),
                "%s: step %d: no journal left after recovery" % (what, n))
        n += 1
    t.note("%s: %d crash points, states seen: %s" % (what, points, sorted(seen)))
    return points


def body(t):
    url = channel(t)
    c = ["-q", "-c", url, "--override-channels"]
    p = os.path.join(t.tmp, "envs", "p")
    os.makedirs(os.path.dirname(p))
    pristine = os.path.join(t.tmp, "pristine")

    # the before state: base 1.0 + other; the after state: base 2.0 + app + other
    t.menv_ok("create", "-p", p, *c, "base=1.0", "other")
    before = state(p)
    exact_before = snapshot(p)
    shutil.copytree(p, pristine, symlinks=True)
    t.menv_ok("install", "-p", p, *c, "base=2.0", "app")
    after = state(p)
    t.check(os.path.exists(os.path.join(p, "share/app/post-linked")), "post-link ran")
    shutil.copytree(p, pristine + "-after", symlinks=True)

    # ---- Ctrl-C while paused after the unlink phase: byte-identical prefix
    shutil.rmtree(p)
    shutil.copytree(pristine, p, symlinks=True)
    proc = subprocess.Popen([t.menv, "install", "-p", p, *c, "base=2.0", "app"],
                            env=t.environ({"MENV_TEST_PAUSE_AFTER_UNLINK": "20"}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    journal = os.path.join(p, "conda-meta", ".menv-txn", "journal")
    deadline = time.time() + 30
    while time.time() < deadline and (not os.path.exists(journal) or os.path.exists(
            os.path.join(p, "conda-meta", "base-1.0-0.json"))):
        time.sleep(0.05)
    t.check(not os.path.exists(os.path.join(p, "share/base/old-only.txt")),
            "Ctrl-C: the old files are gone while paused (unlink happened)")
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    t.eq(proc.returncode, 130, "Ctrl-C: exit status 130")
    t.check(b"rolled back" in err, "Ctrl-C: says the prefix was rolled back", err)
    t.eq(snapshot(p), exact_before, "Ctrl-C: prefix byte-identical to before")

    # ---- SIGKILL while paused: the next command rolls back and says so, whether it changes
    # the environment or only reads it (tryout finding: export, run and activate used the
    # half-changed environment)
    def kill_mid_install():
        proc = subprocess.Popen([t.menv, "install", "-p", p, *c, "base=2.0", "app"],
                                env=t.environ({"MENV_TEST_PAUSE_AFTER_UNLINK": "20"}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while time.time() < deadline and os.path.exists(
                os.path.join(p, "conda-meta", "base-1.0-0.json")):
            time.sleep(0.05)
        time.sleep(0.2)
        proc.kill()
        proc.communicate()

    kill_mid_install()
    t.check(snapshot(p) != exact_before, "kill -9: the prefix is mid-transaction")
    for reader in (["list", "-p", p], ["export", "-p", p], ["run", "-p", p, "true"],
                   ["shell", "activate", "--shell", "bash", p]):
        if reader[0] != "list":
            kill_mid_install()
        r = t.menv_run(*reader)
        t.check(r.rc == 0 and "rolled back an interrupted transaction" in r.err,
                "kill -9 then menv %s: rolls back first and says so" % reader[0], r)
        t.eq(snapshot(p), exact_before, "kill -9 then menv %s: byte-identical to before"
             % reader[0])

    # ---- kill at every step
    total = 0
    total += crash_series(t, "install", p, pristine, ["install", "-p", p, *c, "base=2.0", "app"],
                          before, after)
    total += crash_series(t, "remove", p, pristine + "-after", ["remove", "-q", "-p", p, "app"],
                          after, state_after_remove(t, pristine + "-after", p, c))
    q = os.path.join(t.tmp, "envs", "new")
    t.menv_ok("create", "-p", q, *c, "app")  # the after state, at the same path
    ref = state(q)
    shutil.rmtree(q)
    total += crash_series(t, "create", q, None, ["create", "-p", q, *c, "app"], "absent", ref,
                          create=True)
    t.check(total >= 50, "at least 50 crash points over create, install and remove (%d)" % total)
    t.note("crash points: %d" % total)
    t.menv_ok("create", "-p", q + "2", *c, "app")
    stray = [n for n in os.listdir(os.path.dirname(q)) if ".menv-tmp-" in n]
    t.eq(stray, [], "a later create removed stale staging directories")
    verify_cache(t)

    # ---- two installs into one prefix
    shutil.rmtree(p)
    shutil.copytree(pristine, p, symlinks=True)
    first = subprocess.Popen([t.menv, "install", "-p", p, *c, "app"],
                             env=t.environ({"MENV_TEST_PAUSE_AFTER_UNLINK": "3"}),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and not os.path.exists(
            os.path.join(p, "conda-meta", ".menv-txn", "journal")):
        time.sleep(0.05)
    r = t.menv_run("install", "-p", p, *c, "--no-wait", "base=2.0")
    t.one_line_error(r, "second install with --no-wait", ["locked"])
    second = subprocess.Popen([t.menv, "install", "-p", p, *c, "base=2.0"], env=t.environ(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    o1, e1 = first.communicate(timeout=60)
    o2, e2 = second.communicate(timeout=60)
    t.check((first.returncode, second.returncode) == (0, 0), "both installs succeed", e1 + e2)
    t.check(b"waiting for another menv process" in e2, "the second one said it waits", e2)
    recs = records(p)
    t.eq(sorted((n, r["version"]) for n, r in recs.items()),
         [("app", "1.0"), ("base", "2.0"), ("other", "1.0")], "both changes are in the prefix")
    t.check(os.path.exists(os.path.join(p, "share/base/new.txt")) and
            not os.path.exists(os.path.join(p, "share/base/old-only.txt")),
            "files of base 2.0, none of 1.0")

    # ---- four creates from one cold cache
    shutil.rmtree(t.pkgs)
    procs = [subprocess.Popen([t.menv, "create", "-p", os.path.join(t.tmp, "envs", "c%d" % i),
                               "-c", url, "--override-channels", "app", "other"],
                              env=t.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i in range(4)]
    outs = [pr.communicate(timeout=120) for pr in procs]
    t.check([pr.returncode for pr in procs] == [0] * 4, "four concurrent creates succeed",
            b"".join(e for _, e in outs))
    extracted = sum(e.count(b"extracted ") for _, e in outs)
    t.eq(extracted, 3, "each package (app, base, other) extracted once")
    refs = [sorted(state(os.path.join(t.tmp, "envs", "c%d" % i))[1]) for i in range(4)]
    t.check(all(r == refs[0] for r in refs), "four identical environments")
    verify_cache(t)


def state_after_remove(t, src, p, c):
    tmp = p + "-rm-ref"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    shutil.copytree(src, p if not os.path.exists(p) else tmp, symlinks=True)
    # compute at the real path (files hold the prefix)
    if os.path.exists(p):
        shutil.rmtree(p)
    shutil.copytree(src, p, symlinks=True)
    t.menv_ok("remove", "-q", "-p", p, "app")
    s = state(p)
    shutil.rmtree(tmp, ignore_errors=True)
    return s


if __name__ == "__main__":
    main(body)

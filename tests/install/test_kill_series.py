"""Every multi-step command goes through the journal (issue 22): SIGKILL at each crash point
(MENV_TEST_CRASH_AFTER=N) of `update`, `install --revision N`, `env create -f`, `create -f
LOCK` (an explicit lock and a conda-lock file; the part "create") leaves the environment (records, files and
history, the registry and the envs folder) exactly as before the command or as after it, once
the next command (`menv list`) ran, and that command says which when it had something to
settle; a create killed leaves no environment, and `env list` nothing beside the
environments. `clean --all` killed at each of its points leaves a cache whose folders are each a
whole extracted package (or gone), and the next install from it links verified files."""
import os
import re
import shutil
import subprocess

from insttest import PH, envs_keeper, kill_series, main, pkg, records, state, verify_cache
from menvtest import write_text


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base/a.txt": "base one\n",
                                 "share/base/old-only.txt": "gone in 2.0\n"})
    pkg(ch, "base", "2.0", files={"share/base/a.txt": "base two\n",
                                 "share/base/new.txt": "new\n",
                                 "bin/base-tool": {"data": "#!/bin/sh\necho 2\n", "mode": 0o755}})
    pkg(ch, "app", "1.0", depends=["base"], files={
        "share/app/app.txt": "app\n",
        "etc/app.conf": {"data": "prefix=%s\n" % PH, "placeholder": PH},
        "bin/.app-post-link.sh": "echo linked > \"$PREFIX/share/app/post-linked\"\n"})
    t.index(ch)
    return t.url(ch)


def body(t, part):
    url = channel(t)
    c = ["-q", "-c", url, "--override-channels"]
    reg = os.path.join(t.home, ".conda", "environments.txt")
    p = os.path.join(t.envs, "p")
    saved = os.path.join(t.tmp, "saved")

    save, restore = envs_keeper(t, reg, saved)

    def observe(prefix):
        def f():
            lines = sorted(l.strip() for l in open(reg)) if os.path.exists(reg) else []
            other = sorted(n for n in os.listdir(t.envs) if n != os.path.basename(prefix))
            return state(prefix), lines, other
        return f

    def series(what, cmd, prefix):
        """before: the saved state; after: cmd's; then a kill at every point."""
        save()
        before = observe(prefix)()
        r = t.menv_run(*cmd)
        if not t.check(r.rc == 0, "%s: completes" % what, r):
            return []
        after = observe(prefix)()
        t.check(before != after, "%s: changes the environment" % what)
        # `env list` removes what a killed create left beside the environments
        nxt = [["list", "-p", prefix], ["env", "list"]]
        return kill_series(t, what, cmd, restore, observe(prefix), before, after, nxt,
                           prefix=prefix)

    total = []
    os.makedirs(t.envs)
    if part == "create":
        return creates(t, c, url, p, series)
    # ---- update: base 1.0 -> 2.0 under app
    t.menv_ok("create", "-p", p, *c, "base=1.0", "app")
    total += series("update", ["update", "-p", p, *c, "base"], p)
    t.eq(sorted((k, v["version"]) for k, v in records(p).items()),
         [("app", "1.0"), ("base", "2.0")], "update: base 2.0 under app")

    # ---- install --revision 0: back to base 1.0 alone (app removed, base downgraded)
    shutil.rmtree(p)
    t.menv_ok("create", "-p", p, *c, "base=1.0")
    t.menv_ok("install", "-p", p, *c, "base=2.0", "app")
    total += series("install --revision 0", ["install", "-p", p, *c, "--revision", "0"], p)
    t.eq(sorted(records(p)), ["base"], "--revision 0: base alone")

    t.check(len(total) >= 20, "at least 20 crash points over update and --revision (%d)"
            % len(total))
    t.check(any(w == "a" for _, w in total) and any(w == "b" for _, w in total),
            "kills that end before and after")

    # ---- clean --all killed at each point: the cache stays whole (base 1.0 unused now)
    shutil.rmtree(p)
    cache_saved = os.path.join(t.tmp, "cache-saved")
    subprocess.run(["cp", "-a", t.pkgs, cache_saved], check=True)

    def restore_cache():
        shutil.rmtree(t.pkgs)
        subprocess.run(["cp", "-a", cache_saved, t.pkgs], check=True)

    def entries():
        return sorted(n for n in os.listdir(t.pkgs) if not n.startswith(".menv"))

    entries_before = entries()
    points = asides = 0
    for k in range(1, 100):
        restore_cache()
        r = t.menv_run("clean", "--all", "-q", env={"MENV_TEST_CRASH_AFTER": str(k)})
        if r.rc == 0:
            break
        if not t.check(r.rc == -9, "clean --all: killed at point %d" % k, r):
            break
        points += 1
        left = entries()
        asides += any(re.fullmatch(r"\..*\.tmp-......", x) for x in left)
        left = [x for x in left if not re.fullmatch(r"\..*\.tmp-......", x)]
        t.check(set(left) <= set(entries_before),
                "clean --all: point %d: no new names in the cache but menv's temporaries"
                % k, sorted(set(left) - set(entries_before)))
        verify_cache(t, "clean --all, point %d: the cache" % k)
        q = os.path.join(t.tmp, "after-clean")
        if os.path.exists(q):
            shutil.rmtree(q)
        t.menv_ok("create", "-p", q, *c, "app")
        t.eq(open(os.path.join(q, "share", "base", "a.txt")).read(), "base two\n",
             "clean --all, point %d: the next create links base 2.0's file" % k)
        t.eq(open(os.path.join(q, "etc", "app.conf")).read(), "prefix=%s\n" % q,
             "clean --all, point %d: and app's" % k)
        t.eq([n for n in os.listdir(t.pkgs) if ".tmp-" in n], [],
             "clean --all, point %d: the next command left no temporary in the cache" % k)
        verify_cache(t, "clean --all, point %d, after the next create: the cache" % k)
    t.note("clean --all: %d crash points" % points)
    t.check(points >= 3, "clean --all: a crash point per entry it removes (%d)" % points)
    t.check(asides >= 1, "clean --all: kills between a folder's move aside and its removal "
            "(%d)" % asides)


def creates(t, c, url, p, series):
    """env create -f, create -f explicit, create -f conda-lock."""
    total = []
    t.menv_ok("create", "-p", p, *c, "base=1.0")   # another environment, left alone
    # the locks and the environment file are written from this environment
    ref = os.path.join(t.tmp, "ref")
    t.menv_ok("create", "-p", ref, *c, "app")
    explicit = os.path.join(t.tmp, "explicit.txt")
    write_text(explicit, t.menv_ok("export", "-p", ref, "--format", "explicit").out)
    conda_lock = os.path.join(t.tmp, "conda-lock.yml")
    write_text(conda_lock, t.menv_ok("export", "-p", ref).out)
    envfile = os.path.join(t.tmp, "environment.yml")
    write_text(envfile, "name: ignored\nchannels: [%s, nodefaults]\ndependencies:\n"
               "  - app\n  - base=2.0\n" % url)

    # ---- creates from files: no environment, or the whole one (and registered)
    n = os.path.join(t.envs, "n")
    total += series("env create -f", ["env", "create", "-q", "-n", "n", "-f", envfile], n)
    t.menv_ok("env", "remove", "-y", "-q", "-n", "n")
    total += series("create -f explicit", ["create", "-q", "-n", "n", "-f", explicit], n)
    t.menv_ok("env", "remove", "-y", "-q", "-n", "n")
    total += series("create -f conda-lock", ["create", "-q", "-n", "n", "-f", conda_lock], n)
    t.check(len(total) >= 45, "at least 45 crash points over the three creates (%d)"
            % len(total))
    # a create's commit point is its last step (the mark of a complete environment dropped
    # after its registry line): every kill before it ends with no environment



if __name__ == "__main__":
    main(body, "kill_series")

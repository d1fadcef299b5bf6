"""install.remove_guard: `env remove` deletes only environments, and finishes its own
interrupted removals.

1. A folder holding only an empty conda-meta/ and the user's files (not an environment:
   conda's test is conda-meta/history) is refused by `env remove -p`, `remove --all -p` and
   `env remove -n` (a folder in envs/): exit 1, one line "... is not a conda environment",
   the folder byte for byte as it was (no lock file left either).
2. An `env remove` killed (MENV_TEST_CRASH_AFTER=N, SIGKILL) after its commit point
   (conda-meta/.menv-removing): then `list -n` and `shell activate` exit 1 saying the
   environment was not found (never "error: ok"); `env remove -n` exits 0 ("Removed");
   `create -n` finishes the removal and creates the environment; `doctor -n` names the
   interrupted removal (non-zero), `doctor --fix` finishes it.
3. An environment with no readable package records: `env remove` says the folder is removed,
   not "All requested packages already installed.".
"""
import os

from insttest import main, pkg, snapshot


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={"share/app/app.txt": "app\n"})
    t.index(ch)
    c = ["-q", "-y", "-c", t.url(ch), "--override-channels"]

    # ---- 1. not an environment: refused, nothing touched
    d = os.path.join(t.tmp, "x", "d")
    named = os.path.join(t.envs, "userdir")
    for top in (d, named):
        os.makedirs(os.path.join(top, "conda-meta"))
        with open(os.path.join(top, "f"), "w") as f:
            f.write("data\n")
    for label, top, cmd in (("env remove -p", d, ["env", "remove", "-y", "-p", d]),
                            ("remove --all -p", d, ["remove", "--all", "-y", "-p", d]),
                            ("env remove -n", named, ["env", "remove", "-y", "-n",
                                                      "userdir"])):
        before = snapshot(top, skip=())
        r = t.menv_run(*cmd)
        t.eq(r.rc, 1, "%s of a folder with an empty conda-meta/: exit 1" % label)
        t.check("is not a conda environment" in r.err and len(r.err.splitlines()) == 1,
                "%s: one line saying it is not a conda environment" % label, r)
        t.check("Removed" not in r.out, "%s: says nothing was removed" % label, r)
        t.eq(snapshot(top, skip=()), before, "%s: the folder is untouched" % label)

    # conda-meta/ holding names that end in .json but are no package record (`{}` in a home
    # folder's conda-meta/ made `env remove -p ~` delete the home folder): refused the same
    for kind in ("empty-object", "folder", "fifo", "dangling-link", "list"):
        top = os.path.join(t.tmp, "home-" + kind)
        meta = os.path.join(top, "conda-meta")
        os.makedirs(meta)
        with open(os.path.join(top, "notes.txt"), "w") as f:
            f.write("the user's\n")
        rec = os.path.join(meta, "a-1-0.json")
        if kind == "empty-object":
            with open(rec, "w") as f:
                f.write("{}")
        elif kind == "list":
            with open(rec, "w") as f:
                f.write('[{"name": "a", "version": "1", "build": "0"}]')
        elif kind == "folder":
            os.mkdir(rec)
        elif kind == "fifo":
            os.mkfifo(rec)
        else:
            os.symlink(os.path.join(t.tmp, "nowhere.json"), rec)
        for cmd in (["env", "remove", "-y", "-p", top], ["remove", "--all", "-y", "-p", top]):
            before = snapshot(top, skip=())
            r = t.menv_run(*cmd, timeout=60)
            label = "%s with conda-meta/a-1-0.json a %s" % (" ".join(cmd[:2]), kind)
            t.eq(r.rc, 1, label + ": exit 1")
            t.check("is not a conda environment" in r.err and len(r.err.splitlines()) == 1,
                    label + ": one line saying it is not a conda environment", r)
            t.eq(snapshot(top, skip=()), before, label + ": the folder is untouched")

    # ---- 2. an env remove killed after its commit point
    kr = os.path.join(t.envs, "kr")
    removing = os.path.join(kr, "conda-meta", ".menv-removing")

    def killed_at(n):
        """A fresh kr whose env remove is killed at point n: True when .menv-removing is
        left, False when not, None when the removal ran to its end."""
        t.menv_ok("create", "-n", "kr", *c, "app")
        r = t.menv_run("env", "remove", "-y", "-n", "kr", env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            return None
        t.eq(r.rc, -9, "env remove killed at point %d" % n)
        if not os.path.exists(removing):
            if os.path.lexists(kr):  # killed before the commit point: kr stays whole
                t.menv_ok("env", "remove", "-y", "-n", "kr")
            return False
        return True

    n, tested = 1, 0
    while n < 60:
        k = killed_at(n)
        if k is None:
            break
        if k:
            tested += 1
            for cmd in (["list", "-n", "kr"], ["shell", "activate", "--shell", "bash", "kr"]):
                r = t.menv_run(*cmd)
                what = "point %d: menv %s" % (n, " ".join(cmd[:2]))
                t.eq(r.rc, 1, what + " exits 1")
                t.check("not found" in r.err and "error: ok" not in r.err,
                        what + " says the environment was not found", r)
                t.check(not os.path.lexists(kr), what + ": the removal is finished", r)
                killed_at(n)
            r = t.menv_run("env", "remove", "-y", "-n", "kr")
            t.eq(r.rc, 0, "point %d: env remove finishes the interrupted removal: exit 0" % n)
            t.check("Removed" in r.out and "error" not in r.err,
                    "point %d: env remove says it removed it" % n, r)
            t.check(not os.path.lexists(kr), "point %d: env remove: kr is gone" % n)
            killed_at(n)
            r = t.menv_run("create", "-n", "kr", *c, "app")
            t.eq(r.rc, 0, "point %d: create -n kr after an interrupted removal: exit 0" % n)
            t.check(os.path.isfile(os.path.join(kr, "conda-meta", "history")) and
                    os.path.isfile(os.path.join(kr, "share", "app", "app.txt")) and
                    not os.path.exists(removing), "point %d: create made kr anew" % n, r)
            t.menv_ok("env", "remove", "-y", "-n", "kr")
            killed_at(n)
            r = t.menv_run("doctor", "-n", "kr")
            t.check(r.rc != 0 and "interrupted removal" in r.err,
                    "point %d: doctor names the interrupted removal" % n, r)
            r = t.menv_run("doctor", "--fix", "-n", "kr")
            t.check("error: ok" not in r.err and not os.path.lexists(kr),
                    "point %d: doctor --fix finishes the removal" % n, r)
        n += 1
    t.check(tested > 0, "some kill point left an interrupted removal (%d points)" % n)

    # ---- 3. no readable records: the removal says so
    t.menv_ok("create", "-n", "norec", *c, "app")
    meta = os.path.join(t.envs, "norec", "conda-meta")
    for f in os.listdir(meta):
        if f.endswith(".json"):
            os.remove(os.path.join(meta, f))
    r = t.menv_run("env", "remove", "-y", "-n", "norec")
    t.eq(r.rc, 0, "env remove of an environment without records: exit 0")
    t.check("already installed" not in r.out and "No package records" in r.out and
            "Removed" in r.out, "env remove says what it removed", r)
    t.check(not os.path.lexists(os.path.join(t.envs, "norec")), "norec is gone")


if __name__ == "__main__":
    main(body, "remove_guard")

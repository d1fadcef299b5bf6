"""Multi-step commands and a kill at each of their crash points (issue 22): `rename`, `rename
--force` and `env remove` run with MENV_TEST_CRASH_AFTER=1,2,... until they complete; after
each kill the next command (`menv list -n SRC`, then `menv env list`) leaves the FULL state of
the environments folder (every path, kind, mode, sha256 or link target, which files share an
inode) and the registry exactly as before the command or as after it, says which when it
changed something, and `env list` never shows an environment that is half there. Also: rename
keeps a hardlinked pair of files no package owns hardlinked (st_ino)."""
import os
import shutil

from insttest import PH, diff, envs_keeper, main, pkg, snapshot


def full(top):
    """path -> (kind, mode, sha256 | link target) for everything under top (hidden names
    included, .menv.lock files left out), plus the groups of paths that share an inode."""
    return snapshot(top, skip=(), skip_names=(".menv.lock",), hardlinks=True)


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={
        "etc/app.conf": {"data": "prefix=%s\n" % PH, "placeholder": PH},
        "share/app/app.txt": "app\n",
        "bin/.app-post-link.sh": "echo linked > \"$PREFIX/share/app/post-linked\"\n"})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    src, dst = os.path.join(t.envs, "src"), os.path.join(t.envs, "dst")
    reg = os.path.join(t.home, ".conda", "environments.txt")
    t.menv_ok("create", "-n", "src", *c, "app")
    t.menv_ok("create", "-n", "keep", *c, "other")   # a bystander
    # files no package owns: a hardlinked pair, a text file naming the prefix, a link
    os.makedirs(os.path.join(src, "data"))
    with open(os.path.join(src, "data", "a.bin"), "wb") as f:
        f.write(b"\x00pair\x00")
    os.link(os.path.join(src, "data", "a.bin"), os.path.join(src, "data", "b.bin"))
    with open(os.path.join(src, "data", "where.txt"), "w") as f:
        f.write("%s/data\n" % src)
    os.symlink(os.path.join(src, "data", "where.txt"), os.path.join(src, "where-link"))
    t.menv_ok("env", "config", "vars", "set", "-n", "src", "V=1")
    pristine = os.path.join(t.tmp, "pristine")

    save, restore = envs_keeper(t, reg, pristine)

    def state():
        lines = sorted(l.strip() for l in open(reg)) if os.path.exists(reg) else []
        return full(t.envs), lines

    def listed():
        r = t.menv_ok("env", "list", "--json")
        return sorted(p for p in r.json()["envs"] if p.startswith(t.envs))

    def series(what, cmd, expect_listed):
        """Kill cmd at every crash point; returns the number of points."""
        save()
        before = state()
        listed_before = listed()
        r = t.menv_run(*cmd)
        if not t.check(r.rc == 0, "%s: completes" % what, r):
            return 0
        after = state()
        t.eq(listed(), expect_listed, "%s: env list after it" % what)
        listed_after = listed()
        n, seen = 1, []
        while n < 300:
            restore()
            r = t.menv_run(*cmd, env={"MENV_TEST_CRASH_AFTER": str(n)})
            if r.rc == 0:
                t.eq(state(), after, "%s: the run not killed (N=%d) ends in the after state"
                     % (what, n))
                break
            if not t.check(r.rc == -9, "%s: killed at point %d" % (what, n), r):
                break
            pending = os.path.exists(src)   # not yet moved away whole
            nxt = t.menv_run("list", "-n", "src")
            # env list removes what a killed removal left beside the environments
            # (.NAME.menv-tmp-*, no longer locked)
            t.menv_ok("env", "list")
            got = state()
            which = "before" if got == before else "after" if got == after else None
            if which is None:
                t.check(False, "%s: kill at point %d leaves the before or the after state"
                        % (what, n), "vs before:\n" + diff(before[0], got[0], 15) +
                        "\nvs after:\n" + diff(after[0], got[0], 15) + "\n" + str(nxt) +
                        "\nregistry: %r" % (got[1],))
            else:
                seen.append((n, which))
                said = [l for l in nxt.err.splitlines() if "interrupted" in l]
                if which == "after" and pending:
                    t.check(said and "finished" in said[0],
                            "%s: point %d: the next command says it finished it" % (what, n),
                            nxt.err)
                elif said:
                    t.check("rolled back" in said[0],
                            "%s: point %d: the next command says it rolled back"
                            % (what, n), nxt.err)
            t.eq(listed(), listed_before if which == "before" else listed_after,
                 "%s: point %d: env list shows the before or after environments" % (what, n))
            n += 1
        restore()
        t.note("%s: %d crash points: %s" % (what, n - 1, " ".join(
            "%d:%s" % (k, w[0]) for k, w in seen)))
        return n - 1

    # ---- rename keeps hardlinks (and everything else) — checked once, then killed
    keep = os.path.join(t.envs, "keep")
    total = series("rename", ["rename", "-n", "src", "dst"], sorted([dst, keep]))
    t.menv_ok("rename", "-n", "src", "dst")
    a, b = os.stat(os.path.join(dst, "data", "a.bin")), os.stat(os.path.join(dst, "data", "b.bin"))
    t.check(a.st_ino == b.st_ino and a.st_nlink == 2,
            "rename: the hardlinked pair stays one file (st_ino %d, %d)" % (a.st_ino, b.st_ino))
    t.eq(open(os.path.join(dst, "data", "where.txt")).read(), "%s/data\n" % dst,
         "rename: a text file no package owns names the new prefix")
    restore()

    # ---- rename --force onto an existing environment
    t.menv_ok("create", "-n", "dst", *c, "other")
    total += series("rename --force", ["rename", "-n", "src", "dst", "--force"],
                    sorted([dst, keep]))
    shutil.rmtree(dst)
    with open(reg) as f:
        lines = [l for l in f if l.strip() != dst]
    with open(reg, "w") as f:
        f.writelines(lines)

    # ---- env remove
    total += series("env remove", ["env", "remove", "-y", "-q", "-n", "src"], [keep])
    t.check(total >= 30, "at least 30 crash points over rename, rename --force and env remove "
            "(%d)" % total)


if __name__ == "__main__":
    main(body, "kill_points")

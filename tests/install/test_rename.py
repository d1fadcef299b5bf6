"""menv rename and menv env remove, as conda's: rename clones the environment through the
transaction engine (every placeholder file, text and binary, written for the new prefix), copies
what no package owns (with the prefix replaced in text files and link targets), keeps history
and variables, removes the original and fixes the registry; it refuses base, the active
environment and an existing destination (unless --force), and --dry-run prints conda's
actions. env remove removes a whole environment, never base or the active one."""
import os

from insttest import PH, main, pkg, records
from menvtest import write_text

LONG_PH = "/opt/build/" + "_placehold" * 24   # conda-build's long binary placeholder
BIN = b"\x7fELF\x00" + LONG_PH.encode() + b"/lib\x00tail\x00"


def registry(t):
    p = os.path.join(t.home, ".conda", "environments.txt")
    return [l.strip() for l in open(p)] if os.path.exists(p) else []


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "app", "1.0", files={
        "etc/app.conf": {"data": "prefix=%s\n" % PH, "placeholder": PH},
        "lib/libapp.so": {"data": BIN, "placeholder": LONG_PH, "file_mode": "binary"},
        "bin/app": {"data": "#!/bin/sh\necho %s\n" % PH, "placeholder": PH, "mode": 0o755},
        "share/app/plain.txt": "plain\n"})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"})
    t.index(ch)
    c = ["-c", t.url(ch), "--override-channels"]
    a, b = os.path.join(t.envs, "a"), os.path.join(t.envs, "b")
    t.menv_ok("create", "-q", "-n", "a", *c, "app")
    t.menv_ok("env", "config", "vars", "set", "-n", "a", "MY_VAR=one")
    # what no package owns: a pip-like file that names the prefix, a link into the prefix
    os.makedirs(os.path.join(a, "lib", "site"))
    with open(os.path.join(a, "lib", "site", "user.pth"), "w") as f:
        f.write("%s/lib/site/extra\n" % a)
    os.symlink(os.path.join(a, "share", "app", "plain.txt"), os.path.join(a, "plain-link"))
    recs_a = records(a)
    state_a = open(os.path.join(a, "conda-meta", "state")).read()
    hist_a = open(os.path.join(a, "conda-meta", "history")).read()
    t.check(a in registry(t), "the registry lists a", registry(t))

    # --dry-run: conda's two action lines, nothing changed
    r = t.menv_ok("rename", "-n", "a", "b", "--dry-run")
    t.eq(r.out, "Dry run action: clone %s,%s\nDry run action: rm_rf %s\n" % (a, b, a),
         "rename --dry-run prints conda's actions")
    t.check(os.path.isdir(a) and not os.path.exists(b), "--dry-run changed nothing")

    r = t.menv_ok("rename", "-n", "a", "b")
    t.eq(r.out, "Renamed %s to %s: 1 package linked, 2 files no package owns copied\n"
         % (a, b), "rename: its line")
    t.check(not os.path.exists(a), "rename: the original is gone")
    t.eq(sorted(records(b)), sorted(recs_a), "rename: the same records")
    rb = records(b)["app"]
    t.eq({k: rb.get(k) for k in ("url", "md5", "sha256", "version", "build", "files")},
         {k: recs_a["app"].get(k) for k in ("url", "md5", "sha256", "version", "build",
                                            "files")},
         "rename: app's record (url, hashes, files)")
    t.eq(open(os.path.join(b, "etc/app.conf")).read(), "prefix=%s\n" % b,
         "rename: the text placeholder names the new prefix")
    data = open(os.path.join(b, "lib/libapp.so"), "rb").read()
    pad = len(LONG_PH) - len(b)
    t.eq(data, b"\x7fELF\x00" + b.encode() + b"/lib" + b"\x00" * (pad + 1) + b"tail\x00",
         "rename: the binary placeholder holds the new prefix, NUL-padded to its length")
    t.eq(os.stat(os.path.join(b, "bin/app")).st_mode & 0o777, 0o755, "rename: modes kept")
    t.eq(open(os.path.join(b, "lib/site/user.pth")).read(), "%s/lib/site/extra\n" % b,
         "rename: an untracked text file has the prefix replaced")
    t.eq(os.readlink(os.path.join(b, "plain-link")), os.path.join(b, "share/app/plain.txt"),
         "rename: an untracked link into the prefix points into the new one")
    t.eq(open(os.path.join(b, "conda-meta", "state")).read(), state_a,
         "rename: the environment's variables (conda-meta/state) follow")
    t.check(open(os.path.join(b, "conda-meta", "history")).read().startswith(hist_a),
            "rename: the history follows")
    reg = registry(t)
    t.check(b in reg and a not in reg, "rename: the registry names b, not a", reg)
    r = t.menv_ok("env", "list")
    t.check(b in r.out and a + "\n" not in r.out, "env list shows b", r.out)
    r = t.menv_ok("run", "-n", "b", "app")
    t.eq(r.out, "%s\n" % b, "the renamed environment's program runs and names its prefix")

    # refusals
    os.makedirs(os.path.join(t.root, "conda-meta"), exist_ok=True)   # a root environment
    r = t.menv_run("rename", "-n", "base", "x")
    t.one_line_error(r, "rename base", ["'base' environment cannot be renamed"], nonzero_only=True)
    r = t.menv_run("rename", "-n", "b", "x", env={"CONDA_PREFIX": b})
    t.one_line_error(r, "rename the active environment", ["active environment"], nonzero_only=True)
    t.menv_ok("create", "-q", "-n", "c", *c, "other")
    r = t.menv_run("rename", "-n", "b", "c")
    t.one_line_error(r, "rename onto an existing environment", ["'c' already exists",
                                                                 "--force"])
    t.eq(sorted(records(os.path.join(t.envs, "c"))), ["other"], "c is untouched")
    r = t.menv_run("rename", "-n", "b", "b")
    t.one_line_error(r, "rename to itself", ["already"], nonzero_only=True)

    # --force replaces an environment only: a folder of other files, a link to one, the
    # root prefix, the envs folder and / are refused and left as they were (a folder's files
    # were removed before)
    victim = os.path.join(t.tmp, "thesis")
    os.makedirs(victim)
    write_text(os.path.join(victim, "chapter1.tex"), "precious\n")
    link = os.path.join(t.tmp, "thesis-link")
    os.symlink(victim, link)
    for label, dest, needles in (
            ("a folder of other files", victim, ["'%s' exists and is not an environment" % victim]),
            ("a link to a folder", link, ["'%s' exists and is not an environment" % link]),
            ("the envs folder", t.envs, ["'%s' holds the environment '%s'" % (t.envs, b)]),
            ("the root prefix", t.root, ["'%s' holds the environment" % t.root]),
            ("/", "/", ["'/' holds the environment '%s'" % b])):
        r = t.menv_run("rename", "-n", "b", dest, "--force")
        t.one_line_error(r, "rename --force onto %s" % label, needles, nonzero_only=True)
        t.check(os.path.isdir(b), "rename --force onto %s: b is still there" % label)
    t.eq(open(os.path.join(victim, "chapter1.tex")).read(), "precious\n",
         "rename --force onto a folder: its file is kept")
    t.eq(os.readlink(link), victim, "rename --force onto a link: the link is kept")
    t.eq(sorted(os.listdir(t.envs)), ["b", "c"], "refused --force renames: nothing left aside")

    # --force replaces the destination
    t.menv_ok("rename", "-n", "b", "c", "--force")
    t.eq(sorted(records(os.path.join(t.envs, "c"))), ["app"], "--force: c is b's clone")
    t.check(not os.path.exists(b), "--force: b is gone")
    t.eq([n for n in os.listdir(t.envs) if "menv" in n], [], "--force: nothing left aside")

    # -p OLD and a path as the destination
    d = os.path.join(t.tmp, "elsewhere", "d")
    t.menv_ok("rename", "-p", os.path.join(t.envs, "c"), d)
    t.eq(open(os.path.join(d, "etc/app.conf")).read(), "prefix=%s\n" % d, "-p: moved to a path")

    # env remove
    r = t.menv_ok("env", "remove", "-p", d, "--dry-run")
    t.check(os.path.isdir(d), "env remove --dry-run keeps it")
    r = t.menv_run("env", "remove", "-p", d, "-y", env={"CONDA_PREFIX": d})
    t.one_line_error(r, "env remove of the active environment", ["active environment"], nonzero_only=True)
    os.makedirs(os.path.join(t.root, "conda-meta"), exist_ok=True)   # a root environment
    r = t.menv_run("env", "remove", "-n", "base", "-y")
    t.one_line_error(r, "env remove base", ["root environment", "cannot be removed"], nonzero_only=True)
    r = t.menv_run("env", "remove", "-n", "nope", "-y")
    t.check(r.rc != 0, "env remove of a missing environment fails", r)
    r = t.menv_ok("env", "remove", "-p", d, "-y")
    t.eq(r.out.splitlines()[-1], "Removed %s: 1 package" % d, "env remove: its line")
    t.check(not os.path.exists(d), "env remove: the prefix is gone")
    t.check(d not in registry(t), "env remove: the registry forgets it", registry(t))


if __name__ == "__main__":
    main(body, "rename")

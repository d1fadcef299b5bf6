#!/usr/bin/env python3
"""cli.readonly_cache: read-only package caches (issue 14; conda's pkgs_dirs and
PackageCacheData.first_writable).

pkgs_dirs lists caches in order; packages are looked up in each, new downloads and extractions
go into the first writable one. A cache is read-only two ways here, each checked:
- by its modes, with menv run as an unprivileged user (setpriv to nobody; root ignores modes),
- by a read-only bind mount, menv run as root (where this machine lets the test mount).
For each:
- create succeeds with every package in the read-only cache (one extracted, one only as its
  package file: extracted into the writable cache, not downloaded); the read-only tree is unchanged
  (every path, size, mtime, inode and file hash equal before and after: no lock, no urls.txt,
  no record rewritten) and the environment's records point into it;
- a package missing from it is downloaded and extracted into the writable one;
- with no writable cache (pkgs_dirs only the read-only one) create fails with one line
  naming it, and no prefix is left; clean says it removes nothing;
- create from an explicit lockfile reads the records there and writes none;
- `info --json` lists every pkgs_dirs entry in order; `clean --all` leaves the read-only
  cache alone.
"""
import json
import os
import shutil
import subprocess

import menvtest
from menvtest import sha256_file, tree_snapshot


def tree_hashes(top):
    snap = tree_snapshot(top)
    for rel, v in list(snap.items()):
        if v[0] == "f":
            snap[rel] = v + (sha256_file(os.path.join(top, rel)),)
    return snap


def chown_tree(top, uid, gid):
    os.chown(top, uid, gid)
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            os.lchown(os.path.join(d, n), uid, gid)


def scenario(t, what, chan, ro, rw, run):
    """`run(*args)` runs menv as the user for whom `ro` is read-only."""
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    before = tree_hashes(ro)
    t.set_rc("pkgs_dirs:\n  - %s\n  - %s\n" % (ro, rw))

    r = run("info", "--json")
    t.eq(r.rc, 0, "%s: info --json runs" % what)
    if r.rc == 0:
        t.eq(json.loads(r.out).get("pkgs_dirs"), [ro, rw],
             "%s: info --json lists every pkgs_dirs entry in order" % what)

    p = os.path.join(t.tmp, "envs-" + what, "a")
    r = run("create", "-p", p, *C, "dependent=2.0")
    t.eq(r.rc, 0, "%s: create with every package in the read-only cache succeeds" % what)
    if r.rc:
        print(r)
    t.eq(tree_hashes(ro), before, "%s: the read-only cache is unchanged by create" % what)
    rec = os.path.join(p, "conda-meta", "dependent-2.0-0.json")
    if t.check(os.path.exists(rec), "%s: dependent-2.0-0 is installed" % what):
        j = menvtest.read_json(rec)
        t.eq(j.get("extracted_package_dir"), os.path.join(ro, "dependent-2.0-0"),
             "%s: the record's extracted_package_dir is in the read-only cache" % what)
        t.eq(j.get("package_tarball_full_path"), os.path.join(ro, "dependent-2.0-0.conda"),
             "%s: package_tarball_full_path is in the read-only cache" % what)
    rec = os.path.join(p, "conda-meta", "dependency-2.0-0.json")
    if t.check(os.path.exists(rec), "%s: dependency-2.0-0 is installed" % what):
        t.eq(menvtest.read_json(rec).get("extracted_package_dir"),
             os.path.join(rw, "dependency-2.0-0"),
             "%s: a package only as a file in the read-only cache is extracted into the "
             "writable one" % what)
    left = sorted(n for n in (os.listdir(rw) if os.path.isdir(rw) else [])
                  if n.startswith("depend"))
    t.eq(left, ["dependency-2.0-0"], "%s: the writable cache got only that extraction (no "
         "download, nothing of the extracted one)" % what)

    # a lockfile's create reads the records the read-only cache holds, writes none there
    r = run("list", "-p", p, "--explicit", "--md5")
    lock = os.path.join(t.tmp, "envs-" + what, "explicit.txt")
    with open(lock, "w") as f:
        f.write(r.out)
    r = run("create", "-p", p + "-lock", "--file", lock, "-q", "-y")
    t.eq(r.rc, 0, "%s: create from an explicit lockfile with the read-only cache" % what)
    if r.rc:
        print(r)
    t.eq(sorted(n for n in os.listdir(os.path.join(p + "-lock", "conda-meta"))
                if n.endswith(".json")), ["dependency-2.0-0.json", "dependent-2.0-0.json"],
         "%s: the lockfile's packages are installed" % what)
    t.eq(tree_hashes(ro), before, "%s: the read-only cache is unchanged by the lock create"
         % what)

    r = run("install", "-p", p, *C, "small-executable")
    t.eq(r.rc, 0, "%s: install of a package missing from the read-only cache" % what)
    t.check(os.path.isfile(os.path.join(rw, "small-executable-1.0-0", "info",
                                        "repodata_record.json")),
            "%s: the missing package is extracted into the writable cache" % what)
    t.check(os.path.isfile(os.path.join(rw, "small-executable-1.0-0.conda")),
            "%s: its file is downloaded into the writable cache" % what)
    t.eq(tree_hashes(ro), before, "%s: the read-only cache is unchanged by install" % what)

    r = run("clean", "--all", "-q")
    t.eq(r.rc, 0, "%s: clean --all runs" % what)
    t.eq(tree_hashes(ro), before, "%s: clean --all leaves the read-only cache alone" % what)

    t.set_rc("pkgs_dirs:\n  - %s\n" % ro)
    q = os.path.join(t.tmp, "envs-" + what, "b")
    r = run("create", "-p", q, *C, "dependent=2.0")
    t.one_line_error(r, "%s: no writable cache" % what, ["no writable package cache", ro])
    t.no_prefix_left(q, "%s: no writable cache" % what)
    r = run("clean", "--all")
    t.check(r.rc == 0 and "no writable package cache among pkgs_dirs: nothing is removed" in r.err
            and "Removing from" not in r.out,
            "%s: clean with no writable cache removes nothing and says so" % what, r)
    t.eq(tree_hashes(ro), before, "%s: the read-only cache is unchanged at the end" % what)
    t.set_rc("")


def fill_cache(t, chan, cache):
    """A cache as a create leaves it (extracted dirs, package files, urls.txt, locks)."""
    p = os.path.join(t.tmp, "fill")
    t.menv_ok("create", "-p", p, "-c", t.url(chan), "--override-channels", "-q", "-y",
              "dependent=2.0", env={"CONDA_PKGS_DIRS": cache})
    t.menv_ok("remove", "-p", p, "--all", "-q", "-y", env={"CONDA_PKGS_DIRS": cache})
    for n in ("dependency-2.0-0", "dependent-2.0-0"):
        if not os.path.isdir(os.path.join(cache, n)):
            raise menvtest.Fatal("the cache to make read-only lacks %s" % n)
    # dependency only as its package file
    shutil.rmtree(os.path.join(cache, "dependency-2.0-0"))


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    names = ("dependency-2.0-0.conda", "dependent-2.0-0.conda", "small-executable-1.0-0.conda")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, f) for f in names]})
    ran = 0

    # ---- read-only by modes: menv as an unprivileged user
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv:
        import pwd
        nobody = pwd.getpwnam("nobody")
        ro = os.path.join(t.tmp, "ro-modes")
        fill_cache(t, chan, ro)
        rw = os.path.join(t.tmp, "rw-modes")
        chown_tree(t.tmp, nobody.pw_uid, nobody.pw_gid)
        chown_tree(ro, 0, 0)  # root's, 0755: read-only to nobody
        os.chmod(t.tmp, 0o755)

        def as_nobody(*args):
            args = [str(a) for a in args]
            p = subprocess.run([setpriv, "--reuid=%d" % nobody.pw_uid,
                                "--regid=%d" % nobody.pw_gid, "--clear-groups", t.menv,
                                *args], capture_output=True, env=t.environ(), cwd=t.tmp,
                               timeout=120)
            return menvtest.Result(args, p.returncode, p.stdout.decode("utf-8", "replace"),
                                   p.stderr.decode("utf-8", "replace"))

        scenario(t, "modes", chan, ro, rw, as_nobody)
        chown_tree(t.tmp, 0, 0)
        ran += 1
    elif os.geteuid() != 0:
        ro = os.path.join(t.tmp, "ro-modes")
        fill_cache(t, chan, ro)
        subprocess.run(["chmod", "-R", "a-w", ro], check=True)
        scenario(t, "modes", chan, ro, os.path.join(t.tmp, "rw-modes"), t.menv_run)
        subprocess.run(["chmod", "-R", "u+w", ro], check=True)
        ran += 1
    else:
        t.skip_part("no setpriv: the read-only-by-modes part")

    # ---- read-only by a read-only bind mount, menv as root
    if os.geteuid() == 0:
        ro = os.path.join(t.tmp, "ro-mount")
        fill_cache(t, chan, ro)
        ok = subprocess.run(["mount", "--bind", ro, ro], capture_output=True).returncode == 0
        if ok:
            try:
                ok = subprocess.run(["mount", "-o", "remount,bind,ro", ro],
                                    capture_output=True).returncode == 0
                if ok:
                    scenario(t, "mount", chan, ro, os.path.join(t.tmp, "rw-mount"), t.menv_run)
                    ran += 1
            finally:
                subprocess.run(["umount", ro], capture_output=True)
        if not ok:
            t.skip_part("read-only bind mounts are not allowed here: the bind-mount part")
    else:
        t.skip_part("not root: the read-only bind-mount part")
    if not ran:
        raise menvtest.Skip("no way to make a cache read-only for menv here")


if __name__ == "__main__":
    menvtest.main(body)

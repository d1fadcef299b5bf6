#!/usr/bin/env python3
"""cli.attack10_<case>: what a tenth outside attack (issue 22: non-root runs, kills, two at
once, Ctrl-C, HOME, secrets, disk limits) found, one case each (python3 test_attack10.py MENV
SHARED CASE):

- umask_modes: the modes of what menv creates ignored the umask. A package's file of mode 0666
  or 0777 was extracted as it is (libarchive's ARCHIVE_EXTRACT_PERM restores modes without the
  umask): a file every user of the machine may write, in the package cache and in every prefix
  that hardlinks it (bin/ww, 0777: anyone could change a program the environment's user
  runs). conda's extraction (conda-package-streaming's chmod of `mode & (0o777 - umask)`)
  masks it. And menv's own files were made 0644 and its folders 0755 whatever the umask: under
  umask 077 the cache's urls.txt, locks, records and folders were readable to everyone; under
  umask 002 not writable to the group (conda's are 0664 and 0775). Now every file menv creates
  is 0666 and every folder 0777 less the umask the process started with (menv_file_mode,
  menv_dir_mode), and extracted modes lose the umask's bits. Checked under umask 022, 077 and
  002, for every path menv writes in the package cache and the prefix.
- shared_cache: a package cache shared by a group (a setgid folder of the group, umask 002,
  as conda's multi-user setups have it), used by two users in turn (setpriv; root runs them):
  the second user's create failed with "no writable package cache", since the first one's
  urls.txt was 0644 (conda's first_writable then calls the cache read-only); with a cache
  whose lock files an older menv made 0644 (another user's, not writable to this one), every
  change failed with "cannot open the lock". Lock files are opened read-only where they
  cannot be opened to write (flock needs no write access; menv_open_lockfile). The second
  user's create links the first one's package, a new package goes into the shared cache, and
  the cache keeps its group.
- readonly_paths: a read-only cache (conda's rule: its urls.txt not writable) was written:
  the compact paths.json (`.menv-paths`) of a package in it, stale once the cache was copied
  (another inode), was written again on every link from it. It is written again only in a
  cache menv may write (fetch/pathscache.c's cache_writable); a read-only cache's package is
  read from its paths.json.
- full_extract: a package cache that fills up during an extraction (a tmpfs; ENOSPC, EDQUOT,
  EFBIG) kept packages of the right sizes filled with zeros: a failed write(2) is only
  ARCHIVE_WARN to libarchive, menv went on, and libarchive's finish_entry extended each file
  to its size. With its index.json zeros the folder even went under its final name (a lock's
  record is not written for a package that is not the lock's), and the error said "has no
  readable info/index.json". Every write not ARCHIVE_OK now fails the extraction, naming the
  file and the cause ("Write failed: No space left on device"); nothing under the final
  name; with the space back the next create links the package's bytes.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile

import menvtest
from menvtest import build_conda, build_tar_bz2


def member(name, mode, data=b"x\n"):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode, ti.mtime = len(data), mode, 1700000000
    return (ti, data)


def channel(t):
    """wmode (.conda: 0666, 0777, 0664 and 0640 files) and wmode2 (.tar.bz2: a 0666 file)."""
    chan = os.path.join(t.tmp, "chan")
    idx = {"name": "wmode", "version": "1.0", "build": "0", "build_number": 0,
           "subdir": "noarch", "depends": []}
    build_conda(os.path.join(chan, "noarch", "wmode-1.0-0.conda"), idx,
                [member("share/ww.txt", 0o666), member("bin/ww", 0o777, b"#!/bin/sh\n"),
                 member("share/gw.txt", 0o664), member("share/own.txt", 0o640)])
    build_tar_bz2(os.path.join(chan, "noarch", "wmode2-1.0-0.tar.bz2"), dict(idx, name="wmode2"),
                  extra_members=[member("share/ww2.txt", 0o666)])
    data = b"p\n"
    paths = {"paths_version": 1, "paths": [{"_path": "share/p.txt", "path_type": "hardlink",
                                            "sha256": hashlib.sha256(data).hexdigest(),
                                            "size_in_bytes": len(data)}]}
    build_tar_bz2(os.path.join(chan, "noarch", "wpaths-1.0-0.tar.bz2"), dict(idx, name="wpaths"),
                  files={"info/paths.json": json.dumps(paths).encode(), "share/p.txt": data})
    t.index(chan)
    for d, dirs, files in os.walk(t.tmp):
        for n in dirs + files:
            os.chmod(os.path.join(d, n), 0o755 if n in dirs else 0o644)
    os.chmod(t.tmp, 0o755)
    return chan


def modes(top):
    """{relative path: permission bits} of every file and folder under top (links left out)."""
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            if not stat.S_ISLNK(st.st_mode):
                out[os.path.relpath(p, top)] = stat.S_IMODE(st.st_mode)
    return out


def run_umask(t, mask, *args, env=None):
    def pre():
        os.umask(mask)
    p = subprocess.run([t.menv] + list(args), env=t.environ(env), cwd=t.tmp,
                       capture_output=True, preexec_fn=pre, timeout=120)
    return menvtest.Result(list(args), p.returncode, p.stdout.decode(errors="replace"),
                           p.stderr.decode(errors="replace"))


# an extracted file's mode in the archive, for the expected mode after the umask
ARCHIVE = {"share/ww.txt": 0o666, "bin/ww": 0o777, "share/gw.txt": 0o664, "share/own.txt": 0o640,
           "share/ww2.txt": 0o666}


def case_umask_modes(t):
    chan = channel(t)
    for mask in (0o022, 0o077, 0o002):
        root = os.path.join(t.tmp, "root-%03o" % mask)
        env = {"MENV_ROOT_PREFIX": root}
        r = run_umask(t, mask, "create", "-y", "-q", "-n", "e", "-c", t.url(chan),
                      "--override-channels", "wmode", "wmode2", env=env)
        if not t.check(r.rc == 0, "umask %03o: create" % mask, r):
            continue
        # a second command over the same cache and prefix (locks, records written again)
        r = run_umask(t, mask, "install", "-y", "-q", "-n", "e", "-c", t.url(chan),
                      "--override-channels", "--force-reinstall", "wmode", env=env)
        t.check(r.rc == 0, "umask %03o: install --force-reinstall" % mask, r)
        pkgs, prefix = os.path.join(root, "pkgs"), os.path.join(root, "envs", "e")
        wrong = []
        for top in (pkgs, prefix):
            for rel, m in sorted(modes(top).items()):
                leaf = rel.split(os.sep, 1)[-1] if top == pkgs else rel
                if leaf in ARCHIVE:
                    want = ARCHIVE[leaf] & ~mask
                elif os.path.isdir(os.path.join(top, rel)):
                    want = None  # a folder: at most 0777 less the umask
                else:
                    want = None  # menv's own file: at most 0666 less the umask
                if want is not None and m != want:
                    wrong.append("%s: %03o, not %03o" % (os.path.join(top, rel), m, want))
                elif want is None and m & mask:
                    wrong.append("%s: %03o has bits of the umask %03o"
                                 % (os.path.join(top, rel), m, mask))
        t.eq(wrong, [], "umask %03o: the modes of what menv made in the cache and the prefix"
             % mask)
        # what menv makes itself is as open as the umask lets it (conda's 0666/0777 less it)
        for rel, want in (("urls.txt", 0o666), (".menv.lock", 0o666), ("wmode-1.0-0", 0o777),
                          ("wmode-1.0-0/info/repodata_record.json", 0o666)):
            t.eq(stat.S_IMODE(os.stat(os.path.join(pkgs, rel)).st_mode), want & ~mask,
                 "umask %03o: the cache's %s" % (mask, rel))
        for rel, want in (("conda-meta", 0o777), ("conda-meta/history", 0o666),
                          ("conda-meta/wmode-1.0-0.json", 0o666)):
            t.eq(stat.S_IMODE(os.stat(os.path.join(prefix, rel)).st_mode), want & ~mask,
                 "umask %03o: the prefix's %s" % (mask, rel))


def case_shared_cache(t):
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        raise menvtest.Skip("needs root and setpriv (two users of one group)")
    chan = channel(t)
    group, users = 4710, (4711, 4712)
    shared = os.path.join(t.tmp, "shared")
    os.makedirs(shared)
    os.chmod(shared, 0o755)
    pkgs = os.path.join(shared, "pkgs")
    homes = {}

    def user_env(uid):
        home = os.path.join(t.tmp, "home-%d" % uid)
        if uid not in homes:
            os.makedirs(os.path.join(home, "root"))
            for d in (home, os.path.join(home, "root")):
                os.chown(d, uid, group)
            homes[uid] = home
        return {"HOME": home, "MENV_ROOT_PREFIX": os.path.join(home, "root"),
                "CONDA_PKGS_DIRS": pkgs, "MENVRC": os.devnull}

    def as_user(uid, *args):
        p = subprocess.run([setpriv, "--reuid=%d" % uid, "--regid=%d" % group, "--clear-groups",
                            "sh", "-c", "umask 002; exec \"$@\"", "sh", t.menv] + list(args),
                           env=t.environ(user_env(uid)), cwd="/", capture_output=True,
                           timeout=120)
        return menvtest.Result(list(args), p.returncode, p.stdout.decode(errors="replace"),
                               p.stderr.decode(errors="replace"))

    C = ["-y", "-q", "-c", t.url(chan), "--override-channels"]
    for what, old_locks in (("a fresh shared cache", False),
                            ("lock files an older menv made 0644", True)):
        shutil.rmtree(pkgs, ignore_errors=True)
        os.makedirs(pkgs)
        os.chown(pkgs, 0, group)
        os.chmod(pkgs, 0o2775)
        a, b = users
        ea, eb = ("ea", "eb") if not old_locks else ("ea2", "eb2")
        r = as_user(a, "create", "-n", ea, *C, "wmode")
        if not t.check(r.rc == 0, "%s: the first user's create" % what, r):
            continue
        if old_locks:
            for n in (".menv.lock", ".menv-users.lock"):
                os.chmod(os.path.join(pkgs, n), 0o644)
        r = as_user(b, "create", "-n", eb, *C, "wmode", "wmode2")
        t.check(r.rc == 0, "%s: the second user's create (one package the first one's, one "
                "new)" % what, r)
        prefix = os.path.join(homes[b], "root", "envs", eb)
        t.check(os.path.exists(os.path.join(prefix, "share", "ww2.txt")) and
                os.path.exists(os.path.join(prefix, "share", "ww.txt")),
                "%s: the second user's environment holds both packages" % what)
        got = os.stat(os.path.join(pkgs, "wmode2-1.0-0")) if r.rc == 0 else None
        t.eq(got and (got.st_uid, got.st_gid, bool(got.st_mode & stat.S_ISGID)),
             (b, group, True),
             "%s: the second user's package is the cache's group's (setgid kept)" % what)
        r = as_user(a, "install", "-n", ea, *C, "wmode2")
        t.check(r.rc == 0, "%s: the first user installs the second one's package" % what, r)
        r = as_user(b, "env", "remove", "-y", "-n", eb)
        t.check(r.rc == 0, "%s: the second user removes the environment" % what, r)


def case_readonly_paths(t):
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        raise menvtest.Skip("needs root and setpriv (a cache read-only by its urls.txt)")
    chan = channel(t)
    uid = 4721
    home = os.path.join(t.tmp, "home-u")
    os.makedirs(home)
    os.chown(home, uid, uid)
    made, ro, rw = (os.path.join(home, n) for n in ("made", "ro", "rw"))

    def as_user(pkgs_dirs, *args):
        env = {"HOME": home, "MENV_ROOT_PREFIX": os.path.join(home, "root"),
               "CONDA_PKGS_DIRS": pkgs_dirs, "MENVRC": os.devnull}
        p = subprocess.run([setpriv, "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                            t.menv] + list(args), env=t.environ(env), cwd="/",
                           capture_output=True, timeout=120)
        return menvtest.Result(list(args), p.returncode, p.stdout.decode(errors="replace"),
                               p.stderr.decode(errors="replace"))

    C = ["-y", "-q", "-c", t.url(chan), "--override-channels", "wpaths"]
    r = as_user(made, "create", "-p", os.path.join(home, "e0"), *C)
    if not t.check(r.rc == 0, "the cache made", r):
        return
    t.check(os.path.exists(os.path.join(made, "wpaths-1.0-0", ".menv-paths")),
            "menv's extraction made the compact paths.json")
    # the cache copied (another machine's, a backup put back): every paths.json a new
    # inode, so every compact file is stale; then read-only as conda tells (urls.txt)
    subprocess.run(["cp", "-a", made, ro], check=True)
    os.chmod(os.path.join(ro, "urls.txt"), 0o444)

    def tree(top):
        return {rel: (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
                for rel, st in ((os.path.relpath(os.path.join(d, n), top),
                                 os.lstat(os.path.join(d, n)))
                                for d, ds, fs in os.walk(top) for n in ds + fs)}
    before = tree(ro)
    r = as_user(ro + "," + rw, "create", "-p", os.path.join(home, "e1"), *C)
    t.check(r.rc == 0, "create from the read-only cache", r)
    t.check(os.path.exists(os.path.join(home, "e1", "share", "p.txt")),
            "the package linked from the read-only cache")
    after = tree(ro)
    t.eq(sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)), [],
         "the read-only cache is not written (its stale .menv-paths left as it is)")


def case_full_extract(t):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "install"))
    from insttest import pkg
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "fill", "1.0", files={"share/fill/a.txt": b"A" * 300000, "share/fill/b.txt": "b\n"})
    pkg(ch, "tiny", "1.0", files={"share/tiny/t.txt": "t\n"})
    t.index(ch)
    ref = os.path.join(t.tmp, "ref")
    t.menv_ok("create", "-y", "-q", "-p", ref, "-c", t.url(ch), "--override-channels", "fill")
    lock = os.path.join(t.tmp, "l.lock.yml")
    menvtest.write_text(lock, t.menv_ok("export", "-p", ref).out)
    mnt = os.path.join(t.tmp, "m")
    os.makedirs(mnt)
    for leave in (0, 1, 3):  # pages left free once the package file is in the cache
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt],
                          capture_output=True).returncode != 0:
            raise menvtest.Skip("cannot mount a tmpfs here")
        what = "a full cache, %d pages left" % leave
        try:
            pk = os.path.join(mnt, "pkgs")
            env = {"CONDA_PKGS_DIRS": pk}
            t.menv_ok("create", "-y", "-q", "-p", os.path.join(t.tmp, "t%d" % leave), "-c",
                      t.url(ch), "--override-channels", "tiny", env=env)
            shutil.copy(os.path.join(ch, "linux-64", "fill-1.0-0.tar.bz2"), pk)
            filler = os.path.join(mnt, "filler")
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(fd, b"\1" * 4096)
            except OSError:
                pass
            os.close(fd)
            os.truncate(filler, max(0, os.path.getsize(filler) - 4096 * leave))
            x = os.path.join(t.tmp, "x%d" % leave)
            for k in (1, 2):
                r = t.menv_run("create", "-y", "-q", "-p", x, "-f", lock, env=env)
                t.one_line_error(r, "%s, run %d" % (what, k), ["No space left on device"])
                t.no_prefix_left(x, "%s, run %d" % (what, k))
                t.eq([n for n in os.listdir(pk) if n.startswith("fill-1.0-0") and
                      n != "fill-1.0-0.tar.bz2"], [],
                     "%s, run %d: no extracted package under its final name" % (what, k))
            os.unlink(filler)
            r = t.menv_run("create", "-y", "-q", "-p", x, "-f", lock, env=env)
            t.check(r.rc == 0, "%s: with the space back, the create succeeds" % what, r)
            a_txt = os.path.join(x, "share", "fill", "a.txt")
            t.check(os.path.exists(a_txt) and open(a_txt, "rb").read() == b"A" * 300000,
                    "%s: the package's bytes linked" % what)
        finally:
            subprocess.run(["umount", mnt])


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

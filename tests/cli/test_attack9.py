#!/usr/bin/env python3
"""cli.attack9_<case>: what a ninth outside attack (issue 22: the merged work of 2026-12-02,
14:00-15:00) found, one case each (python3 test_attack9.py MENV SHARED CASE):

- cache_lacks_hash: a lock entry's hash that the package cache's record of the package does
  not carry was taken on the record's word: an extracted entry whose repodata_record.json has
  the sha256 but no md5 (hand-edited, or written by a tool that keeps one hash; an older
  conda's entry has md5 and no sha256) counted as the package for a lock giving both, and the
  lock's wrong md5 (or wrong sha256 beside an md5-only entry) went into conda-meta and into
  the cache's record, which later solves trust. Every hash a lock gives must be the
  package's: such an entry is a miss for a lock (menv_fetch_opts.all_hashes), its file
  verified by every hash (or downloaded): the wrong hash refused with FILE:LINE, the cache's
  record left without it; the right lock installs, the record completed.
- lock_channel_misnamed_warm: a lock create from a warm cache took a cached record that agreed
  with the lock ("settled") without reading the package's info/index.json, trusting that the
  cache writes such a record only for the package the file is. A solving create writes the
  channel's record, which may name another package than the file is (a channel whose
  repodata calls dependency-2.0-0's file versioned-2.0-0.conda): the cold lock create refused
  the lock naming it ("the package file ... is dependency 2.0 0"), the same lock after that
  solving create linked it as versioned. index.json is read for every entry again (the
  merge of a settled record is still skipped): warm and cold give the same answer.
- lock_index_kept_stale: (issue 25) a lock create takes what index.json says from the compact
  paths.json (`<pkgdir>/.menv-paths`) where menv kept it at the extraction, with index.json's
  identity, instead of reading index.json. What is kept must never be trusted more than the
  index.json it stands for: index.json changed in place after the extraction (same inode and
  size, its mtime put back), replaced by another file, or a compact file whose identity is
  not index.json's (forged, or copied from another folder) is not the file read then, so
  index.json is read and the lock naming another package refused; index.json rewritten with
  its own bytes is read and the lock installs.
"""
import struct
import os
import shutil
import sys

import menvtest
from menvtest import read_json, write_json, write_text
import test_lock_hashes as L
from menvtest import md5_file, sha256_file


def case_cache_lacks_hash(t):
    srv, base, md5, sha = L.served(t)
    url = base + "/noarch/" + L.FN
    rpath = os.path.join(t.pkgs, "versioned-2.0-0", "info", "repodata_record.json")
    tarball = os.path.join(t.pkgs, L.FN)
    try:
        good = os.path.join(t.tmp, "good.lock.yml")
        write_text(good, L.conda_lock(url, md5, sha)[0])
        t.menv_ok("create", "-y", "-q", "-n", "good", "-f", good)
        warm = os.path.join(t.tmp, "warm-pkgs")
        shutil.copytree(t.pkgs, warm, symlinks=True)
        for dropped, kept in (("md5", "sha256"), ("sha256", "md5")):
            text, line = L.conda_lock(url, L.BAD_MD5 if dropped == "md5" else md5,
                                      L.BAD_SHA if dropped == "sha256" else sha)
            bad = L.BAD_MD5 if dropped == "md5" else L.BAD_SHA
            lock = os.path.join(t.tmp, "wrong-%s.lock.yml" % dropped)
            write_text(lock, text)
            for with_file in (True, False):
                what = "cache record without %s%s, the lock's %s wrong" % (
                    dropped, "" if with_file else " (no package file)", dropped)
                shutil.rmtree(t.pkgs)
                shutil.copytree(warm, t.pkgs, symlinks=True)
                rec = read_json(rpath)
                del rec[dropped]
                write_json(rpath, rec)
                if not with_file:
                    os.unlink(tarball)
                for args in (["-q"], ["-q", "--dry-run"]) if with_file else (["-q"],):
                    r = t.menv_run("create", "-y", "-n", "x", "-f", lock, *args)
                    if "--dry-run" in args:
                        # the plan cannot tell yet: the package is to be checked again
                        t.check(r.rc == 0 and bad not in r.out + r.err,
                                "%s --dry-run: planned, the wrong hash not shown as the "
                                "package's" % what, r)
                        continue
                    t.one_line_error(r, what, ["wrong-%s.lock.yml:%d: " % (dropped, line),
                                               dropped + " mismatch", bad, L.FN])
                    t.no_prefix_left(os.path.join(t.envs, "x"), what)
                after = read_json(rpath) if os.path.exists(rpath) else {}
                t.check(after.get(dropped) in (None, md5 if dropped == "md5" else sha),
                        "%s: the cache's record never holds the wrong %s" % (what, dropped),
                        after.get(dropped))
                t.eq(after.get(kept), rec[kept], "%s: the record's %s kept" % (what, kept))
            # the right lock installs from such a cache, the record completed
            shutil.rmtree(t.pkgs)
            shutil.copytree(warm, t.pkgs, symlinks=True)
            rec = read_json(rpath)
            del rec[dropped]
            write_json(rpath, rec)
            env = "ok-" + dropped
            t.menv_ok("create", "-y", "-q", "-n", env, "-f", good)
            meta = read_json(os.path.join(t.envs, env, "conda-meta", "versioned-2.0-0.json"))
            t.eq((meta["md5"], meta["sha256"]), (md5, sha), "right lock, cache record without "
                 "%s: the conda-meta record" % dropped)
            after = read_json(rpath)
            t.eq((after.get("md5"), after.get("sha256")), (md5, sha),
                 "right lock, cache record without %s: the record completed" % dropped)
    finally:
        srv.stop()


def case_lock_channel_misnamed_warm(t):
    src = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch",
                       "dependency-2.0-0.conda")
    chan = os.path.join(t.tmp, "srv", "b")
    os.makedirs(os.path.join(chan, "noarch"))
    dst = os.path.join(chan, "noarch", L.FN)
    shutil.copy(src, dst)
    sha, md5 = sha256_file(dst), md5_file(dst)
    t.write_repodata(chan, "noarch", conda_packages={L.FN: {
        "name": "versioned", "version": "2.0", "build": "0", "sha256": sha, "md5": md5,
        "size": os.path.getsize(dst)}})
    srv = t.http_server(os.path.join(t.tmp, "srv"))
    try:
        url = srv.base + "/b/noarch/" + L.FN
        lock = os.path.join(t.tmp, "l.lock.yml")
        text, line = L.conda_lock(url, md5, sha)
        write_text(lock, text)
        needles = ["l.lock.yml:%d: " % line, "'versioned 2.0 0'",
                   "the package file '%s' is dependency 2.0 0" % L.FN]
        r = t.menv_run("create", "-y", "-q", "-n", "cold", "-f", lock)
        t.one_line_error(r, "cold cache", needles)
        t.no_prefix_left(os.path.join(t.envs, "cold"), "cold cache")
        shutil.rmtree(t.pkgs, ignore_errors=True)
        # a solving create takes the channel's word, as conda's does
        t.menv_ok("create", "-y", "-q", "-n", "solved", "-c", srv.base + "/b",
                  "--override-channels", "versioned")
        t.check(os.path.exists(os.path.join(t.envs, "solved", "conda-meta",
                                            "versioned-2.0-0.json")),
                "the solving create linked the channel's record")
        r = t.menv_run("create", "-y", "-q", "-n", "warm", "-f", lock)
        t.one_line_error(r, "warm cache (the solve's record)", needles)
        t.no_prefix_left(os.path.join(t.envs, "warm"), "warm cache")
    finally:
        srv.stop()


def case_lock_index_kept_stale(t):
    srv, base, md5, sha = L.served(t)
    dist = os.path.join(t.pkgs, "versioned-2.0-0")
    index = os.path.join(dist, "info", "index.json")
    compact = os.path.join(dist, ".menv-paths")
    try:
        lock = os.path.join(t.tmp, "l.lock.yml")
        text, line = L.conda_lock(base + "/noarch/" + L.FN, md5, sha)
        write_text(lock, text)
        t.menv_ok("create", "-y", "-q", "-n", "first", "-f", lock)
        kept = open(compact, "rb").read()
        t.check(kept.startswith(b"MENVPATHS2\n") and b"versioned\x002.0\x000\x00" in kept,
                "the extraction kept index.json's name, version and build", kept[:240])
        orig = open(index, "rb").read()
        other = orig.replace(b'"versioned"', b'"versionex"')
        t.check(other != orig and len(other) == len(orig), "index.json names versioned", orig)
        needles = ["l.lock.yml:%d: " % line, "'versioned 2.0 0'",
                   "the package file '%s' is versionex 2.0 0" % L.FN]

        def refused(what):
            r = t.menv_run("create", "-y", "-q", "-n", "x", "-f", lock)
            t.one_line_error(r, what, needles)
            t.no_prefix_left(os.path.join(t.envs, "x"), what)

        # 1. changed in place: the same inode and size, the old mtime put back
        st = os.stat(index)
        with open(index, "r+b") as fh:
            fh.write(other)
        os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
        now = os.stat(index)
        t.eq((now.st_ino, now.st_size, now.st_mtime_ns), (st.st_ino, st.st_size, st.st_mtime_ns),
             "index.json changed in place keeps its inode, size and mtime")
        refused("index.json changed in place after the extraction")
        t.eq(open(compact, "rb").read(), kept, "the compact file is as the extraction left it")
        # 2. replaced by another file (a new inode), the compact file the extraction's
        tmp = index + ".new"
        with open(tmp, "wb") as fh:
            fh.write(other)
        os.rename(tmp, index)
        refused("index.json replaced after the extraction")
        # 3. a compact file whose index.json identity is another file's (paths.json's: forged,
        # or copied from a folder where it was right); its checksum is valid
        pst = os.stat(os.path.join(dist, "info", "paths.json"))
        forged = kept[:11 + 80] + struct.pack(
            "<7Q", pst.st_dev, pst.st_ino, pst.st_size, pst.st_mtime_ns // 10**9,
            pst.st_mtime_ns % 10**9, pst.st_ctime_ns // 10**9, pst.st_ctime_ns % 10**9) + \
            kept[11 + 136:]
        with open(compact, "wb") as fh:
            fh.write(forged)
        refused("a compact file that names the lock's package for another file")
        # 4. index.json rewritten with its own bytes (another identity): read, the lock installs
        with open(tmp, "wb") as fh:
            fh.write(orig)
        os.rename(tmp, index)
        t.menv_ok("create", "-y", "-q", "-n", "ok", "-f", lock)
        meta = read_json(os.path.join(t.envs, "ok", "conda-meta", "versioned-2.0-0.json"))
        t.eq((meta["name"], meta["sha256"]), ("versioned", sha), "index.json read: installed")
    finally:
        srv.stop()


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""install.conda_cache: menv reads a package cache that conda left (conda's pkgs_dirs layout).

The cache is built here the way conda leaves it, without menv: real corpus packages (the
channel of cli.corpus_env, plus defaults' zlib, whose lib/pkgconfig/zlib.pc has a prefix
placeholder, on a stub libgcc-ng) extracted with python's tarfile/zipfile and the zstd command
into <pkgs>/<dist>/, info/repodata_record.json written as conda writes it (the channel's record
over info/index.json, with url, channel and fn; sorted keys), urls.txt appended, and the package
files deleted afterwards (`conda clean --tarballs`).

  a. modern conda (sha256, md5, size), pkgs_dirs from ~/.condarc;
  b. older conda (md5 and size, or md5 alone; no sha256), plus constructor's `urls` file, in
     MENV_ROOT_PREFIX/pkgs.
`menv create --offline` must link everything from those directories: exit 0, each file a hard
link of the cache's file (a prefix-replaced file: the cache's bytes with the placeholder
replaced), conda-meta records as the channel's, the cache directories left as they were (b:
the missing sha256 added to repodata_record.json, nothing else changed) and no package file
fetched.
  c. entries that must not be trusted: sha256 disagreeing (md5 agreeing), md5 disagreeing,
     size disagreeing, no repodata_record.json at all. They are fetched again from the file://
     channel (file:// URLs work offline, as in conda) and re-extracted; the tampered files are
     never linked.
  d. a tampered entry whose package file the channel no longer has: one-line error naming the
     package, no prefix, the entry left alone (with and without --offline)."""

import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import zipfile

from insttest import Fatal, Skip, main, pkg
import menvtest
from menvtest import Package, md5_file, read_json, sha256_file, tree_snapshot
import test_corpus_env

PH = "/opt/anaconda1anaconda2anaconda3"
SPECS = test_corpus_env.SPECS + ["zlib"]
EXPECTED = set(test_corpus_env.EXPECTED_DISTS) | {"zlib-1.2.11-h7b6447c_3", "libgcc-ng-7.5.0-0"}
TAMPERED = {  # dist -> how its entry is spoiled (case c)
    "private-package-1.0-0": "sha256",
    "small-executable-1.0-0": "md5",
    "clobber-a-1.0-0": "size",
    "activate_deactivate_package-1.0-0": "no-record",
}


# --------------------------------------------------------------------------------------------
# the channel

def build_channel(t):
    chan = test_corpus_env.build_channel(t)
    pkg(chan, "libgcc-ng", "7.5.0", files={"lib/libgcc-ng-stub.txt": "stub\n"})
    # zlib as .tar.bz2 only: in this .conda, lib/libz.so and libz.so.1 are symlinks with empty
    # targets, which no extractor can create (libarchive makes empty files of them, as the
    # .tar.bz2 holds them)
    os.unlink(os.path.join(chan, "linux-64", "zlib-1.2.11-h7b6447c_3.conda"))
    t.index(chan)
    repo = {}  # dist -> (subdir, fn, record); .conda preferred as conda does
    for subdir in ("linux-64", "noarch"):
        rd = read_json(os.path.join(chan, subdir, "repodata.json"))
        for key in ("packages", "packages.conda"):
            for fn, rec in rd.get(key, {}).items():
                dist = fn[:-6] if fn.endswith(".conda") else fn[:-8]
                if dist not in repo or fn.endswith(".conda"):
                    repo[dist] = (subdir, fn, rec)
    missing = sorted(EXPECTED - set(repo))
    if missing:
        raise Fatal("not in the channel: %s" % missing)
    return chan, repo


# --------------------------------------------------------------------------------------------
# a package cache as conda leaves it

def conda_extract(src, dest):
    """conda-package-handling's way: tarfile for .tar.bz2, a .conda's info-/pkg-*.tar.zst
    decompressed and untarred into the same directory."""
    zstd = shutil.which("zstd")
    if not zstd:
        raise Skip("the zstd command is needed to extract .conda packages")
    os.makedirs(dest)
    kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}

    def untar(tf):
        tf.extractall(dest, **kw)

    if src.endswith(".conda"):
        with zipfile.ZipFile(src) as z:
            for n in z.namelist():
                if n.endswith(".tar.zst"):
                    raw = subprocess.run([zstd, "-dc"], input=z.read(n), capture_output=True,
                                         check=True).stdout
                    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
                        untar(tf)
    else:
        with tarfile.open(src, "r:*") as tf:
            untar(tf)


def conda_record(t, chan, subdir, fn, rec, dest, style):
    """info/repodata_record.json as conda writes it: the channel's record over index.json, with
    url, channel (conda: channel URL with subdir) and fn. style "old": no sha256 (conda before
    repodata carried it), "old-nosize": md5 alone (conda 4.4 on an explicit URL)."""
    out = read_json(os.path.join(dest, "info", "index.json"))
    out.update(rec)
    out["fn"] = fn
    out["url"] = "%s/%s/%s" % (t.url(chan), subdir, fn)
    out["channel"] = "%s/%s" % (t.url(chan), subdir)
    out.setdefault("depends", [])
    out.setdefault("constrains", [])
    if style.startswith("old"):
        out.pop("sha256", None)
    if style == "old-nosize":
        out.pop("size", None)
    text = json.dumps(out, indent=2, sort_keys=True, separators=(",", ": "))
    with open(os.path.join(dest, "info", "repodata_record.json"), "w") as f:
        f.write(text)
    return out


def conda_cache(t, pkgs, chan, repo, style_of, constructor_urls=False):
    """Fills `pkgs` as `conda create` + `conda clean --tarballs` leave it."""
    os.makedirs(pkgs, exist_ok=True)
    urls, written = [], {}
    for dist in sorted(EXPECTED):
        subdir, fn, rec = repo[dist]
        tarball = os.path.join(pkgs, fn)
        shutil.copyfile(os.path.join(chan, subdir, fn), tarball)   # the download
        conda_extract(tarball, os.path.join(pkgs, dist))
        style = style_of(dist)
        if style != "no-record":
            written[dist] = conda_record(t, chan, subdir, fn, rec, os.path.join(pkgs, dist),
                                         style)
        urls.append("%s/%s/%s" % (t.url(chan), subdir, fn))
    with open(os.path.join(pkgs, "urls.txt"), "a") as f:   # also conda's cache magic file
        f.write("".join(u + "\n" for u in urls))
    if constructor_urls:
        with open(os.path.join(pkgs, "urls"), "w") as f:
            for u in urls:
                f.write("%s#%s\n" % (u, md5_file(os.path.join(pkgs, os.path.basename(u)))))
    for dist in EXPECTED:                                           # conda clean --tarballs
        os.unlink(os.path.join(pkgs, repo[dist][1]))
    return written


def pkgs_state(pkgs):
    return {d: tree_snapshot(os.path.join(pkgs, d)) for d in EXPECTED}


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


# --------------------------------------------------------------------------------------------
# checks

def placeholders(pkgdir):
    """_path -> (placeholder, file_mode) from the extracted package's info/."""
    pj = os.path.join(pkgdir, "info", "paths.json")
    out = {}
    if os.path.isfile(pj):
        for p in read_json(pj).get("paths", []):
            if p.get("prefix_placeholder"):
                out[p["_path"]] = (p["prefix_placeholder"], p.get("file_mode", "text"))
        return out
    hp = os.path.join(pkgdir, "info", "has_prefix")
    if os.path.isfile(hp):
        for line in open(hp).read().splitlines():
            parts = line.split()
            if len(parts) == 3:
                out[parts[2]] = (parts[0], parts[1])
            elif len(parts) == 1:
                out[parts[0]] = (PH, "text")
    return out


def check_linked(t, what, prefix, pkgs, chan, repo):
    """Every package of EXPECTED linked from <pkgs>/<dist>: files hard links of the cache's
    (or its bytes with the placeholder replaced), conda-meta as the channel's record."""
    recs = {os.path.basename(p)[:-5]: read_json(p)
            for p in glob.glob(os.path.join(prefix, "conda-meta", "*.json"))}
    t.eq(set(recs), EXPECTED, "%s: conda-meta holds exactly the expected packages" % what)
    n_linked = n_replaced = n_soft = 0
    listed = set()
    for dist in sorted(set(recs) & EXPECTED):
        rec = recs[dist]
        subdir, fn, crec = repo[dist]
        for k in ("name", "version", "build", "build_number", "sha256", "md5", "size"):
            t.eq(rec.get(k), crec.get(k), "%s: %s conda-meta %s = channel's" % (what, dist, k))
        t.eq(rec.get("fn"), fn, "%s: %s conda-meta fn" % (what, dist))
        t.eq(rec.get("url"), "%s/%s/%s" % (t.url(chan), subdir, fn),
             "%s: %s conda-meta url" % (what, dist))
        t.eq(rec.get("channel"), "%s/%s" % (t.url(chan), subdir),
             "%s: %s conda-meta channel" % (what, dist))
        src_dir = os.path.join(pkgs, dist)
        t.eq(rec.get("extracted_package_dir"), src_dir,
             "%s: %s extracted_package_dir is conda's directory" % (what, dist))
        t.eq((rec.get("link") or {}).get("source"), src_dir, "%s: %s link.source" % (what, dist))
        ph = placeholders(src_dir)
        members = Package(os.path.join(chan, subdir, fn)).payload()
        for e in (rec.get("paths_data") or {}).get("paths", []):
            rel = e.get("_path")
            listed.add(rel)
            src, dst = os.path.join(src_dir, rel), os.path.join(prefix, rel)
            if not t.check(os.path.lexists(dst), "%s: %s/%s is in the prefix" % (what, dist, rel)):
                continue
            if os.path.islink(src):
                t.eq(os.readlink(dst) if os.path.islink(dst) else None, os.readlink(src),
                     "%s: %s/%s is the cache's symlink" % (what, dist, rel))
                n_soft += 1
                continue
            sst, dstt = os.stat(src), os.lstat(dst)
            data = read_bytes(dst)
            if rel in ph:
                placeholder, mode = ph[rel]
                want = read_bytes(src)
                if mode == "text":
                    want = want.replace(placeholder.encode(), prefix.encode())
                t.eq(hashlib.sha256(data).hexdigest(), hashlib.sha256(want).hexdigest(),
                     "%s: %s/%s = the cache's bytes with the placeholder replaced"
                     % (what, dist, rel))
                t.check(dstt.st_ino != sst.st_ino, "%s: %s/%s is a copy, not a link of the "
                        "cache's file" % (what, dist, rel))
                n_replaced += 1
                continue
            t.check((dstt.st_dev, dstt.st_ino) == (sst.st_dev, sst.st_ino),
                    "%s: %s/%s is a hard link of conda's extracted file" % (what, dist, rel),
                    "prefix inode %d, cache inode %d" % (dstt.st_ino, sst.st_ino))
            m = members.get(rel)
            if m is not None and m.data is not None:
                t.eq(hashlib.sha256(data).hexdigest(), hashlib.sha256(m.data).hexdigest(),
                     "%s: %s/%s bytes = the package's member" % (what, dist, rel))
            n_linked += 1
    on_disk = set()
    for dirpath, dirnames, filenames in os.walk(prefix):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = os.path.relpath(os.path.join(dirpath, n), prefix)
            if not rel.startswith("conda-meta"):
                on_disk.add(rel)
    t.eq(sorted(on_disk - listed), [], "%s: every file in the prefix is in a conda-meta record"
         % what)
    t.check(n_replaced >= 1, "%s: at least one prefix-replaced file (zlib.pc)" % what)
    t.note("%s: %d hard links of the cache, %d prefix-replaced copies, %d symlinks"
           % (what, n_linked, n_replaced, n_soft))
    return recs


def reported(out, word, dist):
    return re.search(r"\b%s\s+%s\b" % (word, re.escape(dist)), out) is not None


def check_no_fetch(t, what, pkgs, r, urls_before):
    left = sorted(n for n in os.listdir(pkgs)
                  if n.endswith((".conda", ".tar.bz2", ".partial")) or ".tmp-" in n)
    t.eq(left, [], "%s: no package file fetched into the cache" % what)
    t.eq(read_bytes(os.path.join(pkgs, "urls.txt")), urls_before, "%s: urls.txt unchanged" % what)
    out = r.out + r.err
    for dist in sorted(EXPECTED):
        t.check(reported(out, "cached", dist), "%s: %s reported as a cache hit" % (what, dist),
                out)
    t.check("downloaded" not in out and "extracted" not in out,
            "%s: nothing downloaded or extracted" % what, out)


def create(t, prefix, chan, *extra, offline=True):
    args = ["create", "-y", "-p", prefix, "-c", t.url(chan), "--override-channels"]
    if offline:
        args.append("--offline")
    return t.menv_run(*(args + list(extra) + SPECS), timeout=300)


# --------------------------------------------------------------------------------------------

def body(t):
    chan, repo = build_channel(t)

    # a. modern conda, its pkgs_dirs in ~/.condarc
    pkgs_a = os.path.join(t.tmp, "miniconda3", "pkgs")
    written = conda_cache(t, pkgs_a, chan, repo, lambda d: "new")
    menvtest.write_text(os.path.join(t.home, ".condarc"), "pkgs_dirs:\n  - %s\n" % pkgs_a)
    before, urls = pkgs_state(pkgs_a), read_bytes(os.path.join(pkgs_a, "urls.txt"))
    prefix = os.path.join(t.tmp, "env-a")
    r = create(t, prefix, chan)
    if not t.check(r.rc == 0, "a: menv create --offline from conda's cache succeeds", r):
        raise Fatal("create from a modern conda cache failed")
    check_linked(t, "a", prefix, pkgs_a, chan, repo)
    t.eq(pkgs_state(pkgs_a), before, "a: conda's extracted directories left exactly as they were")
    check_no_fetch(t, "a", pkgs_a, r, urls)
    for d, rec in written.items():
        t.eq(read_json(os.path.join(pkgs_a, d, "info", "repodata_record.json")), rec,
             "a: %s repodata_record.json unchanged" % d)
    os.unlink(os.path.join(t.home, ".condarc"))

    # b. older conda: md5 (and mostly size), no sha256; MENV_ROOT_PREFIX/pkgs
    nosize = {"dependent-2.0-0", "zlib-1.2.11-h7b6447c_3"}
    written = conda_cache(t, t.pkgs, chan, repo,
                          lambda d: "old-nosize" if d in nosize else "old", constructor_urls=True)
    t.check(all("sha256" not in rec for rec in written.values()), "b: entries carry no sha256")
    before, urls = pkgs_state(t.pkgs), read_bytes(os.path.join(t.pkgs, "urls.txt"))
    prefix = os.path.join(t.tmp, "env-b")
    r = create(t, prefix, chan)
    if not t.check(r.rc == 0, "b: menv create --offline from an older conda's cache succeeds", r):
        raise Fatal("create from an md5-only conda cache failed")
    check_linked(t, "b", prefix, t.pkgs, chan, repo)
    skip = "info/repodata_record.json"
    after = pkgs_state(t.pkgs)
    t.eq({d: {k: v for k, v in s.items() if k != skip} for d, s in after.items()},
         {d: {k: v for k, v in s.items() if k != skip} for d, s in before.items()},
         "b: conda's extracted directories kept (same inodes; only repodata_record.json may "
         "change)")
    check_no_fetch(t, "b", t.pkgs, r, urls)
    for d, rec in written.items():
        now = read_json(os.path.join(t.pkgs, d, "info", "repodata_record.json"))
        t.eq({k: now.get(k) for k in rec}, rec, "b: %s repodata_record.json keeps conda's keys" % d)
        t.eq(sorted(set(now) - set(rec)), sorted({"sha256", "size"} - set(rec)),
             "b: %s repodata_record.json only gains the hashes it lacked" % d)
        t.eq(now.get("sha256"), repo[d][2]["sha256"], "b: %s sha256 added as the channel's" % d)

    # c. entries that must not be trusted: fetched again from the file:// channel
    pkgs_c = os.path.join(t.tmp, "conda-c", "pkgs")
    conda_cache(t, pkgs_c, chan, repo,
                lambda d: {"md5": "old", "size": "old", "no-record": "no-record"}.get(
                    TAMPERED.get(d), "new"))
    pins = os.path.join(t.tmp, "pins")
    os.makedirs(pins)
    pinned = {}  # dist -> (_path, inode of the tampered file, kept alive by a link in pins/)
    bad = hashlib.sha256(b"tampered").hexdigest()
    for dist, how in TAMPERED.items():
        d = os.path.join(pkgs_c, dist)
        rr = os.path.join(d, "info", "repodata_record.json")
        if how != "no-record":
            rec = read_json(rr)
            if how == "sha256":
                rec["sha256"] = bad
            elif how == "md5":
                rec["md5"] = hashlib.md5(b"tampered").hexdigest()
            else:
                rec["size"] += 1
            menvtest.write_json(rr, rec)
        rel = sorted(f["_path"] for f in read_json(os.path.join(d, "info", "paths.json"))["paths"]
                     if f.get("path_type", "hardlink") == "hardlink"
                     and not f.get("prefix_placeholder"))[0]
        path = os.path.join(d, rel)
        with open(path, "wb") as f:
            f.write(b"tampered\n")
        os.link(path, os.path.join(pins, dist))
        pinned[dist] = (rel, os.stat(path).st_ino)
    t.check(not os.path.exists(os.path.join(pkgs_c, "activate_deactivate_package-1.0-0", "info",
                                            "repodata_record.json")),
            "c: activate_deactivate_package has no repodata_record.json (conda before 4.3)")
    before = pkgs_state(pkgs_c)
    urls = read_bytes(os.path.join(pkgs_c, "urls.txt"))
    menvtest.write_text(os.path.join(t.home, ".condarc"), "pkgs_dirs:\n  - %s\n" % pkgs_c)
    prefix = os.path.join(t.tmp, "env-c")
    r = create(t, prefix, chan)
    if not t.check(r.rc == 0, "c: create --offline with untrusted entries succeeds "
                   "(re-fetched from the file:// channel)", r):
        raise Fatal("create with tampered entries failed")
    check_linked(t, "c", prefix, pkgs_c, chan, repo)
    out = r.out + r.err
    after = pkgs_state(pkgs_c)
    for dist in sorted(EXPECTED):
        subdir, fn, rec = repo[dist]
        if dist not in TAMPERED:
            t.check(reported(out, "cached", dist), "c: %s still a cache hit" % dist, out)
            t.eq(after[dist], before[dist], "c: %s left as it was" % dist)
            continue
        how = TAMPERED[dist]
        t.check(not reported(out, "cached", dist) and reported(out, "extracted", dist),
                "c: %s (%s) extracted again, not taken from the cache" % (dist, how), out)
        tarball = os.path.join(pkgs_c, fn)
        if t.check(os.path.isfile(tarball), "c: %s fetched into the cache" % fn):
            t.eq(sha256_file(tarball), rec["sha256"], "c: %s fetched with the channel's sha256"
                 % fn)
        rr = read_json(os.path.join(pkgs_c, dist, "info", "repodata_record.json"))
        t.eq((rr.get("sha256"), rr.get("md5"), rr.get("size")),
             (rec["sha256"], rec["md5"], rec["size"]), "c: %s entry rewritten with the channel's "
             "hashes" % dist)
        rel, ino = pinned[dist]
        dst = os.path.join(prefix, rel)
        t.check(os.lstat(dst).st_ino != ino, "c: %s: the tampered %s is not linked" % (dist, rel))
        t.check(read_bytes(dst) != b"tampered\n", "c: %s: %s has the package's bytes"
                % (dist, rel))
    added = read_bytes(os.path.join(pkgs_c, "urls.txt"))
    t.check(added.startswith(urls), "c: urls.txt only appended to")
    t.eq(sorted(added[len(urls):].decode().split()),
         sorted("%s/%s/%s" % (t.url(chan), repo[d][0], repo[d][1]) for d in TAMPERED),
         "c: urls.txt gains the URL of each package fetched again")

    # d. a tampered entry and no package file anywhere: a clear error, nothing linked
    pkgs_d = os.path.join(t.tmp, "conda-d", "pkgs")
    conda_cache(t, pkgs_d, chan, repo, lambda d: "new")
    dist = "private-package-1.0-0"
    subdir, fn, _ = repo[dist]
    rr = os.path.join(pkgs_d, dist, "info", "repodata_record.json")
    rec = read_json(rr)
    rec["sha256"] = bad
    menvtest.write_json(rr, rec)
    gone = os.path.join(t.tmp, "chan-gone")
    shutil.copytree(chan, gone)
    os.unlink(os.path.join(gone, subdir, fn))
    menvtest.write_text(os.path.join(t.home, ".condarc"), "pkgs_dirs:\n  - %s\n" % pkgs_d)
    before = pkgs_state(pkgs_d)
    for offline in (True, False):
        what = "d (%s)" % ("--offline" if offline else "online")
        prefix = os.path.join(t.tmp, "env-d")
        r = create(t, prefix, gone, "-q", offline=offline)
        t.one_line_error(r, what, [(fn, dist)])
        t.no_prefix_left(prefix, what)
        t.eq(pkgs_state(pkgs_d), before, "%s: the cache's entries left alone" % what)
        t.eq(sorted(n for n in os.listdir(pkgs_d) if n.startswith(dist) and n != dist), [],
             "%s: no file of %s left in the cache" % (what, fn))


if __name__ == "__main__":
    main(body, "conda_cache")

#!/usr/bin/env python3
"""cli.attack8_<case>: what an eighth outside attack (issue 22: the merged work of
2026-12-02 afternoon) found, one case each (python3 test_attack8.py MENV SHARED CASE):

- paths_utf8: a package's compact paths.json (`<pkgdir>/.menv-paths`, fetch/pathscache.c)
  forged with paths.json's identity and a valid checksum held a name that is not UTF-8
  (`bin/l\\xff`), which no paths.json can hold (jansson refuses it): the create linked it
  into the prefix, and the record named neither it (json_string() gave NULL: `files` left
  it out, its paths_data entry had no `_path`) nor, so, could a remove take it out. A string
  that is not UTF-8 now makes the compact file damaged: read from paths.json, written again.
"""
import glob
import json
import os
import struct
import sys

import menvtest

TR = os.path.join("packages", "conda", "test-recipes", "noarch")
M64 = (1 << 64) - 1


def test_channel(t, name="chan"):
    P = os.path.join(t.corpus, TR)
    return t.make_channel(name, {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})


def forge_paths(pkgdir, entries):
    """A .menv-paths of fetch/pathscache.c's layout for pkgdir's info/paths.json now, with a
    valid checksum: entries are (path bytes, path_type bytes)."""
    st = os.stat(os.path.join(pkgdir, "info", "paths.json"))
    body = b"".join(bytes([1]) + path + b"\0" + kind + b"\0" for path, kind in entries)
    h = 0xcbf29ce484222325
    for c in body:
        h = ((h ^ c) * 0x100000001b3) & M64
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // 10**9,
             st.st_mtime_ns % 10**9, st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9)
    head = b"MENVPATHS1\n" + struct.pack("<10Q", *ident, len(entries), len(body), h)
    with open(os.path.join(pkgdir, ".menv-paths"), "wb") as fh:
        fh.write(head + body)
    return head + body


def case_paths_utf8(t):
    chan = test_channel(t)
    c = ("-c", chan, "--override-channels", "clobber-a")
    t.menv_ok("create", "-y", "-q", "-p", os.path.join(t.tmp, "first"), *c)
    pkgdir = os.path.join(t.pkgs, "clobber-a-1.0-0")
    bad = os.path.join(os.fsencode(pkgdir), b"bin", b"l\xff")
    os.symlink("clobber-test-file", bad)
    forged = forge_paths(pkgdir, [(b"bin/clobber-test-file", b"hardlink"),
                                  (b"bin/l\xff", b"softlink")])
    prefix = os.path.join(t.tmp, "second")
    t.menv_ok("create", "-y", "-q", "-p", prefix, *c)
    t.eq(sorted(os.listdir(os.fsencode(os.path.join(prefix, "bin")))),
         [b"clobber-test-file"], "only paths.json's file linked")
    rec = menvtest.read_json(os.path.join(prefix, "conda-meta", "clobber-a-1.0-0.json"))
    t.eq(rec.get("files"), ["bin/clobber-test-file"], "the record's files")
    t.eq([p.get("_path") for p in rec.get("paths_data", {}).get("paths", [])],
         ["bin/clobber-test-file"], "the record's paths_data")
    with open(os.path.join(pkgdir, ".menv-paths"), "rb") as fh:
        t.check(fh.read() != forged, "the compact file written again")


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

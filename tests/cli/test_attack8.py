#!/usr/bin/env python3
"""cli.attack8_<case>: what an eighth outside attack (issue 22: the merged work of
2026-12-02 afternoon) found, one case each (python3 test_attack8.py MENV SHARED CASE):

- paths_utf8: a package's compact paths.json (`<pkgdir>/.menv-paths`, fetch/pathscache.c)
  forged with paths.json's identity and a valid checksum held a name that is not UTF-8
  (`bin/l\\xff`), which no paths.json can hold (jansson refuses it): the create linked it
  into the prefix, and the record named neither it (json_string() gave NULL: `files` left
  it out, its paths_data entry had no `_path`) nor, so, could a remove take it out. A string
  that is not UTF-8 now makes the compact file damaged: read from paths.json, written again.
- record_json: a repodata record's values carried into conda-meta (keys conda does not know,
  as menv keeps them) were not written as Python's json.dumps(indent=2) writes them, which
  conda uses: reals came out as jansson's %.17g (0.1 as 0.10000000000000001, 1e16 as
  10000000000000000.0, 1e-5 as 1.0000000000000001e-5, 2^-1019 with 17 digits). Now as
  Python's repr(float); the record's bytes equal Python's dump of the record read back
  (strings of controls, DEL, non-ASCII, a surrogate pair, nesting, int64's limits kept).
- record_nul: one record of a repodata.json with `\\u0000` or a lone UTF-16 surrogate
  (`\\ud800`) in any string, even a key no one reads (Python's json, which conda reads it
  with, takes both) failed the whole file in libsolv's parser: "FILE: parse error line 1",
  every other package of the channel unavailable, the record not named; a lone low surrogate
  (`\\udc00`) was taken, as bytes that are not UTF-8. Each now reaches libsolv as `\\ufffd`:
  the rest of the channel solves, full and sparse loads alike, and the record, read from the
  file's own bytes when asked for, is skipped with a warning naming it, as every record menv
  cannot read; an escaped backslash before `u0000` is left as it is.
- config_set_repair: a .condarc value menv refuses (`ssl_verify: rel/ca.pem`, a relative CA
  path, FILE:LINE:COL; the file said `1.5`, which conda 26.7.1 reads as true) could not be
  replaced by `config --set ssl_verify false` (conda's way to fix it): only
  --remove-key or --remove were let through. --set is now checked as --remove is: the
  edited text is checked again and passes when the edit took every refused value out (the
  other values kept as written, 30.50 a float); with another refused value left, the file's
  own error stands and the file is left as it was.
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
    body = b"\0\0\0" + b"".join(bytes([1]) + path + b"\0" + kind + b"\0"
                                 for path, kind in entries)  # no index.json identity kept
    h = 0xcbf29ce484222325
    for c in body:
        h = ((h ^ c) * 0x100000001b3) & M64
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // 10**9,
             st.st_mtime_ns % 10**9, st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9)
    head = b"MENVPATHS2\n" + struct.pack("<17Q", *ident, len(entries), len(body), h,
                                          *[0] * 7)
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


# members added to a record, as raw JSON text: Python's json.dumps of the record menv writes,
# read back, must give menv's bytes
RECORD_EXTRA = ('"x_reals": [0.1, 1e16, 1e-05, 0.0001, 1e15, -0.0, 123456789.125, 1e22, '
                '5e-324, 1.7976931348623157e308, 7.120236347223045e-307, 2.5e-10], '
                '"x_str": "b\\u001f\\u007f\\u0080\\u00ff\\ud83d\\ude00\\"\\\\/\\t", '
                '"x_nest": {"k\\u00e9": [1, [], {}, null, true, -9223372036854775808, '
                '9223372036854775807]}')


def case_record_json(t):
    chan = test_channel(t)
    rd = os.path.join(chan, "noarch", "repodata.json")
    data = menvtest.read_json(rd)
    key = "clobber-a-1.0-0.conda"
    data["packages.conda"][key]["x_mark"] = 1
    text = json.dumps(data).replace('"x_mark": 1', RECORD_EXTRA)
    menvtest.write_text(rd, text)
    prefix = os.path.join(t.tmp, "e")
    t.menv_ok("create", "-y", "-q", "-p", prefix, "-c", chan, "--override-channels",
              "clobber-a")
    with open(os.path.join(prefix, "conda-meta", "clobber-a-1.0-0.json"), "rb") as fh:
        got = fh.read()
    rec = json.loads(got)
    t.eq(rec.get("x_reals"), json.loads(text)["packages.conda"][key]["x_reals"],
         "the reals read back as the repodata's")
    want = json.dumps(rec, indent=2).encode()
    if not t.eq(got, want, "conda-meta's bytes are Python's json.dumps(indent=2)"):
        import difflib
        print("\n".join(difflib.unified_diff(want.decode().splitlines(),
                                             got.decode().splitlines(), "python", "menv",
                                             lineterm="", n=0)))


def case_record_nul(t):
    for load in ("full", "sparse"):
        for esc in ("\\u0000", "\\ud800", "\\udc00", "\\ud800x\\udc00"):
            what = "%s, %s in a record" % (load, esc)
            chan = test_channel(t, "chan-%s-%d" % (load, len(esc)))
            rd = os.path.join(chan, "noarch", "repodata.json")
            data = menvtest.read_json(rd)
            key = "clobber-a-1.0-0.conda"
            data["packages.conda"][key]["description"] = "x_mark"
            # and a string whose escaped backslash comes before u0000: not an escape
            data["packages.conda"]["dependency-2.0-0.conda"]["x_text"] = "a\\u0000b"
            menvtest.write_text(rd, json.dumps(data).replace("x_mark", "a%sb" % esc))
            e = {"MENV_SOLVER_LOAD": load}
            r = t.menv_run("create", "-y", "-q", "-p", os.path.join(t.tmp, "ok-" + load),
                           "-c", chan, "--override-channels", "dependent", env=e)
            if t.eq(r.rc, 0, "%s: another package of the channel installs" % what):
                rec = menvtest.read_json(os.path.join(t.tmp, "ok-" + load, "conda-meta",
                                                      "dependency-2.0-0.json"))
                t.eq(rec.get("x_text"), "a\\u0000b", "%s: an escaped backslash kept" % what)
                t.menv_ok("env", "remove", "-y", "-p", os.path.join(t.tmp, "ok-" + load))
            r = t.menv_run("create", "-y", "-q", "-p", os.path.join(t.tmp, "bad"), "-c", chan,
                           "--override-channels", "clobber-a", env=e)
            t.eq(r.rc, 1, "%s: the record's package is refused" % what)
            t.check("skipped the record 'clobber-a-1.0-0.conda'" in r.err,
                    "%s: a warning names the record" % what, r.err)
            t.no_prefix_left(os.path.join(t.tmp, "bad"), what)


def case_config_set_repair(t):
    text = "ssl_verify: rel/ca.pem\nremote_read_timeout_secs: 30.50\nchannels:\n  - keep\n"
    menvtest.write_text(t.rc, text)
    t.menv_ok("config", "--set", "ssl_verify", "false")
    t.eq(open(t.rc).read(), text.replace("rel/ca.pem", "false"), "--set replaced the refused value")
    t.menv_ok("config", "--show", "channels")
    two = 'ssl_verify: rel/ca.pem\nchannels:\n  - "http://c d/x"\n'
    menvtest.write_text(t.rc, two)
    r = t.menv_run("config", "--set", "ssl_verify", "false")
    t.one_line_error(r, "--set with another refused value left", (t.rc + ":1:13:",))
    t.eq(open(t.rc).read(), two, "the file left as it was")


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

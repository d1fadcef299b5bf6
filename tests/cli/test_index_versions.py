#!/usr/bin/env python3
"""cli.index_versions: `menv index` refuses to write a repodata.json that conda could not load
(issue 24): a package whose version conda's VersionOrder refuses (Debian's `0.8+5prealpha+1`,
two '+'; `1.0~rc1`; `1..0`) or that has no version string is one line `menv: error: ...`
naming the file and conda's reason, exit 1, and nothing is written: no repodata.json in any
subdir (the valid one's included), no noarch/ made, an earlier index left byte for byte. A
version conda accepts (blanks, upper case, '-' for '_', KELVIN SIGN) is indexed as written."""

import hashlib
import os

import menvtest
from menvtest import build_tar_bz2, read_json


def package(chan, subdir, name, version, fmt=".tar.bz2", fn_version=None):
    index = {"name": name, "build": "0", "build_number": 0, "depends": [], "subdir": subdir}
    if version is not None:
        index["version"] = version
    path = os.path.join(chan, subdir, "%s-%s-0%s" % (name, fn_version or version, fmt))
    if fmt == ".conda":
        menvtest.build_conda(path, index, [])
    else:
        build_tar_bz2(path, index)
    return path


def tree(chan):
    """Every folder and file under chan, files by sha256."""
    out = {}
    for root, dirs, files in os.walk(chan):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), chan) + "/"] = None
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.relpath(os.path.join(root, f), chan)] = \
                    hashlib.sha256(fh.read()).hexdigest()
    return out


def body(t):
    cases = [
        ("pocketsphinx", "0.8+5prealpha+1", ".conda", None,
         "invalid version '0.8+5prealpha+1': duplicated local version separator '+'"),
        ("tilde", "1.0~rc1", ".tar.bz2", None,
         "invalid version '1.0~rc1': invalid character '~' at column 4"),
        ("empty", "1..0", ".tar.bz2", "1.0", "invalid version '1..0': empty version component"),
        ("noversion", None, ".tar.bz2", "1.0", "has no version string"),
    ]
    for name, version, fmt, fn_version, why in cases:
        chan = os.path.join(t.tmp, "chan-" + name)
        good = package(chan, "linux-64", "good", "1.0")
        bad = package(chan, "linux-64", name, version, fmt, fn_version)
        before = tree(chan)
        r = t.menv_run("index", chan)
        t.note("%-12s -> %s" % (name, (r.err_lines() or ["<no stderr>"])[0]))
        t.one_line_error(r, "index with %s" % name, [bad, why])
        if version is not None:
            t.check("(conda cannot load a repodata.json holding it)" in r.err,
                    "%s: the error says why it matters" % name, r.err)
        t.eq(tree(chan), before, "%s: nothing written (no repodata.json, no noarch/)" % name)
        # an index written before stays as it was
        os.rename(bad, bad + ".aside")
        t.index(chan)
        t.check(os.path.exists(os.path.join(chan, "noarch", "repodata.json")),
                "%s: the channel without it indexes" % name)
        os.rename(bad + ".aside", bad)
        written = tree(chan)
        r = t.menv_run("index", chan)
        t.one_line_error(r, "index again with %s" % name, [bad, why])
        t.eq(tree(chan), written, "%s: an earlier index left unchanged" % name)
        t.check(os.path.exists(good), "%s: the good package is still there" % name)

    # what conda accepts is indexed, the version as written
    chan = os.path.join(t.tmp, "chan-ok")
    ok = {"blanks": " 1.0 ", "upper": "1.0RC1", "dash": "1.0-1", "kelvin": "1.0\u212a",
          "local": "1.0+dfsg-1", "epoch": "1!2.0", "openssl": "1.1.1_"}
    for name, version in ok.items():
        package(chan, "linux-64", name, version, fn_version="1.0")
    r = t.index(chan)
    rd = read_json(os.path.join(chan, "linux-64", "repodata.json"))
    got = {rec["name"]: rec["version"] for rec in rd["packages"].values()}
    t.eq(got, ok, "versions conda accepts are indexed as written")


if __name__ == "__main__":
    menvtest.main(body)

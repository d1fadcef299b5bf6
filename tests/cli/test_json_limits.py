#!/usr/bin/env python3
"""cli.json_limits: every JSON menv reads goes through one parser with a nesting limit of
256 (issue 14, "Limits instead of crashes"): conda-meta records (envs/), a package's
info/index.json (menv index, fetch/index.c) and repodata records (solver/) all refuse 1000
levels naming the file (or record), line and column; 200 levels are read. A repodata record
without dependencies is read when the repodata is loaded and skipped with a warning (as one
without a version); one with dependencies is read when the solve picks it, and the solve
fails with one line naming it (it was dropped from the plan silently). Nothing is changed.
"""
import io
import json
import os
import tarfile

import menvtest
from menvtest import write_json, write_text


def nested(depth):
    return "[" * depth + "]" * depth


def body(t):
    deep, ok = nested(1000), nested(200)

    # ---- conda-meta/: list, export and doctor name the record; a 200-deep one is read
    p = os.path.join(t.tmp, "envs", "p")
    write_text(os.path.join(p, "conda-meta", "history"), "")
    rec = os.path.join(p, "conda-meta", "x-1.0-0.json")
    write_text(rec, '{"name": "x", "version": "1.0", "build": "0", "build_number": 0, '
               '"depends": [], "files": [], "extra": %s}' % ok)
    r = t.menv_run("list", "-p", p, "--json")
    t.eq(r.rc, 0, "conda-meta: a record nested 200 deep is read")
    if r.rc == 0:
        t.eq([x["name"] for x in json.loads(r.out)], ["x"], "conda-meta: list shows it")
    write_text(rec, '{"name": "x", "version": "1.0", "build": "0", "extra": %s}' % deep)
    before = open(rec).read()
    # the object is level 1: the 256th bracket is level 257
    col = len('{"name": "x", "version": "1.0", "build": "0", "extra": ') + 256
    for cmd in (["list", "-p", p], ["export", "-p", p]):
        r = t.menv_run(*cmd)
        t.one_line_error(r, "conda-meta 1000 deep: menv %s" % cmd[0],
                         ["%s:1:%d" % (rec, col), "nested deeper than 256 levels"])
    r = t.menv_run("doctor", "-p", p)
    t.eq(r.rc, 1, "conda-meta 1000 deep: doctor finds a problem")
    t.check("%s:1:%d: nested deeper than 256 levels" % (rec, col) in r.out + r.err,
            "conda-meta 1000 deep: doctor names the record, line and column", r)
    t.eq(open(rec).read(), before, "conda-meta 1000 deep: the record is left as it was")

    # ---- repodata: the deep record is refused when picked; the others are unaffected
    chan = os.path.join(t.tmp, "chan")
    write_json(os.path.join(chan, "linux-64", "repodata.json"),
               {"info": {"subdir": "linux-64"}, "packages": {}, "packages.conda": {}})
    fine = ('{"name": "fine", "version": "1.0", "build": "0", "build_number": 0, '
            '"depends": [], "subdir": "noarch", "size": 10, "sha256": "%s"}' % ("1" * 64))
    bad = ('{"name": "deep", "version": "1.0", "build": "0", "build_number": 0, '
           '"depends": [], "subdir": "noarch", "size": 10, "sha256": "%s", "extra": %s}'
           % ("0" * 64, deep))
    bad2 = bad.replace('"deep"', '"deepdep"').replace('"depends": []', '"depends": ["fine"]')
    write_text(os.path.join(chan, "noarch", "repodata.json"),
               '{"info": {"subdir": "noarch"}, "packages.conda": {}, "packages": '
               '{"deep-1.0-0.tar.bz2": %s, "fine-1.0-0.tar.bz2": %s, '
               '"deepdep-1.0-0.tar.bz2": %s}}' % (bad, fine, bad2))
    C = ["-c", t.url(chan), "--override-channels", "--dry-run", "-q"]
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "envs", "q"), *C, "deep")
    t.check(r.rc == 1 and "skipped the record 'deep-1.0-0.tar.bz2': it cannot be read: "
            "deep-1.0-0.tar.bz2:1:" in r.err and "nested deeper than 256 levels" in r.err
            and "package 'deep' is not available" in r.err,
            "repodata 1000 deep, no depends: skipped at load with a warning naming it, then "
            "not available (exit 1)", r)
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "envs", "q"), *C, "deepdep")
    t.check(r.rc == 1 and r.err.strip().splitlines()[-1:] == [
        "menv: error: %s/noarch/repodata.json record 'deepdep-1.0-0.tar.bz2':1:%d: nested "
        "deeper than 256 levels" % (t.url(chan), bad2.index("[[") + 256)],
        "repodata 1000 deep, with depends: the solve that picks it fails naming it", r)
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "envs", "q"), *C, "fine", "--json")
    t.eq(r.rc, 0, "repodata 1000 deep: a sound record of the same file is installed")
    if r.rc == 0:
        t.eq([x["name"] for x in json.loads(r.out)["actions"]["LINK"]], ["fine"],
             "repodata 1000 deep: the plan links 'fine'")
    t.no_prefix_left(os.path.join(t.tmp, "envs", "q"), "repodata 1000 deep")

    # ---- a package's info/index.json (menv index)
    ich = os.path.join(t.tmp, "ichan", "noarch")
    os.makedirs(ich)
    with tarfile.open(os.path.join(ich, "deep-1.0-0.tar.bz2"), "w:bz2") as tf:
        data = ('{"name": "deep", "version": "1.0", "build": "0", "x": %s}' % deep).encode()
        ti = tarfile.TarInfo("info/index.json")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    r = t.menv_run("index", os.path.join(t.tmp, "ichan"))
    t.one_line_error(r, "index.json 1000 deep: menv index",
                     ["deep-1.0-0.tar.bz2", "info/index.json:1:", "nested deeper than 256"])


if __name__ == "__main__":
    menvtest.main(body)

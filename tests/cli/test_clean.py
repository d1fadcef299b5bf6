#!/usr/bin/env python3
"""cli.clean: `menv clean` and the package cache's self-repair.

- clean --tarballs removes package files only; --packages removes extracted packages no
  environment uses, and keeps the others; --index-cache empties the repodata cache; --locks
  removes interrupted downloads; --dry-run removes nothing; environments keep working.
- BR-030 (a): an extracted package dir holding only info/index.json is re-extracted;
  (b): an extracted package whose repodata_record.json names another sha256 (a rebuilt
  package) is replaced: its stale files are never linked.
- BR-032 (c): a package whose download fails its hash check stops `install` before anything
  is unlinked: the environment keeps the old version, its files and its record.
"""
import json
import os
import shutil

import menvtest
from menvtest import sha256_file, write_text


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    names = ("dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-2.0-0.conda",
             "small-executable-1.0-0.conda")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, f) for f in names]})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    pkgs = t.pkgs

    t.menv_ok("create", "-n", "a", *C, "dependent")
    t.menv_ok("create", "-n", "b", *C, "small-executable")
    t.menv_ok("remove", "-n", "b", "--all", "-y", "-q")
    write_text(os.path.join(pkgs, "dependency-1.0-0.conda.partial"), "half a download")

    r = t.menv_ok("clean", "--all", "--dry-run", "--json")
    t.check(json.loads(r.out)["dry_run"] and os.path.isdir(os.path.join(pkgs,
                                                                        "small-executable-1.0-0")),
            "clean --dry-run removes nothing", r.out)

    r = t.menv_ok("clean", "--tarballs", "--json")
    left = sorted(f for f in os.listdir(pkgs) if f.endswith(".conda"))
    t.eq(left, [], "clean --tarballs: no package files left")
    t.check(os.path.isdir(os.path.join(pkgs, "dependent-2.0-0")),
            "clean --tarballs keeps extracted packages")

    r = t.menv_ok("clean", "--packages", "--json")
    removed = sorted(os.path.basename(x["path"]) for x in json.loads(r.out)["removed"])
    t.eq(removed, ["small-executable-1.0-0"], "clean --packages removes only the unused package")
    t.check(os.path.isdir(os.path.join(pkgs, "dependency-2.0-0")),
            "clean --packages keeps packages environment a uses")

    t.menv_ok("clean", "--index-cache", "--locks")
    t.eq(os.listdir(os.path.join(pkgs, "cache")), [], "clean --index-cache empties the cache")
    t.check(not os.path.exists(os.path.join(pkgs, "dependency-1.0-0.conda.partial")),
            "clean --locks removes an interrupted download")
    t.menv_ok("list", "-n", "a")
    t.menv_ok("create", "-n", "c", *C, "dependent")  # everything is fetched again

    # BR-030 (a): a half-extracted package dir
    d = os.path.join(pkgs, "dependency-2.0-0")
    for e in os.listdir(d):
        if e != "info":
            shutil.rmtree(os.path.join(d, e)) if os.path.isdir(os.path.join(d, e)) \
                else os.remove(os.path.join(d, e))
    for e in os.listdir(os.path.join(d, "info")):
        if e != "index.json":
            p = os.path.join(d, "info", e)
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    t.menv_ok("create", "-n", "br030a", *C, "dependency=2.0")
    t.check(os.path.isfile(os.path.join(d, "info", "repodata_record.json")),
            "BR-030 (a): the half-extracted package is extracted again")
    pkg = menvtest.Package(os.path.join(chan, "noarch", "dependency-2.0-0.conda"))
    recs = json.load(open(os.path.join(t.envs, "br030a", "conda-meta", "dependency-2.0-0.json")))
    bad = [p["_path"] for p in recs["paths_data"]["paths"] if p.get("sha256") and
           sha256_file(os.path.join(t.envs, "br030a", p["_path"])) != p["sha256"]]
    t.eq(bad, [], "BR-030 (a): every linked file has the sha256 of paths.json")
    t.check(pkg.index.get("name") == "dependency", "the package read back")

    # BR-030 (b): the cached entry is of another build of the same name-version-build
    rr = os.path.join(d, "info", "repodata_record.json")
    rec = json.load(open(rr))
    rec["sha256"] = "0" * 64
    json.dump(rec, open(rr, "w"))
    stale = os.path.join(d, "info", "STALE-MARKER")
    write_text(stale, "from an older archive")
    t.menv_ok("create", "-n", "br030b", *C, "dependency=2.0")
    t.check(not os.path.exists(stale),
            "BR-030 (b): the stale extracted package was replaced")
    t.eq(json.load(open(rr))["sha256"], sha256_file(os.path.join(chan, "noarch",
                                                                  "dependency-2.0-0.conda")),
         "BR-030 (b): the cache now holds the channel's package")

    # BR-032 (c): a download that fails its hash check stops install before any unlink
    t.menv_ok("create", "-n", "upd", *C, "dependency=1.0")
    before = menvtest.tree_snapshot(os.path.join(t.envs, "upd"))
    t.menv_ok("clean", "--all")
    shutil.rmtree(os.path.join(pkgs, "dependency-2.0-0"))  # other envs kept it: a cold cache
    f = os.path.join(chan, "noarch", "dependency-2.0-0.conda")
    data = open(f, "rb").read()
    open(f, "wb").write(data[: len(data) // 2])  # the repodata keeps the real sha256
    r = t.menv_run("install", "-n", "upd", "-q", "-y", *C[:3], "dependency=2.0")
    t.one_line_error(r, "BR-032 (c): a truncated download", ["dependency-2.0-0"],
                     nonzero_only=True)
    t.eq(menvtest.tree_snapshot(os.path.join(t.envs, "upd")), before,
         "BR-032 (c): the environment is exactly as before (files and records)")


menvtest.main(body)

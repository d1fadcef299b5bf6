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
- -p environments registered in ~/.conda/environments.txt count as users of the cache, as
  named ones do; a clean that runs while a create is between its fetch and its link waits
  for it (the cache's users lock) and leaves the create's packages alone (issue "Safe by
  construction").
"""
import json
import os
import shutil
import subprocess
import time

import menvtest
from menvtest import sha256_file, write_text


def works(t, env, what):
    """The environment keeps working: its program runs and prints what the package's script
    says, and every installed file is byte-identical to the member of the corpus package."""
    r = t.menv_run("run", "-n", env, "small", "still", "here")
    t.eq((r.rc, r.out), (0, "Hello! still here\n"), "%s: `small` in %s runs" % (what, env))
    pkg = menvtest.Package(os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch",
                                        "small-executable-1.0-0.conda"))
    prefix = os.path.join(t.envs, env)
    got = {n: sha256_file(os.path.join(prefix, n)) if os.path.isfile(os.path.join(prefix, n))
           else None for n in pkg.payload()}
    want = {n: menvtest.sha256_bytes(m.data) for n, m in pkg.payload().items()}
    t.eq(got, want, "%s: %s's files are the package's, byte for byte" % (what, env))


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

    # a -p environment outside envs_dirs keeps its packages too (it is in the registry)
    outside = os.path.join(t.tmp, "elsewhere", "envp")
    t.menv_ok("create", "-p", outside, *C, "small-executable")
    r = t.menv_ok("clean", "--packages", "--json")
    t.eq([x["path"] for x in json.loads(r.out)["removed"]], [],
         "clean --packages keeps what a registered -p environment uses")
    t.check(os.path.isdir(os.path.join(pkgs, "small-executable-1.0-0")),
            "the -p environment's package is still in the cache")

    # clean --all during a create that has fetched but not yet linked: clean waits
    t.menv_ok("remove", "-p", outside, "--all", "-y", "-q")
    t.menv_ok("clean", "--all", "--json")
    env = t.environ({"MENV_TEST_PAUSE_BEFORE_LINK": "3"})
    create = subprocess.Popen([t.menv, "create", "-n", "racing", *C, "small-executable"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not os.path.isdir(os.path.join(pkgs, "small-executable-1.0-0")) and \
            time.time() < deadline and create.poll() is None:
        time.sleep(0.05)
    r = t.menv_run("clean", "--all")
    out, err = create.communicate(timeout=120)
    t.check(create.returncode == 0, "the create racing a clean succeeds",
            out.decode() + err.decode())
    t.check("waiting for the environments that use the package cache" in r.err,
            "clean says it waits for the create", r.err)
    t.check(os.path.isdir(os.path.join(pkgs, "small-executable-1.0-0")),
            "clean left the racing create's package (now used) in the cache")
    t.check(os.path.isdir(os.path.join(t.envs, "racing", "conda-meta")) and
            any(f.startswith("small-executable") for f in
                os.listdir(os.path.join(t.envs, "racing", "conda-meta"))),
            "the racing create's environment is complete")

    works(t, "racing", "after clean --all")
    t.menv_ok("clean", "--index-cache", "--locks")
    t.eq(os.listdir(os.path.join(pkgs, "cache")), [], "clean --index-cache empties the cache")
    t.check(not os.path.exists(os.path.join(pkgs, "dependency-1.0-0.conda.partial")),
            "clean --locks removes an interrupted download")
    t.menv_ok("list", "-n", "a")
    works(t, "racing", "after clean --index-cache --locks")
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

    # pkgs_dirs set to an environment (or a home folder): clean --all removes what menv put
    # there (its package, the index cache) and none of the environment's own folders or dot
    # files (share/, conda-meta/ and .ssh/ were removed as "unused packages" and "locks")
    env = os.path.join(t.envs, "a")
    write_text(os.path.join(env, ".ssh", "id_ed25519"), "key\n")
    mine = {"CONDA_PKGS_DIRS": env}
    t.menv_ok("create", "-n", "in-env-cache", *C, "small-executable", env=mine)
    t.check(os.path.isdir(os.path.join(env, "small-executable-1.0-0", "info")),
            "a cache in an environment holds the extracted package")
    own = sorted(os.path.relpath(os.path.join(d, f), env) for d, _, fs in os.walk(env)
                 for f in fs if not os.path.relpath(d, env).startswith(
                     ("small-executable-1.0-0", "cache")) and f not in ("urls.txt",)
                 and not f.endswith(".conda") and not f.startswith(".menv"))
    r = t.menv_ok("clean", "--all", "--json", env=mine)
    removed = sorted(os.path.basename(x["path"]) for x in json.loads(r.out)["removed"])
    t.check("share" not in removed and "conda-meta" not in removed and ".ssh" not in removed,
            "clean in an environment: none of its folders is taken for a package", removed)
    t.check("small-executable-1.0-0.conda" in removed, "clean in an environment: the tarball",
            removed)
    left = sorted(os.path.relpath(os.path.join(d, f), env) for d, _, fs in os.walk(env)
                  for f in fs if not os.path.relpath(d, env).startswith(
                      ("small-executable-1.0-0", "cache")) and f not in ("urls.txt",)
                  and not f.endswith(".conda") and not f.startswith(".menv"))
    t.eq(left, own, "clean in an environment: its own files all kept")
    t.check(".ssh/id_ed25519" in left and "conda-meta/history" in left, "own files listed", left)
    t.menv_ok("list", "-n", "a")
    works(t, "racing", "after every clean")


menvtest.main(body)

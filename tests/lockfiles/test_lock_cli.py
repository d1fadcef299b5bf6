#!/usr/bin/env python3
"""lockfile.<case>: lockfiles end to end (python3 test_lock_cli.py MENV SHARED CASE).

Cases: roundtrip (export -> re-create -> compare, warm and cold cache, conda-lock and explicit,
no solve), http (a lock install over HTTP asks for package files only), errors, pixi, formats,
lock (multi-platform, virtual packages, --check), corpus_dry_run (real conda-lock files),
BR021, BR022, BR023, pip and pip_options (the toolchain's python and Debian's wheels from a
loopback index; pip_options: --no-build-isolation, -e ., --extra-index-url, -r in the section;
skipped when the toolchain channel is not built), timing (toolchain: create from the lock vs
from environment.yml).
"""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import menvtest  # noqa: E402
from menvtest import Skip, build_tar_bz2, read_json, sha256_file, write_text  # noqa: E402

SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
# where tests/channels/build-toolchain caches its downloads and channels (as it reads it)
TOOLCHAIN_CACHE = os.environ.get("MENV_TOOLCHAIN_CACHE") or os.path.expanduser(
    "~/.cache/menv-toolchain")
SUBDIR = "linux-64"

# fields of a PrefixRecord that name where it was installed (the prefix or the cache)
PLACE_FIELDS = {"paths_data", "files", "link", "extracted_package_dir",
                "package_tarball_full_path", "requested_spec", "requested_specs",
                "_requested_specs"}


# --------------------------------------------------------------------------
# helpers

def records(prefix):
    out = {}
    for p in glob.glob(os.path.join(prefix, "conda-meta", "*.json")):
        j = read_json(p)
        out[os.path.basename(p)[:-5]] = {k: v for k, v in j.items() if k not in PLACE_FIELDS}
    return out


def prefix_files(prefix):
    """relpath -> (path_type of the record, prefix placeholder or None) for every file."""
    info = {}
    for p in glob.glob(os.path.join(prefix, "conda-meta", "*.json")):
        for e in (read_json(p).get("paths_data") or {}).get("paths", []):
            info[e["_path"]] = e.get("prefix_placeholder")
    return info


def compare_prefixes(t, a, b, what):
    """Same records; every file the same sha256 except the files holding the prefix, which
    are listed (and must be exactly the ones with a prefix placeholder)."""
    ra, rb = records(a), records(b)
    t.eq(sorted(ra), sorted(rb), "%s: same installed dists" % what)
    diff = [d for d in ra if d in rb and ra[d] != rb[d]]
    t.eq(diff, [], "%s: same PrefixRecords (apart from install locations)" % what)
    if diff:
        d = diff[0]
        print("      first difference in %s: %s" % (d, {k: (ra[d].get(k), rb[d].get(k))
              for k in set(ra[d]) | set(rb[d]) if ra[d].get(k) != rb[d].get(k)}))
    pf = prefix_files(a)
    held, unexpected = [], []
    for rel in sorted(pf):
        fa, fb = os.path.join(a, rel), os.path.join(b, rel)
        if os.path.islink(fa) or not os.path.isfile(fa):
            continue
        if not os.path.isfile(fb):
            unexpected.append((rel, "missing"))
            continue
        if sha256_file(fa) == sha256_file(fb):
            continue
        ba, bb = open(fa, "rb").read(), open(fb, "rb").read()
        # a file that holds the prefix path: equal once the prefixes are swapped (text), or
        # it had a prefix placeholder (binary replacement pads with NULs); a .pyc names its
        # source by its prefix-relative path (conda's compileall), so it is the same anywhere
        if ba.replace(a.encode(), b.encode()) == bb or pf.get(rel):
            held.append(rel)
        else:
            unexpected.append((rel, "differs"))
    t.eq(unexpected, [], "%s: every file not holding the prefix is byte-identical" % what)
    t.note("%s: %d files compared, %d differ and all hold the prefix path: %s" %
           (what, len(pf), len(held), ", ".join(held) or "none"))


def hide_repodata(chan):
    """Moves every repodata file of a channel away: a solve would now fail."""
    for p in glob.glob(os.path.join(chan, "*", "repodata*.json*")):
        os.rename(p, p + ".hidden")


def show_repodata(chan):
    for p in glob.glob(os.path.join(chan, "*", "*.hidden")):
        os.rename(p, p[:-len(".hidden")])


def no_solve(t, r, what):
    t.check("no solve" in r.err, "%s: says it did not solve" % what, r.err)
    t.check("Reading repodata" not in r.err, "%s: read no repodata" % what, r.err)


def corpus_channel(t):
    chan = os.path.join(t.tmp, "corpus-chan")
    p = subprocess.run(["bash", os.path.join(SRC, "tests", "channels", "build-corpus"), chan,
                        t.menv], capture_output=True, env=t.environ({"MENV_SHARED": t.shared}))
    if p.returncode != 0:
        raise menvtest.Fatal("build-corpus failed: %s" % p.stderr.decode()[-2000:])
    return chan


def corpus_env(t, chan, name="corpus"):
    env = os.path.join(t.tmp, "corpus-env.yml")
    text = open(os.path.join(SRC, "tests", "channels", "corpus-environment.yml")).read()
    write_text(env, text.replace("${CHANNEL}", t.url(chan)))
    t.menv_ok("create", "-q", "-f", env, "-n", name)
    return env


def toolchain_channel(t):
    done = sorted(glob.glob(os.path.join(TOOLCHAIN_CACHE, "channels", "*.done")))
    if os.environ.get("MENV_TOOLCHAIN_CHANNEL"):
        src = os.environ["MENV_TOOLCHAIN_CHANNEL"]
    elif done:
        src = done[-1][:-len(".done")]
    else:
        raise Skip("the toolchain channel is not built (tests/channels/build-toolchain)")
    chan = os.path.join(t.tmp, "toolchain")
    shutil.copytree(src, chan, copy_function=os.link if same_fs(src, t.tmp) else shutil.copy2)
    for p in glob.glob(os.path.join(chan, "*", "repodata*")):
        os.unlink(p)
    t.index(chan)
    return chan


def same_fs(a, b):
    return os.stat(a).st_dev == os.stat(b).st_dev


def toolchain_python_env(t, chan, name, pip_lines=None, extra=""):
    env = os.path.join(t.tmp, "%s.yml" % name)
    text = ("name: %s\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n  - python=3.9\n"
            "  - pip\n%s" % (name, t.url(chan), extra))
    if pip_lines is not None:
        text += "  - pip:\n" + "".join("      - %s\n" % l for l in pip_lines)
    write_text(env, text)
    return env


# --------------------------------------------------------------------------
# cases

def roundtrip(t):
    chan = corpus_channel(t)
    corpus_env(t, chan)
    a = os.path.join(t.envs, "corpus")
    r = t.menv_ok("export", "-n", "corpus")
    lock = os.path.join(t.tmp, "lock.yml")
    write_text(lock, r.out)
    t.check(r.out.count("manager: conda") == len(records(a)),
            "conda-lock export has one entry per installed package", r.out[:2000])
    t.check("sha256:" in r.out and "md5:" in r.out, "conda-lock export has md5 and sha256")
    r = t.menv_ok("export", "-n", "corpus", "--format", "explicit")
    explicit = os.path.join(t.tmp, "explicit.txt")
    write_text(explicit, r.out)
    t.check("@EXPLICIT" in r.out and "#sha256:" in r.out, "explicit export uses #sha256:", r.out)

    hide_repodata(chan)   # from here on a solve could not even start
    # warm cache
    r = t.menv_run("create", "-f", lock, "-n", "warm")
    if t.check(r.rc == 0, "create from the conda-lock export (warm cache)", r):
        no_solve(t, r, "warm")
        compare_prefixes(t, a, os.path.join(t.envs, "warm"), "conda-lock, warm cache")
    # cold cache: a new package cache, the files fetched again and verified
    cold = os.path.join(t.tmp, "cold-pkgs")
    r = t.menv_run("create", "-f", lock, "-n", "cold", env={"CONDA_PKGS_DIRS": cold})
    if t.check(r.rc == 0, "create from the conda-lock export (cold cache)", r):
        no_solve(t, r, "cold")
        t.check("downloaded" in r.err or "extracted" in r.err, "cold: the files were fetched",
                r.err)
        compare_prefixes(t, a, os.path.join(t.envs, "cold"), "conda-lock, cold cache")
    # explicit, cold: records completed from the packages' own index.json
    cold2 = os.path.join(t.tmp, "cold-pkgs-2")
    r = t.menv_run("create", "-f", explicit, "-n", "expl", env={"CONDA_PKGS_DIRS": cold2})
    if t.check(r.rc == 0, "create from the explicit export (cold cache)", r):
        no_solve(t, r, "explicit")
        compare_prefixes(t, a, os.path.join(t.envs, "expl"), "explicit, cold cache")
    # export of the re-created environment: the same lock
    r2 = t.menv_ok("export", "-n", "warm")
    strip = lambda s: [l for l in s.splitlines() if "content_hash" not in l and
                       not l.strip().startswith(("linux-64:", "- /", "sources"))]
    t.eq(strip(r2.out), strip(open(lock).read()), "export of the re-created env = the lock")
    show_repodata(chan)


def http(t):
    chan = corpus_channel(t)
    srv = t.http_server(t.tmp)
    try:
        url = srv.base + "/corpus-chan"
        env = os.path.join(t.tmp, "http-env.yml")
        write_text(env, "name: h\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n"
                   "  - dependent\n  - _r-mutex\n" % url)
        t.menv_ok("create", "-q", "-f", env, "-n", "h")
        lock = os.path.join(t.tmp, "h.lock.yml")
        write_text(lock, t.menv_ok("export", "-n", "h").out)
        before, before_get = len(srv.requests()), len(srv.requests(("GET",)))
        r = t.menv_run("create", "-f", lock, "-n", "h2",
                       env={"CONDA_PKGS_DIRS": os.path.join(t.tmp, "pk2")})
        reqs = srv.requests()[before:]
        if t.check(r.rc == 0, "http: create from the lock", r):
            t.eq(sorted(os.path.basename(q) for q in reqs),
                 sorted(os.path.basename(q) for q in reqs if q.endswith((".conda", ".tar.bz2"))),
                 "http: only package files were requested (no repodata)")
            # a HEAD for each size the lock lacks (the plan's sizes), one GET each
            t.eq(len(srv.requests(("GET",))[before_get:]), len(records(os.path.join(t.envs, "h"))),
                 "http: each package file was downloaded once")
            compare_prefixes(t, os.path.join(t.envs, "h"), os.path.join(t.envs, "h2"), "http")
    finally:
        srv.stop()


def errors(t):
    chan = corpus_channel(t)
    env = os.path.join(t.tmp, "e.yml")
    write_text(env, "name: e\nchannels: [%s, nodefaults]\ndependencies: [_r-mutex]\n" % t.url(chan))
    t.menv_ok("create", "-q", "-f", env, "-n", "e")
    lock = t.menv_ok("export", "-n", "e").out
    # an explicit file of noarch packages only, without "# platform:", installs here
    # (it was refused as "locks noarch" before)
    expl = t.menv_ok("export", "-n", "e", "--format", "explicit").out
    noarch = os.path.join(t.tmp, "noarch-only.txt")
    write_text(noarch, "".join(l + "\n" for l in expl.splitlines()
                               if not l.startswith("# platform:")))
    t.check("/noarch/_r-mutex-" in expl, "the explicit export locks the noarch package", expl)
    r = t.menv_run("create", "-q", "-f", noarch, "-n", "noarch-only")
    if t.check(r.rc == 0, "noarch-only explicit file without '# platform:' installs", r):
        t.eq(sorted(j["name"] for j in by_name(os.path.join(t.envs, "noarch-only")).values()),
             ["_r-mutex"], "noarch-only explicit: the locked record is installed")
    # no entries for this platform
    other = os.path.join(t.tmp, "osx.lock.yml")
    write_text(other, lock.replace("platform: linux-64", "platform: osx-64")
               .replace("- linux-64", "- osx-64"))
    r = t.menv_run("create", "-q", "-f", other, "-n", "x1")
    t.one_line_error(r, "lock without linux-64 entries", ["linux-64", "osx-64"])
    t.no_prefix_left(os.path.join(t.envs, "x1"), "no platform")
    # an unreachable URL
    gone = os.path.join(t.tmp, "gone.lock.yml")
    write_text(gone, lock.replace(t.url(chan), "file:///nonexistent/menv-chan"))
    r = t.menv_run("create", "-q", "-f", gone, "-n", "x2",
                   env={"CONDA_PKGS_DIRS": os.path.join(t.tmp, "pk-gone")})
    t.one_line_error(r, "unreachable URL", ["/nonexistent/menv-chan"])
    t.no_prefix_left(os.path.join(t.envs, "x2"), "unreachable")
    # a wrong hash: the fetch layer refuses the file
    sha = read_json(glob.glob(os.path.join(t.envs, "e", "conda-meta", "_r-mutex-*.json"))[0])["sha256"]
    bad = os.path.join(t.tmp, "bad.lock.yml")
    write_text(bad, lock.replace(sha, "0" * 64))
    r = t.menv_run("create", "-q", "-f", bad, "-n", "x3",
                   env={"CONDA_PKGS_DIRS": os.path.join(t.tmp, "pk-bad")})
    t.one_line_error(r, "wrong sha256", ["sha256"])
    t.no_prefix_left(os.path.join(t.envs, "x3"), "wrong sha256")
    # not a lockfile and not an environment file: one line
    urls = os.path.join(t.tmp, "urls.txt")
    write_text(urls, "%s/noarch/_r-mutex-1.0.1-anacondar_1.tar.bz2\n" % t.url(chan))
    r = t.menv_run("create", "-f", urls, "-n", "x4")
    t.one_line_error(r, "URL list without @EXPLICIT", [])
    # a conda-lock entry without a hash
    r = t.menv_run("create", "-f", os.path.join(t.corpus, "lockfiles", "mamba", "env_lockfile",
                                                "bad_package-lock.yaml"), "-n", "x5")
    t.one_line_error(r, "conda-lock entry without manager/hash", ["manager"])
    # a pixi source package cannot be installed from the lock
    r = t.menv_run("create", "-f", os.path.join(t.corpus, "lockfiles", "rattler", "conda-lock",
                                                "v6", "sources-lock.yml"), "-n", "x6",
                   env={"CONDA_SUBDIR": "win-64"})
    t.one_line_error(r, "pixi source package", ["source package"])


def by_name(prefix):
    return {j["name"]: j for j in (read_json(p) for p in
                                   glob.glob(os.path.join(prefix, "conda-meta", "*.json")))}


def install_lock(t):
    """menv install -f LOCKFILE: an existing environment brought to the lock's records."""
    chan = corpus_channel(t)
    for name, deps in (("new", "[dependent >=2.0, buildstring=1.0=versioned_2]"),
                       ("old", "[dependent 1.0, buildstring=1.0=versioned_1, _r-mutex]")):
        env = os.path.join(t.tmp, "%s.yml" % name)
        write_text(env, "name: %s\nchannels: [%s, nodefaults]\ndependencies: %s\n"
                   % (name, t.url(chan), deps))
        t.menv_ok("create", "-q", "--no-smoke", "-f", env, "-n", name)
    new, old = os.path.join(t.envs, "new"), os.path.join(t.envs, "old")
    lock = os.path.join(t.tmp, "new.lock.yml")
    write_text(lock, t.menv_ok("export", "-n", "new").out)
    before = by_name(old)
    hide_repodata(chan)   # a solve could not start
    r = t.menv_run("install", "--dry-run", "-f", lock, "-n", "old")
    if t.check(r.rc == 0, "install -f LOCK --dry-run", r):
        no_solve(t, r, "dry run")
        t.check("- buildstring" in r.out and "+ buildstring" in r.out and
                "versioned_2" in r.out, "dry run plans buildstring versioned_1 -> versioned_2",
                r.out)
    r = t.menv_run("install", "--dry-run", "--json", "-f", lock, "-n", "old")
    if t.check(r.rc == 0, "install -f LOCK --dry-run --json", r):
        acts = json.loads(r.out)["actions"]
        t.eq([(x["name"], x["build"]) for x in acts["UNLINK"] if x["name"] == "buildstring"],
             [("buildstring", "versioned_1")], "--json UNLINK names the installed record")
        t.eq([(x["name"], x["build_string"]) for x in acts["LINK"]
              if x["name"] == "buildstring"],
             [("buildstring", "versioned_2")], "--json LINK names the lock's record")
    t.eq(by_name(old), before, "dry run changed nothing")
    r = t.menv_run("install", "-f", lock, "-n", "old")
    if t.check(r.rc == 0, "install -f LOCK into an existing environment", r):
        no_solve(t, r, "install -f")
        got, want = by_name(old), by_name(new)
        for name in want:
            t.eq(got.get(name, {}).get("sha256"), want[name]["sha256"],
                 "%s: the lock's file (sha256) is installed" % name)
            t.eq(sorted(got.get(name, {}).get("files", [])), sorted(want[name]["files"]),
                 "%s: the lock's files are linked" % name)
        t.check("_r-mutex" in got, "a package the lock does not name stays", sorted(got))
        t.eq(sorted(got), sorted(set(want) | {"_r-mutex"}), "nothing else in the prefix")
        hist = open(os.path.join(old, "conda-meta", "history")).read().split("==>")[-1]
        t.check(any(l.startswith("-") and "buildstring-1.0-versioned_1" in l
                    for l in hist.splitlines()), "history records the unlink", hist)
        t.check(any(l.startswith("+") and "buildstring-1.0-versioned_2" in l
                    for l in hist.splitlines()), "history records the link", hist)
    r = t.menv_run("install", "-f", lock, "-n", "old")
    if t.check(r.rc == 0, "install -f LOCK again", r):
        t.check("already installed" in r.out, "a second install is a no-op", r.out)
    # an environment file is not a lockfile: one line, nothing changed
    envf = os.path.join(t.tmp, "new.yml")
    after = by_name(old)
    r = t.menv_run("install", "-f", envf, "-n", "old")
    t.eq(r.rc, 2, "install -f ENVFILE: usage exit status")
    t.one_line_error(r, "install -f ENVFILE", ["new.yml", "not a lockfile"], nonzero_only=True)
    r = t.menv_run("install", "-f", lock, "-n", "old", "zlib")
    t.eq(r.rc, 2, "install -f LOCK with specs: usage exit status")
    t.one_line_error(r, "install -f LOCK with specs", ["no package specs"], nonzero_only=True)
    # a wrong hash: refused before anything is unlinked
    t.menv_ok("remove", "-q", "-n", "old", "dependent")
    after = by_name(old)
    bad = os.path.join(t.tmp, "bad.lock.yml")
    sha = want["dependent"]["sha256"]
    write_text(bad, open(lock).read().replace(sha, "0" * 64))
    r = t.menv_run("install", "-q", "-f", bad, "-n", "old",
                   env={"CONDA_PKGS_DIRS": os.path.join(t.tmp, "pk-bad")})
    t.one_line_error(r, "install -f LOCK with a wrong sha256", ["sha256"])
    t.eq(by_name(old), after, "a failed install -f leaves the environment as it was")
    # only what is linked is fetched: a cold cache gets the one missing package
    cold = os.path.join(t.tmp, "pk-cold")
    r = t.menv_run("install", "-q", "-f", lock, "-n", "old", env={"CONDA_PKGS_DIRS": cold})
    if t.check(r.rc == 0, "install -f LOCK with a cold cache", r):
        t.eq(sorted(f for f in os.listdir(cold) if f.endswith((".conda", ".tar.bz2"))),
             [os.path.basename(want["dependent"]["url"])],
             "only the package to link was downloaded")
        t.eq(by_name(old)["dependent"]["sha256"], want["dependent"]["sha256"],
             "the missing package is linked again")
    # into a prefix that is not an environment
    r = t.menv_run("install", "-f", lock, "-p", os.path.join(t.tmp, "nowhere"))
    t.one_line_error(r, "install -f LOCK into no environment", ["nowhere"])
    show_repodata(chan)


def pixi_text(t, lock_path):
    """A pixi.lock v6 with environments `default` (zlib only) and `full` from a conda-lock."""
    entries = [p for p in menv_json_lock(t, lock_path)["packages"] if p["manager"] == "conda"]
    lines = ["version: 6", "environments:"]
    for env, pick in (("default", [e for e in entries if e["name"] == "_r-mutex"]),
                      ("full", entries)):
        lines += ["  %s:" % env, "    channels:", "      - url: %s/" % t.url(os.path.dirname(
            os.path.dirname(entries[0]["url"][len("file://"):]))), "    packages:",
            "      linux-64:"]
        lines += ["        - conda: %s" % e["url"] for e in pick]
    lines.append("packages:")
    for e in entries:
        lines += ["  - conda: %s" % e["url"], "    sha256: %s" % e["sha256"],
                  "    md5: %s" % e["md5"]]
        if e["depends"]:
            lines.append("    depends:")
            lines += ["      - %s" % json.dumps(d) for d in e["depends"]]
    return "\n".join(lines) + "\n"


def menv_json_lock(t, lock_path):
    return t.menv_ok("export", "-p", lock_path, "--format", "conda-lock", "--json").json()


def pixi(t):
    chan = corpus_channel(t)
    corpus_env(t, chan)
    prefix = os.path.join(t.envs, "corpus")
    p = os.path.join(t.tmp, "pixi.lock")
    write_text(p, pixi_text(t, prefix))
    hide_repodata(chan)
    r = t.menv_run("create", "-f", p, "-n", "px", "-e", "full")
    if t.check(r.rc == 0, "pixi v6: create -e full", r):
        no_solve(t, r, "pixi")
        compare_prefixes(t, prefix, os.path.join(t.envs, "px"), "pixi -e full")
    r = t.menv_run("create", "-f", p, "-n", "pxd")
    if t.check(r.rc == 0, "pixi v6: the default environment", r):
        t.eq([d.split("-")[0] for d in records(os.path.join(t.envs, "pxd"))], ["_r"],
             "pixi default environment holds _r-mutex only")
    r = t.menv_run("create", "-f", p, "-n", "pxn", "-e", "nope")
    t.one_line_error(r, "pixi: unknown environment", ["nope", "default", "full"])
    # v7: platforms list
    v7 = open(p).read().replace("version: 6", "version: 7\nplatforms:\n  - name: linux-64", 1)
    p7 = os.path.join(t.tmp, "pixi7.lock")
    write_text(p7, v7)
    r = t.menv_run("create", "-f", p7, "-n", "px7", "-e", "full")
    if t.check(r.rc == 0, "pixi v7: create -e full", r):
        compare_prefixes(t, prefix, os.path.join(t.envs, "px7"), "pixi v7 -e full")
    show_repodata(chan)


def formats(t):
    chan = corpus_channel(t)
    env = os.path.join(t.tmp, "f.yml")
    write_text(env, "name: f\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n  - symlink-test\n"
               "  - _r-mutex\nvariables:\n  MY_VAR: 'a value'\n" % t.url(chan))
    t.menv_ok("create", "-q", "-f", env, "-n", "f")
    r = t.menv_ok("export", "-n", "f", "--format", "environment")
    t.check("- _r-mutex=1.0.1=anacondar_1" in r.out, "environment: name=version=build", r.out)
    t.check("MY_VAR: a value" in r.out, "environment: variables kept", r.out)
    r = t.menv_ok("export", "-n", "f", "--no-builds")
    t.check("- _r-mutex=1.0.1\n" in r.out, "--no-builds: name=version", r.out)
    r = t.menv_ok("export", "-n", "f", "--json")
    j = r.try_json() or {}
    t.eq(sorted(j.get("dependencies") or []), ["_r-mutex=1.0.1=anacondar_1", "symlink-test=1.0.0=0"],
         "--json: conda env export's shape")
    r = t.menv_ok("export", "-n", "f", "--format", "conda-lock", "--json")
    j = r.try_json() or {}
    t.eq(sorted(p["name"] for p in j.get("packages", [])), ["_r-mutex", "symlink-test"],
         "--format conda-lock --json: the lock model")
    r = t.menv_ok("export", "-n", "f", "--from-history")
    t.check("- symlink-test\n" in r.out and "- _r-mutex\n" in r.out and t.url(chan) in r.out,
            "--from-history: the requested specs and channels", r.out)
    fh = os.path.join(t.tmp, "fh.yml")
    write_text(fh, r.out.replace("name: f", "name: f2"))
    r = t.menv_run("create", "-q", "-f", fh, "-n", "f2")
    if t.check(r.rc == 0, "--from-history export re-creates", r):
        t.eq(sorted(records(os.path.join(t.envs, "f2"))),
             sorted(records(os.path.join(t.envs, "f"))), "--from-history round trip: same set")
    r = t.menv_run("export", "-n", "f", "--format", "pixi")
    t.one_line_error(r, "unknown format", ["pixi"], nonzero_only=True)
    out = os.path.join(t.tmp, "written.lock.yml")
    t.menv_ok("export", "-n", "f", "--file", out)
    t.check("version: 1" in open(out).read(), "--file writes the lock")


def lock(t):
    """menv lock: several platforms, virtual packages per platform, --check."""
    chan = os.path.join(t.tmp, "mp")
    for sd, vdep in (("linux-64", "__glibc >=2.17"), ("osx-64", "__osx >=10.13"),
                     ("win-64", "__win")):
        t.write_repodata(chan, sd, conda_packages={
            "tool-1.0-0.conda": {"name": "tool", "version": "1.0", "build": "0",
                                 "depends": ["lib", vdep], "sha256": "a" * 64, "md5": "b" * 32},
            "lib-2.0-0.conda": {"name": "lib", "version": "2.0", "build": "0",
                                "sha256": "c" * 64, "md5": "d" * 32},
            "gpu-1.0-cuda.conda": {"name": "gpu", "version": "1.0", "build": "cuda",
                                   "depends": ["__cuda >=11.2"], "sha256": "e" * 64}})
    t.write_repodata(chan, "noarch", conda_packages={
        "pure-3.0-py_0.conda": {"name": "pure", "version": "3.0", "build": "py_0",
                                "noarch": "generic", "sha256": "f" * 64}})
    env = os.path.join(t.tmp, "mp.yml")
    write_text(env, "name: mp\nchannels: [%s, nodefaults]\ndependencies: [tool, pure]\n"
               % t.url(chan))
    out = os.path.join(t.tmp, "mp.lock.yml")
    r = t.menv_run("lock", "-f", env, "--platform", "linux-64", "--platform", "osx-64",
                   "--platform", "win-64", "--lockfile", out)
    if t.check(r.rc == 0, "lock for three platforms", r):
        text = open(out).read()
        for sd in ("linux-64", "osx-64", "win-64"):
            t.check("%s/%s/tool-1.0-0.conda" % (t.url(chan), sd) in text,
                    "lock: tool for %s from its own subdir" % sd, text[:3000])
        t.check(text.count("/noarch/pure-3.0-py_0.conda") == 3, "lock: noarch pure on each platform")
        t.check(text.count("name: lib") == 3, "lock: lib on each platform")
        r = t.menv_run("lock", "-f", env, "--platform", "linux-64", "--platform", "osx-64",
                       "--platform", "win-64", "--lockfile", out, "--check")
        t.check(r.rc == 0 and "up to date" in r.out, "--check: up to date", r)
        # an unknown platform is refused and the existing lock stays (tryout finding: it was
        # overwritten with `platforms: [bogus-99]`)
        before = open(out).read()
        for bad in ("bogus-99", ""):
            r = t.menv_run("lock", "-f", env, "--platform", bad, "--lockfile", out)
            t.one_line_error(r, "lock --platform %r" % bad, ["unknown platform '%s'" % bad],
                             nonzero_only=True)
            t.eq(open(out).read(), before, "lock --platform %r: the lock is unchanged" % bad)
    # a CUDA package needs a declared __cuda: never a silent default
    genv = os.path.join(t.tmp, "gpu.yml")
    write_text(genv, "name: g\nchannels: [%s, nodefaults]\ndependencies: [gpu]\n" % t.url(chan))
    gout = os.path.join(t.tmp, "gpu.lock.yml")
    r = t.menv_run("lock", "-q", "-f", genv, "--lockfile", gout,
                   env={"CONDA_OVERRIDE_CUDA": "12.0"})
    t.one_line_error(r, "lock: no __cuda declared", ["__cuda"], one_line=False)
    r = t.menv_run("lock", "-f", genv, "--lockfile", gout, "--virtual-package", "__cuda=11.8")
    t.check(r.rc == 0 and "gpu-1.0-cuda.conda" in open(gout).read(),
            "lock: --virtual-package __cuda=11.8 makes the CUDA package lockable", r)
    r = t.menv_run("lock", "-f", genv, "--lockfile", gout, "--virtual-package", "linux-64:__cuda=10.0")
    t.check(r.rc != 0, "lock: a per-platform __cuda too old is unsatisfiable", r)
    # the same declaration inside the file (virtual-packages:); a flag replaces the file's
    fenv = os.path.join(t.tmp, "gpu-decl.yml")
    write_text(fenv, "name: g\nchannels: [%s, nodefaults]\ndependencies: [gpu]\n"
               "virtual-packages:\n  - linux-64:__cuda=11.8\n" % t.url(chan))
    r = t.menv_run("lock", "-f", fenv, "--lockfile", gout)
    t.check(r.rc == 0 and "gpu-1.0-cuda.conda" in open(gout).read(),
            "lock: virtual-packages: [linux-64:__cuda=11.8] in the file makes it lockable", r)
    r = t.menv_run("lock", "-f", fenv, "--lockfile", gout, "--check")
    t.check(r.rc == 0 and "up to date" in r.out, "--check with the file's declaration", r)
    r = t.menv_run("lock", "-q", "-f", fenv, "--lockfile", gout, "--virtual-package",
                   "__cuda=10.0")
    t.check(r.rc != 0 and "__cuda" in r.err, "lock: --virtual-package replaces the file's", r)
    write_text(fenv, "name: g\nchannels: [%s, nodefaults]\ndependencies: [gpu]\n"
               "virtual-packages:\n  - cuda=11.8\n" % t.url(chan))
    r = t.menv_run("lock", "-f", fenv, "--lockfile", gout)
    t.one_line_error(r, "virtual-packages: a bad entry", ["gpu-decl.yml:5", "virtual-packages"])
    # conda's reading of the same file ignores the key: create still uses this machine's
    write_text(fenv, "name: g\nchannels: [%s, nodefaults]\ndependencies: [pure]\n"
               "virtual-packages:\n  - __cuda=11.8\n" % t.url(chan))
    r = t.menv_run("create", "-f", fenv, "-n", "gdecl", "--dry-run", "--json")
    t.eq(sorted(p["name"] for p in (r.try_json() or {}).get("actions", {}).get("LINK", [])),
         ["pure"], "create -f with virtual-packages: solves as before")
    # --check notices a changed source
    with open(env, "a") as f:
        f.write("# changed\n")
    r = t.menv_run("lock", "-f", env, "--platform", "linux-64", "--lockfile", out, "--check")
    t.check(r.rc == 1 and "out of date" in r.out, "--check: a changed source is out of date", r)
    # the lock re-reads and its dry-run create links from the lock
    r = t.menv_run("create", "-f", out, "-n", "mp", "--dry-run", "--json")
    link = {p["name"]: p for p in (r.try_json() or {}).get("actions", {}).get("LINK", [])}
    t.eq(sorted(link), ["lib", "pure", "tool"], "dry-run from the lock: linux-64 records")


def corpus_dry_run(t):
    """Real conda-lock and explicit files from other projects install (dry run) without a solve.
    Entries with no size get it from a HEAD request to their public URL (menv_fetch_sizes),
    which fails here, where no name resolves: the resolver is told to give up after one try of
    1 s (RES_OPTIONS, glibc's), not the default 2 of 5 s each, which made this case wait
    about 60 s for nothing."""
    L = os.path.join(t.corpus, "lockfiles")
    quick_dns = {"RES_OPTIONS": "timeout:1 attempts:1"}
    for rel, n in (("conda-lock/test-lockfile/conda-lock.yml", None),
                   ("repo2docker/environment.py-3.9-linux-64.lock", 170),
                   ("rattler/conda-lock/v4/python-lock.yml", None),
                   ("pixi/lock_files/ripgrep.lock", 6)):
        r = t.menv_run("create", "-f", os.path.join(L, rel), "-n", "d", "--dry-run", "--json",
                       env=quick_dns)
        j = r.try_json() or {}
        links = j.get("actions", {}).get("LINK", [])
        if t.check(r.rc == 0 and links, "%s: dry run from the lock" % rel, r):
            t.check(j.get("solved") is False, "%s: not solved" % rel, j.get("solved"))
            if n:
                t.eq(len(links), n, "%s: every linux-64 record" % rel)
            t.check(all(p.get("sha256") or p.get("md5") for p in links),
                    "%s: every record carries a hash" % rel)


def br021(t):
    """pip packages (dist-info folders no conda record owns) appear in every export."""
    chan = corpus_channel(t)
    env = os.path.join(t.tmp, "pipmix.yml")
    write_text(env, "name: pipmix\nchannels: [%s, nodefaults]\ndependencies: [_r-mutex]\n" % t.url(chan))
    t.menv_ok("create", "-q", "-f", env, "-n", "pipmix")
    prefix = os.path.join(t.envs, "pipmix")
    sp = os.path.join(prefix, "lib", "python3.11", "site-packages")
    dists = [("graphviz", "0.20.1"), ("requests", "2.31.0"), ("idna", "3.6"),
             ("urllib3", "2.1.0"), ("certifi", "2023.11.17"), ("charset_normalizer", "3.3.2")]
    for n, v in dists:
        d = os.path.join(sp, "%s-%s.dist-info" % (n, v))
        write_text(os.path.join(d, "METADATA"), "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n"
                   % (n, v))
        write_text(os.path.join(d, "INSTALLER"), "pip\n")
        write_text(os.path.join(d, "RECORD"), "")
    want = sorted("%s==%s" % (n.replace("_", "-"), v) for n, v in dists)
    r = t.menv_ok("export", "-n", "pipmix", "--format", "environment")
    pip = [l.strip()[2:] for l in r.out.split("- pip:")[-1].splitlines() if l.strip().startswith("- ")]
    t.check("- pip:" in r.out, "BR-021: the environment export has a pip section", r.out)
    t.eq(sorted(pip), want, "BR-021: pip section = the pip-installed dists, names normalised")
    t.check("_r-mutex" not in r.out.split("- pip:")[-1], "BR-021: no conda package in the pip section")
    r = t.menv_ok("export", "-n", "pipmix")
    t.eq(r.out.count("manager: pip"), 6, "BR-021: the conda-lock export has 6 pip entries")
    r = t.menv_ok("list", "-n", "pipmix", "--json")
    t.eq(sorted(p["name"] for p in r.json() if p.get("channel") == "pypi"),
         sorted(n.replace("_", "-") for n, _ in dists), "BR-021: menv list shows them (pypi)")


def br022(t):
    """An explicit pip pin stays when a pip section exists; `pip` is added only when missing."""
    chan = os.path.join(t.tmp, "main")
    t.write_repodata(chan, "linux-64", conda_packages={
        "python-3.12.1-0.conda": {"name": "python", "version": "3.12.1", "build": "0",
                                  "sha256": "1" * 64}})
    t.write_repodata(chan, "noarch", conda_packages={
        "pip-24.0-pyh_0.conda": {"name": "pip", "version": "24.0", "build": "pyh_0",
                                 "depends": ["python"], "sha256": "2" * 64},
        "pip-24.2-pyh_0.conda": {"name": "pip", "version": "24.2", "build": "pyh_0",
                                 "depends": ["python"], "sha256": "3" * 64}})
    env = os.path.join(t.tmp, "pinpip.yml")
    write_text(env, "name: pinpip\nchannels: [%s, nodefaults]\ndependencies:\n  - python=3.12.1\n"
               "  - pip=24.0\n  - pip:\n      - six\n" % t.url(chan))
    r = t.menv_run("create", "-f", env, "--dry-run", "--json")
    link = {p["name"]: p for p in (r.try_json() or {}).get("actions", {}).get("LINK", [])}
    t.eq(link.get("pip", {}).get("version"), "24.0", "BR-022: pip 24.0 kept with a pip section")
    out = os.path.join(t.tmp, "pinpip.lock.yml")
    r = t.menv_run("lock", "-f", env, "--lockfile", out)
    if t.check(r.rc == 0, "BR-022: lock", r):
        t.check("pip-24.0-pyh_0.conda" in open(out).read() and "pip-24.2" not in open(out).read(),
                "BR-022: the lock records pip 24.0")
    # no pip spec: `pip` is added (newest)
    env2 = os.path.join(t.tmp, "addpip.yml")
    write_text(env2, "name: addpip\nchannels: [%s, nodefaults]\ndependencies:\n  - python=3.12.1\n"
               "  - pip:\n      - six\n" % t.url(chan))
    r = t.menv_run("create", "-f", env2, "--dry-run", "--json")
    link = {p["name"]: p for p in (r.try_json() or {}).get("actions", {}).get("LINK", [])}
    t.eq(link.get("pip", {}).get("version"), "24.2", "BR-022: a missing pip spec adds pip")


def br023(t):
    """`second::wrapt` is locked (and re-created) from `second`, not the first channel."""
    chans = {}
    for name, ver in (("first", "1.13.3"), ("second", "1.14.0")):
        d = os.path.join(t.tmp, "src-" + name)
        pkgs = [build_tar_bz2(os.path.join(d, "wrapt-%s-py310_0.tar.bz2" % ver),
                              {"name": "wrapt", "version": ver, "build": "py310_0",
                               "build_number": 0, "subdir": SUBDIR, "depends": ["python 3.10.*"]},
                              {"info/files": b"lib/wrapt-%s\n" % ver.encode(),
                               "lib/wrapt-%s" % ver: b"wrapt from %s\n" % name.encode()})]
        if name == "first":
            pkgs.append(build_tar_bz2(os.path.join(d, "python-3.10.0-0.tar.bz2"),
                                      {"name": "python", "version": "3.10.0", "build": "0",
                                       "build_number": 0, "subdir": SUBDIR, "depends": []},
                                      {"info/files": b"bin/python3.10\n",
                                       "bin/python3.10": b"not really python\n"}))
        chans[name] = t.make_channel(name, {SUBDIR: pkgs, "noarch": []})
    env = os.path.join(t.tmp, "chanpin.yml")
    write_text(env, "name: chanpin\nchannels:\n  - %s\n  - %s\n  - nodefaults\ndependencies:\n"
               "  - python=3.10\n  - second::wrapt\n" % (t.url(chans["first"]), t.url(chans["second"])))
    # with the default channel priority (strict since the solver's 0266581) second::wrapt must
    # still come from second, as in conda
    r = t.menv_run("create", "-q", "-f", env, "-n", "strict", "--dry-run", "--json")
    link = {p["name"]: p for p in (r.try_json() or {}).get("actions", {}).get("LINK", [])}
    t.eq(link.get("wrapt", {}).get("version"), "1.14.0",
         "BR-023: second::wrapt solves from second with the default (strict) priority", )
    # the lock part, independent of that: flexible priority
    t.set_rc("channel_priority: flexible\n")
    out = os.path.join(t.tmp, "chanpin.lock.yml")
    r = t.menv_run("lock", "-f", env, "--lockfile", out)
    if t.check(r.rc == 0, "BR-023: lock", r):
        text = open(out).read()
        t.check("%s/%s/wrapt-1.14.0-py310_0.tar.bz2" % (t.url(chans["second"]), SUBDIR) in text,
                "BR-023: wrapt 1.14.0 locked under second", text)
    t.menv_ok("create", "-q", "-f", env, "-n", "chanpin")
    r = t.menv_ok("export", "-n", "chanpin", "--format", "environment")
    t.check("second::wrapt=1.14.0" in r.out or "- wrapt=1.14.0=py310_0" in r.out,
            "BR-023: the environment export keeps wrapt 1.14.0", r.out)
    r = t.menv_ok("export", "-n", "chanpin", "--from-history")
    t.check("second::wrapt" in r.out, "BR-023: --from-history keeps second::wrapt", r.out)
    hide_repodata(chans["first"])
    hide_repodata(chans["second"])
    r = t.menv_run("create", "-f", out, "-n", "chanpin2",
                   env={"CONDA_PKGS_DIRS": os.path.join(t.tmp, "pk")})
    if t.check(r.rc == 0, "BR-023: create from the lock", r):
        no_solve(t, r, "BR-023")
        rec = read_json(os.path.join(t.envs, "chanpin2", "conda-meta", "wrapt-1.14.0-py310_0.json"))
        t.eq(rec.get("channel"), "%s/%s" % (t.url(chans["second"]), SUBDIR),
             "BR-023: PrefixRecord channel is second")
        t.eq(open(os.path.join(t.envs, "chanpin2", "lib", "wrapt-1.14.0")).read(),
             "wrapt from second\n", "BR-023: the file came from second")


# --------------------------------------------------------------------------
# pip with the toolchain's python and Debian's wheels

def wheel_index(t):
    """A PEP 503 simple index of Debian bullseye's python-pip-whl wheels, served on 127.0.0.1."""
    debs = sorted(glob.glob(os.path.join(TOOLCHAIN_CACHE, "debs", "python-pip-whl_*.deb")))
    if not debs:
        raise Skip("Debian's python-pip-whl .deb is not in the toolchain cache")
    x = os.path.join(t.tmp, "deb")
    subprocess.run(["dpkg-deb", "-x", debs[-1], x], check=True)
    wheels = glob.glob(os.path.join(x, "usr", "share", "python-wheels", "*.whl"))
    simple = os.path.join(t.tmp, "www", "simple")
    for w in wheels:
        name = os.path.basename(w).split("-")[0].lower().replace("_", "-")
        os.makedirs(os.path.join(simple, name), exist_ok=True)
        shutil.copy(w, os.path.join(simple, name))
    for d in os.listdir(simple):
        files = os.listdir(os.path.join(simple, d))
        write_text(os.path.join(simple, d, "index.html"), "<html><body>%s</body></html>\n" %
                   "".join('<a href="%s#sha256=%s">%s</a><br/>' %
                           (f, sha256_file(os.path.join(simple, d, f)), f) for f in files))
    write_text(os.path.join(simple, "index.html"), "<html><body>%s</body></html>\n" %
               "".join('<a href="%s/">%s</a>' % (d, d) for d in sorted(os.listdir(simple))))
    return t.http_server(os.path.join(t.tmp, "www"))


def add_wheel(t, name, version, files, requires=(), fragment=True):
    """A wheel built here, added to the loopback index of wheel_index(); fragment=False: its
    link carries no #sha256= (PEP 503 makes the fragment optional)."""
    d = os.path.join(t.tmp, "www", "simple", name)
    os.makedirs(d, exist_ok=True)
    whl = os.path.join(d, "%s-%s-py3-none-any.whl" % (name, version))
    di = "%s-%s.dist-info" % (name, version)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s" % (
        name, version, "".join("Requires-Dist: %s\n" % r for r in requires))
    entries = dict(files)
    entries[di + "/METADATA"] = meta
    entries[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: menv-tests\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n")
    entries[di + "/RECORD"] = "".join("%s,,\n" % k for k in list(entries) + [di + "/RECORD"])
    with zipfile.ZipFile(whl, "w") as z:
        for k, v in entries.items():
            z.writestr(k, v)
    frag = "#sha256=" + sha256_file(whl) if fragment else ""
    write_text(os.path.join(d, "index.html"), '<html><body><a href="%s%s">%s</a></body>'
               '</html>\n' % (os.path.basename(whl), frag, os.path.basename(whl)))


def isolate_pip():
    """The machine's pip settings (PIP_FIND_LINKS, pip.conf) must not feed the tests."""
    for k in list(os.environ):
        if k.startswith("PIP_"):
            del os.environ[k]
    os.environ["PIP_CONFIG_FILE"] = os.devnull


def pip_cases(t):
    isolate_pip()
    chan = toolchain_channel(t)
    srv = wheel_index(t)
    try:
        idx = srv.base + "/simple"
        # BR-003: only a pip: mapping -> conda adds pip (which pulls python), pip installs
        env = os.path.join(t.tmp, "pip-only.yml")
        write_text(env, "name: pip-only\nchannels: [%s, nodefaults]\ndependencies:\n  - pip:\n"
                   "      - --index-url %s\n      - six\n" % (t.url(chan), idx))
        r = t.menv_run("create", "-f", env, timeout=600)
        if t.check(r.rc == 0, "BR-003: pip-only environment created", r):
            l = {p["name"]: p for p in t.menv_ok("list", "-n", "pip-only", "--json").json()}
            t.check("pip" in l and "python" in l, "BR-003: conda side has pip and python", sorted(l))
            t.eq(l.get("six", {}).get("channel"), "pypi", "BR-003: six installed by pip (pypi)")
        # BR-004: pip next to pip:, one pip
        env = toolchain_python_env(t, chan, "both-pip", ["--index-url %s" % idx, "requests"])
        r = t.menv_run("create", "-f", env, timeout=600)
        if t.check(r.rc == 0, "BR-004: python + pip + pip: [requests]", r):
            l = {p["name"]: p for p in t.menv_ok("list", "-n", "both-pip", "--json").json()}
            t.eq(l.get("requests", {}).get("channel"), "pypi",
                 "BR-004: requests installed by pip (Debian's wheel declares no dependencies)")
            specs = [s for s in json.load(open(os.path.join(t.envs, "both-pip", "conda-meta",
                                                            ".menv-request")))["specs"]]
            t.eq(specs.count("pip"), 1, "BR-004: pip counted once")
            # export with pip: lock entries with URL + sha256 from the index
            lockp = os.path.join(t.tmp, "both-pip.lock.yml")
            write_text(lockp, t.menv_ok("export", "-n", "both-pip").out)
            text = open(lockp).read()
            t.check("manager: pip" in text and idx in text, "export: pip entries with index URLs",
                    text[-3000:])
            # re-create from the lock: --no-deps --require-hashes, same pip set
            r = t.menv_run("create", "-f", lockp, "-n", "both-pip-2", timeout=600)
            if t.check(r.rc == 0, "re-create with pip from the lock", r):
                t.check("--require-hashes" in r.err, "pip ran with --require-hashes", r.err)
                pa = sorted((p["name"], p["version"]) for p in t.menv_ok(
                    "list", "-n", "both-pip", "--json").json())
                pb = sorted((p["name"], p["version"]) for p in t.menv_ok(
                    "list", "-n", "both-pip-2", "--json").json())
                t.eq(pb, pa, "lock re-create: same conda and pip packages")
            # --from-history keeps channels and the pip section
            r = t.menv_ok("export", "-n", "both-pip", "--from-history")
            t.check("- pip:" in r.out and "requests" in r.out and idx in r.out and t.url(chan)
                    in r.out, "--from-history keeps channels and pip", r.out)
            fh = os.path.join(t.tmp, "fh.yml")
            write_text(fh, r.out.replace("name: both-pip", "name: both-pip-3"))
            r = t.menv_run("create", "-f", fh, timeout=600)
            if t.check(r.rc == 0, "--from-history round trip creates", r):
                l3 = {p["name"] for p in t.menv_ok("list", "-n", "both-pip-3", "--json").json()}
                t.check("requests" in l3, "--from-history round trip: pip packages back", l3)
        # a failing pip requirement rolls the create back
        env = toolchain_python_env(t, chan, "pipfail", ["--index-url %s" % idx,
                                                        "no-such-package-menv==1.0"])
        r = t.menv_run("create", "-f", env, timeout=600)
        t.check(r.rc == 1, "failing pip requirement: exit 1", r)
        t.check(r.err.splitlines()[-1].startswith("menv: error:") and "pip" in r.err.splitlines()[-1],
                "failing pip: the last line is menv's error naming pip", r.err[-500:])
        t.no_prefix_left(os.path.join(t.envs, "pipfail"), "failing pip")
    finally:
        srv.stop()


PROJ_SETUP = """from setuptools import setup
setup(name="menvproj", version="0.3", py_modules=["menvproj"])
"""


def pip_options(t):
    """pip options in a `pip:` section as users write them: `--no-build-isolation` (pip takes
    it on its command line only), `-e .` (the environment file's own folder, a setup.py
    project), `--extra-index-url URL` and `-r requirements.txt` beside the file; in create -f
    and env update -f, run from another folder. The editable install is listed as conda lists
    it (dev_0, <develop>, platform pypi) and exported as `-e DIR`."""
    isolate_pip()
    chan = toolchain_channel(t)
    srv = wheel_index(t)
    try:
        idx = srv.base + "/simple"
        proj = os.path.join(t.tmp, "proj")
        os.makedirs(proj)
        write_text(os.path.join(proj, "setup.py"), PROJ_SETUP)
        write_text(os.path.join(proj, "menvproj.py"), "VALUE = 42\n")
        write_text(os.path.join(proj, "requirements.txt"), "six\n")
        env = os.path.join(proj, "environment.yml")
        write_text(env, "name: pipopts\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n"
                   "  - python=3.9\n  - pip\n  - setuptools\n  - pip:\n"
                   "      - --index-url %s\n      - --extra-index-url %s\n"
                   "      - --no-build-isolation\n      - -e .\n      - -r requirements.txt\n"
                   % (t.url(chan), idx, idx))
        r = t.menv_run("create", "-f", env, timeout=600, cwd="/")
        if not t.check(r.rc == 0, "create -f with --no-build-isolation, -e ., --extra-index-url, "
                       "-r requirements.txt (run from /)", r):
            return
        # in a requirements file pip stops with "no such option: --no-build-isolation"
        t.check("no such option" not in r.err and "Invalid requirement" not in r.err,
                "pip took --no-build-isolation on its command line", r.err[-2000:])
        prefix = os.path.join(t.envs, "pipopts")
        rows = {p["name"]: p for p in t.menv_ok("list", "-n", "pipopts", "--json").json()}
        t.eq({k: rows.get("menvproj", {}).get(k) for k in
              ("version", "build_string", "channel", "platform")},
             {"version": "0.3", "build_string": "dev_0", "channel": "<develop>",
              "platform": "pypi"}, "list --json: the editable install as conda lists it")
        t.eq(rows.get("six", {}).get("channel"), "pypi", "six from -r requirements.txt (pypi)")
        text = t.menv_ok("list", "-n", "pipopts").out
        line = [l.split() for l in text.splitlines() if l.startswith("menvproj ")]
        t.eq(line, [["menvproj", "0.3", "dev_0", "<develop>"]], "list: menvproj 0.3 dev_0 <develop>")
        q = subprocess.run([os.path.join(prefix, "bin", "python"), "-c",
                            "import menvproj; print(menvproj.__file__, menvproj.VALUE)"],
                           capture_output=True, text=True, cwd="/")
        t.eq(q.stdout.split(), [os.path.join(proj, "menvproj.py"), "42"],
             "menvproj imports from the project folder (editable)")
        link = glob.glob(os.path.join(prefix, "lib", "python3.9", "site-packages",
                                      "menvproj.egg-link"))
        t.check(len(link) == 1 and open(link[0]).read().splitlines()[0] == proj,
                "pip 20.3's editable install: an egg-link to the project", link)
        out = t.menv_ok("export", "-n", "pipopts", "--format", "environment").out
        # YAML quotes the items that start with '-'
        pipsec = [l.strip()[2:].strip('"') for l in out.split("- pip:")[-1].splitlines()
                  if l.strip().startswith("- ")]
        t.check("-e %s" % proj in pipsec and any(x.startswith("six==") for x in pipsec)
                and not any(x.startswith("menvproj==") for x in pipsec),
                "export: the editable install as '-e %s', six as six==VERSION" % proj, pipsec)
        # env update -f with the same file, from another folder: nothing breaks, same set
        before = sorted((p["name"], p["version"], p["build_string"]) for p in
                        t.menv_ok("list", "-n", "pipopts", "--json").json())
        r = t.menv_run("env", "update", "-f", env, timeout=600, cwd="/")
        t.check(r.rc == 0, "env update -f with the same pip options", r)
        after = sorted((p["name"], p["version"], p["build_string"]) for p in
                       t.menv_ok("list", "-n", "pipopts", "--json").json())
        t.eq(after, before, "env update -f: the same packages afterwards")
        # the exported file creates the same environment elsewhere
        exp = os.path.join(t.tmp, "exported.yml")
        write_text(exp, out.replace("name: pipopts", "name: pipopts2"))
        r = t.menv_run("create", "-f", exp, timeout=600)
        if t.check(r.rc == 0, "the export creates again", r):
            rows2 = {p["name"]: p for p in t.menv_ok("list", "-n", "pipopts2", "--json").json()}
            t.eq(rows2.get("menvproj", {}).get("build_string"), "dev_0",
                 "the re-created environment holds menvproj editable again")
    finally:
        srv.stop()


def state(prefix):
    """What a change to an environment may alter: every file outside __pycache__ (python
    writes those when pip runs) and conda-meta/history, with its sha256."""
    out = {}
    for d, dirs, files in os.walk(prefix):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, prefix)
            if rel in ("conda-meta/history", "conda-meta/.menv.lock"):
                continue
            out[rel] = os.readlink(p) if os.path.islink(p) else sha256_file(p)
    return out


def last_error(t, r, what, needles):
    """exit 1; pip's own output above, and menv's one-line error last, naming every needle."""
    last = r.err.strip().splitlines()[-1] if r.err.strip() else ""
    t.check(r.rc == 1, "%s: exit 1" % what, r)
    for n in needles:
        t.check(n in last, "%s: the last line names %r" % (what, n), last)


def pip_update(t):
    """env update -f with a `pip:` section and install -f LOCK with pip entries, into an
    existing environment; a failing pip step takes back what it added and the conda change,
    so the environment is byte for byte as it was."""
    isolate_pip()
    chan = toolchain_channel(t)
    srv = wheel_index(t)
    try:
        idx = srv.base + "/simple"
        prefix = os.path.join(t.envs, "pipupd")
        t.menv_ok("create", "-q", "-f", toolchain_python_env(t, chan, "pipupd"), timeout=600)

        def pip_set():
            return sorted((p["name"], p["version"]) for p in t.menv_ok(
                "list", "-n", "pipupd", "--json").json() if p.get("channel") == "pypi")

        # env update with a pip section: six from the loopback index, through `-r reqs.txt`
        # beside the environment file (pip reads it relative to the requirements file)
        write_text(os.path.join(t.tmp, "reqs.txt"), "six\n")
        env = toolchain_python_env(t, chan, "pipupd", ["--index-url %s" % idx, "-r reqs.txt"])
        r = t.menv_run("env", "update", "-f", env, timeout=600, cwd="/")
        t.check(r.rc == 0, "env update -f with a pip: section naming -r reqs.txt", r)
        six = [p for p in pip_set() if p[0] == "six"]
        t.eq(len(six), 1, "six installed by pip into the existing environment")
        # menv's MENV_SOURCE is in the dist-info's RECORD: pip uninstall leaves no ghost
        di = glob.glob(os.path.join(prefix, "lib", "python3.9", "site-packages",
                                    "six-*.dist-info"))
        if t.check(len(di) == 1, "six's dist-info", di):
            t.check(os.path.isfile(os.path.join(di[0], "MENV_SOURCE")) and "MENV_SOURCE" in
                    open(os.path.join(di[0], "RECORD")).read(), "MENV_SOURCE listed in RECORD")
            subprocess.run([os.path.join(prefix, "bin", "python"), "-m", "pip", "uninstall",
                            "-y", "-q", "six"], capture_output=True)
            t.check(not os.path.exists(di[0]), "pip uninstall removes the whole dist-info",
                    os.listdir(di[0]) if os.path.exists(di[0]) else None)
            r = t.menv_run("env", "update", "-f", env, timeout=600)
            t.check(r.rc == 0 and [p for p in pip_set() if p[0] == "six"] == six,
                    "six installed again", r)
        before = state(prefix)

        # a conda addition (ninja) and a pip requirement that does not exist: both taken back
        env = toolchain_python_env(t, chan, "pipupd", ["--index-url %s" % idx,
                                                       "no-such-package-menv==1.0"],
                                   extra="  - ninja\n")
        r = t.menv_run("env", "update", "-f", env, timeout=600)
        last_error(t, r, "env update: failing pip", ["menv: error: %s: " % env, "pip failed",
                                                     "no-such-package-menv",
                                                     "put back to revision"])
        after = state(prefix)
        t.eq(sorted(set(after) ^ set(before)), [], "failing pip: the same files as before")
        t.eq([k for k in before if before[k] != after.get(k)], [],
             "failing pip: every file has its old bytes")
        t.check(not os.path.exists(os.path.join(prefix, "bin", "ninja")), "ninja taken back")
        hist = open(os.path.join(prefix, "conda-meta", "history")).read()
        t.check("rollback to revision" in hist and "the pip step failed" in hist,
                "history shows the change and its rollback", hist[-800:])

        # pip replaces conda's setuptools 52 with 44.1.1 (a dependency of zzbad), then fails on
        # zzbad (a data file under bin/python3.9, which is a file): setuptools 44.1.1 is taken
        # back and conda's setuptools linked again from the package cache
        add_wheel(t, "zzbad", "1.0", {
            "zzbad/__init__.py": "",
            "zzbad-1.0.data/data/bin/python3.9/evil": "x\n"}, ["setuptools==44.1.1"])
        env = toolchain_python_env(t, chan, "pipupd", ["--index-url %s" % idx, "zzbad"])
        r = t.menv_run("env", "update", "-f", env, timeout=600)
        t.check("Uninstalling setuptools-52.0.0" in r.err,
                "pip removed conda's setuptools before failing", r.err[-2000:])
        last_error(t, r, "pip fails after removing conda's setuptools",
                   ["pip failed", "zzbad", "is as it was", "linked again"])
        after = state(prefix)
        t.eq(sorted(set(after) ^ set(before)), [], "setuptools case: the same files as before")
        t.eq([k for k in before if before[k] != after.get(k)], [],
             "setuptools case: every file has its old bytes")
        p = subprocess.run([os.path.join(prefix, "bin", "python"), "-c",
                            "import setuptools; print(setuptools.__version__)"],
                           capture_output=True, text=True)
        t.eq(p.stdout.strip(), "52.0.0", "conda's setuptools imports again")

        # install -f LOCK with pip entries: a lock of a second environment that has requests
        env2 = toolchain_python_env(t, chan, "pipsrc", ["--index-url %s" % idx, "requests"])
        t.menv_ok("create", "-q", "-f", env2, timeout=600)
        lockp = os.path.join(t.tmp, "pipsrc.lock.yml")
        write_text(lockp, t.menv_ok("export", "-n", "pipsrc").out)
        r = t.menv_run("install", "-n", "pipupd", "-f", lockp, "--dry-run")
        t.check(r.rc == 0 and "requests" in r.out and "pypi" in r.out,
                "install -f LOCK --dry-run lists the pip entry", r)
        r = t.menv_run("install", "-n", "pipupd", "-f", lockp, timeout=600)
        if t.check(r.rc == 0, "install -f LOCK with pip entries", r):
            t.check("--require-hashes" in r.err, "pip ran with --require-hashes", r.err[-800:])
            names = [p[0] for p in pip_set()]
            t.check("requests" in names and "six" in names,
                    "requests added by the lock; six (not in the lock) stays", names)
            # the lock's hashes survive a round trip (pip does not print a hash it checked)
            ex = t.menv_ok("export", "-n", "pipupd").out
            sha = re.search(r"- name: requests\n(?:    .*\n)*?      sha256: ([0-9a-f]{64})",
                            open(lockp).read())
            t.check(sha is not None and sha.group(1) in ex,
                    "export after install -f LOCK keeps requests' sha256", ex[-1500:])
        # the same lock again: nothing to do, pip not run
        r = t.menv_run("install", "-n", "pipupd", "-f", lockp, timeout=600)
        t.check(r.rc == 0 and "Installing" not in r.err.replace("Installing from lockfile", ""),
                "install -f LOCK again: pip does not run", r)

        # a lock whose pip entry has a wrong hash: refused by pip, nothing changed
        before = state(prefix)
        text = open(lockp).read()
        m = re.search(r"(- name: requests\n(?:    .*\n)*?    hash:\n(?:      .*\n)*?      sha256: )([0-9a-f]{64})", text)
        if t.check(m is not None, "the lock has requests' sha256", text[-2000:]):
            wrong = text[:m.start(2)] + "0" * 64 + text[m.end(2):]
            badp = os.path.join(t.tmp, "bad.lock.yml")
            write_text(badp, wrong)
            t.menv_ok("remove", "-n", "pipupd", "ninja", timeout=120) if os.path.exists(
                os.path.join(prefix, "bin", "ninja")) else None
            subprocess.run([os.path.join(prefix, "bin", "python"), "-m", "pip", "uninstall",
                            "-y", "-q", "requests"], capture_output=True)
            before = state(prefix)
            r = t.menv_run("install", "-n", "pipupd", "-f", badp, timeout=600)
            last_error(t, r, "install -f LOCK: wrong pip hash",
                       ["menv: error: %s: " % badp, "pip failed", "is as it was"])
            after = state(prefix)
            t.eq(sorted(set(after) ^ set(before)), [], "wrong pip hash: the same files")
            t.eq([k for k in before if before[k] != after.get(k)], [],
                 "wrong pip hash: every file has its old bytes")
        # a pip package installed from a local path: export says the lock cannot fetch it
        add_wheel(t, "localpkg", "0.1", {"localpkg/__init__.py": ""})
        whl = os.path.join(t.tmp, "www", "simple", "localpkg", "localpkg-0.1-py3-none-any.whl")
        subprocess.run([os.path.join(prefix, "bin", "python"), "-m", "pip", "install", "-q",
                        "--no-deps", "--no-index", "--prefix", prefix, whl], check=True,
                       capture_output=True)
        r = t.menv_ok("export", "-n", "pipupd")
        t.check("warning: pip package 'localpkg' 0.1 was installed from a local path" in r.err,
                "export warns about a pip package from a local path", r.err)
        subprocess.run([os.path.join(prefix, "bin", "python"), "-m", "pip", "uninstall", "-y",
                        "-q", "localpkg"], capture_output=True)

        # menv killed (SIGKILL) while pip runs: pip does not go on without the prefix lock
        hang = socket.socket()
        hang.bind(("127.0.0.1", 0))
        hang.listen(16)
        held = []

        def hold():  # accepts every connection and never answers it
            while True:
                try:
                    held.append(hang.accept()[0])
                except OSError:
                    return
        threading.Thread(target=hold, daemon=True).start()
        before = state(prefix)
        env = toolchain_python_env(t, chan, "pipupd", [
            "--index-url http://127.0.0.1:%d/simple" % hang.getsockname()[1], "toml"],
            extra="  - ninja\n")
        p = subprocess.Popen([t.menv, "env", "update", "-f", env], env=t.environ(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pip_pid = None
        for _ in range(600):
            pip_pid = pip_process(prefix)
            if pip_pid or p.poll() is not None:
                break
            time.sleep(0.05)
        if t.check(pip_pid is not None, "pip started against the silent index"):
            p.kill()
            p.wait()
            for _ in range(100):  # 5 s; pip itself waits 15 s for each of its 5 tries
                if not os.path.exists("/proc/%d" % pip_pid):
                    break
                time.sleep(0.05)
            gone = not os.path.exists("/proc/%d" % pip_pid)
            if not gone:
                os.kill(pip_pid, 9)
            t.check(gone, "pip ends with menv (SIGTERM from the parent's death)")
            # ninja was linked, the pip step never finished: the next command takes both back
            r = t.menv_ok("list", "-n", "pipupd")
            t.check("took back an interrupted pip step" in r.err, "list says it took the "
                    "killed pip step back", r.err)
            t.check("ninja" not in r.out, "ninja taken back with it", r.out)
            after = state(prefix)
            t.eq(sorted(set(after) ^ set(before)), [], "killed pip step: the same files")
            t.eq([k for k in before if before[k] != after.get(k)], [],
                 "killed pip step: every file has its old bytes")
        else:
            p.kill()
            p.wait()
        hang.close()
        for c in held:
            c.close()
    finally:
        srv.stop()


def pip_process(prefix):
    """The pid of a `pip install` run by <prefix>/bin/python, or None."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
        except OSError:
            continue
        if (argv and argv[0] == os.path.join(prefix, "bin", "python").encode()
                and b"pip" in argv and b"install" in argv):
            return int(d)
    return None


def timing(t):
    chan = toolchain_channel(t)
    env = os.path.join(t.tmp, "ops.yml")
    text = open(os.path.join(SRC, "ops", "environment.yml")).read()
    write_text(env, text.replace("./menv-toolchain", t.url(chan)))
    res = {}
    for kind in ("cold", "warm"):
        pk = os.path.join(t.tmp, "pk-yml-" + kind if kind == "cold" else "pk-shared")
        t0 = time.time()
        r = t.menv_run("create", "-q", "--no-smoke-check", "-f", env, "-n", "ops-yml-" + kind,
                       env={"CONDA_PKGS_DIRS": pk}, timeout=600)
        res[("yml", kind)] = time.time() - t0
        t.check(r.rc == 0, "create from environment.yml (%s)" % kind, r)
    lockp = os.path.join(t.tmp, "ops.lock.yml")
    write_text(lockp, t.menv_ok("export", "-n", "ops-yml-warm").out)
    for kind in ("cold", "warm"):
        pk = os.path.join(t.tmp, "pk-lock-cold") if kind == "cold" else os.path.join(t.tmp, "pk-shared")
        t0 = time.time()
        r = t.menv_run("create", "-q", "--no-smoke-check", "-f", lockp, "-n", "ops-lock-" + kind,
                       env={"CONDA_PKGS_DIRS": pk}, timeout=600)
        res[("lock", kind)] = time.time() - t0
        t.check(r.rc == 0, "create from the lock (%s)" % kind, r)
    compare_prefixes(t, os.path.join(t.envs, "ops-yml-warm"), os.path.join(t.envs, "ops-lock-warm"),
                     "toolchain env: lock vs environment.yml")
    t.note("TIMING toolchain env (39 packages, without the smoke check): environment.yml cold %.2f s, warm %.2f s; "
           "lockfile cold %.2f s, warm %.2f s" % (res[("yml", "cold")], res[("yml", "warm")],
                                                  res[("lock", "cold")], res[("lock", "warm")]))


def onboard(t):
    """ops/onboard.sh from a fresh HOME: creates `ops` from ops/lock.yml, then re-checks."""
    chan = toolchain_channel(t)
    env = {"MENV": t.menv, "MENV_TOOLCHAIN_DIR": chan, "HOME": t.home}
    for run in ("first", "second"):
        p = subprocess.run(["bash", os.path.join(SRC, "ops", "onboard.sh")], capture_output=True,
                           env=t.environ(env), timeout=900)
        out = p.stdout.decode() + p.stderr.decode()
        if not t.check(p.returncode == 0, "onboard.sh %s run: exit 0" % run, out[-3000:]):
            return
        t.check("menv activate ops" in out, "onboard.sh %s run: prints the activation" % run)
        t.check("Smoke check passed" in out and "toolchain   pass  nvcc 11.8" in out,
                "onboard.sh %s run: the smoke check built ops/ with the environment's nvcc 11.8"
                % run, out[-3000:])
        t.check("numpy 1.19.5" in out and "cuda_11.8" in out,
                "onboard.sh %s run: the environment's python, numpy and nvcc" % run, out[-1500:])
    t.check("holds exactly the locked packages" in out and "creating" not in out,
            "onboard.sh second run checks instead of re-creating", out[-1500:])


# conda-lock's v1 models (conda_lock/lockfile/v1/models.py, conda_lock/models/channel.py in
# conda/conda-lock), written out field by field: name -> (type, required). Types: "str",
# "bool", ("dict", str), ("list", X), ("literal", values...), ("model", TABLE). Every model
# but Channel is a StrictModel (extra="forbid"); conda-lock drops None fields on output.
CL_HASH = {"md5": ("str", False), "sha256": ("str", False)}
CL_SOURCE = {"type": (("literal", "url"), True), "url": ("str", True)}
CL_DEP = {"name": ("str", True), "version": ("str", True),
          "manager": (("literal", "conda", "pip"), True), "platform": ("str", True),
          "dependencies": (("dict", "str"), False), "url": ("str", True),
          "hash": (("model", CL_HASH), True), "source": (("model", CL_SOURCE), False),
          "build": ("str", False), "category": ("str", False), "optional": ("bool", True)}
CL_CHANNEL = {"url": ("str", True), "used_env_vars": (("list", "str"), False)}
CL_TIME = {"created_at": ("str", True)}
CL_GIT = {"git_user_name": ("str", False), "git_user_email": ("str", False),
          "git_sha": ("str", False)}
CL_INPUT = {"md5": ("str", True), "sha256": ("str", True)}
CL_META = {"content_hash": (("dict", "str"), True),
           "channels": (("list", ("model", CL_CHANNEL, "open")), True),
           "platforms": (("list", "str"), True), "sources": (("list", "str"), True),
           "time_metadata": (("model", CL_TIME), False),
           "git_metadata": (("model", CL_GIT), False),
           "inputs_metadata": (("dict", ("model", CL_INPUT)), False),
           "custom_metadata": (("dict", "str"), False)}
CL_LOCK = {"version": (("literal", 1), True), "metadata": (("model", CL_META), True),
           "package": (("list", ("model", CL_DEP)), True)}


def cl_validate(v, ty, where, errs):
    """Appends to errs each way v is not of conda-lock's type ty (None is accepted only where
    the field is optional, as conda-lock's Optional[...] are)."""
    if ty == "str":
        if not isinstance(v, str):
            errs.append("%s: %r is not a string" % (where, v))
    elif ty == "bool":
        if not isinstance(v, bool):
            errs.append("%s: %r is not a bool" % (where, v))
    elif ty[0] == "literal":
        if v not in ty[1:] or type(v) is not type(ty[1]):
            errs.append("%s: %r is not one of %r" % (where, v, ty[1:]))
    elif ty[0] == "dict":
        if not isinstance(v, dict):
            errs.append("%s: %r is not a mapping" % (where, v))
        else:
            for k, x in v.items():
                if not isinstance(k, str):
                    errs.append("%s: key %r is not a string" % (where, k))
                cl_validate(x, ty[1], "%s.%s" % (where, k), errs)
    elif ty[0] == "list":
        if not isinstance(v, list):
            errs.append("%s: %r is not a list" % (where, v))
        else:
            for i, x in enumerate(v):
                cl_validate(x, ty[1], "%s[%d]" % (where, i), errs)
    elif ty[0] == "model":
        table = ty[1]
        if not isinstance(v, dict):
            errs.append("%s: %r is not a mapping" % (where, v))
            return
        if len(ty) < 3:   # StrictModel: extra="forbid"
            for k in v:
                if k not in table:
                    errs.append("%s: field %r is not in conda-lock's model" % (where, k))
        for k, (fty, required) in table.items():
            if k not in v:
                if required:
                    errs.append("%s: required field %r is missing" % (where, k))
            elif v[k] is None and not required:
                pass
            else:
                cl_validate(v[k], fty, "%s.%s" % (where, k), errs)


def conda_lock_model(t):
    """The conda-lock export against conda-lock's v1 models, field by field; sources named
    (the environment file, else the prefix); the lock read back under any file name."""
    import yaml
    chan = corpus_channel(t)
    env = os.path.join(t.tmp, "m.yml")
    write_text(env, "name: m\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n"
               "  - dependent\n  - _r-mutex\n" % t.url(chan))
    t.menv_ok("create", "-q", "-f", env, "-n", "m")
    t.menv_ok("create", "-q", "-n", "s", "-c", t.url(chan), "--override-channels", "_r-mutex")
    for name, want_src in (("m", os.path.realpath(env)), ("s", os.path.join(t.envs, "s"))):
        text = t.menv_ok("export", "-n", name).out
        doc = yaml.safe_load(text)
        errs = []
        cl_validate(doc, ("model", CL_LOCK), name, errs)
        t.eq(errs, [], "%s: the export is conda-lock's v1 model, field by field" % name)
        meta = doc.get("metadata") or {}
        t.eq(meta.get("sources"), [want_src],
             "%s: metadata.sources names where the environment came from" % name)
        t.eq(meta.get("platforms"), [SUBDIR], "%s: metadata.platforms" % name)
        t.eq(sorted(meta.get("content_hash") or {}), [SUBDIR], "%s: content_hash per platform"
             % name)
        recs = records(os.path.join(t.envs, name))
        t.eq(sorted("%s-%s-%s" % (p["name"], p["version"], p.get("build"))
                    for p in doc.get("package") or []), sorted(recs),
             "%s: one entry per record, with its build" % name)
        for p in doc.get("package") or []:
            r = recs.get("%s-%s-%s" % (p["name"], p["version"], p.get("build")), {})
            t.eq((p["hash"].get("md5"), p["hash"].get("sha256"), p["url"]),
                 (r.get("md5"), r.get("sha256"), r.get("url")),
                 "%s: %s: md5, sha256 and url of its record" % (name, p["name"]))
            t.eq((p["manager"], p["platform"], p["category"], p["optional"]),
                 ("conda", SUBDIR, "main", False), "%s: %s: manager, platform, category"
                 % (name, p["name"]))
        # the names micromamba/mamba/conda-lock look for, and others: menv reads them all
        for i, fn in enumerate(("conda-lock.yml", "m-lock.yml", "lock.yml", "m.lock",
                                "no-extension")):
            path = os.path.join(t.tmp, name + "-names", fn)
            write_text(path, text)
            r = t.menv_run("create", "-f", path, "-n", "%s-back%d" % (name, i))
            if t.check(r.rc == 0, "%s: create from the lock named %s" % (name, fn), r):
                t.eq(sorted(records(os.path.join(t.envs, "%s-back%d" % (name, i)))),
                     sorted(recs), "%s: %s installs the same records" % (name, fn))
    # a lock re-exported from an environment created from a lock names that lock
    back = os.path.join(t.tmp, "m-names", "conda-lock.yml")
    doc = yaml.safe_load(t.menv_ok("export", "-n", "m-back0").out)
    t.eq(doc["metadata"]["sources"], [os.path.realpath(back)],
         "an environment created from a lock names the lock as its source")


def pip_relock(t):
    """pip entries of an exported lock carry the wheel's URL, its sha256 and the index it came
    from (issue 23): with the index given only by PIP_INDEX_URL (as ops/environment-torch.yml
    is used), file:// and over HTTP with credentials; the pip section's --no-build-isolation
    travels too; URLs lose their credentials. The lock re-creates on "another machine" (fresh
    HOME and root, empty cache, no PIP_INDEX_URL) with the same records and the same bytes, pip
    checking each wheel's sha256; a wheel whose bytes changed is refused, nothing left."""
    import yaml
    isolate_pip()
    chan = toolchain_channel(t)
    www = os.path.join(t.tmp, "www")
    add_wheel(t, "relockdemo", "1.0", {"relockdemo/__init__.py": "VALUE = 23\n"})
    whl = os.path.join(www, "simple", "relockdemo", "relockdemo-1.0-py3-none-any.whl")
    sha = sha256_file(whl)
    pip_lines = ["--no-build-isolation", "relockdemo"]

    def pip_entry(lockp):
        doc = yaml.safe_load(open(lockp))
        pe = [p for p in doc["package"] if p["manager"] == "pip"]
        return doc, pe

    # 1. a file:// index named by PIP_INDEX_URL only
    idx = "file://%s/simple" % www
    env = toolchain_python_env(t, chan, "relock-file", pip_lines)
    r = t.menv_run("create", "-q", "-f", env, timeout=600, env={"PIP_INDEX_URL": idx})
    if t.check(r.rc == 0, "create with pip: [--no-build-isolation, relockdemo] from a file:// "
               "index in PIP_INDEX_URL", r):
        lockp = os.path.join(t.tmp, "relock-file.lock.yml")
        write_text(lockp, t.menv_ok("export", "-n", "relock-file").out)
        doc, pe = pip_entry(lockp)
        t.eq([(p["name"], p["version"], p["url"], p["hash"]) for p in pe],
             [("relockdemo", "1.0", idx + "/relockdemo/relockdemo-1.0-py3-none-any.whl",
               {"sha256": sha})],
             "file:// index: the pip entry has the wheel's URL and sha256")
        t.eq(doc["metadata"].get("custom_metadata"),
             {"menv.pip_options": "--no-build-isolation\n--index-url %s" % idx},
             "file:// index: --no-build-isolation and the index travel in custom_metadata")
    # 2. over HTTP, the index with credentials in PIP_INDEX_URL
    srv = t.http_server(www)
    try:
        idx = srv.base + "/simple"
        secret_idx = idx.replace("http://", "http://alice:s3cr3t@")
        env = toolchain_python_env(t, chan, "relock-http", pip_lines)
        r = t.menv_run("create", "-q", "-f", env, timeout=600,
                       env={"PIP_INDEX_URL": secret_idx})
        if not t.check(r.rc == 0, "create with the index over HTTP (credentials in "
                       "PIP_INDEX_URL)", r):
            return
        prefix = os.path.join(t.envs, "relock-http")
        lockp = os.path.join(t.tmp, "relock-http.lock.yml")
        write_text(lockp, t.menv_ok("export", "-n", "relock-http").out)
        text = open(lockp).read()
        t.check("s3cr3t" not in text and "alice" not in text,
                "the lock holds no credentials", text[-1500:])
        doc, pe = pip_entry(lockp)
        t.eq([(p["name"], p["url"], p["hash"]) for p in pe],
             [("relockdemo", idx + "/relockdemo/relockdemo-1.0-py3-none-any.whl",
               {"sha256": sha})], "HTTP index: the wheel's URL (no credentials) and sha256")
        t.eq(doc["metadata"].get("custom_metadata"),
             {"menv.pip_options": "--no-build-isolation\n--index-url %s" % idx},
             "HTTP index: the index without credentials in custom_metadata")
        # 3. another machine: fresh HOME and root, empty cache, no PIP_INDEX_URL
        home2, root2 = os.path.join(t.tmp, "home2"), os.path.join(t.tmp, "root2")
        os.makedirs(home2)
        other = {"HOME": home2, "MENV_ROOT_PREFIX": root2}
        prefix2 = os.path.join(t.tmp, "elsewhere")
        r = t.menv_run("create", "-f", lockp, "-p", prefix2, "-y", timeout=600, env=other)
        if t.check(r.rc == 0, "the lock re-creates on another machine", r):
            t.check("--require-hashes" in r.err, "pip checked the wheel's sha256", r.err[-800:])
            t.eq(records(prefix2), records(prefix), "another machine: the same conda records")
            sp = os.path.join("lib", "python3.9", "site-packages")
            a = state(os.path.join(prefix, sp, "relockdemo"))
            t.check(a and state(os.path.join(prefix2, sp, "relockdemo")) == a,
                    "another machine: relockdemo's files have the same bytes", a)
            rows = {p["name"]: p for p in t.menv_ok("list", "-p", prefix2, "--json",
                                                    env=other).json()}
            t.eq((rows.get("relockdemo", {}).get("version"),
                  rows.get("relockdemo", {}).get("channel")), ("1.0", "pypi"),
                 "another machine: relockdemo 1.0 from pip")
            again = os.path.join(t.tmp, "again.lock.yml")
            write_text(again, t.menv_ok("export", "-p", prefix2, env=other).out)
            t.eq(pip_entry(again)[1], pe, "the re-created environment exports the same pip entry")
        # 4. the wheel's bytes changed on the server: pip refuses it, nothing is left
        add_wheel(t, "relockdemo", "1.0", {"relockdemo/__init__.py": "VALUE = 666\n"})
        prefix3 = os.path.join(t.tmp, "tampered")
        r = t.menv_run("create", "-f", lockp, "-p", prefix3, "-y", timeout=600,
                       env={"HOME": home2, "MENV_ROOT_PREFIX": os.path.join(t.tmp, "root3")})
        last = r.err.strip().splitlines()[-1] if r.err.strip() else ""
        t.check(r.rc == 1 and last.startswith("menv: error:") and "pip failed" in last,
                "a wheel whose sha256 differs from the lock's: exit 1, menv's error last", r)
        t.check("THESE PACKAGES DO NOT MATCH THE HASHES" in r.err,
                "pip names the hash mismatch", r.err[-1500:])
        t.no_prefix_left(prefix3, "hash mismatch")
    finally:
        srv.stop()


def pip_unhashed(t):
    """An index whose wheel links carry no #sha256= fragment (PEP 503 makes it optional): the
    exported pip entry still has the sha256 of the wheel's bytes, which menv computes itself
    (issue 23: it wrote `hash: {}`), from a file:// index and over HTTP, and the lock
    re-creates elsewhere with pip checking that hash."""
    import yaml
    isolate_pip()
    chan = toolchain_channel(t)
    www = os.path.join(t.tmp, "www")
    add_wheel(t, "nofrag", "2.1", {"nofrag/__init__.py": "VALUE = 21\n"}, fragment=False)
    whl = os.path.join(www, "simple", "nofrag", "nofrag-2.1-py3-none-any.whl")
    sha = sha256_file(whl)
    t.check("#sha256=" not in open(os.path.join(www, "simple", "nofrag", "index.html")).read(),
            "the index's link has no #sha256= fragment")

    def pip_entries(name):
        doc = yaml.safe_load(t.menv_ok("export", "-n", name).out)
        return [(p["name"], p["url"], p["hash"]) for p in doc["package"]
                if p["manager"] == "pip"]

    idx = "file://%s/simple" % www
    env = toolchain_python_env(t, chan, "nofrag-file", ["--index-url %s" % idx, "nofrag"])
    r = t.menv_run("create", "-q", "-f", env, timeout=600)
    if t.check(r.rc == 0, "create with a wheel of a file:// index without fragments", r):
        t.eq(pip_entries("nofrag-file"),
             [("nofrag", idx + "/nofrag/nofrag-2.1-py3-none-any.whl", {"sha256": sha})],
             "file:// index without fragments: the pip entry has the wheel's sha256")
    srv = t.http_server(www)
    try:
        idx = srv.base + "/simple"
        env = toolchain_python_env(t, chan, "nofrag-http", ["--index-url %s" % idx, "nofrag"])
        r = t.menv_run("create", "-q", "-f", env, timeout=600)
        if not t.check(r.rc == 0, "create with a wheel of an HTTP index without fragments", r):
            return
        pe = pip_entries("nofrag-http")
        t.eq(pe, [("nofrag", idx + "/nofrag/nofrag-2.1-py3-none-any.whl", {"sha256": sha})],
             "HTTP index without fragments: the pip entry has the wheel's sha256")
        lockp = os.path.join(t.tmp, "nofrag.lock.yml")
        write_text(lockp, t.menv_ok("export", "-n", "nofrag-http").out)
        home2 = os.path.join(t.tmp, "home2")
        os.makedirs(home2)
        prefix2 = os.path.join(t.tmp, "elsewhere")
        r = t.menv_run("create", "-f", lockp, "-p", prefix2, "-y", timeout=600,
                       env={"HOME": home2, "MENV_ROOT_PREFIX": os.path.join(t.tmp, "root2")})
        if t.check(r.rc == 0, "the lock re-creates elsewhere", r):
            t.check("--require-hashes" in r.err, "pip checked the wheel's sha256", r.err[-800:])
            got = open(os.path.join(prefix2, "lib", "python3.9", "site-packages", "nofrag",
                                    "__init__.py")).read()
            t.eq(got, "VALUE = 21\n", "elsewhere: the wheel's file")
    finally:
        srv.stop()


def url_parts(t):
    """Issue 22: a conda-lock URL with a query, a "#md5" fragment or user:password@ (over
    HTTP): the record's channel is the URL's folder (it was ".../x-1-0.conda?x=1/noarch", which
    `list` showed), its url has no fragment and no query (the download has it: issue 22
    keeps a token where the user put it), and the password reaches no record, history,
    cache file or output. A conda entry with `hash: {}`, `md5: ""` or no `hash` is refused
    with FILE:LINE naming it, before anything is fetched, and no prefix is left."""
    chan = os.path.join(t.tmp, "chan")
    os.makedirs(os.path.join(chan, "noarch"))
    fn = "versioned-2.0-0.conda"
    shutil.copy(os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch", fn),
                os.path.join(chan, "noarch", fn))
    t.index(chan)
    md5 = read_json(os.path.join(chan, "noarch", "repodata.json"))["packages.conda"][fn]["md5"]
    head = ("version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
            "  platforms: [linux-64]\n  sources: []\npackage:\n")
    entry = ("- name: versioned\n  version: '2.0'\n  manager: conda\n  platform: linux-64\n"
             "  dependencies: {}\n  url: %s\n%s  category: main\n  optional: false\n")
    srv = t.http_server(t.tmp)
    try:
        base = srv.base + "/chan"
        auth = base.replace("http://", "http://user:S3cretPw@")
        for i, (url, want_url) in enumerate((
                (base + "/noarch/" + fn + "?x=1", base + "/noarch/" + fn),
                (base + "/noarch/" + fn + "#" + md5, base + "/noarch/" + fn),
                (auth + "/noarch/" + fn + "?x=1#" + md5, base + "/noarch/" + fn))):
            lock = os.path.join(t.tmp, "u%d.lock.yml" % i)
            write_text(lock, head + entry % (url, "  hash: {md5: %s}\n" % md5))
            pk = os.path.join(t.tmp, "pk-u%d" % i)
            r = t.menv_run("create", "-f", lock, "-n", "u%d" % i, env={"CONDA_PKGS_DIRS": pk})
            if not t.check(r.rc == 0, "url %d: create" % i, r):
                continue
            prefix = os.path.join(t.envs, "u%d" % i)
            rec = by_name(prefix)["versioned"]
            t.eq(rec["channel"], base + "/noarch", "url %d: the record's channel" % i)
            t.eq(rec["url"], want_url, "url %d: the record's url" % i)
            lst = t.menv_ok("list", "-n", "u%d" % i)
            row = [l.split() for l in lst.out.splitlines() if l.startswith("versioned ")]
            t.eq(row, [["versioned", "2.0", "0", base]], "url %d: list's channel" % i)
            texts = [r.out, r.err, lst.out, t.menv_ok("list", "-n", "u%d" % i, "--json").out,
                     t.menv_ok("export", "-n", "u%d" % i).out]
            for d in (prefix, pk):
                for dp, _, files in os.walk(d):
                    for f in files:
                        p = os.path.join(dp, f)
                        if f.endswith((".json", "history", ".txt")) and not os.path.islink(p):
                            texts.append(open(p, errors="replace").read())
            t.check(not any("S3cretPw" in x for x in texts), "url %d: no password anywhere" % i)
        # no hash where conda-lock's model requires one
        for i, h in enumerate(("  hash: {}\n", "  hash: {md5: ''}\n", "")):
            lock = os.path.join(t.tmp, "h%d.lock.yml" % i)
            write_text(lock, head + entry % (base + "/noarch/" + fn, h))
            before = len(srv.requests())
            for dry in ([], ["--dry-run"]):
                r = t.menv_run("create", "-f", lock, "-n", "h%d" % i, *dry)
                t.one_line_error(r, "hash %d%s" % (i, dry), ["h%d.lock.yml:8:" % i,
                                                             "no md5 or sha256 for versioned"])
            t.eq(srv.requests()[before:], [], "hash %d: nothing fetched" % i)
            t.no_prefix_left(os.path.join(t.envs, "h%d" % i), "hash %d" % i)
    finally:
        srv.stop()


CASES = {"roundtrip": roundtrip, "http": http, "errors": errors, "pixi": pixi, "formats": formats,
         "lock": lock, "corpus_dry_run": corpus_dry_run, "BR021": br021, "BR022": br022,
         "BR023": br023, "pip": pip_cases, "timing": timing,
         "onboard": onboard, "install_lock": install_lock, "pip_update": pip_update,
         "conda_lock_model": conda_lock_model,
         "pip_options": pip_options, "pip_relock": pip_relock, "pip_unhashed": pip_unhashed,
         "url_parts": url_parts}


def body(t, case):
    CASES[case](t)


if __name__ == "__main__":
    menvtest.main(body, "lockfile_" + (sys.argv[3] if len(sys.argv) > 3 else "?"))

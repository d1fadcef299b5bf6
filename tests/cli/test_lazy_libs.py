"""libcurl and libarchive are opened on first use (fetch/lazylib.c), not at start: the
dynamic loader's own trace (LD_DEBUG=libs, which prints "calling init: PATH" for each library
it starts) shows neither for `menv --version` nor for a dry run from a file:// channel with a
warm cache (no download, no extraction; the first, cold, run copies this small repodata.json
into the cache with curl's file:// reader), and shows libarchive.so.13 for
`menv index` of a folder holding a .tar.bz2, whose record then reaches repodata.json (the
lazily resolved reader works). The binary does not name them as NEEDED either."""
import os
import re
import subprocess

import menvtest


def inits(r):
    """The libraries the loader started, by file name."""
    return sorted(set(os.path.basename(m) for m in
                      re.findall(r"calling init: (\S+)", r.err)))


def body(t):
    dyn = subprocess.run(["readelf", "-d", t.menv], capture_output=True, text=True)
    if dyn.returncode == 0:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn.stdout)
        t.check(needed and not [n for n in needed if "curl" in n or "archive" in n],
                "menv names neither libcurl nor libarchive as NEEDED", needed)
    trace = {"LD_DEBUG": "libs"}
    r = t.menv_run("--version", env=trace)
    t.eq(r.rc, 0, "menv --version exits 0")
    libs = inits(r)
    t.check("libc.so.6" in libs, "the loader's trace lists the libraries started", libs)
    t.check(not [l for l in libs if "curl" in l or "archive" in l],
            "menv --version starts neither libcurl nor libarchive", libs)

    chan = t.write_repodata(os.path.join(t.tmp, "chan"), "noarch", packages={
        "tiny-1.0-0.tar.bz2": {"name": "tiny", "version": "1.0", "build": "0"}})
    t.write_repodata(chan, "linux-64")  # both subdirs present: nothing is probed for
    for cache in ("cold", "warm"):
        r = t.menv_run("create", "-n", "x", "--dry-run", "--override-channels", "-c",
                       "file://" + chan, "tiny", env=trace)
        t.eq(r.rc, 0, "dry run (%s cache) exits 0" % cache)
        t.check(re.search(r"\+ tiny\s+1\.0\s+0\s", r.out), "dry run (%s) plans tiny 1.0"
                % cache, r.out)
        libs = inits(r)
        if cache == "cold":
            continue
        t.check(not [l for l in libs if "curl" in l or "archive" in l],
                "a dry run from file:// (%s cache) starts neither libcurl nor libarchive"
                % cache, libs)

    pkg = menvtest.build_tar_bz2(os.path.join(t.tmp, "idx", "noarch", "lazy-2.0-0.tar.bz2"),
                                 {"name": "lazy", "version": "2.0", "build": "0",
                                  "build_number": 0, "subdir": "noarch", "depends": []},
                                 {"info/paths.json": b'{"paths": [], "paths_version": 1}'})
    r = t.menv_run("index", os.path.dirname(os.path.dirname(pkg)), env=trace)
    t.eq(r.rc, 0, "menv index exits 0")
    t.check("libarchive.so.13" in inits(r), "menv index starts libarchive.so.13", inits(r))
    rd = menvtest.read_json(os.path.join(t.tmp, "idx", "noarch", "repodata.json"))
    rec = rd.get("packages", {}).get("lazy-2.0-0.tar.bz2", {})
    t.eq((rec.get("name"), rec.get("version")), ("lazy", "2.0"),
         "the indexed record read through the lazily opened libarchive")

    # a libcurl that cannot be loaded (an empty libcurl.so.4 first on the search path): every
    # command that transfers says so in one line, repodata included (it was reported as
    # "malformed repodata ... empty document"), and nothing is created
    fake = os.path.join(t.tmp, "fakelib")
    os.makedirs(fake)
    open(os.path.join(fake, "libcurl.so.4"), "wb").close()
    broken = {"LD_LIBRARY_PATH": fake}
    dead = ["-c", "http://127.0.0.1:1/", "--override-channels"]
    for what, args in (("create", ["create", "-y", "-n", "h", *dead, "dependency"]),
                       ("search", ["search", *dead, "dependency"])):
        r = t.menv_run(*args, env=broken)
        errs = [l for l in r.err_lines() if l.startswith("menv: error: ")]
        t.check(r.rc == 1 and len(errs) == 1 and r.err_lines()[-1] == errs[0] and
                errs[0].startswith("menv: error: cannot initialise libcurl: ") and
                "libcurl.so.4" in errs[0],
                "%s with a libcurl that cannot be loaded: exit 1, one error line saying so"
                % what, r)
    t.check(not os.path.exists(os.path.join(t.envs, "h")), "no environment was created")


if __name__ == "__main__":
    menvtest.main(body)

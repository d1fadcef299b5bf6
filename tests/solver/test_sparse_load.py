#!/usr/bin/env python3
"""The sparse load of a repodata.json (issue 25; MENV_SOLVER_LOAD=sparse forces it on this
small channel, a file of 4 MiB or more gets it by default): a solve reads the records of the
names its request reaches, through depends and constrains (`a` -> `b` -> `c`, `a` constrains
`z`), and those of every record without a readable name; its name index is cached beside the
.solv (<cache>/*.solv.names) and reused while the JSON is unchanged, rebuilt when it changes;
the records a solve read are kept as .solv bytes (<cache>/*.solv.subN, keyed by the JSON and
which records): the same request again reads them (same answer, same warnings, nothing
rewritten), and bytes libsolv refuses are read from the JSON again and rewritten; so is the
closure of the request's names (<cache>/*.solv.walkN): read again with the same answer, and a
cut one walked again and rewritten;
the warnings name only the records read (a bad record of `a` is named, one of `q`, which
nothing reaches, is not); `menv search NAME` reads that name's records; a glob spec, `menv
search '*'` and the whole load read everything (search writes the .solv). Usage: test_sparse_load.py MENV
"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile


def rec(name, version, depends=(), **kw):
    r = {"name": name, "version": version, "build": "0", "build_number": 0,
         "depends": list(depends), "subdir": "linux-64"}
    r.update(kw)
    return r


PACKAGES = {
    "a-1.0-0.tar.bz2": rec("a", "1.0", ["b >=1"], constrains=["z <2"]),
    "a-2.0-0.tar.bz2": rec("a", "2.0", ["b >=2"], constrains=["z <2"]),
    "a-3.0-0.tar.bz2": {"name": "a", "build": "0", "build_number": 0, "depends": []},
    "b-1.0-0.tar.bz2": rec("b", "1.0", ["c"]),
    "b-2.0-0.tar.bz2": rec("b", "2.0", ["c 1.*"]),
    "c-1.0-0.tar.bz2": rec("c", "1.0"),
    "q-1.0-0.tar.bz2": {"name": "q", "build": "0", "build_number": 0, "depends": []},
    "z-1.0-0.tar.bz2": rec("z", "1.0"),
    "z-2.0-0.tar.bz2": rec("z", "2.0"),
}
CONDA = {
    "b-2.0-0.conda": rec("b", "2.0", ["c 1.*"]),  # preferred over its .tar.bz2
    "y-1.0-0.conda": rec("y", "1.0", ["z"]),
}


def write(chan, extra=None):
    pk = dict(PACKAGES)
    pk.update(extra or {})
    for sd, body in (("linux-64", {"info": {"subdir": "linux-64"}, "packages": pk,
                                   "packages.conda": CONDA}),
                     ("noarch", {"info": {"subdir": "noarch"}, "packages": {}})):
        os.makedirs(os.path.join(chan, sd), exist_ok=True)
        with open(os.path.join(chan, sd, "repodata.json"), "w") as f:
            json.dump(body, f)


def main():
    menv = sys.argv[1]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        chan = os.path.join(tmp, "chan")
        write(chan)
        root = os.path.join(tmp, "root")
        env = dict(os.environ, MENV_ROOT_PREFIX=root, CONDARC="/dev/null", MENVRC="/dev/null",
                   HOME=tmp, MENV_SOLVER_LOAD="sparse", CONDA_OVERRIDE_CUDA="")
        cache = os.path.join(root, "pkgs", "cache")

        def menv_run(*args, mode="sparse"):
            e = dict(env, MENV_SOLVER_LOAD=mode)
            return subprocess.run([menv] + list(args), env=e, capture_output=True, text=True)

        def create(*specs, mode="sparse"):
            p = menv_run("create", "-n", "t", "--dry-run", "--json", "--override-channels",
                         "-c", "file://" + chan, *specs, mode=mode)
            if p.returncode:
                return p, None
            out = json.loads(p.stdout)
            return p, sorted("%s-%s-%s" % (r["name"], r["version"], r["build_string"])
                             for r in out["actions"].get("LINK", []))

        p, got = create("a")
        if got != ["a-2.0-0", "b-2.0-0", "c-1.0-0"]:
            fails.append(f"create a: {got} ({p.stderr.strip()})")
        names = sorted(glob.glob(os.path.join(cache, "*.solv.names")))
        if len(names) != 2 or glob.glob(os.path.join(cache, "*.solv")):
            fails.append(f"after a sparse load the cache holds {sorted(os.listdir(cache))}: "
                         "want two name indexes and no .solv")
        if "skipped the record 'a-3.0-0.tar.bz2'" not in p.stderr:
            fails.append(f"the bad record of a, which the request reaches, is not named: "
                         f"{p.stderr!r}")
        if "q-1.0-0" in p.stderr:
            fails.append(f"the bad record of q, which nothing reaches, is named: {p.stderr!r}")
        # the records read, as .solv bytes: a second solve of the same request reads them
        subs = sorted(glob.glob(os.path.join(cache, "*.solv.sub*")))
        if len(subs) != 1:
            fails.append(f"after a sparse load the cache holds {sorted(os.listdir(cache))}: "
                         "want one subset .solv (linux-64's; noarch has no record read)")
        for sub in subs[:1]:
            # (one: a failure is named above)
            mtimes = lambda: {n: os.stat(n).st_mtime_ns for n in subs}
            before = mtimes()
            p2, again = create("a")
            if again != got or p2.stderr != p.stderr or mtimes() != before:
                fails.append(f"create a from the subset cache: {again}, stderr {p2.stderr!r} "
                             f"(first {p.stderr!r}); rewritten: {mtimes() != before}")
            # its key and records current, its .solv bytes zeroed: read from the JSON again
            with open(sub, "r+b") as f:
                body = f.read()
                at = 16 + 128 + 16 + 4 * struct.unpack_from("<Q", body, 144)[0]
                f.seek(at)
                f.write(bytes(len(body) - at))
            p3, again = create("a")
            with open(sub, "rb") as f:
                body = f.read()
            if again != got or p3.stderr != p.stderr or not body[at:at + 4] == b"SOLV":
                fails.append(f"create a over a refused subset cache: {again}, stderr "
                             f"{p3.stderr!r}; rewritten: {body[at:at + 4]!r}")
        # the closure of the names, cached: read again (same answer, not rewritten); a cut one
        # is walked again and rewritten whole
        walks = sorted(glob.glob(os.path.join(cache, "*.solv.walk*")))
        if len(walks) != 1:
            fails.append(f"after a sparse load the cache holds {sorted(os.listdir(cache))}: "
                         "want one cached walk")
        for walk in walks[:1]:
            size, mtime = os.path.getsize(walk), os.stat(walk).st_mtime_ns
            p2, again = create("a")
            if again != got or p2.stderr != p.stderr or os.stat(walk).st_mtime_ns != mtime:
                fails.append(f"create a from the cached walk: {again}, stderr {p2.stderr!r}; "
                             f"rewritten: {os.stat(walk).st_mtime_ns != mtime}")
            os.truncate(walk, size - 4)
            p2, again = create("a")
            if again != got or p2.stderr != p.stderr or os.path.getsize(walk) != size:
                fails.append(f"create a over a cut walk: {again}, stderr {p2.stderr!r}; "
                             f"size {os.path.getsize(walk)}, was {size}")
        # constrains reach z: a 2.0 needs z <2 when z is there
        p, got = create("a", "z")
        if got != ["a-2.0-0", "b-2.0-0", "c-1.0-0", "z-1.0-0"]:
            fails.append(f"create a z: {got} ({p.stderr.strip()})")
        p, full = create("a", "z", mode="full")
        if full != got:
            fails.append(f"create a z: sparse {got}, full {full}")
        # the index is reused while the JSON is unchanged
        before = {n: os.stat(n).st_mtime_ns for n in names}
        p, got = create("y")
        after = {n: os.stat(n).st_mtime_ns for n in names}
        if got != ["y-1.0-0", "z-2.0-0"] or before != after:
            fails.append(f"create y: {got}; the index was rewritten: {before != after}")
        # a changed JSON: the index is rebuilt (the new package is found)
        write(chan, {"x-1.0-0.tar.bz2": rec("x", "1.0", ["c"])})
        p, got = create("x")
        if got != ["c-1.0-0", "x-1.0-0"]:
            fails.append(f"create x after the channel changed: {got} ({p.stderr.strip()})")
        # a search by name reads that name only (no .solv written: the whole load's, of the
        # `full` run above, is removed first)
        for old in glob.glob(os.path.join(cache, "*.solv")):
            os.unlink(old)
        s = menv_run("search", "--json", "--override-channels", "-c", "file://" + chan, "b")
        try:
            out = json.loads(s.stdout)
            recs = [r for v in out.values() for r in v] if isinstance(out, dict) else out
            found = sorted("%s-%s" % (r["name"], r["version"]) for r in recs)
        except (ValueError, KeyError, TypeError, AttributeError):
            found = s.stdout[:300]
        if found != ["b-1.0", "b-2.0"] or glob.glob(os.path.join(cache, "*.solv")):
            fails.append(f"search b: {found} ({s.stderr.strip()}); cache "
                         f"{sorted(os.listdir(cache))}")
        # a glob spec reads everything
        p, got = create("[a-b]")
        p2, full = create("[a-b]", mode="full")
        if p.returncode != p2.returncode or got != full:
            fails.append(f"a glob spec: sparse {got} ({p.returncode}), full {full}")
        # search reads everything, through the .solv it writes
        s = menv_run("search", "--json", "--override-channels", "-c", "file://" + chan, "*")
        try:
            found = sorted({r["name"] for v in json.loads(s.stdout).values() for r in v}
                           if isinstance(json.loads(s.stdout), dict) else
                           {r["name"] for r in json.loads(s.stdout)})
        except (ValueError, KeyError, TypeError, AttributeError):
            found = s.stdout[:300]
        if found != ["a", "b", "c", "x", "y", "z"]:
            fails.append(f"search '*' after sparse loads found {found} ({s.stderr.strip()})")
        if len(glob.glob(os.path.join(cache, "*.solv"))) != 2:
            fails.append(f"search wrote no .solv: {sorted(os.listdir(cache))}")
    for f in fails:
        print("FAIL", f)
    print("ok" if not fails else f"{len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

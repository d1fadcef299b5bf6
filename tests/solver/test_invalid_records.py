#!/usr/bin/env python3
"""Records without a name, version or build string in a channel's repodata (menv issue 15),
or with one of another type (a number), or whose depends is not a list of strings (a string,
an object, a list holding a number: libsolv's reader would take them as no dependencies),
or nested too deep to be read (issue 14), or whose version conda's VersionOrder refuses (issue 24:
Debian's `0.8+5prealpha+1`, two local-version separators; conda fails the load of the whole
file on it, menv is more forgiving).

conda's PackageRecord cannot be made of them; menv skips each with a warning naming the file and
the record's key (the library lists them, its front end prints them) and solves with the rest:
never a record silently missing from the environment with exit 0.
Usage: test_invalid_records.py MENV LOAD_DRIVER
"""
import json
import os
import subprocess
import sys
import tempfile

REPODATA = {
    "info": {"subdir": "linux-64"},
    "packages": {
        "a-1.0-0.tar.bz2": {"name": "a", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": [], "subdir": "linux-64"},
        "a-2.0-0.tar.bz2": {"name": "a", "build": "0", "build_number": 0, "depends": [],
                            "subdir": "linux-64"},
        "b-1.0-0.tar.bz2": {"version": "1.0", "build": "0", "build_number": 0, "depends": [],
                            "subdir": "linux-64"},
        "c-1.0-0.tar.bz2": {"name": "c", "version": "1.0", "build_number": 0, "depends": [],
                            "subdir": "linux-64"},
        "d-1.0-0.tar.bz2": {"name": "d", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": ["c"], "subdir": "linux-64"},
        "e-1.5-0.tar.bz2": {"name": "e", "version": 1.5, "build": "0", "build_number": 0,
                            "depends": [], "subdir": "linux-64"},
        "f-1.0-7.tar.bz2": {"name": "f", "version": "1.0", "build": 7, "build_number": 0,
                            "depends": [], "subdir": "linux-64"},
        "g-1.0-0.tar.bz2": {"name": "g", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": "a", "subdir": "linux-64"},
        "h-1.0-0.tar.bz2": {"name": "h", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": {"a": "1.0"}, "subdir": "linux-64"},
        "i-1.0-0.tar.bz2": {"name": "i", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": [5], "subdir": "linux-64"},
        "j-1.0-0.tar.bz2": {"name": "j", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": None, "subdir": "linux-64"},
        "k-1.0-0.tar.bz2": {"name": "k", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": [], "subdir": "linux-64", "x": [[[[[[[[[[[]]]]]]]]]]]},
        "l-0.8-0.tar.bz2": {"name": "l", "version": "0.8", "build": "0", "build_number": 0,
                            "depends": [], "subdir": "linux-64"},
        "l-0.8+5prealpha+1-0.tar.bz2": {"name": "l", "version": "0.8+5prealpha+1", "build": "0",
                                        "build_number": 0, "depends": [],
                                        "subdir": "linux-64"},
        "m-0.8+5prealpha+1-0.tar.bz2": {"name": "m", "version": "0.8+5prealpha+1", "build": "0",
                                        "build_number": 0, "depends": ["l"],
                                        "subdir": "linux-64"},
        "n-1.0~rc1-0.tar.bz2": {"name": "n", "version": "1.0~rc1", "build": "0",
                                "build_number": 0, "depends": [], "subdir": "linux-64"},
        "o-1.0-0.tar.bz2": {"name": "o", "version": "1..0", "build": "0", "build_number": 0,
                            "depends": [], "subdir": "linux-64"},
        # what conda accepts: blanks around it, upper case, '-' for '_', one '+', KELVIN SIGN
        "p-1.0-0.tar.bz2": {"name": "p", "version": " 1.0-A+B\u212a ", "build": "0",
                            "build_number": 0, "depends": [], "subdir": "linux-64"},
    },
}
# k nested 1000 deep (json.dump would recurse too far)
DEEP = "[" * 1000 + "]" * 1000


def main():
    menv, driver = sys.argv[1], sys.argv[2]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        chan = os.path.join(tmp, "chan")
        os.makedirs(os.path.join(chan, "linux-64"))
        path = os.path.join(chan, "linux-64", "repodata.json")
        with open(path, "w") as f:
            f.write(json.dumps(REPODATA).replace("[" * 11 + "]" * 11, DEEP))
        tail = " (conda requires name, version and build)"
        head = f"warning: '{path}': skipped the record"
        bad_deps = ": its 'depends' is not a list of strings"
        whole = " (conda refuses to load the whole file)"
        bad_plus = ("invalid version '0.8+5prealpha+1': duplicated local version separator '+'"
                    + whole)
        want_warn = sorted([
            f"{head} 'a-2.0-0.tar.bz2': it has no 'version'" + tail,
            f"{head} 'b-1.0-0.tar.bz2': it has no 'name'" + tail,
            f"{head} 'c-1.0-0.tar.bz2': it has no 'build'" + tail,
            f"{head} 'e-1.5-0.tar.bz2': it has no 'version'" + tail,
            f"{head} 'f-1.0-7.tar.bz2': it has no 'build'" + tail,
            f"{head} 'g-1.0-0.tar.bz2'" + bad_deps,
            f"{head} 'h-1.0-0.tar.bz2'" + bad_deps,
            f"{head} 'i-1.0-0.tar.bz2'" + bad_deps,
            f"{head} 'k-1.0-0.tar.bz2': it cannot be read: k-1.0-0.tar.bz2:1:%d: nested "
            "deeper than 256 levels" % (json.dumps(REPODATA["packages"]["k-1.0-0.tar.bz2"])
                                        .index("[[") + 256),
            f"{head} 'l-0.8+5prealpha+1-0.tar.bz2': " + bad_plus,
            f"{head} 'm-0.8+5prealpha+1-0.tar.bz2': " + bad_plus,
            f"{head} 'n-1.0~rc1-0.tar.bz2': invalid version '1.0~rc1': invalid character '~' "
            "at column 4" + whole,
            f"{head} 'o-1.0-0.tar.bz2': invalid version '1..0': empty version component"
            + whole])
        pkgs = os.path.join(tmp, "pkgs")
        # the library: warnings listed, on the first load (libsolv's reader) and from the .solv
        for run in ("first", "from .solv"):
            p = subprocess.run([driver, "file://" + chan, pkgs, "linux-64", "a"],
                               capture_output=True, text=True)
            warns = sorted(l for l in p.stderr.splitlines() if l.startswith("warning:"))
            if p.returncode != 0 or p.stdout.split() != ["a=1.0=0"] or warns != want_warn:
                fails.append(f"a, {run}: exit {p.returncode}, stdout {p.stdout.split()}, "
                             f"warnings {warns}")
        # c exists only without a build string: not available, exit 1 (not an empty success)
        p = subprocess.run([driver, "file://" + chan, pkgs, "linux-64", "c"],
                           capture_output=True, text=True)
        if p.returncode != 1 or "package 'c' is not available" not in p.stderr or p.stdout:
            fails.append(f"c: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
        # d needs c: unsatisfiable, named
        p = subprocess.run([driver, "file://" + chan, pkgs, "linux-64", "d"],
                           capture_output=True, text=True)
        if p.returncode != 1 or "nothing provides c" not in p.stderr or p.stdout:
            fails.append(f"d: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")

        # menv itself: the same answers and exit codes
        env = dict(os.environ, HOME=tmp, MENVRC="/dev/null", CONDARC="/dev/null",
                   MENV_ROOT_PREFIX=os.path.join(tmp, "root"), CONDA_OVERRIDE_CUDA="")
        def create(spec):
            return subprocess.run([menv, "create", "--dry-run", "--json", "-p",
                                   os.path.join(tmp, "env"), "--override-channels", "-c",
                                   "file://" + chan, spec], env=env, capture_output=True,
                                  text=True)
        p = create("a")
        link = [] if p.returncode else [(r["name"], r["version"]) for r in
                                        json.loads(p.stdout)["actions"]["LINK"]]
        if p.returncode != 0 or link != [("a", "1.0")]:
            fails.append(f"menv a: exit {p.returncode}, LINK {link}, stderr {p.stderr!r}")
        # the newest l conda can read; the CLI prints each skipped record
        p = create("l")
        link = [] if p.returncode else [(r["name"], r["version"]) for r in
                                        json.loads(p.stdout)["actions"]["LINK"]]
        printed = sorted(l for l in p.stderr.splitlines() if "skipped the record" in l)
        if p.returncode != 0 or link != [("l", "0.8")] or len(printed) != len(want_warn) or \
                not any(bad_plus in l and "'l-0.8+5prealpha+1-0.tar.bz2'" in l
                        for l in printed):
            fails.append(f"menv l: exit {p.returncode}, LINK {link}, stderr {p.stderr!r}")
        p = create("p")
        link = [] if p.returncode else [(r["name"], r["version"]) for r in
                                        json.loads(p.stdout)["actions"]["LINK"]]
        if p.returncode != 0 or link != [("p", " 1.0-A+B\u212a ")]:
            fails.append(f"menv p: exit {p.returncode}, LINK {link}, stderr {p.stderr!r}")
        p = create("j")  # "depends": null is read as [] (conda-forge tooling does)
        if p.returncode != 0:
            fails.append(f"menv j: exit {p.returncode}, stderr {p.stderr!r}")
        for spec, why in (("c", "'c' is not available"), ("d", "nothing provides c"),
                          ("e", "'e' is not available"), ("f", "'f' is not available"),
                          ("g", "'g' is not available"), ("h", "'h' is not available"),
                          ("i", "'i' is not available"), ("k", "'k' is not available"),
                          ("m", "'m' is not available"), ("n", "'n' is not available"),
                          ("o", "'o' is not available")):
            p = create(spec)
            if p.returncode != 1 or why not in p.stdout + p.stderr:
                fails.append(f"menv {spec}: exit {p.returncode}, out {p.stdout!r} {p.stderr!r}")
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: records without name, version or build are skipped and named")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

"""noarch: python packages move with python (CEP-20, conda's behaviour): when an install,
update or revision changes python's minor version, every noarch python package that stays is
unlinked from lib/pythonX.Y/site-packages and linked again into the new python's, its .pyc
compiled again and its entry points rewritten; the old site-packages tree disappears. The
record comes from the channel, or from the installed PrefixRecord when the channel no longer
has it; `install -f LOCK` relinks the ones the lock does not name. Two python packages: one wrapping this machine's python3 (its real version), one of
another minor version whose compileall writes nothing (an interpreter this machine lacks)."""
import json
import os
import shutil
import subprocess

from insttest import Skip, main, pkg, records

WRAP = ('#!/bin/sh\nhere=$(cd "$(dirname "$0")/.." && pwd)\n'
        '%s'
        'PYTHONPATH="$here/lib/python%s/site-packages" exec %s "$@"\n')
NO_PYC = 'case "$3" in compileall) cat >/dev/null; exit 0 ;; esac\n'


def site_files(prefix, ver):
    top = os.path.join(prefix, "lib", "python" + ver)
    out = []
    for d, _, fs in os.walk(top):
        out += [os.path.relpath(os.path.join(d, f), prefix) for f in fs]
    return sorted(out)


def body(t):
    py = shutil.which("python3") or "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        raise Skip("no python3")
    real = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True).stdout.strip()
    other = "3.10" if real != "3.10" else "3.12"
    tag = "cpython-" + real.replace(".", "")
    ch = os.path.join(t.tmp, "chan")
    for ver, pre, patch in ((real, "", ".0"), (real, "", ".1"), (other, NO_PYC, ".0")):
        # as a real python: bin/pythonX.Y (what conda runs) and bin/python linking to it
        pkg(ch, "python", ver + patch, files={
            "bin/python%s" % ver: {"data": WRAP % (pre, ver, py), "mode": 0o755},
            "bin/python": {"symlink": "python" + ver},
            "lib/python%s/site-packages/README" % ver: "site %s\n" % ver})
    pkg(ch, "greetpkg", "1.0", build="py_0", noarch="python", depends=["python"],
        entry_points=["greet = greetpkg.cli:main"],
        files={"site-packages/greetpkg/__init__.py": "",
               "site-packages/greetpkg/cli.py": "def main():\n    print('hello')\n"})
    pkg(ch, "plainpkg", "1.0", files={"share/plainpkg/data.txt": "plain\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    env = os.path.join(t.tmp, "env")
    greet_files = ["lib/python%s/site-packages/greetpkg/__init__.py",
                   "lib/python%s/site-packages/greetpkg/cli.py"]

    t.menv_ok("create", "-p", env, *c, "python=" + other, "greetpkg", "plainpkg")
    t.eq(site_files(env, other), sorted([f % other for f in greet_files] +
                                        ["lib/python%s/site-packages/README" % other]),
         "created for python %s: no .pyc (its compileall writes none)" % other)
    plain_ino = os.stat(os.path.join(env, "share/plainpkg/data.txt")).st_ino

    # the plan names the relink; --json lists greetpkg in LINK and UNLINK
    r = t.menv_run("install", "-p", env, "-c", t.url(ch), "--override-channels",
                   "python=" + real, "--dry-run")
    t.check(r.rc == 0 and "greetpkg" in r.out and "(relink)" in r.out,
            "the plan shows greetpkg relinked", r)
    r = t.menv_run("install", "-p", env, "-c", t.url(ch), "--override-channels",
                   "python=" + real, "--dry-run", "--json")
    acts = r.json()["actions"]
    t.eq(sorted(x["name"] for x in acts["LINK"]), ["greetpkg", "python"], "--json LINK")
    t.eq(sorted(x["name"] for x in acts["UNLINK"]), ["greetpkg", "python"], "--json UNLINK")

    t.menv_ok("install", "-p", env, *c, "python=" + real)
    t.check(not os.path.exists(os.path.join(env, "lib", "python" + other)),
            "lib/python%s is gone after the move to %s" % (other, real))
    pycs = ["lib/python%s/site-packages/greetpkg/__pycache__/__init__.%s.pyc" % (real, tag),
            "lib/python%s/site-packages/greetpkg/__pycache__/cli.%s.pyc" % (real, tag)]
    t.eq(site_files(env, real), sorted([f % real for f in greet_files] + pycs +
                                       ["lib/python%s/site-packages/README" % real]),
         "greetpkg relinked into python %s's site-packages, .pyc compiled" % real)
    recs = records(env)
    g = recs["greetpkg"]
    t.eq(sorted(f for f in g["files"] if f.startswith("lib/")),
         sorted([f % real for f in greet_files] + pycs), "greetpkg's PrefixRecord files")
    t.check(all(not f.startswith("lib/python" + other) for f in g["files"]),
            "no file of the old python left in the record", g["files"])
    out = subprocess.run([os.path.join(env, "bin", "greet")], capture_output=True, text=True)
    t.eq((out.returncode, out.stdout), (0, "hello\n"), "the entry point runs on python %s" % real)
    t.eq(os.stat(os.path.join(env, "share/plainpkg/data.txt")).st_ino, plain_ino,
         "a package that is not noarch python stays as it was")
    # pip's distributions: only those of the environment's python are listed (conda's view);
    # one left in the old python's site-packages is not
    made = []
    for ver, name in ((other, "ghost"), (real, "seen")):
        d = os.path.join(env, "lib", "python" + ver, "site-packages", name + "-1.0.dist-info")
        os.makedirs(d)
        with open(os.path.join(d, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name)
        made.append(d)
    listed = [p["name"] for p in t.menv_ok("list", "-p", env, "--json").json()
              if p.get("channel") == "pypi"]
    t.eq(listed, ["seen"], "menv list shows the pip packages of python %s only" % real)
    shutil.rmtree(os.path.join(env, "lib", "python" + other))
    shutil.rmtree(made[1])
    with open(os.path.join(env, "conda-meta", "history")) as f:
        last = f.read().split("==>")[-1]
    lines = last.splitlines()
    dist = "file://%s/noarch::greetpkg-1.0-py_0" % os.path.abspath(ch)
    t.check("-" + dist in lines and "+" + dist in lines,
            "history: greetpkg unlinked and linked again", last)

    # the same python again: nothing to do; another patch release: python alone changes
    r = t.menv_run("install", "-p", env, "-c", t.url(ch), "--override-channels",
                   "python=" + real, "--dry-run", "--json")
    t.eq(r.json()["actions"]["LINK"], [], "same python: nothing to do")
    r = t.menv_run("install", "-p", env, "-c", t.url(ch), "--override-channels",
                   "python==%s.0" % real, "--dry-run", "--json")
    t.eq([(x["name"], x["version"]) for x in r.json()["actions"]["LINK"]],
         [("python", real + ".0")], "%s.1 -> %s.0: greetpkg is not relinked" % (real, real))

    # back to the other python, with greetpkg gone from the channel: the PrefixRecord and
    # the package cache provide it
    os.remove(os.path.join(ch, "noarch", "greetpkg-1.0-py_0.tar.bz2"))
    t.index(ch)
    t.menv_ok("install", "-p", env, *c, "python=" + other)
    t.check(not os.path.exists(os.path.join(env, "lib", "python" + real)),
            "lib/python%s is gone after the move back" % real)
    t.eq(site_files(env, other), sorted([f % other for f in greet_files] +
                                        ["lib/python%s/site-packages/README" % other]),
         "greetpkg relinked from its PrefixRecord into python %s" % other)
    g = records(env)["greetpkg"]
    t.check(g.get("url", "").endswith("/noarch/greetpkg-1.0-py_0.tar.bz2"),
            "the relinked record keeps its URL", g.get("url"))
    with open(os.path.join(env, "bin", "greet")) as f:
        t.eq(f.readline(), "#!%s/bin/python%s\n" % (env, other),
             "entry point rewritten for the environment's python (conda: bin/pythonX.Y)")
    t.check(all(k in g for k in ("sha256", "depends", "files", "paths_data")),
            "the relinked PrefixRecord is complete", sorted(g))
    t.eq(json.dumps(g["depends"]), json.dumps(["python"]), "depends kept")

    # install -f LOCK: a lock of python alone (another environment's) moves python back to
    # the machine's version; greetpkg, which the lock does not name, follows it
    pyonly = os.path.join(t.tmp, "pyonly")
    t.menv_ok("create", "-p", pyonly, *c, "python=" + real)
    lock = os.path.join(t.tmp, "pyonly.lock.yml")
    with open(lock, "w") as f:
        f.write(t.menv_ok("export", "-p", pyonly).out)
    t.menv_ok("install", "-p", env, "-f", lock)
    t.check(not os.path.exists(os.path.join(env, "lib", "python" + other)),
            "install -f LOCK: lib/python%s is gone" % other)
    t.eq(site_files(env, real), sorted([f % real for f in greet_files] + pycs +
                                       ["lib/python%s/site-packages/README" % real]),
         "install -f LOCK: greetpkg relinked into python %s" % real)
    out = subprocess.run([os.path.join(env, "bin", "greet")], capture_output=True, text=True)
    t.eq((out.returncode, out.stdout), (0, "hello\n"), "install -f LOCK: the entry point runs")
    t.check(os.path.isfile(os.path.join(env, "share/plainpkg/data.txt")),
            "install -f LOCK: plainpkg (not in the lock) stays")


if __name__ == "__main__":
    main(body)

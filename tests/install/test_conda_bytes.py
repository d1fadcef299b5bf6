"""The bytes conda 26.7.1 writes for noarch python packages (issue 24): .pyc compiled as its
compile_multiple_pyc compiles them and entry points as its create_python_entry_point writes
them, with the PrefixRecord listing them as its CreatePrefixRecordAction does.

- .pyc: conda runs `<prefix>/bin/pythonX.Y -Wi -m compileall -q -l -i LIST -j 0` with the
  prefix as working directory and LIST the prefix-relative paths of the package's
  `site-packages/*.py` (no tab, CR, LF, FF or VT in the path; python-scripts/ is not
  compiled). The oracle here is that very command, run in a scratch copy of the .py files
  (modification times kept) with PYTHONHASHSEED=0 (conda leaves the seed random: the .pyc of
  a module with a set constant then differs from run to run under python 3.9; menv fixes
  it at 0): every .pyc of menv's prefixes must equal its bytes, and
  co_filename is the relative path, so the .pyc are the same in every prefix, link method
  included (a copy keeps the cache file's mtime, as conda's copystat).
- PrefixRecord: files and paths_data list the package's files, then its .pyc (path_type
  pyc_file with size_in_bytes; a .py the python cannot compile still lists its .pyc,
  without size), then its entry points.
- Entry points: `#!<prefix>/bin/pythonX.Y` (or conda's sh trampoline), the body of conda's
  template; flask 0.11.1 (conda-forge, in the corpus) declares its entry point in
  info/package_metadata.json, which conda reads when there is no info/link.json."""
import marshal
import os
import shutil
import subprocess
import sys

from insttest import Skip, main, pkg, records

# conda 26.7.1's create_python_entry_point output below the shebang, for `greet =
# greetpkg.cli:main` and `flask = flask.cli:main` (tests/unit/envs/test_entry_point.c holds
# whole files of conda's for fixed prefixes)
BODY = ("# -*- coding: utf-8 -*-\nimport re\nimport sys\n\nfrom %s import main\n\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n")

WRAP = ('#!/bin/sh\nhere=$(cd "$(dirname "$0")/.." && pwd)\n'
        'case "$3" in compileall) [ -n "$SEEDLOG" ] && echo "${PYTHONHASHSEED-unset}" '
        '>>"$SEEDLOG" ;; esac\n'
        'PYTHONPATH="$here/lib/python%s/site-packages" exec %s "$@"\n')


def conda_pyc(py, pyver):
    d, f = os.path.split(py)
    return os.path.join(d, "__pycache__", "%s.cpython-%s.pyc" % (f[:-3], pyver.replace(".", "")))


def shebang(prefix, pyver):
    python = "%s/bin/python%s" % (prefix, pyver)
    line = "#!%s\n" % python
    if len(line) > 127 or " " in python:
        return "#!/bin/sh\n'''exec' \"%s\" \"$0\" \"$@\" #'''\n" % python
    return line


def body(t):
    py = shutil.which("python3") or "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        raise Skip("no python3 for the noarch python tests")
    pyver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True).stdout.strip()
    site = "lib/python%s/site-packages" % pyver
    ch = os.path.join(t.tmp, "chan")
    # a python as conda-forge's: bin/pythonX.Y, bin/python a link to it
    pkg(ch, "python", pyver + ".0", files={
        "bin/python" + pyver: {"data": WRAP % (pyver, py), "mode": 0o755},
        "bin/python": {"symlink": "python" + pyver},
        site + "/README": "site\n"})
    greet = {"site-packages/greetpkg/__init__.py": "",
             "site-packages/greetpkg/cli.py": "def main():\n    print('hello')\n",
             "site-packages/greetpkg/sets.py": "def f(x):\n    return x in {'a', 'b', 'c'}\n",
             "site-packages/greetpkg/broken.py": "def f(:\n",
             "site-packages/greetpkg/tab\tname.py": "X = 1\n",
             "site-packages/greetpkg/data.txt": "data\n",
             "python-scripts/greet-tool.py": "print('tool')\n"}
    pkg(ch, "greetpkg", "1.0", build="py_0", noarch="python", depends=["python"],
        entry_points=["greet = greetpkg.cli:main"], files=greet)
    flask = os.path.join(t.shared, "corpus", "packages", "conda-index",
                         "flask-0.11.1-py_0.tar.bz2")
    if not os.path.isfile(flask):
        raise Skip("no corpus flask package")
    os.makedirs(os.path.join(ch, "noarch"), exist_ok=True)
    shutil.copy(flask, os.path.join(ch, "noarch"))
    for name in ("click", "itsdangerous", "jinja2", "werkzeug"):
        pkg(ch, name, "9.0", build="py_0", noarch="python", depends=["python"],
            files={"site-packages/%s_stub.txt" % name: "stub\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]

    plain = os.path.join(t.tmp, "plain")
    spaced = os.path.join(t.tmp, "with space", "x" * 100)
    copied = os.path.join(t.tmp, "copied")
    seedlog = os.path.join(t.tmp, "seeds")
    t.menv_ok("create", "-p", plain, *c, "greetpkg", "flask",
              env={"SEEDLOG": seedlog, "PYTHONHASHSEED": "123"})
    with open(seedlog) as fo:
        seeds = set(fo.read().split())
    t.eq(seeds, {"0"}, "compileall runs with PYTHONHASHSEED=0 (a frozenset constant's order "
         "follows the string hash)")
    t.menv_ok("create", "-p", spaced, *c, "greetpkg", "flask")
    t.menv_ok("create", "-p", copied, *c, "greetpkg", "flask", env={"CONDA_ALWAYS_COPY": "true"})

    # ---- the oracle: conda's command in a scratch prefix holding copies of the .py files
    recs = records(plain)
    pys = {}
    for name in ("greetpkg", "flask"):
        pys[name] = [f for f in recs[name]["files"] if f.startswith(site + "/") and
                     f.endswith(".py") and not any(ch in f for ch in "\t\n\r\f\v")]
    t.eq(len(pys["flask"]), 21, "flask: its 21 .py files are compiled")
    scratch = os.path.join(t.tmp, "scratch")
    for f in pys["greetpkg"] + pys["flask"]:
        os.makedirs(os.path.dirname(os.path.join(scratch, f)), exist_ok=True)
        shutil.copy2(os.path.join(plain, f), os.path.join(scratch, f))
    with open(os.path.join(t.tmp, "list"), "wb") as fo:
        for f in pys["greetpkg"] + pys["flask"]:
            fo.write(f.encode() + b"\n")
    r = subprocess.run([os.path.join(plain, "bin", "python" + pyver), "-Wi", "-m", "compileall",
                        "-q", "-l", "-i", os.path.join(t.tmp, "list"), "-j", "0"],
                       cwd=scratch, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONHASHSEED="0"))
    t.check(r.returncode != 0, "the oracle fails on broken.py as conda's does", r)

    compiled = [f for f in pys["greetpkg"] + pys["flask"] if not f.endswith("broken.py")]
    for f in compiled:
        pyc = conda_pyc(f, pyver)
        with open(os.path.join(scratch, pyc), "rb") as fo:
            want = fo.read()
        for p in (plain, spaced, copied):
            got = open(os.path.join(p, pyc), "rb").read() if os.path.exists(
                os.path.join(p, pyc)) else None
            t.check(got == want, "%s: %s is byte for byte conda's" % (p, pyc))
    cli = conda_pyc(site + "/greetpkg/cli.py", pyver)
    with open(os.path.join(spaced, cli), "rb") as fo:
        code = marshal.loads(fo.read()[16:])
    t.eq(code.co_filename, site + "/greetpkg/cli.py", "co_filename is prefix-relative")
    t.check(not os.path.exists(os.path.join(plain, conda_pyc(site + "/greetpkg/broken.py",
                                                               pyver))),
            "broken.py: no .pyc")
    t.check(not os.path.exists(os.path.join(plain, "bin", "__pycache__")),
            "python-scripts/: not compiled")
    t.eq(sorted(os.listdir(os.path.join(plain, site, "greetpkg", "__pycache__"))),
         sorted(os.path.basename(conda_pyc(f, pyver)) for f in pys["greetpkg"]
                if not f.endswith("broken.py")),
         "greetpkg: a .pyc for each site-packages .py but broken.py and the tab's")

    # ---- the PrefixRecord: package files, .pyc, entry points, in that order
    for name, ep in (("greetpkg", "bin/greet"), ("flask", "bin/flask")):
        rec = recs[name]
        pyc = [conda_pyc(f, pyver) for f in pys[name]]
        nfiles = len(rec["files"]) - len(pyc) - 1
        t.eq(rec["files"][nfiles:], pyc + [ep], "%s: files end with the .pyc, then %s" %
             (name, ep))
        want = []
        for f in pyc:
            e = {"_path": f, "path_type": "pyc_file"}
            if os.path.exists(os.path.join(plain, f)):
                e["size_in_bytes"] = os.path.getsize(os.path.join(plain, f))
            want.append(e)
        t.eq(rec["paths_data"]["paths"][nfiles:nfiles + len(pyc)], want,
             "%s: paths_data of the .pyc as conda's (size, none for broken.py)" % name)
        e = rec["paths_data"]["paths"][-1]
        t.eq((e["_path"], e["path_type"], e["size_in_bytes"]),
             (ep, "unix_python_entry_point", os.path.getsize(os.path.join(plain, ep))),
             "%s: the entry point last in paths_data" % name)
    t.check(any(f.endswith("broken.py") for f in pys["greetpkg"]) and
            conda_pyc(site + "/greetpkg/broken.py", pyver) in recs["greetpkg"]["files"],
            "broken.py's .pyc is listed although not written (conda lists it)")

    # ---- entry points: conda's bytes and mode
    for p in (plain, spaced, copied):
        for name, mod in (("greet", "greetpkg.cli"), ("flask", "flask.cli")):
            with open(os.path.join(p, "bin", name)) as fo:
                t.eq(fo.read(), shebang(p, pyver) + BODY % mod,
                     "%s: bin/%s is conda's" % (p, name))
            mode = os.stat(os.path.join(p, "bin", name)).st_mode & 0o777
            t.eq(oct(mode), oct(0o755), "%s: bin/%s mode (umask 022)" % (p, name))
    r = subprocess.run([os.path.join(spaced, "bin", "greet")], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    t.eq((r.returncode, r.stdout), (0, "hello\n"), "bin/greet runs through the sh trampoline")

    # ---- doctor: a .pyc listed without size (never written) is not missing
    r = t.menv_run("doctor", "-p", plain, "--json")
    found = [f for f in r.try_json().get("findings", [])] if r.try_json() else None
    t.eq([f for f in (found or []) if f.get("path", "").endswith(".pyc")], [],
         "doctor: no finding about the .pyc")
    t.menv_ok("remove", "-p", plain, "greetpkg")
    t.check(not os.path.exists(os.path.join(plain, site, "greetpkg")),
            "remove: greetpkg's .py, .pyc and __pycache__ are gone")


if __name__ == "__main__":
    main(body)

"""Prefixes: binary placeholders (BR-026: a longer prefix refused before anything is
written, equal length without padding, shorter padded with NULs), text shebangs rewritten to
`#!/usr/bin/env` for blanks or > 127 bytes, noarch python entry points with conda's `/bin/sh`
trampoline (BR-027) in long, spaced and plain prefixes, .pyc compiled by the environment's
python and removed with the package, and the link methods (always_copy, always_softlink)."""
import os
import shutil
import subprocess
import sys

from insttest import PH, Skip, main, pkg, records, snapshot, files_of

BPH = "/opt/ph_" + "x" * 32  # a 40-byte placeholder
# the body conda 26.7.1 writes below the shebang of `greet = greetpkg.cli:main` (its
# python_entry_point_template)
GREET_EP = ("# -*- coding: utf-8 -*-\nimport re\nimport sys\n\nfrom greetpkg.cli import main\n\n"
            "if __name__ == '__main__':\n"
            "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
            "    sys.exit(main())\n")


SHORT = []


def sized(t, n, tag):
    """An absolute path of exactly n bytes (under a short temp dir)."""
    if not SHORT:
        import tempfile
        SHORT.append(tempfile.mkdtemp(prefix="mv", dir="/tmp"))
    base = os.path.join(SHORT[0], tag)
    if len(base) + 1 > n:
        raise Skip("temp dir too long for a %d-byte prefix" % n)
    return base + "/" + "d" * (n - len(base) - 1)


def body(t):
    py = shutil.which("python3") or "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        raise Skip("no python3 for the noarch python tests")
    pyver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True).stdout.strip()
    tag = "cpython-" + pyver.replace(".", "")
    ch = os.path.join(t.tmp, "chan")
    binary = b"\x7fELF\0" + BPH.encode() + b"/lib:" + BPH.encode() + b"/x\nend\0TAIL\0"
    pkg(ch, "binpkg", "1.0", files={
        "lib/libx.so": {"data": binary, "placeholder": BPH, "file_mode": "binary"},
        "share/binpkg/conf.txt": {"data": "root=%s\n" % BPH, "placeholder": BPH}})
    pkg(ch, "textpkg", "1.0", files={
        "share/textpkg/conf.txt": {"data": "root=%s\n" % BPH, "placeholder": BPH},
        "bin/tool": {"data": "#!%s/bin/python -u\nprint('x')  # %s\n" % (PH, PH),
                     "placeholder": PH, "mode": 0o755},
        "bin/envtool": {"data": "#!/usr/bin/env python\n# %s\n" % PH, "placeholder": PH,
                        "mode": 0o755},
        "share/textpkg/plain.txt": "plain\n"})
    wrapper = ('#!/bin/sh\nhere=$(cd "$(dirname "$0")/.." && pwd)\n'
               'PYTHONPATH="$here/lib/python%s/site-packages" exec %s "$@"\n' % (pyver, py))
    pkg(ch, "python", pyver + ".0", files={
        "bin/python" + pyver: {"data": wrapper, "mode": 0o755},
        "bin/python": {"symlink": "python" + pyver},
        "lib/python%s/site-packages/README" % pyver: "site\n"})
    pkg(ch, "greetpkg", "1.0", build="py_0", noarch="python", depends=["python"],
        entry_points=["greet = greetpkg.cli:main"],
        files={"site-packages/greetpkg/__init__.py": "",
               "site-packages/greetpkg/cli.py": "def main():\n    print('hello')\n",
               "python-scripts/greet-raw": {"data": "#!/bin/sh\necho raw\n", "mode": 0o755}})
    # 300 modules: more than one compiling python (one per 64 files and core)
    many = {"site-packages/manymods/m%03d.py" % i: "X = %d\n" % i for i in range(300)}
    many["site-packages/manymods/__init__.py"] = ""
    pkg(ch, "manymods", "1.0", build="py_0", noarch="python", depends=["python"], files=many)
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    mp = os.path.join(t.tmp, "many")
    t.menv_ok("create", "-p", mp, *c, "manymods")
    site = "lib/python%s/site-packages" % pyver
    want = sorted("%s/manymods/__pycache__/%s.%s.pyc" % (site, n[:-3], tag)
                  for n in ["__init__.py"] + ["m%03d.py" % i for i in range(300)])
    rec = records(mp)["manymods"]
    t.eq(sorted(f for f in rec["files"] if f.endswith(".pyc")), want,
         "manymods: every .pyc recorded")
    t.eq([f for f in want if not os.path.isfile(os.path.join(mp, f))], [],
         "manymods: every .pyc written")
    r = subprocess.run([py, "-c", "import importlib.util as u, sys; sys.path.insert(0, %r); "
                        "import manymods.m299 as m; print(m.X, m.__cached__)"
                        % os.path.join(mp, site)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    t.check(r.stdout.startswith("299 ") and r.stdout.strip().endswith(want[-1].split("/")[-1]),
            "manymods: the module imports from its .pyc", r)

    # ---- BR-026: binary placeholder of 40 bytes
    long64 = sized(t, 64, "l")
    r = t.menv_run("create", "-p", long64, *c, "binpkg")
    t.one_line_error(r, "BR-026 64-byte prefix", ["lib/libx.so", "64 bytes", "40-byte"])
    t.no_prefix_left(long64, "BR-026 64-byte prefix")
    t.menv_ok("create", "-p", long64, *c, "textpkg")
    before = snapshot(long64)
    r = t.menv_run("install", "-p", long64, *c, "binpkg")
    t.one_line_error(r, "BR-026 install into a 64-byte prefix", ["lib/libx.so", "40-byte"])
    t.eq(snapshot(long64), before, "BR-026: refused before anything was written")
    with open(os.path.join(long64, "share/textpkg/conf.txt")) as f:
        t.eq(f.read(), "root=%s\n" % long64, "text placeholders may grow")
    exact = sized(t, 40, "e")
    t.menv_ok("create", "-p", exact, *c, "binpkg")
    with open(os.path.join(exact, "lib/libx.so"), "rb") as f:
        t.eq(f.read(), binary.replace(BPH.encode(), exact.encode()),
             "BR-026 40-byte prefix: replaced without padding")
    short = sized(t, 38, "s")
    t.menv_ok("create", "-p", short, *c, "binpkg")
    with open(os.path.join(short, "lib/libx.so"), "rb") as f:
        got = f.read()
    s1 = (short + "/lib:" + short + "/x\nend").encode()
    want = b"\x7fELF\0" + s1 + b"\0" * (len(BPH + "/lib:" + BPH + "/x\nend") - len(s1)) + \
        b"\0TAIL\0"
    t.eq(got, want, "BR-026 shorter prefix: NUL padded, same length, tail in place")
    rec = records(short)["binpkg"]
    e = [x for x in rec["paths_data"]["paths"] if x["_path"] == "lib/libx.so"][0]
    import hashlib
    t.eq(e.get("sha256_in_prefix"), hashlib.sha256(got).hexdigest(),
         "binary: sha256_in_prefix recorded")
    t.eq(rec["link"]["type"], 1, "a relocated package keeps the package's link type "
         "(hardlink, 1; conda 26 writes the requested link type, not the copied file's)")

    # ---- shebangs of text files (BR-027 kind) and noarch entry points
    spaced = os.path.join(t.tmp, "env with space", "d\u00e9mo")
    long140 = sized(t, 140, "L")
    plain = os.path.join(t.tmp, "plain")
    for p in (spaced, long140, plain):
        t.menv_ok("create", "-p", p, *c, "textpkg", "greetpkg")
        with open(os.path.join(p, "bin/tool")) as f:
            first, second = f.readline(), f.readline()
        rewrite = p != plain
        t.eq(first, "#!/usr/bin/env python -u\n" if rewrite else "#!%s/bin/python -u\n" % p,
             "%s: text shebang" % p)
        t.eq(second, "print('x')  # %s\n" % p, "%s: the rest replaced" % p)
        with open(os.path.join(p, "bin/envtool")) as f:
            t.eq(f.readline(), "#!/usr/bin/env python\n", "%s: an env shebang untouched" % p)
        with open(os.path.join(p, "bin/greet")) as f:
            ep = f.read()
        # conda 26.7.1's bytes (create_python_entry_point): the python of the version,
        # directly, or through sh for a blank or a line over 127 characters
        python = "%s/bin/python%s" % (p, pyver)
        t.eq(ep, ("#!/bin/sh\n'''exec' \"%s\" \"$0\" \"$@\" #'''\n" % python if rewrite
                  else "#!%s\n" % python) + GREET_EP,
             "%s: the entry point is conda's, byte for byte" % p)
        r = subprocess.run([os.path.join(p, "bin/greet")], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        t.eq((r.returncode, r.stdout), (0, "hello\n"), "%s: bin/greet runs" % p)
        r = subprocess.run([os.path.join(p, "bin/greet-raw")], capture_output=True, text=True)
        t.eq(r.stdout, "raw\n", "%s: python-scripts/ linked to bin/" % p)
        site = "lib/python%s/site-packages" % pyver
        pyc = "%s/greetpkg/__pycache__/cli.%s.pyc" % (site, tag)
        t.check(os.path.exists(os.path.join(p, pyc)), "%s: .pyc compiled" % p)
        rec = records(p)["greetpkg"]
        t.check(pyc in rec["files"], "%s: .pyc recorded in files" % p)
        kinds = {x["_path"]: x["path_type"] for x in rec["paths_data"]["paths"]}
        t.eq(kinds.get(pyc), "pyc_file", "%s: pyc_file in paths_data" % p)
        t.eq(kinds.get("bin/greet"), "unix_python_entry_point", "%s: entry point type" % p)
        t.menv_ok("remove", "-p", p, "greetpkg")
        t.check(not os.path.exists(os.path.join(p, site, "greetpkg")),
                "%s: remove deletes the package's .py, .pyc and __pycache__" % p)
        t.check(not os.path.exists(os.path.join(p, "bin/greet")), "%s: entry point removed" % p)

    # ---- link methods
    pk_file = os.path.join(t.pkgs, "textpkg-1.0-0", "share/textpkg/plain.txt")
    d = os.path.join(t.tmp, "dflt")
    t.menv_ok("create", "-p", d, *c, "textpkg")
    st = os.stat(os.path.join(d, "share/textpkg/plain.txt"))
    t.check(st.st_ino == os.stat(pk_file).st_ino or st.st_nlink == 1,
            "default: a hardlink to the cache (or a reflink where the file system has them)")
    cp = os.path.join(t.tmp, "copied")
    t.menv_ok("create", "-p", cp, *c, "textpkg", env={"CONDA_ALWAYS_COPY": "true"})
    st = os.stat(os.path.join(cp, "share/textpkg/plain.txt"))
    t.check(st.st_ino != os.stat(pk_file).st_ino and st.st_nlink == 1,
            "always_copy: an independent copy")
    t.eq(records(cp)["textpkg"]["link"]["type"], 3, "always_copy: link type 3")
    sl = os.path.join(t.tmp, "softl")
    t.menv_ok("create", "-p", sl, *c, "textpkg", env={"CONDA_ALWAYS_SOFTLINK": "true"})
    lp = os.path.join(sl, "share/textpkg/plain.txt")
    t.check(os.path.islink(lp) and os.path.realpath(lp) == os.path.realpath(pk_file),
            "always_softlink: a symlink into the cache")
    rec = records(sl)["textpkg"]
    t.eq([x["path_type"] for x in rec["paths_data"]["paths"]
          if x["_path"] == "share/textpkg/plain.txt"], ["softlink"],
         "always_softlink: path_type softlink")
    t.check(not os.path.islink(os.path.join(sl, "bin/tool")),
            "always_softlink: a relocated file is still a copy")
    t.menv_ok("remove", "-p", sl, "textpkg")
    t.check(os.path.exists(pk_file), "removing a softlinked package keeps the cache intact")


def run(t):
    try:
        body(t)
    finally:
        if SHORT:
            shutil.rmtree(SHORT[0], ignore_errors=True)


if __name__ == "__main__":
    main(run)

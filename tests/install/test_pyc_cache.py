"""The .pyc of noarch python packages compiled once per package and python, kept in the
package cache and linked into every later prefix (issue 25; envs/pyccache.c).

- A first create compiles in the prefix (conda's command) and keeps each cacheable package's
  .pyc under <pkgs>/<dist>/.menv-pyc/<magic>-<site hash>/ (MANIFEST + <i>.pyc), python's
  magic number (importlib.util.MAGIC_NUMBER of the python the package wraps) noted in
  <pkgs>/<python dist>/.menv-pyc/magic.
- A second create links them (hardlinks to the cache's files; copies with always_copy) and
  runs compileall only for what the cache cannot give: a .py python could not compile, and a
  package whose .py a prefix placeholder rewrote. Every .pyc of every prefix is byte for byte
  what conda's command gives in a scratch copy of that prefix's .py (PYTHONHASHSEED=0), and
  the PrefixRecords list the same .pyc with the same sizes.
- `install` into an environment whose python was linked before: the same.
- A .py of the cache whose mtime changed is compiled again (the header would be stale).
- Three creates at once from a cache without .pyc: all succeed, each package's folder is
  whole, the bytes are conda's.
- A create killed at each of its crash points: no half folder under a final name; the next
  create leaves whole folders and conda's bytes; `menv clean --locks` removes a killed
  writer's temporary folder.
- A read-only package cache (menv run as nobody, the cache root's): nothing written there,
  its packages' .pyc compiled in the prefix (conda's bytes); .pyc kept there earlier are used
  (copied: a hard link to another user's file is refused).
- `menv clean --all` with no environment left removes the packages and their .pyc.
"""
import os
import shutil
import subprocess

from insttest import PH, Skip, main, menvtest, pkg, records

# the python package: bin/pythonX.Y runs this machine's python3; a compileall run appends
# the list it was given (stdin) to $PYCLOG
WRAP = ('#!/bin/sh\nhere=$(cd "$(dirname "$0")/.." && pwd)\n'
        'case "$3" in compileall) if [ -n "$PYCLOG" ]; then l=$(mktemp); cat >"$l"; '
        'cat "$l" >>"$PYCLOG"; exec <"$l"; rm -f "$l"; fi ;; esac\n'
        'PYTHONPATH="$here/lib/python%s/site-packages" exec %s "$@"\n')


def pyc_of(py, pyver):
    d, f = os.path.split(py)
    return os.path.join(d, "__pycache__", "%s.cpython-%s.pyc" % (f[:-3], pyver.replace(".", "")))


def body(t):
    setpriv = shutil.which("setpriv")
    nobody = None
    if os.geteuid() == 0 and setpriv:
        import pwd
        nobody = pwd.getpwnam("nobody")
    # a python that nobody can run too (the read-only part runs menv as nobody)
    py = None
    for cand in (shutil.which("python3"), "/usr/bin/python3"):
        if cand and os.access(cand, os.X_OK) and (not nobody or subprocess.run(
                [setpriv, "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid,
                 "--clear-groups", "/bin/sh", "-c", 'exec "$0" -c pass', cand],
                capture_output=True).returncode == 0):
            py = cand
            break
    if not py:
        raise Skip("no python3 for the noarch python tests")
    out = subprocess.run([py, "-c", "import sys, importlib.util; print('%d.%d' % "
                          "sys.version_info[:2], importlib.util.MAGIC_NUMBER.hex())"],
                         capture_output=True, text=True).stdout.split()
    pyver, magic = out[0], out[1]
    site = "lib/python%s/site-packages" % pyver
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "python", pyver + ".0", files={
        "bin/python" + pyver: {"data": WRAP % (pyver, py), "mode": 0o755},
        "bin/python": {"symlink": "python" + pyver},
        site + "/README": "site\n"})
    pkg(ch, "greetpkg", "1.0", build="py_0", noarch="python", depends=["python"],
        entry_points=["greet = greetpkg.cli:main"], files={
            "site-packages/greetpkg/__init__.py": "",
            "site-packages/greetpkg/cli.py": "def main():\n    print('hello')\n",
            "site-packages/greetpkg/sets.py": "def f(x):\n    return x in {'a', 'b', 'c'}\n",
            "site-packages/greetpkg/sub/deep.py": "X = [1, 2, 3]\n",
            "site-packages/greetpkg/data.txt": "data\n"})
    pkg(ch, "brokenpkg", "1.0", build="py_0", noarch="python", depends=["python"], files={
        "site-packages/brokenpkg/__init__.py": "OK = 1\n",
        "site-packages/brokenpkg/broken.py": "def f(:\n"})
    pkg(ch, "relocpkg", "1.0", build="py_0", noarch="python", depends=["python"], files={
        "site-packages/relocpkg/__init__.py": "A = 1\n",
        "site-packages/relocpkg/conf.py": {"data": "PREFIX = '%s'\n" % PH, "placeholder": PH}})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    specs = ["greetpkg", "brokenpkg", "relocpkg"]
    log = os.path.join(t.tmp, "pyclog")
    ndist = {"greetpkg": "greetpkg-1.0-py_0", "brokenpkg": "brokenpkg-1.0-py_0",
             "relocpkg": "relocpkg-1.0-py_0"}

    def compiled(prefix_args, env=None):
        """Runs a create; returns the .py paths compileall was given."""
        if os.path.exists(log):
            os.remove(log)
        e = dict(env or {}, PYCLOG=log)
        r = t.menv_run("create", *prefix_args, *c, *specs, env=e)
        t.check(r.rc == 0, "create %s" % " ".join(prefix_args), r)
        return sorted(open(log).read().split()) if os.path.exists(log) else []

    def pys(prefix):
        recs = records(prefix)
        return {n: [f for f in recs[n]["files"] if f.startswith(site + "/") and
                    f.endswith(".py")] for n in specs}

    def oracle(prefix, what):
        """conda's command in a scratch copy of the prefix's .py: every .pyc equal."""
        allpy = [f for fs in pys(prefix).values() for f in fs]
        scratch = os.path.join(t.tmp, "scratch")
        shutil.rmtree(scratch, ignore_errors=True)
        for f in allpy:
            os.makedirs(os.path.dirname(os.path.join(scratch, f)), exist_ok=True)
            shutil.copy2(os.path.join(prefix, f), os.path.join(scratch, f))
        lst = os.path.join(t.tmp, "list")
        with open(lst, "w") as fo:
            fo.write("".join(f + "\n" for f in allpy))
        subprocess.run([os.path.join(prefix, "bin", "python" + pyver), "-Wi", "-m",
                        "compileall", "-q", "-l", "-i", lst, "-j", "0"], cwd=scratch,
                       capture_output=True, env=dict(os.environ, PYTHONHASHSEED="0"))
        bad = []
        for f in allpy:
            want = os.path.join(scratch, pyc_of(f, pyver))
            got = os.path.join(prefix, pyc_of(f, pyver))
            w = open(want, "rb").read() if os.path.exists(want) else None
            g = open(got, "rb").read() if os.path.exists(got) else None
            if w != g:
                bad.append(f)
        t.eq(bad, [], "%s: every .pyc is byte for byte conda's command's" % what)
        t.check(len(allpy) == 8, "%s: 8 .py compiled or linked" % what, allpy)

    def pyc_dirs(pkgs=None):
        """dist -> names in <pkgs>/<dist>/.menv-pyc"""
        pkgs = pkgs or t.pkgs
        out = {}
        for d in sorted(os.listdir(pkgs)):
            p = os.path.join(pkgs, d, ".menv-pyc")
            if os.path.isdir(p):
                out[d] = sorted(os.listdir(p))
        return out

    def whole(what, pkgs=None):
        """Every final folder holds a MANIFEST (its end line the sha256 of what comes before)
        and each .pyc it lists, of its size and sha256."""
        pkgs = pkgs or t.pkgs
        for d, names in pyc_dirs(pkgs).items():
            for n in names:
                if not n.startswith(magic + "-"):
                    continue
                folder = os.path.join(pkgs, d, ".menv-pyc", n)
                text = open(os.path.join(folder, "MANIFEST")).read()
                lines = text.splitlines()
                ok = lines[0] == "menv-pyc 2 %s %s" % (magic, site) and lines[-1] == (
                    "end " + menvtest.sha256_bytes(text[:text.rindex("end ")].encode()))
                for i, l in enumerate(lines[1:-1]):
                    state, _, _, size, sha, _ = l.split(" ", 5)
                    f = os.path.join(folder, "%d.pyc" % i)
                    ok = ok and (state == "-" or (os.path.getsize(f) == int(size) and
                                                  menvtest.sha256_file(f) == sha))
                t.check(ok, "%s: %s/%s is whole" % (what, d, n), lines)

    all_py = sorted("%s/%s" % (site, p) for p in (
        "greetpkg/__init__.py", "greetpkg/cli.py", "greetpkg/sets.py", "greetpkg/sub/deep.py",
        "brokenpkg/__init__.py", "brokenpkg/broken.py", "relocpkg/__init__.py",
        "relocpkg/conf.py"))
    not_cached = sorted("%s/%s" % (site, p) for p in (
        "brokenpkg/broken.py", "relocpkg/__init__.py", "relocpkg/conf.py"))

    # ---- first create: compiled in the prefix, kept in the cache
    p1 = os.path.join(t.tmp, "p1")
    t.eq(compiled(["-p", p1]), [f for f in all_py], "first create: every .py compiled")
    tag = [n for n in pyc_dirs().get(ndist["greetpkg"], []) if n.startswith(magic + "-")]
    t.check(len(tag) == 1, "greetpkg's .pyc kept under its python's magic %s" % magic,
            pyc_dirs())
    t.eq(pyc_dirs().get(ndist["brokenpkg"]), tag, "brokenpkg's .pyc kept")
    t.eq(pyc_dirs().get(ndist["relocpkg"]), None,
         "relocpkg (a .py with a placeholder): nothing kept")
    pydir = [d for d in os.listdir(t.pkgs) if d.startswith("python-") and
             os.path.isdir(os.path.join(t.pkgs, d))][0]
    t.eq(open(os.path.join(t.pkgs, pydir, ".menv-pyc", "magic")).read(), magic + "\n",
         "python's magic number noted in its extracted package")
    whole("first create")
    oracle(p1, "first create")
    broken_man = open(os.path.join(t.pkgs, ndist["brokenpkg"], ".menv-pyc", tag[0],
                                   "MANIFEST")).read().splitlines()
    t.eq([l.split(" ")[0] for l in broken_man[1:-1]], ["c", "-"],
         "brokenpkg's MANIFEST: __init__.py kept, broken.py without a .pyc")

    # ---- second create: linked from the cache
    p2 = os.path.join(t.tmp, "p2")
    t.eq(compiled(["-p", p2]), not_cached,
         "second create: only broken.py and the relocated package compiled")
    oracle(p2, "second create")
    cli = pyc_of(site + "/greetpkg/cli.py", pyver)
    kept = os.path.join(t.pkgs, ndist["greetpkg"], ".menv-pyc", tag[0])
    inos = {os.stat(os.path.join(kept, n)).st_ino for n in os.listdir(kept)}
    t.check(os.stat(os.path.join(p2, cli)).st_ino in inos,
            "second create: greetpkg's .pyc is a hard link of the cache's")
    conf = pyc_of(site + "/relocpkg/conf.py", pyver)
    t.check(open(os.path.join(p1, conf), "rb").read() != open(os.path.join(p2, conf),
                                                                   "rb").read(),
            "relocpkg's conf.pyc holds each prefix's own path")

    def pyc_paths(prefix):
        return {n: [e for e in r["paths_data"]["paths"] if e["path_type"] == "pyc_file"]
                for n, r in records(prefix).items()}
    t.eq(pyc_paths(p2), pyc_paths(p1), "the PrefixRecords list the same .pyc and sizes")
    r = t.menv_run("doctor", "-p", p2, "--json")
    found = (r.try_json() or {}).get("findings", [])
    t.eq([f for f in found if f.get("path", "").endswith(".pyc")], [],
         "doctor: nothing to say about the linked .pyc")

    # ---- install into an environment whose python is there already (its PrefixRecord's
    # extracted_package_dir names where its magic number is noted)
    p6 = os.path.join(t.tmp, "p6")
    t.menv_ok("create", "-p", p6, *c, "python")
    if os.path.exists(log):
        os.remove(log)
    t.menv_ok("install", "-p", p6, *c, "greetpkg", env={"PYCLOG": log})
    t.eq(open(log).read().split() if os.path.exists(log) else [], [],
         "install into an existing python: greetpkg's .pyc linked, nothing compiled")
    t.check(os.stat(os.path.join(p6, cli)).st_ino in inos,
            "install: greetpkg's .pyc is a hard link of the cache's")

    # ---- always_copy: copies, same bytes
    p3 = os.path.join(t.tmp, "p3")
    t.eq(compiled(["-p", p3], env={"CONDA_ALWAYS_COPY": "true"}), not_cached,
         "always_copy: the cache's .pyc used")
    oracle(p3, "always_copy")
    t.check(os.stat(os.path.join(p3, cli)).st_ino not in inos,
            "always_copy: the .pyc is a copy")

    # ---- a cache .py whose mtime changed: compiled again, its header new
    src = os.path.join(t.pkgs, ndist["greetpkg"], "site-packages", "greetpkg", "cli.py")
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 7 * 10**9))
    p4 = os.path.join(t.tmp, "p4")
    got = compiled(["-p", p4])
    t.check(site + "/greetpkg/cli.py" in got,
            "a .py touched in the cache: its package compiled again", got)
    oracle(p4, "touched .py")
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))

    # ---- three creates at once from a cache without .pyc
    def drop_kept():
        for d in pyc_dirs():
            shutil.rmtree(os.path.join(t.pkgs, d, ".menv-pyc"))
    drop_kept()
    procs = []
    for i in range(3):
        procs.append(subprocess.Popen([t.menv, "create", "-p", os.path.join(t.tmp, "c%d" % i)]
                                      + c + specs, env=t.environ(), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT))
    outs = [(p.wait(), p.stdout.read().decode()) for p in procs]
    t.eq([o[0] for o in outs], [0, 0, 0], "three creates at once succeed")
    whole("three at once")
    t.eq([n for ns in pyc_dirs().values() for n in ns if n.startswith(".tmp-")], [],
         "three at once: no temporary folder left")
    for i in range(3):
        oracle(os.path.join(t.tmp, "c%d" % i), "create %d of three at once" % i)

    # ---- a create killed at each crash point
    drop_kept()
    killed_in_publish = 0
    n = 1
    kp = os.path.join(t.tmp, "k")
    while n < 400:
        shutil.rmtree(kp, ignore_errors=True)
        r = t.menv_run("create", "-p", kp, *c, *specs, env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            break
        if not t.check(r.rc == -9, "killed at point %d" % n, r):
            break
        whole("killed at point %d" % n)
        if any(x.startswith(".tmp-") for ns in pyc_dirs().values() for x in ns):
            killed_in_publish += 1
        drop_kept()
        n += 1
    t.check(killed_in_publish >= 2, "kills while the .pyc were being kept (%d)" %
            killed_in_publish)
    t.note("create: %d crash points, %d while keeping .pyc" % (n - 1, killed_in_publish))
    # the last kill before keeping greetpkg's folder: the next create uses nothing half made
    drop_kept()
    k = n - 1
    while k > 0:
        shutil.rmtree(kp, ignore_errors=True)
        r = t.menv_run("create", "-p", kp, *c, *specs, env={"MENV_TEST_CRASH_AFTER": str(k)})
        if any(x.startswith(".tmp-") for ns in pyc_dirs().values() for x in ns):
            break
        drop_kept()
        k -= 1
    stale = [(d, x) for d, ns in pyc_dirs().items() for x in ns if x.startswith(".tmp-")]
    t.check(stale, "a killed create left a temporary folder")
    p5 = os.path.join(t.tmp, "p5")
    compiled(["-p", p5])
    oracle(p5, "after a kill")
    whole("after a kill")
    os.makedirs(os.path.join(t.pkgs, ndist["greetpkg"], ".menv-pyc", ".tmp-abcdef"))
    t.menv_ok("clean", "--locks", "-y")
    t.eq([(d, x) for d, ns in pyc_dirs().items() for x in ns if x.startswith(".tmp-")], [],
         "clean --locks removes a killed writer's temporary folder")
    t.check(any(x.startswith(magic) for x in pyc_dirs().get(ndist["greetpkg"], [])),
            "clean --locks keeps the kept .pyc")

    # ---- a read-only package cache: nothing written there, compiled in the prefix
    if nobody:
        ro, rw = os.path.join(t.tmp, "ro"), os.path.join(t.tmp, "rw")
        t.menv_ok("create", "-p", os.path.join(t.tmp, "fill"), *c, *specs,
                  env={"CONDA_PKGS_DIRS": ro})
        saved = os.path.join(t.tmp, "saved-pyc")
        os.makedirs(saved)
        for d in pyc_dirs(ro):
            shutil.move(os.path.join(ro, d, ".menv-pyc"), os.path.join(saved, d))
        for top in (t.tmp,):
            os.chown(top, nobody.pw_uid, nobody.pw_gid)
            for dp, ds, fs in os.walk(top):
                for x in ds + fs:
                    os.lchown(os.path.join(dp, x), nobody.pw_uid, nobody.pw_gid)
        for dp, ds, fs in os.walk(ro):
            os.lchown(dp, 0, 0)
            for x in fs:
                os.lchown(os.path.join(dp, x), 0, 0)
        os.chmod(t.tmp, 0o755)

        def as_nobody(prefix):
            if os.path.exists(log):
                os.remove(log)
            env = t.environ({"CONDA_PKGS_DIRS": "%s,%s" % (ro, rw), "PYCLOG": log})
            p = subprocess.run([setpriv, "--reuid=%d" % nobody.pw_uid,
                                "--regid=%d" % nobody.pw_gid, "--clear-groups", t.menv,
                                "create", "-p", prefix] + c + specs, capture_output=True,
                               env=env, cwd=t.tmp, timeout=120)
            t.eq(p.returncode, 0, "read-only cache: create %s (%s)" % (prefix, p.stderr[-500:]))

            return sorted(open(log).read().split()) if os.path.exists(log) else []

        before = menvtest.tree_snapshot(ro)
        t.eq(as_nobody(os.path.join(t.tmp, "ro1")), all_py,
             "read-only cache: every .py compiled in the prefix")
        t.eq(menvtest.tree_snapshot(ro), before, "read-only cache: nothing written there")
        t.eq(pyc_dirs(ro), {}, "read-only cache: no .pyc kept there")
        oracle(os.path.join(t.tmp, "ro1"), "read-only cache")
        # .pyc kept there before (by its owner): read and copied
        for d in os.listdir(saved):
            shutil.move(os.path.join(saved, d), os.path.join(ro, d, ".menv-pyc"))
        before = menvtest.tree_snapshot(ro)
        t.eq(as_nobody(os.path.join(t.tmp, "ro2")), not_cached,
             "read-only cache: its kept .pyc are used")
        t.eq(menvtest.tree_snapshot(ro), before, "read-only cache: still nothing written")
        oracle(os.path.join(t.tmp, "ro2"), "read-only cache's kept .pyc")
        subprocess.run(["chown", "-R", "0:0", t.tmp], check=True)
    else:
        t.skip_part("not root or no setpriv: the read-only cache part")

    # ---- clean --all with no environment left: the packages go, their .pyc with them
    for d in os.listdir(t.tmp):
        p = os.path.join(t.tmp, d)
        if not d.startswith(".") and os.path.isdir(os.path.join(p, "conda-meta")):
            t.menv_ok("remove", "-p", p, "--all", "-y", "-q")
    t.menv_ok("clean", "--all", "-y")
    t.eq(pyc_dirs(), {}, "clean --all: no .pyc left in the cache")


if __name__ == "__main__":
    main(body)

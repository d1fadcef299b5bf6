"""Shared helpers for menv's end-to-end CLI tests (python3 standard library only).

Every test script is called as   python3 test_X.py MENV_BINARY SHARED_DIR [CASE]
and runs `main(body)`: `body(t)` gets a `T` with a private temp dir (HOME, root
prefix, rc file inside it), helpers to run menv and to build channels, and a
soft-assertion collector: a failed check is printed and the test goes on, so one
run reports every broken expectation; the exit status is 1 if any check failed (also
when a Skip is raised after it), else 77 (skip) if a prerequisite of the test or of a
part of it (t.skip_part) is missing, 0 otherwise.

Set MENV_TEST_KEEP=1 to keep the temp dir for inspection.
"""

import functools
import glob
import hashlib
import http.server
import io
import json
import os
import shutil
import socket
import socketserver
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile

SKIP_RC = 77


class Skip(Exception):
    """A prerequisite of the test is missing: exit 77."""


class Fatal(Exception):
    """A failure after which the rest of the test makes no sense."""


# --------------------------------------------------------------------------
# hashing and files

def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def md5_file(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def read_json(path):
    with open(path, "rb") as f:
        return json.load(f)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)


def write_text(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


# lock files: menv writes its pid into them each time it takes them (to name the holder to
# those who wait), so they are not part of what a command must leave unchanged
LOCK_FILES = (".menv.lock", ".menv-users.lock")


def tree_snapshot(top):
    """relpath -> (kind, size, mtime_ns, inode, link target) for everything under top (lock
    files left out)."""
    snap = {}
    if not os.path.lexists(top):
        return snap
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            if name in LOCK_FILES:
                continue
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            kind = ("l" if stat.S_ISLNK(st.st_mode) else
                    "d" if stat.S_ISDIR(st.st_mode) else "f")
            target = os.readlink(p) if kind == "l" else None
            snap[os.path.relpath(p, top)] = (kind, st.st_size if kind == "f" else 0,
                                             st.st_mtime_ns if kind != "d" else 0,
                                             st.st_ino, target)
    return snap


# --------------------------------------------------------------------------
# conda packages, read independently of menv

def alive(pid):
    """A process that runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def signal_and_wait(p, sig, timeout):
    """Sends sig to the process p and waits up to `timeout` seconds for it to end (then kills
    it): (stdout bytes, stderr bytes, seconds from the signal to the end, whether it ended in
    time)."""
    sent = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=timeout)
        in_time = True
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        in_time = False
    return out, err, time.monotonic() - sent, in_time


def left_running(mark):
    """The pids a test's child wrote to `mark`/pids that still run 5 s on, and all of them."""
    pids = []
    if os.path.exists(os.path.join(mark, "pids")):
        with open(os.path.join(mark, "pids")) as f:
            pids = [int(x) for x in f.read().split()]
    deadline = time.time() + 5
    while time.time() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)], pids


class Member:
    def __init__(self, name, kind, data=None, linkname=None, mode=0o644):
        self.name, self.kind, self.data, self.linkname, self.mode = name, kind, data, linkname, mode


def _zstd_decompress(raw):
    zstd = shutil.which("zstd")
    if not zstd:
        raise Skip("the zstd command is needed to read .conda packages")
    return subprocess.run([zstd, "-dc"], input=raw, capture_output=True, check=True).stdout


def _tar_members(tf, out):
    by_name = {}
    for m in tf.getmembers():
        name = m.name[2:] if m.name.startswith("./") else m.name
        if m.isdir():
            continue
        if m.issym():
            out[name] = Member(name, "softlink", linkname=m.linkname, mode=m.mode)
        elif m.islnk():
            target = m.linkname[2:] if m.linkname.startswith("./") else m.linkname
            src = by_name.get(target)
            out[name] = Member(name, "hardlink", data=src.data if src else None,
                               linkname=target, mode=m.mode)
        elif m.isfile():
            out[name] = Member(name, "file", data=tf.extractfile(m).read(), mode=m.mode)
        by_name[name] = out.get(name)


class Package:
    """The contents of a .conda or .tar.bz2 file: members, info/index.json, info/paths.json."""

    def __init__(self, path):
        self.path = path
        self.fn = os.path.basename(path)
        self.members = {}
        if path.endswith(".conda"):
            with zipfile.ZipFile(path) as z:
                for n in z.namelist():
                    if n.endswith(".tar.zst"):
                        raw = _zstd_decompress(z.read(n))
                        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
                            _tar_members(tf, self.members)
        else:
            with tarfile.open(path, "r:*") as tf:   # "r:*": nano's .tar.bz2 is gzip
                _tar_members(tf, self.members)
        self.index = self.info_json("info/index.json") or {}
        self.paths_json = self.info_json("info/paths.json")

    def info_json(self, name):
        m = self.members.get(name)
        return json.loads(m.data) if m is not None and m.data is not None else None

    @property
    def dist(self):
        for ext in (".tar.bz2", ".conda"):
            if self.fn.endswith(ext):
                return self.fn[:-len(ext)]
        return self.fn

    def payload(self):
        """Members that get installed (everything outside info/)."""
        return {n: m for n, m in self.members.items() if not n.startswith("info/")}

    def paths_json_sha256(self):
        """_path -> sha256 for entries of info/paths.json that carry one."""
        if not self.paths_json:
            return {}
        return {p["_path"]: p["sha256"] for p in self.paths_json.get("paths", []) if p.get("sha256")}


def build_tar_bz2(path, index, files=(), extra_members=(), file_list=True):
    """Write a .tar.bz2 package: info/index.json from `index`, info/files (unless `files` or
    `extra_members` hold info/files or info/paths.json, or file_list is False), regular files
    {arcname: bytes} and raw tarfile members [(TarInfo, bytes or None)] appended in order."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tarfile.open(path, "w:bz2") as tf:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            ti.mtime = 1700000000
            tf.addfile(ti, io.BytesIO(data))
        add("info/index.json", json.dumps(index).encode())
        # info/files, as conda-build writes it, unless the caller gives the file list: a
        # package with neither it nor paths.json links nothing (conda's rule)
        names = [n for n in dict(files)] + [ti.name for ti, _ in extra_members if not ti.isdir()]
        if file_list and "info/files" not in names and "info/paths.json" not in names:
            add("info/files", "".join(n + "\n" for n in names
                                      if not n.startswith("info/")).encode())
        for name, data in dict(files).items():
            add(name, data)
        for ti, data in extra_members:
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    return path



def walk_for(tops, needle, given=()):
    """Paths under the folders `tops` whose name or bytes hold the text `needle` (`given`: the
    user's own files, left out): where a secret went that must be nowhere."""
    hits = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                if p in given:
                    continue
                if needle in name:
                    hits.append(p)
                if name in filenames and not os.path.islink(p) and os.path.isfile(p):
                    with open(p, "rb") as f:
                        if needle.encode() in f.read():
                            hits.append(p)
    return hits


def two_package_channel(t):
    """A noarch channel of packages a-1.0-0 and b-1.0-0 (no dependencies, one file each)
    under t.tmp/chan, indexed; returns the channel options that use it alone."""
    chan = os.path.join(t.tmp, "chan")
    for n in ("a", "b"):
        build_tar_bz2(os.path.join(chan, "noarch", "%s-1.0-0.tar.bz2" % n),
                      {"name": n, "version": "1.0", "build": "0", "build_number": 0,
                       "subdir": "noarch", "depends": []}, files={"share/%s.txt" % n: b"x\n"})
    t.index(chan)
    return ["-c", t.url(chan), "--override-channels"]

def build_conda(path, index, pkg_members):
    """Write a .conda package (stored ZIP: metadata.json, info-*.tar.zst, pkg-*.tar.zst) with
    info/index.json from `index` and raw tarfile members [(TarInfo, bytes or None)] in pkg."""
    zstd = shutil.which("zstd")
    if not zstd:
        raise Skip("the zstd command is needed to write .conda packages")
    dist = os.path.basename(path)[:-len(".conda")]

    def tar_zst(members):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            for ti, data in members:
                tf.addfile(ti, io.BytesIO(data) if data is not None else None)
        return subprocess.run([zstd, "-q", "-c"], input=buf.getvalue(), capture_output=True,
                              check=True).stdout

    idx = json.dumps(index).encode()
    ti = tarfile.TarInfo("info/index.json")
    ti.size, ti.mode, ti.mtime = len(idx), 0o644, 1700000000
    # info/files, as conda-build writes it: a package with neither it nor paths.json links
    # nothing (conda's rule)
    names = "".join(m.name + "\n" for m, _ in pkg_members if not m.isdir()).encode()
    fi = tarfile.TarInfo("info/files")
    fi.size, fi.mode, fi.mtime = len(names), 0o644, 1700000000
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
        z.writestr("pkg-%s.tar.zst" % dist, tar_zst(pkg_members))
        z.writestr("info-%s.tar.zst" % dist, tar_zst([(ti, idx), (fi, names)]))
    return path


# --------------------------------------------------------------------------
# running menv

class Result:
    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def json(self):
        return json.loads(self.out)

    def try_json(self):
        """stdout parsed as JSON, or None."""
        try:
            return json.loads(self.out)
        except ValueError:
            return None

    def err_lines(self):
        return self.err.splitlines()

    def __str__(self):
        return ("$ menv %s\n[exit %s]\n--- stdout\n%s--- stderr\n%s" %
                (" ".join(self.args), self.rc, _tail(self.out), _tail(self.err)))


def _tail(s, n=3000):
    s = s if len(s) <= n else "...\n" + s[-n:]
    return s if s.endswith("\n") or not s else s + "\n"


class T:
    def __init__(self, menv, shared, name):
        self.menv = os.path.abspath(menv)
        self.shared = os.path.abspath(shared)
        self.corpus = os.path.join(self.shared, "corpus")
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="menv-cli-%s-" % name)
        self.home = os.path.join(self.tmp, "home")
        self.root = os.path.join(self.tmp, "root")
        self.rc = os.path.join(self.tmp, "menvrc")
        self.pkgs = os.path.join(self.root, "pkgs")
        self.envs = os.path.join(self.root, "envs")
        os.makedirs(self.home)
        write_text(self.rc, "")
        self.failures = []
        self.checks = 0
        self.skipped = []

    # ---- checks
    def check(self, cond, what, detail=None):
        self.checks += 1
        if cond:
            return True
        self.failures.append(what)
        print("FAIL: %s" % what)
        if detail is not None:
            print("      " + str(detail).replace("\n", "\n      "))
        return False

    def eq(self, actual, expected, what):
        return self.check(actual == expected, what,
                          "expected: %r\n  actual: %r" % (expected, actual))

    def note(self, msg):
        print(msg)

    def skip_part(self, why):
        """Part of the test cannot run here: it goes on, but the test is reported as skipped
        (exit 77) unless a check failed (exit 1)."""
        self.skipped.append(why)
        print("SKIP (part): %s" % why)

    # ---- environment
    def environ(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CONDA", "MAMBA", "MENV", "_CONDA", "XDG_"))
               and k not in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                             "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")}
        env.update(HOME=self.home, MENV_ROOT_PREFIX=self.root, MENVRC=self.rc,
                   XDG_CONFIG_HOME=os.path.join(self.home, ".config"), LC_ALL="C")
        if extra:
            env.update(extra)
        return env

    def menv_run(self, *args, env=None, cwd=None, timeout=120):
        args = [str(a) for a in args]
        try:
            p = subprocess.run([self.menv] + args, capture_output=True, env=self.environ(env),
                               cwd=cwd or self.tmp, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise Fatal("menv %s timed out after %ss" % (" ".join(args), timeout)) from e
        return Result(args, p.returncode, p.stdout.decode("utf-8", "replace"),
                      p.stderr.decode("utf-8", "replace"))

    def menv_ok(self, *args, **kw):
        r = self.menv_run(*args, **kw)
        if r.rc != 0:
            print(r)
            raise Fatal("menv %s failed (exit %d)" % (" ".join(r.args), r.rc))
        return r

    def set_rc(self, text):
        write_text(self.rc, text)

    # ---- channels
    def make_channel(self, name, layout, index=True):
        """layout: {subdir: [package file paths]} -> <tmp>/<name>, indexed with `menv index`."""
        chan = os.path.join(self.tmp, name)
        for subdir, files in layout.items():
            os.makedirs(os.path.join(chan, subdir), exist_ok=True)
            for f in files:
                shutil.copyfile(f, os.path.join(chan, subdir, os.path.basename(f)))
        if index:
            self.index(chan)
        return chan

    def index(self, chan):
        r = self.menv_run("index", chan)
        if r.rc != 0:
            print(r)
            raise Fatal("menv index %s failed" % chan)
        return r

    def write_repodata(self, chan, subdir, packages=None, conda_packages=None):
        """A hand-written channel: <chan>/<subdir>/repodata.json (records get
        subdir/depends defaults like conda-index writes them)."""
        def fill(recs):
            out = {}
            for fn, r in (recs or {}).items():
                r = dict(r)
                r.setdefault("subdir", subdir)
                r.setdefault("depends", [])
                r.setdefault("build_number", 0)
                out[fn] = r
            return out
        write_json(os.path.join(chan, subdir, "repodata.json"),
                   {"info": {"subdir": subdir}, "packages": fill(packages),
                    "packages.conda": fill(conda_packages), "repodata_version": 1})
        return chan

    @staticmethod
    def url(path):
        return "file://" + os.path.abspath(path)

    # ---- assertions about failures
    def one_line_error(self, r, what, needles=(), nonzero_only=False, one_line=True):
        """exit 1 (or non-zero), stderr exactly one line `menv: error: ...` containing every needle
        (case-insensitive). one_line=False: only the first line must be `menv: error: ...`."""
        ok = True
        if nonzero_only:
            ok &= self.check(r.rc != 0, "%s: non-zero exit" % what, r)
        else:
            ok &= self.check(r.rc == 1, "%s: exit status 1 (got %s)" % (what, r.rc), r)
        lines = r.err_lines()
        if one_line:
            ok &= self.check(len(lines) == 1 and lines[0].startswith("menv: error: "),
                             "%s: stderr is exactly one line 'menv: error: ...' (got %d lines)"
                             % (what, len(lines)), r.err)
        else:
            ok &= self.check(bool(lines) and lines[0].startswith("menv: error: "),
                             "%s: stderr starts with 'menv: error: '" % what, r.err)
        for n in needles:
            alts = n if isinstance(n, (tuple, list)) else (n,)
            ok &= self.check(any(a.lower() in r.err.lower() for a in alts),
                             "%s: error message names %s" % (what, " or ".join(map(repr, alts))),
                             r.err)
        return ok

    def signal_when(self, what, args, ready, sig, env=None):
        """Starts menv with `args`, sends it `sig` 0.2 s after the file `ready` appears (a
        child's mark); returns (exit status, seconds from the signal to the exit, stderr)."""
        p = subprocess.Popen([self.menv] + [str(a) for a in args], env=self.environ(env),
                             cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while not os.path.exists(ready) and p.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        if p.poll() is not None:
            out, err = p.communicate()
            self.check(False, "%s: menv still running when the child started" % what,
                       (out + err).decode(errors="replace"))
            return p.returncode, 0, err.decode(errors="replace")
        time.sleep(0.2)
        out, err, took, in_time = signal_and_wait(p, sig, 30)
        if not in_time:
            self.check(False, "%s: menv did not stop within 30 s of the signal" % what)
        self.note("%s: exit %s %.2f s after the signal" % (what, p.returncode, took))
        return p.returncode, took, err.decode(errors="replace")

    def no_prefix_left(self, prefix, what):
        parent, base = os.path.split(prefix.rstrip("/"))
        self.check(not os.path.lexists(prefix), "%s: no prefix %s left behind" % (what, prefix))
        stray = [n for n in (os.listdir(parent) if os.path.isdir(parent) else [])
                 if n.startswith("." + base + ".menv-tmp") or ".menv-tmp" in n]
        self.eq(stray, [], "%s: no staging directory next to the prefix" % what)

    def no_cache_entry(self, fn, what, verified_sha256=None):
        """Nothing of package file `fn` in the cache: no <fn>, <fn>.partial, <dist>/ or temp
        name built from the dist. With verified_sha256, a complete <fn> whose sha256 is that
        value may stay (downloaded and verified, but it could not be extracted)."""
        dist = fn[:-8] if fn.endswith(".tar.bz2") else fn[:-6]
        names = os.listdir(self.pkgs) if os.path.isdir(self.pkgs) else []
        left = [n for n in names
                if n == dist or n.startswith(dist + ".") or n.startswith("." + dist)]
        if verified_sha256 and fn in left:
            p = os.path.join(self.pkgs, fn)
            if os.path.isfile(p) and sha256_file(p) == verified_sha256:
                left.remove(fn)
        self.eq(left, [], "%s: nothing of %s left in the package cache" % (what, fn))

    # ---- local HTTP server
    def http_server(self, directory):
        return HttpServer(directory, os.path.join(self.tmp, "http.log"))

    def cleanup(self):
        if os.environ.get("MENV_TEST_KEEP"):
            print("kept %s" % self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)


class HttpServer:
    """python3 -m http.server on 127.0.0.1, a free port, request log from its stderr."""

    def __init__(self, directory, log):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.log = log
        self._logf = open(log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port),
             "--directory", directory],
            stdout=subprocess.DEVNULL, stderr=self._logf)
        deadline = time.time() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise Fatal("http.server did not start on port %d" % self.port)
                time.sleep(0.05)
        self.base = "http://127.0.0.1:%d" % self.port

    def requests(self, methods=None):
        """Request paths, e.g. ['/conda/conda-forge/linux-64/repodata.json', ...]; with
        `methods` (e.g. ("GET",)) only those requests."""
        self._logf.flush()
        paths = []
        with open(self.log, "rb") as f:
            for line in f.read().decode("utf-8", "replace").splitlines():
                # 127.0.0.1 - - [date] "GET /path HTTP/1.1" 200 -
                if '"' in line:
                    req = line.split('"')[1].split()
                    if len(req) >= 2 and (methods is None or req[0] in methods):
                        paths.append(req[1])
        return paths

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._logf.close()


class _SlowPackages(http.server.SimpleHTTPRequestHandler):
    """Package files (.tar.bz2) `chunk` bytes every `delay` seconds, everything else at once;
    a client that goes away ends the copy; no request log."""
    chunk, delay = 4096, 0.5

    def log_message(self, *a):
        pass

    def copyfile(self, src, dst):
        if not self.path.endswith(".tar.bz2"):
            return super().copyfile(src, dst)
        while True:
            b = src.read(self.chunk)
            if not b:
                break
            try:
                dst.write(b)
                dst.flush()
            except OSError:
                break
            time.sleep(self.delay)


def serve_slow(directory, chunk, delay):
    """An HTTP server of `directory` on 127.0.0.1 (a free port: srv.server_address[1]) in a
    daemon thread, sending package files slowly (_SlowPackages: `chunk` bytes every `delay`
    seconds), so that a download is seen running or killed half-way. srv.shutdown() stops it."""
    handler = type("SlowPackages", (_SlowPackages,), {"chunk": chunk, "delay": delay})
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0),
                                          functools.partial(handler, directory=directory))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


# --------------------------------------------------------------------------
# the solve caches' dry-run (test_attack6.py, test_attack7.py, test_attack8.py)

DRY_SPECS = ("dependent", "another_dependent", "buildstring")
DRY_COLD = ["another_dependent-2.0-0", "buildstring-1.0-versioned_2", "dependency-2.0-0",
            "dependent-2.0-0", "versioned-2.0-0"]


def dry_run(t, chan, load, what, env=None, timeout=30, specs=DRY_SPECS):
    """`create --dry-run --json` of specs from chan alone with MENV_SOLVER_LOAD=load (plus
    env): the sorted dist names it would link, or None (a failed check named `what`) when it
    hangs, fails or prints no LINK actions."""
    e = {"MENV_SOLVER_LOAD": load}
    e.update(env or {})
    try:
        r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-c", chan,
                       "--override-channels", "--dry-run", "--json", "-y", *specs, env=e,
                       timeout=timeout)
    except Fatal as ex:
        t.check(False, "%s: the solve returns" % what, ex)
        return None
    if not t.eq(r.rc, 0, "%s: the solve succeeds" % what):
        print(r)
        return None
    try:
        return sorted(x["dist_name"] for x in json.loads(r.out)["actions"]["LINK"])
    except (ValueError, KeyError, TypeError):
        t.check(False, "%s: JSON with LINK actions" % what, r)
        return None



# ---- the solve caches beside a repodata.json (solver/cachefile.c, solver/sparse.c)
M64 = (1 << 64) - 1
_K1 = 0x9E3779B97F4A7C15
_K2 = 0xC2B2AE3D27D4EB4F


def _mix(h):
    h ^= h >> 33
    h = (h * _K2) & M64
    h ^= h >> 29
    h = (h * _K1) & M64
    return h ^ (h >> 32)


def menvsum(data):
    """solver/cachefile.c's checksum: Fletcher's two sums over 64-bit words in 8 lanes."""
    n = len(data)
    padded = data + b"\0" * (64 - n % 64)
    words = struct.unpack("<%dQ" % (len(padded) // 8), padded)
    a = [0] * 8
    b = [0] * 8
    for at in range(0, len(words), 8):
        for j in range(8):
            a[j] = (a[j] + words[at + j]) & M64
            b[j] = (b[j] + a[j]) & M64
    h = _mix(n ^ _K1)
    for j in range(8):
        h = _mix(h ^ _mix((a[j] + _K2 * j) & M64) ^ _mix(b[j] ^ _K1))
    return h


def unseal(path):
    """A cache file's bytes before its trailer (a bytearray), None when its checksum fails."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[-16:-8] != b"menvsum1" or struct.unpack("<Q", data[-8:])[0] != menvsum(data[:-16]):
        return None
    return bytearray(data[:-16])


def seal(path, body):
    """body written to path with a valid trailer (what solver/cachefile.c writes)."""
    with open(path, "wb") as fh:
        fh.write(bytes(body) + b"menvsum1" + struct.pack("<Q", menvsum(bytes(body))))


def cache_files(t, pat):
    return sorted(glob.glob(os.path.join(t.pkgs, "cache", pat)))


def clear_cache(t):
    for f in glob.glob(os.path.join(t.pkgs, "cache", "*")):
        os.unlink(f)


def channel_commands(t, chan):
    """{label: argv} of every command that loads chan's repodata: the solve (create --dry-run,
    lock), and the queries (search by name, as text and JSON, and by glob; repoquery depends,
    with --tree; repoquery whoneeds on the channels)."""
    c = ("-c", chan, "--override-channels")
    envfile = os.path.join(t.tmp, "cache-env.yml")
    if not os.path.exists(envfile):
        write_text(envfile, "channels: []\ndependencies:\n%s" %
                   "".join("  - %s\n" % s for s in DRY_SPECS))
    return {
        "create --dry-run": ("create", "-p", os.path.join(t.tmp, "e"), *c, "--dry-run",
                             "--json", "-y", *DRY_SPECS),
        "lock": ("lock", "-f", envfile, "--lockfile", "-", "--platform", "linux-64", *c),
        "search": ("search", *c, "dependent"),
        "search --json": ("search", *c, "--json", "dependent"),
        "search glob": ("search", *c, "--json", "*depend*"),
        "repoquery depends": ("repoquery", "depends", *c, "--json", "dependent"),
        "repoquery depends --tree": ("repoquery", "depends", "--tree", *c, "dependent"),
        "repoquery whoneeds": ("repoquery", "whoneeds", *c, "--json", "dependency"),
    }


WHOLE_FILE = ("search glob", "repoquery whoneeds")


def cache_craft(t, chan, what, pat, change, load="sparse", drop=(), commands=None,
                cold=None, timeout=30):
    """The solve caches' check (issue 22: a cache that cannot be read back consistently counts
    as no cache): for each command (channel_commands' labels, default all), with
    MENV_SOLVER_LOAD=load, from an empty cache: the command run cold writes the caches it
    reads; the one file matching pat (else, when the command wrote none, the one a cold
    `create --dry-run` writes) is crafted: change(body) on its bytes, sealed again with a
    valid checksum, the files matching each pattern of drop removed (caches that would spare
    reading it). The command run again (warm) prints exactly what it printed cold (exit code
    and standard output, byte for byte), and a file it had written is written again.
    change(body) returns False when it cannot craft (a failed check). cold: a dict kept
    between calls (the cold outputs by command and load)."""
    cmds = channel_commands(t, chan)
    cold = {} if cold is None else cold
    env = {"MENV_SOLVER_LOAD": load}
    for label in commands or cmds:
        argv = cmds[label]
        clear_cache(t)
        r = t.menv_run(*argv, env=env, timeout=timeout)
        first = (r.rc, r.out)
        if (label, load) not in cold:
            cold[label, load] = first
            t.check(r.rc == 0, "%s: %s cold succeeds" % (what, label), r)
        t.eq(first, cold[label, load], "%s: %s cold, as before" % (what, label))
        files = cache_files(t, pat)
        # a query over every record reads the whole .solv: the index only opens the file
        reads = len(files) == 1 and not (pat.endswith(".names") and label in WHOLE_FILE)
        if not reads:
            clear_cache(t)
            t.menv_run(*cmds["create --dry-run"], env=env, timeout=timeout)
            files = cache_files(t, pat)
        if not t.eq(len(files), 1, "%s: %s: one %s" % (what, label, pat)):
            continue
        body = unseal(files[0])
        if not t.check(body is not None and change(body) is not False,
                       "%s: %s: crafted" % (what, label)):
            continue
        seal(files[0], body)
        for d in drop:
            for f in cache_files(t, d):
                os.unlink(f)
        with open(files[0], "rb") as fh:
            crafted = fh.read()
        try:
            r = t.menv_run(*argv, env=env, timeout=timeout)
        except Fatal as ex:
            t.check(False, "%s: %s warm returns" % (what, label), ex)
            continue
        if not t.eq((r.rc, r.out), cold[label, load],
                    "%s: %s warm prints the cold answer" % (what, label)):
            print(r)
        if reads and os.path.exists(files[0]):
            with open(files[0], "rb") as fh:
                t.check(fh.read() != crafted, "%s: %s writes %s again" %
                        (what, label, os.path.basename(files[0])))
    return cold

def main(body, name=None):
    if len(sys.argv) < 3:
        print("usage: %s MENV SHARED [CASE]" % sys.argv[0])
        sys.exit(2)
    menv, shared = sys.argv[1], sys.argv[2]
    if not os.access(menv, os.X_OK):
        print("menv binary not found: %s" % menv)
        sys.exit(2)
    if not os.path.isdir(os.path.join(shared, "corpus")):
        print("SKIP: no corpus under %s" % shared)
        sys.exit(SKIP_RC)
    t = T(menv, shared, name or os.path.splitext(os.path.basename(sys.argv[0]))[0])
    rc = 0
    try:
        body(t, *sys.argv[3:])
    except Skip as e:
        t.skipped.append(str(e))
        print("SKIP: %s" % e)
    except Fatal as e:
        t.failures.append(str(e))
        print("FATAL: %s" % e)
    finally:
        t.cleanup()
    # a failed check fails the test even when a Skip came after it; a skip (of the whole test
    # or of a part) is never reported as a pass
    if t.failures:
        print("\n%d of %d checks failed:" % (len(t.failures), t.checks))
        for f in t.failures:
            print("  - " + f)
        rc = 1
    elif t.skipped:
        print("\nskipped (%d checks passed before): %s" % (t.checks, "; ".join(t.skipped)))
        rc = SKIP_RC
    else:
        print("\nall %d checks passed" % t.checks)
    sys.exit(rc)

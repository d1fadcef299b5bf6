"""Helpers for the install-engine tests (python3 standard library only): building small conda
packages byte-exactly, channels of them, and snapshots of a prefix with hashes.

Every test is called as   python3 test_X.py MENV_BINARY SHARED_DIR   and reuses tests/cli's
menvtest (T, main, checks)."""

import hashlib
import io
import json
import os
import re
import stat
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import menvtest  # noqa: E402
from menvtest import Fatal, Skip, main  # noqa: F401,E402

PH = "/opt/anaconda1anaconda2anaconda3"


def pkg(out_dir, name, version, build="0", depends=(), files=None, noarch=None,
        entry_points=None, subdir=None, build_number=0, extra_index=None):
    """Writes <out_dir>/<subdir>/<name>-<version>-<build>.tar.bz2.
    files: {path: bytes | dict(data=bytes, mode=int, placeholder=str, file_mode='text'|'binary',
    symlink=target, no_link=True, extra={key: value} added to its paths.json entry,
    drop=(key, ...) left out of it)}. Returns the file path."""
    files = files or {}
    subdir = subdir or ("noarch" if noarch else "linux-64")
    index = {"name": name, "version": version, "build": build, "build_number": build_number,
             "depends": list(depends), "subdir": subdir, "license": "BSD",
             "timestamp": 1700000000000}
    if noarch:
        index["noarch"] = noarch
    if extra_index:
        index.update(extra_index)
    paths = []
    members = []
    for path, spec in sorted(files.items()):
        if not isinstance(spec, dict):
            spec = {"data": spec}
        ti = tarfile.TarInfo(path)
        ti.mtime = 1700000000
        if "symlink" in spec:
            ti.type = tarfile.SYMTYPE
            ti.linkname = spec["symlink"]
            members.append((ti, None))
            paths.append({"_path": path, "path_type": "softlink", "size_in_bytes": 0})
            continue
        data = spec["data"]
        if isinstance(data, str):
            data = data.encode()
        ti.size = len(data)
        ti.mode = spec.get("mode", 0o644)
        members.append((ti, data))
        e = {"_path": path, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(),
             "size_in_bytes": len(data)}
        if spec.get("placeholder"):
            e["prefix_placeholder"] = spec["placeholder"]
            e["file_mode"] = spec.get("file_mode", "text")
        if spec.get("no_link"):
            e["no_link"] = True
        e.update(spec.get("extra", {}))  # more keys of the paths.json entry, as given
        for k in spec.get("drop", ()):  # keys left out of it (sha256, size_in_bytes)
            e.pop(k, None)
        paths.append(e)
    info = {"info/index.json": json.dumps(index).encode(),
            "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}).encode()}
    if noarch == "python":
        link = {"noarch": {"type": "python"}, "package_metadata_version": 1}
        if entry_points:
            link["noarch"]["entry_points"] = list(entry_points)
        info["info/link.json"] = json.dumps(link).encode()
    path = os.path.join(out_dir, subdir, "%s-%s-%s.tar.bz2" % (name, version, build))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tarfile.open(path, "w:bz2") as tf:
        for n, data in info.items():
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
            tf.addfile(ti, io.BytesIO(data))
        for ti, data in members:
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    return path


def snapshot(top, skip=("conda-meta/.menv.lock",), skip_names=(), hardlinks=False):
    """relpath -> (kind, mode, sha256 or link target) for everything under top: two equal
    snapshots mean byte-identical trees (contents, modes, links). Left out: the relpaths in
    `skip` and every entry named as one of `skip_names`; with `hardlinks`, the key
    "<hardlinks>" holds the sorted groups of paths that share an inode."""
    snap, inodes = {}, {}
    if not os.path.lexists(top):
        return snap
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, top)
            if rel in skip or name in skip_names:
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                snap[rel] = ("l", 0, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                snap[rel] = ("d", stat.S_IMODE(st.st_mode), None)
            elif not stat.S_ISREG(st.st_mode):  # a FIFO, socket or device: never opened
                snap[rel] = ("o", stat.S_IFMT(st.st_mode), None)
            elif rel.endswith("conda-meta/created_at") and name == "created_at":  # a time
                with open(p, "rb") as f:
                    ok = re.fullmatch(rb"[0-9]+\.[0-9]+", f.read()) is not None
                snap[rel] = ("f", stat.S_IMODE(st.st_mode), "<a time>" if ok else "<not a time>")
            else:
                with open(p, "rb") as f:
                    snap[rel] = ("f", stat.S_IMODE(st.st_mode),
                                 hashlib.sha256(f.read()).hexdigest())
                if st.st_nlink > 1:
                    inodes.setdefault(st.st_ino, []).append(rel)
    if hardlinks:
        snap["<hardlinks>"] = sorted(sorted(v) for v in inodes.values() if len(v) > 1)
    return snap


def snapshot_undated(prefix):
    """The snapshot of a prefix with conda-meta/history's dates masked (a transaction at
    another second writes the same revision)."""
    snap = snapshot(prefix)
    h = os.path.join(prefix, "conda-meta", "history")
    if os.path.exists(h):
        text = re.sub(r"==> [0-9: -]+ <==", "==> DATE <==", open(h).read())
        snap["conda-meta/history"] = ("f", snap["conda-meta/history"][1],
                                      hashlib.sha256(text.encode()).hexdigest())
    return snap


def diff(a, b, limit=20):
    """A short description of how two snapshots differ (at most `limit` paths)."""
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            out.append("%s: %r -> %r" % (k, a.get(k), b.get(k)))
    return "\n".join(out[:limit]) + ("\n..." if len(out) > limit else "")


def payload(snap):
    """The files of a snapshot outside conda-meta/."""
    return {k: v for k, v in snap.items() if not k.startswith("conda-meta")}


def files_of(prefix):
    """Sorted paths of regular files and links outside conda-meta/."""
    return sorted(k for k, v in snapshot(prefix).items()
                  if v[0] != "d" and not k.startswith("conda-meta"))


def records(prefix):
    d = os.path.join(prefix, "conda-meta")
    out = {}
    for n in sorted(os.listdir(d)):
        if n.endswith(".json") and not n.startswith("."):
            with open(os.path.join(d, n)) as f:
                r = json.load(f)
            out[r["name"]] = r
    return out


def state(prefix):
    """What must be identical between runs of one change: the payload with hashes, modes and
    link targets, every record's full contents (paths, hashes, modes of its files, link data)
    and the history, with the timestamps of its block headers left out. A prefix that does
    not exist is "absent"."""
    if not os.path.lexists(prefix):
        return "absent"
    snap = snapshot(prefix)
    meta = {}
    for k in sorted(snap):
        if k.startswith("conda-meta/") and k.endswith(".json") and \
                not k.startswith("conda-meta/."):  # records, not menv's own state
            with open(os.path.join(prefix, k)) as f:
                meta[k] = json.load(f)
    hist = []
    h = os.path.join(prefix, "conda-meta", "history")
    if os.path.exists(h):
        with open(h) as f:
            hist = ["==> <==" if line.startswith("==> ") else line.rstrip("\n") for line in f]
    payload_ = {k: v for k, v in snap.items() if not k.startswith("conda-meta")}
    return payload_, meta, hist


def envs_keeper(t, reg, where):
    """save() copies t.envs and the registry file `reg` (where it exists) into the folder
    `where`; restore() puts both back as they were saved (a registry absent then is removed)."""
    import shutil
    import subprocess

    def save():
        if os.path.exists(where):
            shutil.rmtree(where)
        os.makedirs(where)
        subprocess.run(["cp", "-a", t.envs, os.path.join(where, "envs")], check=True)
        if os.path.exists(reg):
            shutil.copy(reg, os.path.join(where, "reg"))

    def restore():
        shutil.rmtree(t.envs)
        subprocess.run(["cp", "-a", os.path.join(where, "envs"), t.envs], check=True)
        if os.path.exists(os.path.join(where, "reg")):
            shutil.copy(os.path.join(where, "reg"), reg)
        elif os.path.exists(reg):
            os.unlink(reg)
    return save, restore


def verify_cache(t, what="the package cache"):
    """Every extracted package in the cache still matches its paths.json hashes, and every
    folder of the cache that is not menv's own (`cache/`, a `.NAME.tmp-XXXXXX` temporary that
    the next fetch removes) is a whole extracted package."""
    bad = []
    for d in sorted(os.listdir(t.pkgs)):
        top = os.path.join(t.pkgs, d)
        if not os.path.isdir(top) or d == "cache" or re.fullmatch(r"\..*\.tmp-......", d):
            continue
        pj = os.path.join(top, "info", "paths.json")
        if not os.path.exists(pj) or not os.path.exists(os.path.join(top, "info",
                                                                     "index.json")):
            bad.append("%s: not a whole extracted package" % d)
            continue
        with open(pj) as f:
            for e in json.load(f)["paths"]:
                if "sha256" not in e:
                    continue
                try:
                    with open(os.path.join(top, e["_path"]), "rb") as f2:
                        ok = hashlib.sha256(f2.read()).hexdigest() == e["sha256"]
                except OSError:
                    ok = False
                if not ok:
                    bad.append("%s/%s" % (d, e["_path"]))
    t.eq(bad, [], "%s verifies against paths.json" % what)


def kill_series(t, what, cmd, restore, observe, before, after, next_cmds, env=None,
                limit=300, prefix=None):
    """SIGKILL `cmd` at its crash points N = 1, 2, ... (MENV_TEST_CRASH_AFTER=N) until a run
    completes. Before each run restore() puts the starting state back; after each kill the
    commands `next_cmds` run (each must exit 0; the first one, when `prefix` is gone, must
    say in one line that it is not found) and observe() must then be `before` or `after`.
    When the first next command says it rolled back or finished an interrupted change,
    observe() must agree (before, after). Returns [(N, 'b' | 'a')] for the kills."""
    seen = []
    for n in range(1, limit):
        restore()
        r = t.menv_run(*cmd, env=dict(env or {}, MENV_TEST_CRASH_AFTER=str(n)))
        if r.rc == 0:
            t.eq(observe(), after, "%s: the run not killed (N=%d) ends in the after state"
                 % (what, n))
            break
        if not t.check(r.rc == -9, "%s: killed at point %d (exit %s)" % (what, n, r.rc), r):
            break
        nxt = t.menv_run(*next_cmds[0])
        if prefix and not os.path.lexists(prefix):
            last = nxt.err.strip().splitlines()[-1:]
            t.check(nxt.rc != 0 and last and last[0].startswith("menv: error: ") and
                    "not found" in last[0], "%s: point %d: the next command (%s) finds no "
                    "environment" % (what, n, " ".join(next_cmds[0][:2])), nxt)
        else:
            t.check(nxt.rc == 0, "%s: point %d: the next command (%s) succeeds"
                    % (what, n, " ".join(next_cmds[0][:2])), nxt)
        for c in next_cmds[1:]:
            t.menv_ok(*c)
        got = observe()
        which = "b" if got == before else "a" if got == after else None
        if which is None:
            t.check(False, "%s: after a kill at point %d: the before or the after state"
                    % (what, n), "vs before: %s\nvs after: %s\n%s"
                    % (_why(got, before), _why(got, after), nxt))
            continue
        seen.append((n, which))
        said = [l for l in nxt.err.splitlines() if "interrupted" in l]
        if said and ("rolled back" in said[0] or "removed the unfinished" in said[0]):
            t.eq(which, "b", "%s: point %d: rolled back, and says so" % (what, n))
        elif said and "finished an interrupted" in said[0]:
            t.eq(which, "a", "%s: point %d: finished, and says so" % (what, n))
    else:
        t.check(False, "%s: a run completes within %d crash points" % (what, limit))
    t.note("%s: %d crash points: %s" % (what, len(seen), " ".join("%d:%s" % s for s in seen)))
    return seen


def _why(got, want):
    """How an observed state differs from `want`: per part of a tuple, snapshots diffed."""
    if isinstance(got, tuple) and isinstance(want, tuple) and len(got) == len(want):
        return "; ".join("part %d: %s" % (i, _why(g, w)) for i, (g, w) in enumerate(zip(got, want))
                         if g != w) or "equal"
    if isinstance(got, dict) and isinstance(want, dict):
        return "\n" + diff(want, got, 10)
    s = "%r != %r" % (got, want)
    return s if len(s) <= 600 else s[:600] + "..."

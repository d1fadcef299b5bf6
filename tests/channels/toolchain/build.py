#!/usr/bin/env python3
"""build.py [--key] [--set NAME] OUTDIR MENV: the toolchain channel's builder (called by
../build-toolchain). NAME is a set of recipes.SETS: `toolchain` (the default: CUDA 11.8,
g++ 11, Python 3.9 and Jupyter) or `torch` (bookworm's Python 3.11 and PyTorch 1.13.1 CPU).

1. resolve: the set's pinned Debian packages (recipes.SETS) to exact versions, through a
   private apt configuration in the cache (lists, sources file and apt cache of its own; the sources'
   URIs are the machine's own, from /etc/apt/sources.list.d/*.sources or sources.list);
2. download: `apt-get download` of what the cache lacks;
3. extract: each .deb with dpkg-deb (only a few members of nvidia-cuda-dev, cached);
4. stage: per conda package, Debian paths mapped into a prefix layout; symlinks re-pointed
   inside it; ELF files get $ORIGIN-relative rpaths (patchelf); /usr paths in the few text
   files that need them become conda's placeholder (text mode, recorded in has_prefix);
   noarch packages get copies of links that leave site-packages; packages of the torch set
   get depends from their Debian packages' (debian_depends);
5. package: info/{index,paths,about,link}.json, has_prefix, files; a CEP-35 .conda (stored
   ZIP: metadata.json, pkg-<dist>.tar.zst, info-<dist>.tar.zst), named by its content (the
   build string's hash covers every file and the metadata: another content, another name);
6. `menv index OUTDIR`.
recipes.WHEELS of the set become wheels in OUTDIR/pypi/simple (a PEP 503 index of static
files: ninja and pybind11 for the torch set's `pip:` entries).
Built packages are cached under a key of every input (this code, the recipes, the exact
Debian versions, the zstd level, and the versions of python, dpkg-deb, tar, patchelf and zstd:
cache_key), so a second run copies them and only re-indexes; the default set's in
$CACHE/channels/, another set's in $CACHE/channels-SET/. --key prints the key a build would
use (the Debian versions from the cache, resolved when it lacks them) and builds nothing.

Environment: MENV_TOOLCHAIN_CACHE (default ~/.cache/menv-toolchain), MENV_TOOLCHAIN_MIRROR
(a Debian archive URI, default: the machine's), MENV_TOOLCHAIN_JOBS (default: CPU count),
MENV_TOOLCHAIN_ZSTD_LEVEL (default 3), MENV_TOOLCHAIN_BUILT_DIR (build the packages there
instead of in the cache's channels folder: a rebuild from the same Debian packages, which the
toolchain.torch_reproducible test compares byte for byte with the cached one).
"""

import fcntl
import fnmatch
import glob
import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import recipes  # noqa: E402

PLACEHOLDER = recipes.PLACEHOLDER
MTIME = 1700000000                     # fixed mtime of every archive member
TIMESTAMP_MS = 1700000000000           # index.json timestamp
SUBDIR = "linux-64"
GLIBC_LIBS = re.compile(r"^(libc|libm|libdl|libpthread|librt|libutil|libresolv|libcrypt|"
                        r"ld-linux-x86-64)\.so")
FORMAT_VERSION = 7                     # bump to invalidate every cached package


def log(msg):
    print("build-toolchain: %s" % msg, file=sys.stderr, flush=True)


def die(msg):
    log("error: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    kw.setdefault("check", True)
    return subprocess.run(cmd, **kw)


class Timer:
    def __init__(self):
        self.t0 = time.monotonic()
        self.phases = []

    def phase(self, name, t_start):
        self.phases.append((name, time.monotonic() - t_start))

    def summary(self, extra=()):
        total = time.monotonic() - self.t0
        lines = ["timing summary:"]
        for name, dt in self.phases:
            lines.append("  %-28s %7.1f s" % (name, dt))
        for line in extra:
            lines.append("  " + line)
        lines.append("  %-28s %7.1f s" % ("total", total))
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# 1-2. apt: resolve and download

def mirror_uri():
    uri = os.environ.get("MENV_TOOLCHAIN_MIRROR")
    if uri:
        return uri
    for f in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for line in open(f, encoding="utf-8", errors="replace"):
            parts = line.split()
            if len(parts) >= 2 and parts[0].lower() == "uris:":
                for u in parts[1:]:
                    if "security" not in u and "debian" in u:
                        return u
    try:
        for line in open("/etc/apt/sources.list", encoding="utf-8", errors="replace"):
            parts = line.split()
            if parts and parts[0] == "deb" and "security" not in line:
                for p in parts[1:]:
                    if re.match(r"^[a-z]+://", p):
                        return p
    except OSError:
        pass
    die("no Debian archive found in the machine's apt sources (set MENV_TOOLCHAIN_MIRROR)")


class Apt:
    def __init__(self, cache):
        self.dir = os.path.join(cache, "apt")
        self.sources = os.path.join(self.dir, "toolchain.sources")
        for d in ("lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        self.opts = ["-o", "Dir::State::Lists=" + os.path.join(self.dir, "lists"),
                     "-o", "Dir::Etc::SourceList=" + self.sources,
                     "-o", "Dir::Etc::SourceParts=/nonexistent",
                     "-o", "Dir::Cache=" + os.path.join(self.dir, "cache"),
                     "-o", "Debug::NoLocking=1", "-o", "APT::Get::List-Cleanup=0",
                     "-o", "Acquire::Retries=3"]
        if os.geteuid() == 0:
            self.opts += ["-o", "APT::Sandbox::User=root"]

    def update(self):
        uri = mirror_uri()
        key = "/usr/share/keyrings/debian-archive-keyring.gpg"
        with open(self.sources, "w") as f:
            f.write("Types: deb\nURIs: %s\nSuites: bookworm\nComponents: main non-free\n"
                    "Signed-By: %s\n\n" % (uri, key))
            f.write("Types: deb\nURIs: %s\nSuites: bullseye\nComponents: main\n"
                    "Signed-By: %s\n" % (uri, key))
        run(["apt-get"] + self.opts + ["-qq", "update"])

    def madison(self, names):
        p = run(["apt-cache"] + self.opts + ["madison"] + names, capture_output=True, text=True)
        out = {}
        for line in p.stdout.splitlines():
            cols = [c.strip() for c in line.split("|")]
            if len(cols) >= 3:
                m = re.search(r" ([a-z-]+)/[a-z-]+ ", " " + cols[2] + " ")
                out.setdefault(cols[0], []).append((cols[1], m.group(1) if m else ""))
        return out

    def download(self, pkgvers, dest):
        run(["apt-get"] + self.opts + ["-qq", "download"] + ["%s=%s" % pv for pv in pkgvers],
            cwd=dest)


def upstream(debver):
    v = debver.split(":", 1)[-1]
    return v.rsplit("-", 1)[0] if "-" in v else v


def deb_filename(pkg, ver, debs_dir):
    q = ver.replace(":", "%3a")
    hits = glob.glob(os.path.join(debs_dir, "%s_%s_*.deb" % (glob.escape(pkg), glob.escape(q))))
    return hits[0] if hits else None


def resolve_and_download(cache, timer, spec):
    """{deb name: path of the .deb} for `spec` (a recipes.SETS list of pinned Debian
    packages), using the cache when it suffices."""
    debs_dir = os.path.join(cache, "debs")
    os.makedirs(debs_dir, exist_ok=True)
    spec_key = hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:16]
    resolved_file = os.path.join(cache, "resolved-%s.json" % spec_key)
    resolved = None
    if os.path.exists(resolved_file):
        resolved = json.load(open(resolved_file))
        if any(deb_filename(p, v, debs_dir) is None for p, v in resolved.items()):
            resolved = None
    if resolved is None:
        t = time.monotonic()
        apt = Apt(cache)
        log("reading Debian package indexes (bookworm main non-free, bullseye main)")
        apt.update()
        avail = apt.madison(sorted({d[0] for d in spec}))
        resolved = {}
        for pkg, suite, up in spec:
            cands = [v for v, s in avail.get(pkg, []) if s == suite
                     and re.match(re.escape(up) + r"($|[^0-9])", upstream(v))]
            if not cands:
                die("%s %s not found in %s (have: %s)" % (pkg, up, suite, avail.get(pkg)))
            resolved[pkg] = cands[0]          # madison lists the newest first
        timer.phase("resolve (apt update)", t)
        missing = [(p, v) for p, v in sorted(resolved.items())
                   if deb_filename(p, v, debs_dir) is None]
        if missing:
            t = time.monotonic()
            log("downloading %d Debian packages" % len(missing))
            apt.download(missing, debs_dir)
            timer.phase("download (%d debs)" % len(missing), t)
        json.dump(resolved, open(resolved_file, "w"), indent=1, sort_keys=True)
    paths = {}
    for p, v in resolved.items():
        f = deb_filename(p, v, debs_dir)
        if f is None:
            die("%s=%s was not downloaded" % (p, v))
        paths[p] = f
    return resolved, paths


# ---------------------------------------------------------------------------------------------
# 3. extract

def extract(pkg, deb, cache, work):
    """Extracts one .deb; returns its root. Partial extractions are cached by file name."""
    if pkg in recipes.PARTIAL:
        members = recipes.PARTIAL[pkg]
        key = hashlib.sha256((os.path.basename(deb) + json.dumps(members)).encode()).hexdigest()[:16]
        root = os.path.join(cache, "extract", "%s-%s" % (pkg, key))
        if os.path.exists(root + ".done"):
            return root
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", root, "--wildcards"] + members, stdin=dpkg.stdout)
        dpkg.stdout.close()
        if dpkg.wait() != 0:
            die("dpkg-deb failed on %s" % deb)
        open(root + ".done", "w").close()
        return root
    root = os.path.join(work, "x", pkg)
    os.makedirs(root)
    run(["dpkg-deb", "-x", deb, root])
    return root


# ---------------------------------------------------------------------------------------------
# 4. stage

def match(path, patterns):
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def map_path(debpath, py="3.9"):
    """Debian path (no leading slash) -> prefix-relative path, or None; `py`: the Python
    version whose site-packages Debian's dist-packages become."""
    for src, dst in recipes.MAP_RULES:
        dst = dst.replace("python3.9", "python" + py)
        if debpath == src.rstrip("/") and not src.endswith("/"):
            return dst
        if debpath.startswith(src):
            return dst + debpath[len(src):]
    return None


def walk_files(root):
    """Debian paths (relative, no leading slash) of everything but directories."""
    out = []
    for dp, dns, fns in os.walk(root):
        for n in fns + [d for d in dns if os.path.islink(os.path.join(dp, d))]:
            out.append(os.path.relpath(os.path.join(dp, n), root))
    return sorted(out)


def is_elf(path):
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" and head[16] in (2, 3)   # ET_EXEC, ET_DYN


def elf_needed(path):
    """DT_NEEDED of a 64-bit little-endian ELF, read from its program headers (what
    `patchelf --print-needed` prints, without a process per file or reading all of it);
    other ELF classes go to patchelf."""
    with open(path, "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[4] != 2 or eh[5] != 1:
            p = subprocess.run(["patchelf", "--print-needed", path], capture_output=True,
                               text=True)
            return p.stdout.split() if p.returncode == 0 else []
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        loads, dyn = [], None
        for i in range(phnum):
            typ, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
            if typ == 1:
                loads.append((vaddr, filesz, off))
            elif typ == 2:
                dyn = (off, filesz)
        if dyn is None:
            return []
        f.seek(dyn[0])
        data = f.read(dyn[1])
        needed, strtab = [], None
        for i in range(0, len(data) - 15, 16):
            tag, val = struct.unpack_from("<qQ", data, i)
            if tag == 0:
                break
            if tag == 1:
                needed.append(val)
            elif tag == 5:
                strtab = val
        if not needed:
            return []
        base = next((strtab - va + off for va, sz, off in loads if va <= strtab < va + sz), None)
        if base is None:
            die("%s: DT_STRTAB outside the loaded segments" % path)
        out = []
        for val in needed:
            f.seek(base + val)
            name = b""
            while b"\0" not in name:
                chunk = f.read(256)
                if not chunk:
                    break
                name += chunk
            out.append(name.split(b"\0", 1)[0].decode())
        return out


def own_copy(p):
    """Before a staged file is written in place: one hard-linked from an extracted .deb
    (stage() links what it takes) gets a copy of its own, so the extraction (cached for a
    partial one) is never changed."""
    if os.stat(p).st_nlink > 1:
        tmp = p + ".menv-own"
        shutil.copy2(p, tmp)
        os.replace(tmp, p)


class Staged:
    def __init__(self, recipe, root):
        self.r = recipe
        self.root = root               # the staging prefix
        self.depends = list(recipe["depends"])
        self.text_prefix = set()       # prefix-relative files holding the placeholder
        self.links = {}                # prefix-relative symlink -> target (for the check)


def stage(recipe, roots, work):
    """Copies the recipe's files from the extracted debs into a staging prefix."""
    r = recipe
    root = os.path.join(work, "stage", r["name"])
    os.makedirs(root)
    st = Staged(r, root)
    drop = recipes.DROP_ALWAYS + r["drop"]
    for deb in r["debs"]:
        droot = roots[deb]
        for dp in walk_files(droot):
            if not match(dp, r["take"]) or match(dp, drop):
                continue
            rel = map_path(dp, r["py"])
            if rel is None:
                continue
            src = os.path.join(droot, dp)
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            if os.path.islink(src):
                target = os.readlink(src)
                abs_t = (target.lstrip("/") if target.startswith("/")
                         else os.path.normpath(os.path.join(os.path.dirname(dp), target)))
                mapped = map_path(abs_t, r["py"])
                if mapped is None:
                    log("  %s: dropping link %s -> %s (outside the prefix)" % (r["name"], rel, target))
                    continue
                new = os.path.relpath(mapped, os.path.dirname(rel))
                os.symlink(new, dst)
                st.links[rel] = new
            else:
                # a hard link: files are written in place only after own_copy()
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copy2(src, dst)
    for item in r["extra"]:
        kind = item[0]
        if kind == "link":
            _, rel, target = item
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            os.symlink(target, dst)
            st.links[rel] = target
        elif kind == "file":
            _, rel, text, mode = item
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            with open(dst, "w") as f:
                f.write(text)
            os.chmod(dst, mode)
        elif kind == "patch":
            _, rel, old, new = item
            p = os.path.join(root, rel)
            s = open(p, encoding="utf-8").read()
            if old not in s:
                die("%s: patch of %s does not apply" % (r["name"], rel))
            own_copy(p)
            with open(p, "w", encoding="utf-8") as f:
                f.write(s.replace(old, new))
    # text fixes: Debian's /usr paths -> the placeholder
    for rel, fixes in r["text_fixes"].items():
        p = os.path.join(root, rel)
        if not os.path.isfile(p):
            die("%s: %s to fix is missing" % (r["name"], rel))
        s = open(p, encoding="utf-8").read()
        for old, new in fixes:
            s = s.replace(old, new)
        own_copy(p)
        with open(p, "w", encoding="utf-8") as f:
            f.write(s)
    # scripts with a Debian python shebang (in bin/, or linked from there like pdb3.9)
    bindir = os.path.join(root, "bin")
    scripts = set()
    for n in sorted(os.listdir(bindir)) if os.path.isdir(bindir) else []:
        p = os.path.realpath(os.path.join(bindir, n))
        if p.startswith(root + "/") and os.path.isfile(p):
            scripts.add(p)
    for p in sorted(scripts):
        with open(p, "rb") as f:
            data = f.read()
        m = re.match(rb"#! ?/usr/bin/(python3(\.\d+)?)\b", data)
        if m:
            data = (b"#!" + PLACEHOLDER.encode() + b"/bin/python" + r["py"].encode()
                    + data[m.end():])
            own_copy(p)
            with open(p, "wb") as f:
                f.write(data)
    relocate_elves(st)
    return st


def relocate_elves(st):
    """$ORIGIN-relative rpaths on every ELF that needs a library beyond glibc."""
    root = st.root
    for dp, _, fns in os.walk(root):
        for n in fns:
            p = os.path.join(dp, n)
            if os.path.islink(p) or not is_elf(p):
                continue
            needed = [x for x in elf_needed(p) if not GLIBC_LIBS.match(x)]
            rel = os.path.relpath(p, root)
            interp = rel == "bin/python" + st.r["py"]
            if not needed and not interp:
                continue
            up = os.path.relpath(os.path.join(root, "lib"), dp)
            rpath = "$ORIGIN" if up == "." else "$ORIGIN/" + up
            mode = os.stat(p).st_mode
            cmd = ["patchelf", "--set-rpath", rpath]
            if interp:
                # DT_RPATH (not RUNPATH): also applies to what extension modules load
                cmd.append("--force-rpath")
            # written beside it, then moved over it: the staged file may be a hard link
            tmp = p + ".menv-rpath"
            run(cmd + ["--output", tmp, p])
            os.chmod(tmp, stat.S_IMODE(mode))
            os.replace(tmp, p)


# ---------------------------------------------------------------------------------------------
# 5. package

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def package_files(root):
    out = []
    for dp, dns, fns in os.walk(root):
        for n in fns + [d for d in dns if os.path.islink(os.path.join(dp, d))]:
            out.append(os.path.relpath(os.path.join(dp, n), root))
    return sorted(out)


def build_string(r, content):
    """The recipe's fixed build, or PREFIX<hash>_0SUFFIX with <hash> the first 7 hex digits
    of the sha1 of `content` (every file's path, type, sha256 or link target, and the
    metadata written to info/ but the build itself), as conda-build's h<hash> is: a package
    whose bytes change in any way gets a new file name, never a second artifact under an
    old one."""
    if r["build"]:
        return r["build"]
    h = hashlib.sha1(json.dumps(content, sort_keys=True).encode()).hexdigest()[:7]
    if r["noarch"] == "python":
        return "pyh%s_0" % h
    return "%s%s_0%s" % (r["build_prefix"], h, r["build_suffix"])


def tar_zst(out, root, names, level):
    """A tar of root/<names> (sorted, owner 0, fixed mtime), compressed with the zstd CLI."""
    with open(out, "wb") as fo:
        z = subprocess.Popen(["zstd", "-q", "-%d" % level, "-T0", "-c"], stdin=subprocess.PIPE,
                             stdout=fo)
        with tarfile.open(fileobj=z.stdin, mode="w|", format=tarfile.PAX_FORMAT) as tf:
            for n in names:
                p = os.path.join(root, n)
                st = os.lstat(p)
                ti = tarfile.TarInfo(n)
                ti.mtime = MTIME
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                if stat.S_ISLNK(st.st_mode):
                    ti.type = tarfile.SYMTYPE
                    ti.linkname = os.readlink(p)
                    ti.mode = 0o777
                    tf.addfile(ti)
                else:
                    ti.size = st.st_size
                    ti.mode = 0o755 if st.st_mode & 0o111 else 0o644
                    with open(p, "rb") as f:
                        tf.addfile(ti, f)
        z.stdin.close()
        if z.wait() != 0:
            die("zstd failed for %s" % out)


def inline_links(st):
    """noarch: python packages move site-packages/ up to the top, so a link from inside it to
    elsewhere in the prefix (Debian's notebook/static/components -> /usr/share/javascript)
    would point out of the package: such links become copies of what they point to (as the
    upstream wheels bundle them), and the recipe's `vendor` folders they came from are
    dropped."""
    root = st.root
    sp = os.path.join(root, "lib/python%s/site-packages" % st.r["py"])
    for dp, dns, fns in os.walk(sp):
        for n in sorted(fns + dns):
            p = os.path.join(dp, n)
            if not os.path.islink(p):
                continue
            real = os.path.realpath(p)
            if real.startswith(sp + "/"):
                continue
            if not real.startswith(root + "/") or not os.path.exists(real):
                die("%s: link %s -> %s leaves the package" % (st.r["name"],
                                                              os.path.relpath(p, root),
                                                              os.readlink(p)))
            os.unlink(p)
            if os.path.isdir(real):
                shutil.copytree(real, p, symlinks=False, ignore_dangling_symlinks=True)
            else:
                shutil.copy2(real, p)
            st.links.pop(os.path.relpath(p, root), None)
    for d in st.r["vendor"]:
        shutil.rmtree(os.path.join(root, d), ignore_errors=True)
        parent = os.path.dirname(os.path.join(root, d))
        while parent != root and os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)
            parent = os.path.dirname(parent)


def make_conda(st, resolved, outdir, work, level):
    r = st.r
    root = st.root
    noarch = r["noarch"] == "python"
    if noarch:
        inline_links(st)
        # noarch python layout (CEP-20): site-packages/ at the top, menv maps it back
        sp = os.path.join(root, "lib/python%s/site-packages" % r["py"])
        if os.path.isdir(sp):
            shutil.move(sp, os.path.join(root, "site-packages"))
        for d in ("lib/python" + r["py"], "lib"):
            p = os.path.join(root, d)
            if os.path.isdir(p) and not os.listdir(p):
                os.rmdir(p)
    names = package_files(root)
    if not names and r["debs"] and not r["generic"]:
        die("%s: no files" % r["name"])            # metapackages have no Debian packages
    paths = []
    has_prefix = []
    for n in names:
        p = os.path.join(root, n)
        if os.path.islink(p):
            paths.append({"_path": n, "path_type": "softlink", "size_in_bytes": 0})
            continue
        with open(p, "rb") as f:
            data = f.read()
        e = {"_path": n, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(),
             "size_in_bytes": len(data)}
        if PLACEHOLDER.encode() in data:
            if is_elf(p) or b"\0" in data:
                die("%s: binary file %s holds the placeholder" % (r["name"], n))
            e["prefix_placeholder"] = PLACEHOLDER
            e["file_mode"] = "text"
            has_prefix.append("%s text %s" % (PLACEHOLDER, n))
        paths.append(e)
    depends = list(st.depends)
    index = {"name": r["name"], "version": r["version"], "build_number": 0,
             "depends": depends, "constrains": r["constrains"], "license": r["license"],
             "subdir": "noarch" if noarch else SUBDIR, "timestamp": TIMESTAMP_MS}
    if noarch:
        index["noarch"] = "python"
    else:
        index.update(arch="x86_64", platform="linux")
    debs = ["%s=%s" % (d, resolved[d]) for d in r["debs"]]
    about = {"summary": r["summary"], "license": r["license"],
             "description": "Repackaged by menv's tests/channels/build-toolchain from Debian's "
                            "binary packages: " + (", ".join(debs) or "(no files)"),
             "extra": {"debian_packages": debs}}
    links = {n: os.readlink(os.path.join(root, n)) for n in names
             if os.path.islink(os.path.join(root, n))}
    build = build_string(r, [index, paths, links, has_prefix, about, r["entry_points"]])
    index["build"] = build
    dist = "%s-%s-%s" % (r["name"], r["version"], build)
    info = os.path.join(work, "info", r["name"])
    os.makedirs(os.path.join(info, "info"))

    def w(name, obj):
        with open(os.path.join(info, "info", name), "w") as f:
            if isinstance(obj, str):
                f.write(obj)
            else:
                json.dump(obj, f, indent=2, sort_keys=True)
                f.write("\n")
    w("index.json", index)
    w("paths.json", {"paths": paths, "paths_version": 1})
    w("about.json", about)
    w("files", "".join(n + "\n" for n in names))
    if has_prefix:
        w("has_prefix", "".join(x + "\n" for x in has_prefix))
    if noarch:
        w("link.json", {"noarch": {"type": "python", "entry_points": r["entry_points"]},
                        "package_metadata_version": 1})
    sub = os.path.join(outdir, index["subdir"])
    os.makedirs(sub, exist_ok=True)
    tmp = os.path.join(work, "conda", dist)
    os.makedirs(tmp)
    pkg_zst = os.path.join(tmp, "pkg-%s.tar.zst" % dist)
    info_zst = os.path.join(tmp, "info-%s.tar.zst" % dist)
    tar_zst(pkg_zst, root, names, level)
    tar_zst(info_zst, info, package_files(info), level)
    fn = os.path.join(sub, dist + ".conda")
    with zipfile.ZipFile(fn + ".part", "w", compression=zipfile.ZIP_STORED) as zf:
        zi = zipfile.ZipInfo("metadata.json", date_time=(2023, 11, 14, 22, 13, 20))
        zf.writestr(zi, json.dumps({"conda_pkg_format_version": 2}))
        for part in (pkg_zst, info_zst):
            # fixed date and mode, whatever the clock and time zone: same inputs, same bytes
            zi = zipfile.ZipInfo(os.path.basename(part), date_time=(2023, 11, 14, 22, 13, 20))
            zi.compress_type = zipfile.ZIP_STORED
            zi.external_attr = 0o644 << 16
            zi.file_size = os.path.getsize(part)
            with open(part, "rb") as src, zf.open(zi, "w") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(fn + ".part", fn)
    shutil.rmtree(tmp)
    return fn, sum(os.path.getsize(os.path.join(root, n)) for n in names
                   if not os.path.islink(os.path.join(root, n)))


# ---------------------------------------------------------------------------------------------
# 5b. wheels (recipes.WHEELS): a PEP 503 index of static files in OUTDIR/pypi/simple

def wheel_record_hash(data):
    import base64
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheels(specs, roots, dest):
    """Each recipes.WHEELS entry as NAME-VERSION-TAG.whl in dest/simple/NAME/ (stored ZIP,
    sorted members, fixed dates, RECORD written here), with PEP 503 index.html pages whose
    links carry the wheel's #sha256=. ELF files get rpath $ORIGIN/../lib (the environment's
    lib/ once pip puts them in bin/)."""
    simple = os.path.join(dest, "simple")
    for w in specs:
        members = {}
        for deb in w["debs"]:
            droot = roots[deb]
            for dp in walk_files(droot):
                if "/__pycache__/" in dp:
                    continue
                for src, dst in w["files"]:
                    if dp == src or (src.endswith("/") and dp.startswith(src)):
                        rel = dst + dp[len(src):] if src.endswith("/") else dst
                        if rel.endswith(".dist-info/RECORD"):
                            continue
                        members[rel] = os.path.join(droot, dp)
        for rel, text in w["text"].items():
            members[rel] = text.encode()
        di = "%s-%s.dist-info" % (w["name"], w["version"])
        members[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: menv build-toolchain\n"
                                  "Root-Is-Purelib: %s\nTag: %s\n"
                                  % ("true" if w["tag"].endswith("-any") else "false",
                                     w["tag"])).encode()
        whl_dir = os.path.join(simple, w["name"])
        os.makedirs(whl_dir, exist_ok=True)
        fn = "%s-%s-%s.whl" % (w["name"], w["version"], w["tag"])
        tmp = os.path.join(dest, "tmp")
        os.makedirs(tmp, exist_ok=True)
        record = []
        with zipfile.ZipFile(os.path.join(whl_dir, fn), "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for rel in sorted(members):
                src = members[rel]
                mode = 0o644
                if isinstance(src, str):
                    if os.path.islink(src):
                        src = os.path.realpath(src)
                    mode = 0o755 if os.stat(src).st_mode & 0o111 else 0o644
                    if is_elf(src):
                        cp = os.path.join(tmp, os.path.basename(src))
                        shutil.copy(src, cp)
                        os.chmod(cp, 0o755)
                        run(["patchelf", "--set-rpath", "$ORIGIN/../lib", cp])
                        src = cp
                    data = open(src, "rb").read()
                else:
                    data = src
                zi = zipfile.ZipInfo(rel, date_time=(2023, 11, 14, 22, 13, 20))
                zi.compress_type = zipfile.ZIP_DEFLATED
                zi.external_attr = (0o100000 | mode) << 16
                zf.writestr(zi, data)
                record.append("%s,%s,%d\n" % (rel, wheel_record_hash(data), len(data)))
            record.append("%s/RECORD,,\n" % di)
            zi = zipfile.ZipInfo(di + "/RECORD", date_time=(2023, 11, 14, 22, 13, 20))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o100644 << 16
            zf.writestr(zi, "".join(record))
        shutil.rmtree(tmp)
        digest = sha256_file(os.path.join(whl_dir, fn))
        with open(os.path.join(whl_dir, "index.html"), "w") as f:
            f.write('<!DOCTYPE html>\n<html><body>\n<a href="%s#sha256=%s">%s</a><br/>\n'
                    '</body></html>\n' % (fn, digest, fn))
    if specs:
        with open(os.path.join(simple, "index.html"), "w") as f:
            f.write("<!DOCTYPE html>\n<html><body>\n%s</body></html>\n"
                    % "".join('<a href="%s/">%s</a><br/>\n' % (w["name"], w["name"])
                              for w in sorted(specs, key=lambda w: w["name"])))


def debian_depends(staged, debs, packages):
    """Adds to each auto_depends package the conda names of what its Debian packages depend
    on (Depends, Pre-Depends; the first alternative that is packaged; no versions: the set is
    pinned as a whole). libc6 becomes __glibc. Debian packages outside the set and the
    toolchain channel (Python modules torch does not import, say) are left out and listed."""
    deb2conda = dict(recipes.DEB_ELSEWHERE)
    for r in packages:
        for d in r["debs"]:
            deb2conda[d] = r["name"]
    left_out = set()
    for st in staged:
        if not st.r["auto_depends"]:
            continue
        out = list(st.depends)
        glibc = False
        for d in st.r["debs"]:
            p = run(["dpkg-deb", "-f", debs[d], "Depends", "Pre-Depends"], capture_output=True,
                    text=True)
            for line in p.stdout.splitlines():
                field = line.split(":", 1)[1] if ":" in line.split(" ", 1)[0] else line
                for alt in field.split(","):
                    names = [a.strip().split(" ")[0].split(":")[0] for a in alt.split("|")]
                    names = [n for n in names if n]
                    if not names:
                        continue
                    if names[0] in ("libc6", "libc6-dev"):
                        glibc = True
                    hit = next((n for n in names if n in deb2conda), None)
                    if hit is None:
                        left_out.add(names[0])
                        continue
                    name = deb2conda[hit]
                    if name and name != st.r["name"] and not any(
                            x.split(" ")[0] == name for x in out):
                        out.append(name)
        if glibc and not any(x.startswith("__glibc") for x in out):
            out.append(recipes.GLIBC_BOOKWORM)
        st.depends = out
    if left_out:
        log("  Debian dependencies not packaged (left out): %s" % " ".join(sorted(left_out)))


def check_links(staged):
    """Every symlink resolves inside the union of the channel's packages."""
    have = set()
    for st in staged:
        have.update(package_files(st.root))
    for st in staged:
        for rel, target in sorted(st.links.items()):
            t = os.path.normpath(os.path.join(os.path.dirname(rel), target))
            if t not in have and not any(h.startswith(t + "/") for h in have):
                log("  %s: dropping dangling link %s -> %s" % (st.r["name"], rel, target))
                os.unlink(os.path.join(st.root, rel))


# ---------------------------------------------------------------------------------------------

# the external tools whose output is in the packages' bytes: the extraction (dpkg-deb, and tar
# for a partial one), the rpaths (patchelf), the compression (zstd); apt only picks the exact
# Debian versions, which the key holds themselves
KEYED_TOOLS = ("dpkg-deb", "tar", "patchelf", "zstd")


def tool_versions():
    """{tool: the first line of `TOOL --version`} for KEYED_TOOLS, and the Python running this
    (tarfile, zipfile and json write the rest): another version of any of them may write other
    bytes, so the cache keys of built packages hold them."""
    got = {"python": sys.version}
    for tool in KEYED_TOOLS:
        try:
            p = subprocess.run([tool, "--version"], capture_output=True, text=True)
        except OSError as e:
            got[tool] = "not run: %s" % e.strerror  # main() refuses to build without it
            continue
        lines = [x.strip() for x in (p.stdout + p.stderr).splitlines() if x.strip()]
        got[tool] = lines[0] if lines else "exit %d" % p.returncode
    return got


def cache_key(name, resolved, level):
    """The key of the built packages of set `name`: every input (this code, the recipes, the
    exact Debian versions `resolved`, the zstd level, FORMAT_VERSION) and the versions of the
    tools that write them (tool_versions). The cached channel ($CACHE/channels[-SET]/KEY) and
    toolchain.torch_reproducible's rebuild ($CACHE/rebuilt-SET/KEY) are both found by it."""
    h = hashlib.sha256()
    for f in (os.path.abspath(__file__), recipes.__file__):
        h.update(open(f, "rb").read())
    h.update(json.dumps([name, resolved, level, FORMAT_VERSION, tool_versions()],
                        sort_keys=True).encode())
    return h.hexdigest()[:20]


def main():
    args = sys.argv[1:]
    key_only = bool(args) and args[0] == "--key"
    if key_only:
        args = args[1:]
    name = "toolchain"
    if len(args) == 4 and args[0] == "--set":
        name = args[1]
        args = args[2:]
    if len(args) != 2 or name not in recipes.SETS:
        print("usage: build.py [--key] [--set %s] OUTDIR MENV" % "|".join(sorted(recipes.SETS)),
              file=sys.stderr)
        sys.exit(2)
    debs_spec, packages = recipes.SETS[name]
    outdir = os.path.abspath(args[0])
    menv = args[1]
    if not os.access(menv, os.X_OK):
        die("menv binary not found: %s (build menv first, or pass it as the second argument)" % menv)
    for tool in ("dpkg-deb", "apt-get", "tar", "zstd", "patchelf"):
        if not shutil.which(tool):
            die("'%s' is needed" % tool)
    cache = os.path.abspath(os.environ.get("MENV_TOOLCHAIN_CACHE")
                            or os.path.expanduser("~/.cache/menv-toolchain"))
    jobs = int(os.environ.get("MENV_TOOLCHAIN_JOBS") or os.cpu_count() or 2)
    level = int(os.environ.get("MENV_TOOLCHAIN_ZSTD_LEVEL") or 3)
    os.makedirs(cache, exist_ok=True)
    # one build at a time per cache (the test fixture and the main job may share it); --key
    # builds nothing
    if not key_only:
        lock = open(os.path.join(cache, "lock"), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log("waiting for another build-toolchain using %s" % cache)
            fcntl.flock(lock, fcntl.LOCK_EX)
    timer = Timer()

    resolved, debs = resolve_and_download(cache, timer, debs_spec)

    key = cache_key(name, resolved, level)
    if key_only:
        print(key)
        return
    # the default set's builds are channels/KEY (where lockfile tests look for the newest),
    # another set's channels-SET/KEY
    chdir = os.path.join(cache, "channels" if name == "toolchain" else "channels-" + name)
    if os.environ.get("MENV_TOOLCHAIN_BUILT_DIR"):
        # a build of its own, past the cached packages (the reproducibility test's)
        chdir = os.path.abspath(os.environ["MENV_TOOLCHAIN_BUILT_DIR"])
    built = os.path.join(chdir, key)
    extra = []
    if os.path.exists(built + ".done"):
        log("packages are cached (key %s)" % key)
    else:
        t = time.monotonic()
        work = os.path.join(cache, "work")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        wanted = sorted({d for r in packages for d in r["debs"]})
        # the big partial extraction first, so it overlaps the others
        wanted.sort(key=lambda d: d not in recipes.PARTIAL)
        log("extracting %d Debian packages" % len(wanted))
        with ThreadPoolExecutor(max(2, jobs)) as ex:
            roots = dict(zip(wanted, ex.map(lambda d: extract(d, debs[d], cache, work), wanted)))
        timer.phase("extract", t)

        t = time.monotonic()
        log("staging %d conda packages" % len(packages))
        with ThreadPoolExecutor(jobs) as ex:
            staged = list(ex.map(lambda r: stage(r, roots, work), packages))
        check_links(staged)
        debian_depends(staged, debs, packages)
        tmp_out = built + ".tmp"
        shutil.rmtree(tmp_out, ignore_errors=True)
        make_wheels(recipes.WHEELS.get(name, []), roots, os.path.join(tmp_out, "pypi"))
        shutil.rmtree(os.path.join(work, "x"), ignore_errors=True)
        timer.phase("stage (relocate, patchelf)", t)

        t = time.monotonic()
        log("writing .conda packages (zstd -%d)" % level)
        # biggest first: the CUDA package dominates
        order = sorted(staged, key=lambda s: s.r["name"] != "cudatoolkit")
        with ThreadPoolExecutor(jobs) as ex:
            results = list(ex.map(lambda s: make_conda(s, resolved, tmp_out, work, level), order))
        shutil.rmtree(built, ignore_errors=True)
        os.replace(tmp_out, built)
        open(built + ".done", "w").close()
        shutil.rmtree(work, ignore_errors=True)
        timer.phase("package (.conda)", t)
        raw = sum(x[1] for x in results)
        extra.append("%d packages, %.0f MB of files" % (len(results), raw / 1e6))
        # older builds of the channel are of no further use
        for old in glob.glob(os.path.join(chdir, "*.done")):
            if old != built + ".done":
                shutil.rmtree(old[:-5], ignore_errors=True)
                os.unlink(old)

    t = time.monotonic()
    for sub in ("linux-64", "noarch"):
        d = os.path.join(outdir, sub)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        src = os.path.join(built, sub)
        for n in sorted(os.listdir(src)) if os.path.isdir(src) else []:
            try:
                os.link(os.path.join(src, n), os.path.join(d, n))
            except OSError:
                shutil.copy2(os.path.join(src, n), os.path.join(d, n))
    # the wheels of recipes.WHEELS, a PEP 503 index of static files (pip takes
    # --index-url file://OUTDIR/pypi/simple, or the folder served over HTTP)
    shutil.rmtree(os.path.join(outdir, "pypi"), ignore_errors=True)
    if os.path.isdir(os.path.join(built, "pypi")):
        shutil.copytree(os.path.join(built, "pypi"), os.path.join(outdir, "pypi"))
    run([menv, "index", outdir], stdout=subprocess.DEVNULL)
    timer.phase("copy + menv index", t)
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(outdir, "*", "*.conda")))
    extra.append("channel: %d .conda files, %.0f MB" %
                 (len(glob.glob(os.path.join(outdir, "*", "*.conda"))), size / 1e6))
    log("channel in %s\n%s" % (outdir, timer.summary(extra)))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        die("command failed (exit %s): %s" % (e.returncode, " ".join(map(str, e.cmd))))

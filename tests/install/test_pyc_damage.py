"""install.pyc_damage: a damaged .pyc kept in the package cache (envs/pyccache.c) is never
linked into a prefix: the package's .py are compiled in the prefix instead, as without the
cache, and the environment imports them.

Each damage of the cache's <pkgs>/<dist>/.menv-pyc/<magic>-<site>/<i>.pyc, made after a first
create kept it there (found by the tryout of issue 25's cache):
- cut to 10 bytes (a full disk, a copy cut short): it was hardlinked into the next prefix
  (python ignores a header cut short, and compiles at every import);
- cut inside its code (16 bytes of header kept, the MANIFEST's size no longer its size): it
  was hardlinked and `greet` failed there (EOFError: marshal data too short);
- a header whose source mtime is not the .py's: python had to compile it at every import in a
  read-only prefix;
- a symbolic link to a file outside the cache: the link itself was hardlinked into the prefix
  (its __pycache__ pointed at /etc/hostname).
- one byte inside its code altered (its size and header kept): only its sha256 in the MANIFEST
  sees it (issue 22's leftover 4);
- the MANIFEST cut before its end line, or a line of it altered (its end line's sha256).
Each time the second prefix's .pyc is a regular file that is byte for byte what the first
prefix's compile wrote, `greet` runs, and the damaged folder is rebuilt in the cache under its
lock (it was never rewritten: the damage stayed, found again at each install).

Symbolic links planted in the cache (issue 22's leftover 4), each pointing out of the cache at
a copy that would verify (its MANIFEST rewritten for a .pyc with one byte altered, so that a
menv following the link would link that .pyc into the prefix): `.menv-pyc` itself (it was
followed: read as the cache, and written through: the rebuilt folder landed outside), the
`<magic>-<site>` folder, the MANIFEST and a .pyc; and the python package's `.menv-pyc` where
the magic number is noted (written through). Each time the prefix gets the compiled .pyc,
nothing outside the cache changes, and the link is gone from the cache (a real folder or file
again).
"""
import os
import shutil
import subprocess

from insttest import Skip, main, menvtest, pkg

WRAP = ('#!/bin/sh\nhere=$(cd "$(dirname "$0")/.." && pwd)\n'
        'PYTHONPATH="$here/lib/python%s/site-packages" exec %s "$@"\n')


def body(t):
    py = shutil.which("python3")
    if not py:
        raise Skip("no python3 for the noarch python tests")
    out = subprocess.run([py, "-c", "import sys, importlib.util; print('%d.%d' % "
                          "sys.version_info[:2], importlib.util.MAGIC_NUMBER.hex())"],
                         capture_output=True, text=True).stdout.split()
    pyver, magic = out[0], out[1]
    tag = pyver.replace(".", "")
    site = "lib/python%s/site-packages" % pyver
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "python", pyver + ".0", files={
        "bin/python" + pyver: {"data": WRAP % (pyver, py), "mode": 0o755},
        "bin/python": {"symlink": "python" + pyver},
        site + "/README": "site\n"})
    pkg(ch, "greetpkg", "1.0", build="py_0", noarch="python", depends=["python"],
        entry_points=["greet = greetpkg.cli:main"], files={
            "site-packages/greetpkg/__init__.py": "",
            "site-packages/greetpkg/cli.py": "def main():\n    print('hello' * 3)\n"})
    t.index(ch)
    c = ["-q", "-y", "-c", t.url(ch), "--override-channels"]
    rel = site + "/greetpkg/__pycache__/cli.cpython-%s.pyc" % tag
    p1 = os.path.join(t.tmp, "p1")
    t.menv_ok("create", "-p", p1, *c, "greetpkg")
    good = open(os.path.join(p1, rel), "rb").read()
    kept = os.path.join(t.pkgs, "greetpkg-1.0-py_0", ".menv-pyc")
    folders = [n for n in os.listdir(kept) if n.startswith(magic + "-")]
    t.eq(len(folders), 1, "first create keeps greetpkg's .pyc")
    folder = os.path.join(kept, folders[0])
    mf = os.path.join(folder, "MANIFEST")
    manifest = open(mf).read()
    lines = manifest.splitlines()
    t.eq(lines[-1], "end " + menvtest.sha256_bytes(manifest[:manifest.rindex("end ")].encode()),
         "the MANIFEST ends with the sha256 of what comes before")
    names = [l.split(" ", 5)[5] for l in lines[1:-1]]
    cached = os.path.join(folder, "%d.pyc" % names.index(site + "/greetpkg/cli.py"))
    t.eq(open(cached, "rb").read(), good, "the kept .pyc is the first prefix's")
    t.eq(lines[1 + names.index(site + "/greetpkg/cli.py")].split(" ")[4],
         menvtest.sha256_bytes(good), "the MANIFEST line holds the .pyc's sha256")

    def header_mtime(b):
        return b[:8] + bytes([b[8] ^ 1]) + b[9:]

    def one_byte(b):  # inside the code, the size kept: only the sha256 sees it
        return b[:-3] + bytes([b[-3] ^ 0x20]) + b[-2:]

    damages = [("cut to 10 bytes", cached, lambda: good[:10]),
               ("cut inside its code", cached, lambda: good[:len(good) - 7]),
               ("a header with another mtime", cached, lambda: header_mtime(good)),
               ("a link to /etc/hostname", cached, None),
               ("one byte of its code altered", cached, lambda: one_byte(good)),
               ("the MANIFEST cut before its end line", mf,
                lambda: manifest[:manifest.rindex("end ")].encode()),
               ("a MANIFEST line altered", mf,
                lambda: manifest.replace(" c ", " - ", 1).encode() if " c " in manifest
                else manifest.replace("\nc ", "\n- ", 1).encode())]
    for i, (what, target, data) in enumerate(damages):
        os.unlink(target)
        if data:
            with open(target, "wb") as f:
                f.write(data())
        else:
            os.symlink("/etc/hostname", target)
        p = os.path.join(t.tmp, "p%d" % (i + 2))
        t.menv_ok("create", "-p", p, *c, "greetpkg")
        dst = os.path.join(p, rel)
        t.check(os.path.isfile(dst) and not os.path.islink(dst),
                "%s: the prefix's .pyc is a regular file" % what, os.path.lexists(dst))
        got = open(dst, "rb").read() if os.path.isfile(dst) else None
        t.eq(got and menvtest.sha256_bytes(got), menvtest.sha256_bytes(good),
             "%s: the prefix's .pyc is what compiling the .py gives" % what)
        r = subprocess.run([os.path.join(p, "bin", "greet")], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        t.eq((r.returncode, r.stdout), (0, "hellohellohello\n"),
             "%s: greet runs in the prefix" % what)
        # the damaged folder is rebuilt under the cache lock, not left in place
        t.check(os.path.isfile(cached) and not os.path.islink(cached),
                "%s: the cache's .pyc is a regular file again" % what)
        t.eq((open(cached, "rb").read() if os.path.isfile(cached) else None,
              open(mf).read()), (good, manifest), "%s: the cache is rewritten whole" % what)
    os.unlink(cached)
    shutil.copyfile(os.path.join(p1, rel), cached)
    links(t, locals())


def snapshot(top):
    """{relative path: bytes or ('link', target)} of everything under top."""
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            q = os.path.join(d, n)
            if os.path.islink(q):
                out[os.path.relpath(q, top)] = ("link", os.readlink(q))
            elif os.path.isfile(q):
                out[os.path.relpath(q, top)] = open(q, "rb").read()
    return out


def links(t, v):
    good, folder, kept, mf, cached, c, rel = (v[k] for k in (
        "good", "folder", "kept", "mf", "cached", "c", "rel"))
    leaf = os.path.basename(cached)
    bad = v["one_byte"](good)

    def forged(manifest_text):  # the MANIFEST of a folder whose cli .pyc is `bad`
        lines = manifest_text.splitlines(True)[:-1]
        lines = [l.replace(menvtest.sha256_bytes(good), menvtest.sha256_bytes(bad))
                 for l in lines]
        body = "".join(lines)
        return body + "end " + menvtest.sha256_bytes(body.encode()) + "\n"

    manifest = open(mf).read()
    out = os.path.join(t.tmp, "outside")
    pyname = [n for n in os.listdir(t.pkgs) if n.startswith("python-")][0]
    pybase = os.path.join(t.pkgs, pyname, ".menv-pyc")
    t.check(os.path.isfile(os.path.join(pybase, "magic")), "python's magic number noted")

    def plant_tree(where):  # a whole folder outside that verifies with the bad .pyc
        shutil.copytree(folder, where)
        with open(os.path.join(where, leaf), "wb") as f:
            f.write(bad)
        with open(os.path.join(where, "MANIFEST"), "w") as f:
            f.write(forged(manifest))

    def plant_base():
        os.makedirs(out)
        plant_tree(os.path.join(out, os.path.basename(folder)))
        shutil.rmtree(kept)
        os.symlink(out, kept)

    def plant_folder():
        plant_tree(out)
        shutil.rmtree(folder)
        os.symlink(out, folder)

    def plant_manifest():
        os.makedirs(out)
        with open(os.path.join(out, "MANIFEST"), "w") as f:
            f.write(forged(manifest))
        with open(cached, "wb") as f:
            f.write(bad)
        os.unlink(mf)
        os.symlink(os.path.join(out, "MANIFEST"), mf)

    def plant_pyc():
        os.makedirs(out)
        with open(os.path.join(out, leaf), "wb") as f:
            f.write(bad)
        with open(mf, "w") as f:
            f.write(forged(manifest))
        os.unlink(cached)
        os.symlink(os.path.join(out, leaf), cached)

    def plant_magic():
        shutil.rmtree(pybase)
        os.makedirs(out)
        os.symlink(out, pybase)

    for i, (what, plant, link) in enumerate((
            (".menv-pyc a link", plant_base, kept),
            ("the <magic>-<site> folder a link", plant_folder, folder),
            ("the MANIFEST a link", plant_manifest, mf),
            ("the .pyc a link", plant_pyc, cached),
            ("python's .menv-pyc a link", plant_magic, pybase))):
        shutil.rmtree(out, ignore_errors=True)
        plant()
        before = snapshot(out)
        p = os.path.join(t.tmp, "l%d" % i)
        t.menv_ok("create", "-p", p, *c, "greetpkg")
        dst = os.path.join(p, rel)
        got = open(dst, "rb").read() if os.path.isfile(dst) else None
        t.check(os.path.isfile(dst) and not os.path.islink(dst) and got == good,
                "%s: the prefix's .pyc is the compiled one, never the planted one" % what,
                "planted" if got == bad else os.path.lexists(dst))
        t.eq(snapshot(out), before, "%s: nothing outside the cache changed" % what)
        t.check(not os.path.islink(link) and os.path.exists(link),
                "%s: the link is gone from the cache, rebuilt in its place" % what)
        t.eq((open(cached, "rb").read() if os.path.isfile(cached) else None,
              open(mf).read() if os.path.isfile(mf) else None), (good, manifest),
             "%s: the cache holds the compiled .pyc and its MANIFEST again" % what)
    t.check(os.path.isfile(os.path.join(pybase, "magic")) and not os.path.islink(pybase),
            "python's magic number noted in the cache again")


if __name__ == "__main__":
    main(body)

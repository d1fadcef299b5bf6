"""The compact form of paths.json kept in the package cache (issue 25, fetch/pathscache.c,
`<pkgdir>/.menv-paths`): a create that reads it gives the prefix (every file, mode, link and
conda-meta record byte for byte) of a create that reads paths.json as JSON
(MENV_TEST_NO_PATHS_CACHE=1); a compact file corrupt, cut short or stale (paths.json changed
since) is found and written again, with the same prefix; a folder without one (conda's, a
package menv extracted before) is not written into; paths of every kind of character
(non-ASCII up to a surrogate pair, quotes, backslashes, control characters, DEL) and entries
without sha256 or size_in_bytes are recorded as the JSON path records them; a package whose
paths.json holds a key the layout does not gets none and is linked from its JSON; creates running at once, each
writing the files, all give the same prefix and leave whole files and no temporary ones."""
import glob
import os
import shutil
import subprocess

from insttest import PH, diff, main, pkg, snapshot_undated


LONG = "/opt/" + "p" * 250  # a binary placeholder longer than the test's prefix


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "core", "1.0", files={
        "lib/libcore.so": b"\x7fELF" + b"\0" * 40 + PH.encode() + b"\0" * 8,
        "lib/libcore.so.1": {"symlink": "libcore.so"},
        "lib/libbin.so": {"data": b"\x7fELF" + LONG.encode() + b"/lib\0" + b"\0" * 20,
                          "placeholder": LONG, "file_mode": "binary"},
        "lib/pkgconfig/core.pc": {"data": "prefix=%s\nlibdir=${prefix}/lib\n" % PH,
                                  "placeholder": PH},
        "share/same.txt": {"data": "no prefix in it\n", "placeholder": PH},
        "bin/core": {"data": "#!/bin/sh\necho core\n", "mode": 0o755},
        "etc/core.conf": {"data": "core\n", "no_link": True},
        "etc/linked.conf": {"data": "linked\n", "extra": {"no_link": False}},
        "share/doc/core/README": "core\n"})
    for i in range(6):
        pkg(ch, "part%d" % i, "1.0", depends=["core"], files={
            "lib/libpart%d.so" % i: b"\x7fELF" + bytes([i]) * 30,
            "share/doc/part%d/README" % i: "part %d\n" % i,
            "share/deep/a/b/part%d.txt" % i: "deep %d\n" % i})
    # paths conda-meta's JSON escapes: non-ASCII (2, 3, 4 bytes), quotes, backslashes,
    # control characters, DEL; entries without sha256, size_in_bytes or both
    pkg(ch, "names", "1.0", files={
        "share/names/caf\u00e9-\u20ac-\U0001f600.txt": "unicode\n",
        "share/names/q\"uo\\te.txt": {"data": "quote %s\n" % PH, "placeholder": PH},
        "share/names/tab\there\x01\x1f\x7f.txt": "controls\n",
        "share/names/nosha.txt": {"data": "no sha\n", "drop": ("sha256",)},
        "share/names/nosize.txt": {"data": "no size\n", "drop": ("size_in_bytes",)},
        "share/names/neither.txt": {"data": "neither\n", "drop": ("sha256", "size_in_bytes")},
        "share/names/\u00e9-link": {"symlink": "caf\u00e9-\u20ac-\U0001f600.txt"}})
    # a key the compact layout does not hold: linked from its JSON, as conda records it
    pkg(ch, "odd", "1.0", files={"share/odd.txt": {"data": "odd\n",
                                                   "extra": {"inode_paths": ["x"]}}})
    t.index(ch)
    return t.url(ch)


def body(t):
    c = ["-q", "-c", channel(t), "--override-channels", "core", "odd", "names"] + \
        ["part%d" % i for i in range(6)]
    p = os.path.join(t.tmp, "envs", "e")
    compact = lambda: sorted(glob.glob(os.path.join(t.pkgs, "*", ".menv-paths")))

    def create(prefix=p, env=None):
        if os.path.lexists(prefix):
            shutil.rmtree(prefix)
        r = t.menv_run("create", "-p", prefix, *c, env=env)
        t.check(r.rc == 0, "create -p %s" % prefix, r)
        return snapshot_undated(prefix)

    # ---- extracted (the compact files written), as JSON, then the compact files read
    first = create()
    files = compact()
    t.eq(len(files), 8, "a compact file for each package extracted but odd")
    t.check(not any("odd-1.0-0" in f for f in files), "odd has none (inode_paths)")
    ref = create(env={"MENV_TEST_NO_PATHS_CACHE": "1"})
    if not ref:
        return
    t.check(first == ref, "the create that extracted: the JSON's prefix", diff(ref, first))
    with open(os.path.join(p, "conda-meta", "core-1.0-0.json")) as f:
        core = f.read()
    t.check('"sha256_in_prefix"' in core and '"prefix_placeholder": "%s"' % PH in core and
            '"no_link": true' in core and '"no_link": false' in core,
            "core's record holds placeholders, no_link and sha256_in_prefix", core[:3000])
    with open(os.path.join(p, "conda-meta", "names-1.0-0.json"), "rb") as f:
        names = f.read()
    for want in (b"caf\\u00e9-\\u20ac-\\ud83d\\ude00.txt", b'q\\"uo\\\\te.txt',
                 b"tab\\there\\u0001\\u001f\\u007f.txt"):
        t.check(want in names, "names' record escapes %r" % want, names[:3000])
    good = {f: open(f, "rb").read() for f in files}
    got = create()
    t.check(got == ref, "the create that read them: the JSON's prefix", diff(ref, got))
    t.check({f: open(f, "rb").read() for f in files} == good, "read, not written again")

    # ---- damaged: each file flipped, cut short, emptied, or stale
    def damage(how):
        for f in files:
            b = bytearray(good[f])
            if how == "flipped":
                b[-2] ^= 0x01
            elif how == "short":
                b = b[:len(b) // 2]
            elif how == "empty":
                b = b""
            with open(f, "wb") as g:
                g.write(bytes(b))
            if how == "stale":  # paths.json rewritten, same bytes: a new identity
                pj = os.path.join(os.path.dirname(f), "info", "paths.json")
                data = open(pj, "rb").read()
                os.remove(pj)
                with open(pj, "wb") as g:
                    g.write(data)
    inodes = lambda: {f: os.stat(os.path.dirname(f)).st_ino for f in files}
    before = inodes()
    for how in ("flipped", "short", "empty", "stale"):
        damage(how)
        got = create()
        t.check(got == ref, "compact files %s: the JSON's prefix" % how, diff(ref, got))
        now = {f: open(f, "rb").read() for f in files}
        if how == "stale":
            t.check(all(now[f] != good[f] and len(now[f]) == len(good[f]) for f in files),
                    "stale: written again for the new paths.json")
            good = now
        else:
            t.check(now == good, "%s: written again, whole" % how)
        t.eq(inodes(), before, "%s: no package extracted again (the cache's check passed)"
             % how)

    # ---- concurrent writers: 4 creates at once, every compact file damaged to start with
    for f in files:
        with open(f, "wb") as g:
            g.write(good[f][:20])
    procs = []
    for k in range(4):
        q = os.path.join(t.tmp, "envs", "c%d" % k)
        procs.append((q, subprocess.Popen([t.menv, "create", "-p", q] + c,
                                          env=t.environ(None), cwd=t.tmp,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    for q, proc in procs:
        out = proc.communicate(timeout=240)[0]
        t.check(proc.returncode == 0, "concurrent create %s" % q, out.decode(errors="replace"))
    for f in files:
        t.check(open(f, "rb").read() == good[f], "%s whole after concurrent writers" % f)
    t.eq(glob.glob(os.path.join(t.pkgs, "*", ".menv-paths.tmp-*")), [],
         "no temporary compact file left")
    got = create()
    t.check(got == ref, "after the concurrent writers: the JSON's prefix", diff(ref, got))
    for q, _ in procs:
        cr = snapshot_undated(q)
        mine = {k: v for k, v in cr.items() if k.startswith("conda-meta/") and
                k.endswith(".json")}
        theirs = {k: v for k, v in ref.items() if k.startswith("conda-meta/") and
                  k.endswith(".json") and "core" not in k and "names" not in k}
        t.check(all(mine.get(k) == v for k, v in theirs.items()),
                "%s: the records (those without its prefix in them) are the JSON's" % q)


if __name__ == "__main__":
    main(body)

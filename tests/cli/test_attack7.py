#!/usr/bin/env python3
"""cli.attack7_<case>: what a seventh outside attack (issue 22: the merged work of
2026-12-02) found, one case each (python3 test_attack7.py MENV SHARED CASE):

- cache_hostile: the solve caches' checksum is no signature: a `.solv.names` with a valid
  checksum but hostile offsets crashed or failed a warm dry-run: a group's name offset whose
  sum with its length wraps past 2^64 (SIGSEGV hashing 2 GiB before the map), a record chain
  that loops back (hung walking it), a record's or key's offset that wraps ("cannot read
  'repodata.json': Invalid argument"); a record count whose size sum wraps (the records
  checked past the map). A `.solv.subN` whose .solv bytes are garbage under a valid checksum.
  Each now counts as no cache: the cold answer, and the file is written again.
- config_repair: a .condarc whose channels list holds a URL with a space (refused at
  FILE:LINE:COL since the URL check) could not be repaired by `config --remove channels
  URL` (the edit refused the file it was meant to fix; only --remove-key channels, losing
  every other channel, could). --remove now takes it out: the other entries kept, the
  file then accepted; an edit that adds (--add, --set) is still refused on the bad file.
- stdout_cut: since menv ignores SIGXFSZ, a write to standard output past RLIMIT_FSIZE
  failed quietly: `menv export > lock.yml` and `list --explicit > file` under a file size
  limit left the first 200 bytes and exited 0 (a cut lock file taken for a whole one);
  `list > /dev/full` exited 0 too. Each now exits 1 with one line ("cannot write standard
  output: File too large" / "No space left on device").
- paths_cache: the compact paths.json of an extracted package (`<pkgdir>/.menv-paths`,
  fetch/pathscache.c) a FIFO held the next create in open() for ever (a shared package cache
  is anyone's). It is opened without waiting: no regular file counts as none and is written
  again. A compact file forged with paths.json's identity and checksum whose entry leaves
  the prefix (`../../x`, a softlink: the cache check passes it) is refused as paths.json's
  would be: one line, nothing written outside.
"""
import glob
import json
import os
import struct
import sys

import menvtest

TR = os.path.join("packages", "conda", "test-recipes", "noarch")
SPECS = menvtest.DRY_SPECS
COLD = menvtest.DRY_COLD
dry_run = menvtest.dry_run

M64 = menvtest.M64
seal = menvtest.seal
unseal = menvtest.unseal


def test_channel(t, name="chan"):
    P = os.path.join(t.corpus, TR)
    return t.make_channel(name, {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})


# solver/sparse.c's layout: struct shead (16 + 128 + 6 u64), srec (2 u64, 4 u32),
# sgroup (u64, 2 u32)
HEAD = 16 + 128
SREC = 32
SGROUP = 16


def names_fields(body):
    nrecs, ngroups, nnames = struct.unpack_from("<3Q", body, HEAD)
    return nrecs, ngroups, nnames


def set_nrecs_wrap(body):
    """a huge record count, nnames such that the size sum wraps to the file's size, and
    zero records (each passes the per-record checks) up to the end of the map."""
    ngroups = 1
    big = (1 << 31) - 2
    del body[HEAD + 48:]
    body.extend(b"\0" * 8192)
    nn = (len(body) - (HEAD + 48) - big * SREC - ngroups * SGROUP) & M64
    struct.pack_into("<3Q", body, HEAD, big, ngroups, nn)
    return True


def group_at(body, g):
    nrecs = names_fields(body)[0]
    return HEAD + 48 + nrecs * SREC + g * SGROUP


def rec_at(i):
    return HEAD + 48 + i * SREC


def set_name_wrap(body):
    """group 1's name 2 GiB long, from 2 GiB before the names: the sum wraps below nnames."""
    struct.pack_into("<QI", body, group_at(body, 1), M64 - (1 << 31) + 1, (1 << 31) + 1)
    return True


def set_off_wrap(body):
    """every record 3 bytes at 2^64 - 2: offset plus length wraps to 1."""
    for i in range(names_fields(body)[0]):
        struct.pack_into("<QQ", body, rec_at(i), 0, M64 - 1)
        struct.pack_into("<I", body, rec_at(i) + 20, 3)
    return True


def set_keyoff_wrap(body):
    """every record's key 8 bytes at 2^64 - 4: the key's end wraps to 4, below its value."""
    for i in range(names_fields(body)[0]):
        keylen = struct.unpack_from("<I", body, rec_at(i) + 16)[0]
        struct.pack_into("<Q", body, rec_at(i), M64 - 3)
        struct.pack_into("<I", body, rec_at(i) + 16, 8 | (keylen & 0x80000000))
    return True


def set_chain_loop(body):
    """every record's next is itself: a group's chain never ends."""
    nrecs = names_fields(body)[0]
    for i in range(nrecs):
        struct.pack_into("<I", body, rec_at(i) + 28, i)
    return True


def set_sub_garbage(body):
    # struct subhead: 16 + 128 + nwant, solvlen; the .solv bytes follow the wanted list
    nwant, solvlen = struct.unpack_from("<2Q", body, HEAD)
    start = len(body) - solvlen
    for i in range(start, len(body)):
        body[i] = (i * 131 + 7) & 0xff
    return True


# the closure cached (.walkN) and the records read (.subN) would spare the index
SPARE = ("*.solv.walk*", "*.solv.sub*")
HOSTILE = {
    "nrecs_wrap": ("*.solv.names", "a record count whose size sum wraps", set_nrecs_wrap, SPARE),
    "name_wrap": ("*.solv.names", "a name offset that wraps", set_name_wrap, SPARE),
    "off_wrap": ("*.solv.names", "a record offset that wraps", set_off_wrap, SPARE),
    "keyoff_wrap": ("*.solv.names", "a key offset that wraps", set_keyoff_wrap, SPARE),
    "chain_loop": ("*.solv.names", "a record chain that loops", set_chain_loop, SPARE),
    "sub_garbage": ("*.solv.sub*", "garbage .solv bytes", set_sub_garbage, ()),
}


def case_cache_hostile(t, which=None):
    """each crafted file of HOSTILE (or only `which`), every command that loads channels"""
    chan = test_channel(t)
    cold = {}
    for name in [which] if which else HOSTILE:
        pat, what, change, drop = HOSTILE[name]
        menvtest.cache_craft(t, chan, what, pat, change, drop=drop, cold=cold, timeout=20)


def case_config_repair(t):
    bad = "http://c d/x"
    good = os.path.join(t.tmp, "local chan")
    menvtest.write_text(t.rc, 'channels:\n  - "%s"\n  - "%s"\n' % (good, bad))
    r = t.menv_run("config", "--set", "channel_alias", "http://a/")
    t.one_line_error(r, "--set on the bad file", (t.rc + ":3:5:", "a space"))
    r = t.menv_run("config", "--remove", "channels", bad)
    t.eq(r.rc, 0, "--remove of the bad entry succeeds")
    r = t.menv_run("config", "--show", "channels", "--json")
    t.eq(r.rc, 0, "the file is accepted then")
    try:
        got = json.loads(r.out).get("channels")
    except ValueError:
        got = None
    t.eq(got, [good], "the other entry kept")


def case_stdout_cut(t):
    import resource
    import subprocess
    chan = test_channel(t)
    prefix = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-y", "-q", "-p", prefix, "-c", chan, "--override-channels",
              "dependent")
    full = t.menv_ok("export", "-p", prefix).out
    t.check(len(full) > 400, "the export is longer than the limit")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
    for args, what in ((("export", "-p", prefix), "export > file"),
                       (("list", "-p", prefix, "--explicit"), "list --explicit > file")):
        out = os.path.join(t.tmp, "out.txt")
        with open(out, "wb") as fh:
            p = subprocess.run([t.menv] + list(args), stdout=fh, stderr=subprocess.PIPE,
                               env=t.environ(None), cwd=t.tmp, timeout=60, preexec_fn=limit)
        r = menvtest.Result(list(args), p.returncode, "", p.stderr.decode(errors="replace"))
        t.eq(os.path.getsize(out), 200, "%s: cut at the limit" % what)
        t.one_line_error(r, "%s past the file size limit" % what,
                         ("cannot write standard output", "File too large"))
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as fh:
            p = subprocess.run([t.menv, "list", "-p", prefix], stdout=fh,
                               stderr=subprocess.PIPE, env=t.environ(None), timeout=60)
        r = menvtest.Result(["list"], p.returncode, "", p.stderr.decode(errors="replace"))
        t.one_line_error(r, "list > /dev/full", ("cannot write standard output",))


def forge_paths(pkgdir, entries):
    """A .menv-paths of fetch/pathscache.c's layout for pkgdir's info/paths.json now:
    entries are (path, path_type)."""
    st = os.stat(os.path.join(pkgdir, "info", "paths.json"))
    body = b"\0\0\0"  # no name, version, build of index.json kept
    for path, kind in entries:
        body += bytes([1]) + path.encode() + b"\0" + kind.encode() + b"\0"
    h = 0xcbf29ce484222325
    for c in body:
        h = ((h ^ c) * 0x100000001b3) & M64
    ident = (st.st_dev, st.st_ino, st.st_size, int(st.st_mtime_ns // 10**9),
             st.st_mtime_ns % 10**9, int(st.st_ctime_ns // 10**9), st.st_ctime_ns % 10**9)
    head = b"MENVPATHS2\n" + struct.pack("<17Q", *ident, len(entries), len(body), h,
                                          *[0] * 7)
    with open(os.path.join(pkgdir, ".menv-paths"), "wb") as fh:
        fh.write(head + body)


def case_paths_cache(t):
    import subprocess
    import stat
    chan = test_channel(t)
    c = ("-c", chan, "--override-channels", "clobber-a")
    t.menv_ok("create", "-y", "-q", "-p", os.path.join(t.tmp, "first"), *c)
    pkgdir = os.path.join(t.pkgs, "clobber-a-1.0-0")
    compact = os.path.join(pkgdir, ".menv-paths")
    if not t.check(os.path.isfile(compact), "the compact file is made"):
        return
    os.unlink(compact)
    os.mkfifo(compact)
    try:
        r = t.menv_run("create", "-y", "-q", "-p", os.path.join(t.tmp, "fifo"), *c,
                       timeout=20)
        t.eq(r.rc, 0, "a FIFO as .menv-paths: the create succeeds")
    except menvtest.Fatal as ex:
        t.check(False, "a FIFO as .menv-paths: the create returns", ex)
        os.unlink(compact)
    t.check(os.path.lexists(compact) and stat.S_ISREG(os.lstat(compact).st_mode),
            "the compact file written again")
    t.check(os.path.isfile(os.path.join(t.tmp, "fifo", "bin", "clobber-test-file")),
            "the package linked")
    # forged: paths.json's identity, a valid checksum, an entry that leaves the prefix
    forge_paths(pkgdir, [("bin/clobber-test-file", "hardlink"),
                         ("../../escaped-by-compact", "softlink")])
    prefix = os.path.join(t.tmp, "d1", "d2", "forged")
    r = t.menv_run("create", "-y", "-q", "-p", prefix, *c, timeout=30)
    if r.rc == 0:
        t.check(not os.path.lexists(os.path.join(t.tmp, "d1", "escaped-by-compact")),
                "the forged entry: nothing written outside the prefix")
    else:
        t.one_line_error(r, "the forged entry", ("leaves the prefix",))
    t.check(not os.path.lexists(os.path.join(t.tmp, "d1", "escaped-by-compact")),
            "nothing written outside the prefix")


def body(t, case, *rest):
    getattr(sys.modules[__name__], "case_" + case)(t, *rest)


if __name__ == "__main__":
    menvtest.main(body)

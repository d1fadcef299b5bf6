#!/usr/bin/env python3
"""cli.attack6_<case>: what a sixth outside attack (issue 22: the solve caches, concurrent
writers, kills during mirror and index, full disks, Ctrl-C in the cache check, URL values in
.condarc) found, one case each (python3 test_attack6.py MENV SHARED CASE):

- cache_flip: one byte changed in place (same length) in a solve cache beside the repodata
  (`.solv` of a whole load; `.solv.names`, `.solv.subN`, `.solv.walkN` of a sparse one) gave
  a wrong warm answer (the caches are keyed by the JSON's size, mtime and inode, not by their
  own bytes): "1.0" read as "9.0" picked dependent 1.0, a name changed in the index found no
  such package, a record index changed in the closure read other records. Each file now ends
  in a checksum of its bytes, checked before use; a changed file counts as no cache: the
  answer is the cold one and the file is written again.
- cache_parallel: eight dry-runs at once on a cold cache (four reading the repodata whole,
  four sparsely), three rounds: every one gives the cold answer, the caches they leave are
  whole (a warm run reads them as they are: no file written again) and no temporary file is
  left beside them.
- config_url: `config --set channel_alias 'http://a b/'` (and a custom channel's or a proxy's
  URL with a space, a channels entry with a tab or newline) was written into .condarc, and
  every later command built URLs with it. Refused with one line naming the key, the file
  unchanged; a local path with a space in `channels` stays allowed; such a value written into
  the file by hand is refused with FILE:LINE:COL.
"""
import glob
import json
import os
import subprocess
import sys

import menvtest

TR = os.path.join("packages", "conda", "test-recipes", "noarch")
SPECS = ("dependent", "another_dependent", "buildstring")
COLD = ["another_dependent-2.0-0", "buildstring-1.0-versioned_2", "dependency-2.0-0",
        "dependent-2.0-0", "versioned-2.0-0"]


def test_channel(t, name="chan"):
    P = os.path.join(t.corpus, TR)
    return t.make_channel(name, {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})


def dry_run(t, chan, load, what, env=None, timeout=30):
    e = {"MENV_SOLVER_LOAD": load}
    e.update(env or {})
    try:
        r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-c", chan,
                       "--override-channels", "--dry-run", "--json", "-y", *SPECS, env=e,
                       timeout=timeout)
    except menvtest.Fatal as ex:
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


def flip(path, old, new):
    """Replaces the first `old` in path's bytes with `new` (same length), in place."""
    with open(path, "r+b") as fh:
        data = fh.read()
        at = data.find(old)
        if at < 0:
            return False
        fh.seek(at)
        fh.write(new)
    return True


def case_cache_flip(t):
    chan = test_channel(t)
    cache = os.path.join(t.pkgs, "cache")
    # (load, cache file, bytes found in it, what they become)
    flips = (("full", "*.solv", b"1.0\0", b"9.0\0"),
             ("sparse", "*.solv.sub*", b"1.0\0", b"9.0\0"),
             ("sparse", "*.solv.names", b"dependent", b"dependenu"),
             ("sparse", "*.solv.walk*", None, None))
    for load, pat, old, new in flips:
        for f in glob.glob(os.path.join(cache, "*")):
            os.unlink(f)
        what = "%s, a byte of %s changed" % (load, pat)
        t.eq(dry_run(t, chan, load, "%s: cold" % what), COLD, "%s: the cold answer" % what)
        files = glob.glob(os.path.join(cache, pat))
        if not t.eq(len(files), 1, "%s: one such cache written" % what):
            continue
        before = os.path.getsize(files[0])
        if old is None:
            # the closure's last u32 (before the checksum trailer, where there is one) is
            # a record index: another record wanted in its place
            with open(files[0], "rb") as fh:
                data = bytearray(fh.read())
            at = len(data) - 4 - (16 if data[-16:-8] == b"menvsum1" else 0)
            v = int.from_bytes(data[at:at + 4], "little")
            data[at:at + 4] = (v - 1).to_bytes(4, "little")
            with open(files[0], "r+b") as fh:
                fh.write(data)
        else:
            t.check(flip(files[0], old, new), "%s: %r found in it" % (what, old))
        t.eq(os.path.getsize(files[0]), before, "%s: same length" % what)
        t.eq(dry_run(t, chan, load, "%s: warm" % what), COLD,
             "%s: the warm answer is the cold one" % what)
        t.eq(dry_run(t, chan, load, "%s: again" % what), COLD,
             "%s: and again (the cache written anew)" % what)


def case_cache_parallel(t):
    chan = test_channel(t)
    cache = os.path.join(t.pkgs, "cache")
    args = ["create", "-p", os.path.join(t.tmp, "e"), "-c", chan, "--override-channels",
            "--dry-run", "--json", "-y", *SPECS]
    for rnd in range(3):
        for f in glob.glob(os.path.join(cache, "*")):
            os.unlink(f)
        procs = [subprocess.Popen([t.menv] + args, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=t.tmp,
                                  env=t.environ({"MENV_SOLVER_LOAD": ("full", "sparse")[i % 2]}))
                 for i in range(8)]
        for i, p in enumerate(procs):
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            what = "round %d, run %d" % (rnd, i)
            if not t.eq(p.returncode, 0, "%s: the solve succeeds" % what):
                print(err.decode(errors="replace"))
                continue
            t.eq(sorted(x["dist_name"] for x in json.loads(out)["actions"]["LINK"]), COLD,
                 "%s: the cold answer" % what)
        names = sorted(os.listdir(cache))
        t.eq([n for n in names if ".tmp" in n], [], "round %d: no temporary file left" % rnd)
        t.check(any(n.endswith(".solv") for n in names) and
                any(".solv.sub" in n for n in names) and any(".solv.walk" in n for n in names),
                "round %d: a .solv, a .subN and a .walkN written" % rnd, names)
        inodes = {n: os.stat(os.path.join(cache, n)).st_ino for n in names}
        for load in ("full", "sparse"):
            t.eq(dry_run(t, chan, load, "round %d, warm %s" % (rnd, load)), COLD,
                 "round %d, warm %s: the cold answer" % (rnd, load))
        t.eq({n: os.stat(os.path.join(cache, n)).st_ino for n in sorted(os.listdir(cache))},
             inodes, "round %d: the warm runs read every cache as it was (none written again)"
             % rnd)


def case_config_url(t):
    good = "channel_alias: https://good.example/\n"
    for args in (("--set", "channel_alias", "http://a b/"),
                 ("--set", "custom_channels.mine", "http://a b/x"),
                 ("--set", "proxy_servers.http", "http://proxy host:3128"),
                 ("--add", "channels", "http://a b/chan"),
                 ("--add", "channels", "chan\tnel"),
                 ("--append", "channels", "chan\nnel"),
                 ("--add", "default_channels", "https://x/a b"),
                 ("--set", "channel_alias", "https://x/\x1b[31m")):
        t.set_rc(good)
        r = t.menv_run("config", *args)
        what = "config %s %s %r" % args
        t.one_line_error(r, what, (args[1].split(".")[0],), nonzero_only=True)
        t.check(t.rc not in r.err, "%s: the error names no file" % what, r.err)
        with open(t.rc) as fh:
            t.eq(fh.read(), good, "%s: .condarc unchanged" % what)
    t.set_rc(good)
    t.menv_ok("config", "--add", "channels", "/srv/my channel")
    r = t.menv_ok("config", "--get", "channels")
    t.check("/srv/my channel" in r.out, "a local path with a space stays allowed", r)
    for text in ('channel_alias: "http://a b/"\n',
                 'custom_channels:\n  mine: "http://a b/"\n',
                 'channels:\n  - "http://a b/chan"\n'):
        t.set_rc(text)
        r = t.menv_run("config", "--show", "channels")
        t.one_line_error(r, "a .condarc of %r" % text, (t.rc + ":",), nonzero_only=True)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

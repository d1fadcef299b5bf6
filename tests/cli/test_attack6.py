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
- cache_symlink: each solve cache replaced by a symlink (to a file of the same kind from
  another channel's cache, to /dev/zero) or by a folder: the cold answer, the link's target
  untouched, and the cache written again as a regular file where it can be.
- tmpdir_bad: TMPDIR a file or a missing folder: `mirror` (which stages under it) fails with
  one line naming it and creates no destination.
- cache_parallel: eight dry-runs at once on a cold cache (four reading the repodata whole,
  four sparsely), three rounds: every one gives the cold answer, the caches they leave are
  whole (a warm run reads them as they are: no file written again) and no temporary file is
  left beside them.
- disk_limits: a file size limit (RLIMIT_FSIZE, as `prlimit --fsize` or a quota sets) killed
  menv with SIGXFSZ: a cold dry-run died writing its .solv (exit 153) and left a
  `.solv.tmp-*` in the cache. menv ignores SIGXFSZ (its children do not): the dry-run gives
  the cold answer (the caches are best effort, nothing half left), a create whose package
  cannot be stored fails with one line naming it, no prefix and no half-extracted package
  left, the existing environment unchanged, and the same create without the limit succeeds.
  A read-only repodata cache (a read-only bind mount) still solves from the JSON, a file://
  and an http:// channel alike, cold and warm, and is left as it was: over http, writing the
  cache's state after a 304, or the JSON downloaded, failed the command ("cannot create
  '<cache>/<hash>.info.json.tmp-*': Read-only file system"); the bytes read are used.
- sigint_cache_check: Ctrl-C while a create checks the package cache (20 cached packages,
  on up to 4 threads; MENV_TEST_GATE_CACHE_CHECK holds the main thread there): exit 130 with
  one line, no prefix and nothing half left in the cache (every extracted package as it was),
  another environment unchanged, and the same create then succeeds.
- config_url: `config --set channel_alias 'http://a b/'` (and a custom channel's or a proxy's
  URL with a space, a channels entry with a tab or newline) was written into .condarc, and
  every later command built URLs with it. Refused with one line naming the key, the file
  unchanged; a local path with a space in `channels` stays allowed; such a value written into
  the file by hand is refused with FILE:LINE:COL.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import menvtest

TR = os.path.join("packages", "conda", "test-recipes", "noarch")
SPECS = menvtest.DRY_SPECS
COLD = menvtest.DRY_COLD
dry_run = menvtest.dry_run


def test_channel(t, name="chan"):
    P = os.path.join(t.corpus, TR)
    return t.make_channel(name, {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})


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


def case_cache_symlink(t):
    chan = test_channel(t)
    other = t.make_channel("other", {"noarch": [os.path.join(t.corpus, TR, f) for f in (
        "dependent-1.0-0.conda", "dependency-1.0-0.conda", "another_dependent-1.0-0.conda",
        "buildstring-1.0-versioned_1.conda", "versioned-1.0-0.conda")
        if os.path.exists(os.path.join(t.corpus, TR, f))]})
    cache = os.path.join(t.pkgs, "cache")
    for load, pats in (("full", ("*.solv",)),
                       ("sparse", ("*.solv.names", "*.solv.sub*", "*.solv.walk*"))):
        # the other channel's caches, kept aside as link targets
        for f in glob.glob(os.path.join(cache, "*")):
            (os.rmdir if os.path.isdir(f) and not os.path.islink(f) else os.unlink)(f)
        dry_run(t, other, load, "%s: the other channel" % load)
        aside = os.path.join(t.tmp, "aside-" + load)
        os.makedirs(aside)
        for f in glob.glob(os.path.join(cache, "*.solv*")):
            os.rename(f, os.path.join(aside, os.path.basename(f)))
        for kind in ("other", "zero", "folder"):
            for pat in pats:
                what = "%s, %s a %s" % (load, pat, kind)
                for f in glob.glob(os.path.join(cache, "*")):
                    (os.rmdir if os.path.isdir(f) and not os.path.islink(f) else os.unlink)(f)
                t.eq(dry_run(t, chan, load, "%s: cold" % what), COLD, "%s: cold" % what)
                files = glob.glob(os.path.join(cache, pat))
                if not t.eq(len(files), 1, "%s: one such cache" % what):
                    continue
                f = files[0]
                os.unlink(f)
                target = None
                if kind == "other":
                    cands = [a for a in glob.glob(os.path.join(aside, "*"))
                             if a.split(".solv")[-1][:5] == os.path.basename(f).split(
                                 ".solv")[-1][:5]]
                    target = cands[0] if cands else os.path.join(aside, "missing")
                    os.symlink(target, f)
                elif kind == "zero":
                    os.symlink("/dev/zero", f)
                else:
                    os.mkdir(f)
                before = menvtest.sha256_file(target) if target and os.path.isfile(target) \
                    else None
                t.eq(dry_run(t, chan, load, "%s: warm" % what), COLD,
                     "%s: the cold answer" % what)
                if before:
                    t.eq(menvtest.sha256_file(target), before, "%s: target untouched" % what)
                if kind != "folder":
                    t.check(os.path.isfile(f) and not os.path.islink(f),
                            "%s: written again as a regular file" % what)


def case_tmpdir_bad(t):
    chan = test_channel(t)
    notdir = os.path.join(t.tmp, "afile")
    menvtest.write_text(notdir, "x")
    for td in (notdir, os.path.join(t.tmp, "missing")):
        dest = os.path.join(t.tmp, "mirror")
        r = t.menv_run("mirror", "-c", t.url(chan), dest, env={"TMPDIR": td})
        what = "mirror with TMPDIR %s" % os.path.basename(td)
        t.one_line_error(r, what, (td,))
        t.check(not os.path.exists(dest), "%s: no destination made" % what)
        t.check(not os.path.exists(os.path.join(t.tmp, "missing")),
                "%s: TMPDIR not made" % what)


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


def run_limited(t, args, fsize, env=None):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    p = subprocess.run([t.menv] + list(args), capture_output=True, env=t.environ(env),
                       cwd=t.tmp, timeout=60, preexec_fn=limit)
    return menvtest.Result(list(args), p.returncode, p.stdout.decode(errors="replace"),
                           p.stderr.decode(errors="replace"))


def links(r):
    try:
        return sorted(x["dist_name"] for x in json.loads(r.out)["actions"]["LINK"])
    except (ValueError, KeyError, TypeError):
        return None


def case_disk_limits(t):
    chan = test_channel(t)
    cache = os.path.join(t.pkgs, "cache")
    c = ["-c", chan, "--override-channels"]
    first = os.path.join(t.tmp, "first")
    t.menv_ok("create", "-y", "-q", "-p", first, *c, "dependent")
    snap = menvtest.tree_snapshot(first)
    for load in ("full", "sparse"):
        for f in glob.glob(os.path.join(cache, "*")):
            os.unlink(f)
        r = run_limited(t, ["create", "--dry-run", "--json", "-p", os.path.join(t.tmp, "e"),
                            *c, *SPECS], 2000, {"MENV_SOLVER_LOAD": load})
        what = "%s dry-run under a 2000-byte file size limit" % load
        t.eq(r.rc, 0, "%s: succeeds (no SIGXFSZ)" % what)
        t.eq(links(r), COLD, "%s: the cold answer" % what)
        t.eq([n for n in os.listdir(cache) if ".tmp" in n], [],
             "%s: no temporary file left in the cache" % what)
    p = os.path.join(t.tmp, "big")
    r = run_limited(t, ["create", "-y", "-q", "-p", p, *c, "small-executable"], 3000)
    what = "create under a 3000-byte file size limit"
    t.one_line_error(r, what, ("small-executable",))
    t.no_prefix_left(p, what)
    t.check(not os.path.exists(os.path.join(t.pkgs, "small-executable-1.0-0")),
            "%s: no half-extracted package in the cache" % what, os.listdir(t.pkgs))
    t.eq(menvtest.tree_snapshot(first), snap, "%s: the existing environment unchanged" % what)
    t.menv_ok("create", "-y", "-q", "-p", p, *c, "small-executable")
    t.check(os.path.isdir(os.path.join(p, "conda-meta")), "without the limit: created")

    # a read-only repodata cache (bind mount): solves from the JSON, cold and warm
    for f in glob.glob(os.path.join(cache, "*")):
        os.unlink(f)
    srv = t.http_server(t.tmp)
    try:
        for how, url, warm in (("file://", chan, False), ("http:// cold", srv.base + "/chan",
                                                         False),
                               ("http:// warm", srv.base + "/chan", True)):
            for f in glob.glob(os.path.join(cache, "*")):
                os.unlink(f)
            if warm:
                # the http channel's repodata downloaded once, then the cache made read-only
                t.menv_ok("create", "--dry-run", "-p", os.path.join(t.tmp, "e"), "-c", url,
                          "--override-channels", *SPECS)
            before = menvtest.tree_snapshot(cache)
            if subprocess.run(["mount", "--bind", cache, cache],
                              capture_output=True).returncode != 0:
                t.skip_part("cannot bind-mount here")
                return
            try:
                if subprocess.run(["mount", "-o", "remount,ro,bind", cache],
                                  capture_output=True).returncode != 0:
                    t.skip_part("cannot remount read-only here")
                    return
                for load in ("full", "sparse", "sparse"):
                    r = t.menv_run("create", "--dry-run", "--json", "-p",
                                   os.path.join(t.tmp, "e"), "-c", url, "--override-channels",
                                   *SPECS, env={"MENV_SOLVER_LOAD": load})
                    what = "%s channel, read-only repodata cache, %s" % (how, load)
                    if not t.eq(r.rc, 0, "%s: succeeds" % what):
                        print(r)
                    t.eq(links(r), COLD, "%s: the cold answer" % what)
            finally:
                subprocess.run(["umount", cache], capture_output=True)
            t.eq(menvtest.tree_snapshot(cache), before, "%s: the cache left as it was" % how)
    finally:
        srv.stop()


def case_sigint_cache_check(t):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "install"))
    from insttest import pkg
    ch = os.path.join(t.tmp, "many")
    names = ["p%02d" % i for i in range(20)]
    for n in names:
        pkg(ch, n, "1.0", files={"share/%s/a.txt" % n: "%s\n" % n})
    pkg(ch, "app", "1.0", depends=names, files={"share/app/a.txt": "app\n"})
    t.index(ch)
    c = ["-c", t.url(ch), "--override-channels", "-y", "-q"]
    first = os.path.join(t.tmp, "first")
    t.menv_ok("create", "-p", first, *c, "app")
    snap = menvtest.tree_snapshot(first)
    cache = {n: menvtest.tree_snapshot(os.path.join(t.pkgs, n + "-1.0-0")) for n in names}
    gate = os.path.join(t.tmp, "gate")
    os.mkfifo(gate)
    p = os.path.join(t.tmp, "second")
    proc = subprocess.Popen([t.menv, "create", "-p", p, *c, "app"],
                            env=t.environ({"MENV_TEST_GATE_CACHE_CHECK": gate}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=t.tmp)
    deadline = time.time() + 60
    held = False
    while time.time() < deadline and proc.poll() is None and not held:
        try:
            with open("/proc/%d/wchan" % proc.pid) as f:
                held = f.read().strip() in ("wait_for_partner", "fifo_open")
        except OSError:
            pass
        time.sleep(0.02)
    if not t.check(held, "create waits in the cache check's gate"):
        proc.kill()
        proc.communicate()
        return
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # still in the gate: let it go, then it must stop
        with open(gate, "w"):
            pass
        out, err = proc.communicate(timeout=30)
    err = err.decode(errors="replace")
    what = "Ctrl-C in the cache check"
    t.eq(proc.returncode, 130, "%s: exit 130" % what)
    lines = err.splitlines()
    t.check(len(lines) == 1 and lines[0].startswith("menv: error: ") and
            "interrupt" in lines[0], "%s: one line says it was interrupted" % what, err)
    t.no_prefix_left(p, what)
    t.eq(menvtest.tree_snapshot(first), snap, "%s: the other environment unchanged" % what)
    t.eq({n: menvtest.tree_snapshot(os.path.join(t.pkgs, n + "-1.0-0")) for n in names}, cache,
         "%s: every extracted package as it was" % what)
    t.menv_ok("create", "-p", p, *c, "app")
    t.check(os.path.isfile(os.path.join(p, "share", "p19", "a.txt")),
            "%s: the same create then succeeds" % what)


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

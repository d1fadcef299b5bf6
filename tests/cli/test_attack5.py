#!/usr/bin/env python3
"""cli.attack5_<case>: what a fifth outside attack (the $TMPDIR sweep, lock reading, warm
solve caches, the threaded cache check) found, one case each
(python3 test_attack5.py MENV SHARED CASE):

- tmp_fifo_lock: a FIFO named like a run's lock (`$TMPDIR/.menv-4242.lock`; anyone can make
  one in a shared /tmp) held every command's start-up sweep in open() for ever (`env list`
  never returned). The sweep opens it without waiting, sees it is no regular file and leaves
  it; the command runs.
- cache_fifo: a FIFO in the repodata cache where a solve's cache lies (`<solv>.names`,
  `.subN`, `.walkN`, the `.solv` itself: a shared package cache is anyone's) held the solve
  in open() for ever. Each is opened without waiting; what is no regular file counts as no
  cache, the answer is the cold one and the file is written again.
- proxy_error_secret: a proxy_servers value curl refuses ("user:S3c@retPw@127.0.0.1:9", a raw
  '@' in the password; with or without a scheme) failed the download with curl's text
  "Unsupported proxy syntax in 'user:S3c@retPw@...'": the password on stderr and in --json.
  curl's text names the proxy as menv_proxy_redact shows it.
- cache_kind: an extracted package in the cache whose file (paths.json: "hardlink" with its
  size) had become a symlink to /etc/passwd, a folder or a FIFO passed the cache check (only a
  regular file's size was compared): the new environment got the symlink to /etc/passwd (or
  the FIFO), or the link failed. Such a package is damaged: extracted again, the environment
  gets the package's own bytes.
"""
import glob
import json
import os
import sys

import menvtest


def case_tmp_fifo_lock(t):
    td = os.path.join(t.tmp, "td")
    os.makedirs(td)
    os.mkfifo(os.path.join(td, ".menv-4242.lock"))
    os.mkdir(os.path.join(td, "menv-pip-4242-abcdef"))
    try:
        r = t.menv_run("env", "list", env={"TMPDIR": td}, timeout=20)
    except menvtest.Fatal as e:
        t.check(False, "env list with a FIFO lock in $TMPDIR returns", e)
        return
    t.eq(r.rc, 0, "env list with a FIFO lock in $TMPDIR succeeds")
    t.check(t.root in r.out, "env list names the base environment", r)
    t.eq(sorted(os.listdir(td)), [".menv-4242.lock", "menv-pip-4242-abcdef"],
         "what the FIFO 'locks' is left alone")


def case_cache_fifo(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("big", {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})
    cache = os.path.join(t.pkgs, "cache")
    specs = ("dependent", "another_dependent", "buildstring")

    def solve(load, what):
        try:
            r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-c", chan,
                           "--override-channels", "--dry-run", "--json", "-y", *specs,
                           env={"MENV_SOLVER_LOAD": load}, timeout=30)
        except menvtest.Fatal as e:
            t.check(False, "%s: the solve returns" % what, e)
            return None
        t.eq(r.rc, 0, "%s: the solve succeeds" % what)
        try:
            return sorted(x["dist_name"] for x in json.loads(r.out)["actions"]["LINK"])
        except (ValueError, KeyError, TypeError):
            t.check(False, "%s: JSON with LINK actions" % what, r)
            return None

    for load, pats in (("sparse", ("*.solv.names", "*.solv.sub*", "*.solv.walk*")),
                       ("full", ("*.solv",))):
        cold = solve(load, "%s cold" % load)
        t.eq(cold, ["another_dependent-2.0-0", "buildstring-1.0-versioned_2",
                    "dependency-2.0-0", "dependent-2.0-0", "versioned-2.0-0"],
             "%s cold: the answer" % load)
        for pat in pats:
            files = glob.glob(os.path.join(cache, pat))
            t.check(files, "%s: a cache %s was written" % (load, pat), os.listdir(cache))
            for f in files:
                os.unlink(f)
                os.mkfifo(f)
            t.eq(solve(load, "%s, %s a FIFO" % (load, pat)), cold,
                 "%s, %s a FIFO: the cold answer" % (load, pat))


def case_proxy_error_secret(t):
    for proxy in ("user:S3c@retPw@127.0.0.1:9", "http://user:S3c@retPw@127.0.0.1:9"):
        t.set_rc('proxy_servers:\n  http: "%s"\n' % proxy)
        for args in ([], ["--json"]):
            r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-c",
                           "http://127.0.0.1:8/chan", "--override-channels", "--dry-run", "-y",
                           "dependent", *args)
            what = "proxy %s %s" % (proxy.split("user")[0] or "(no scheme)", args)
            t.check(r.rc != 0, "%s: the download fails" % what, r)
            t.check("127.0.0.1:8/chan" in r.out + r.err, "%s: the error names the URL" % what,
                    r)
            t.check("S3c" not in r.out + r.err, "%s: no password printed" % what, r)


def case_cache_kind(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "small-executable-1.0-0.conda")]})
    args = ("-c", chan, "--override-channels", "-y", "-q", "small-executable")
    t.menv_ok("create", "-p", os.path.join(t.tmp, "first"), *args)
    rel = os.path.join("etc", "conda", "activate.d", "small_executable.sh")
    f = os.path.join(t.pkgs, "small-executable-1.0-0", rel)
    with open(f, "rb") as fh:
        want = fh.read()
    for kind in ("symlink", "folder", "fifo"):
        os.unlink(f) if not os.path.isdir(f) or os.path.islink(f) else os.rmdir(f)
        if kind == "symlink":
            os.symlink("/etc/passwd", f)
        elif kind == "folder":
            os.mkdir(f)
        else:
            os.mkfifo(f)
        p = os.path.join(t.tmp, "e-" + kind)
        r = t.menv_run("create", "-p", p, "--offline", *args, timeout=60)
        t.eq(r.rc, 0, "%s in the cache: create succeeds" % kind)
        got = os.path.join(p, rel)
        t.check(os.path.isfile(got) and not os.path.islink(got),
                "%s in the cache: the environment gets a regular file" % kind,
                os.path.lexists(got) and os.lstat(got))
        if os.path.isfile(got) and not os.path.islink(got):
            with open(got, "rb") as fh:
                t.eq(fh.read(), want, "%s in the cache: the package's own bytes" % kind)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.attack3_<case>: what a third outside attack (lock reading, the .pyc cache, Ctrl-C around
the commit point, threaded linking, path settings) found, one case each
(python3 test_attack3.py MENV SHARED CASE):

- lock_json_secret: `create --json -f LOCK` (and `--dry-run --json`) of a conda-lock or
  explicit lock whose URLs hold user:password and /t/TOKEN/ printed them in every LINK and
  FETCH entry's `url`: menv_record_json redacts the URLs it shows, for every command.
"""
import os
import re
import shutil
import sys

import menvtest
from menvtest import write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")
CANARY = "Cnry"


def served_lock(t, http_base):
    """An environment of `dependent` from a served channel, and its conda-lock and explicit
    exports with user:password and a /t/TOKEN/ put into every package URL."""
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, "-c", http_base + "/chan", "--override-channels", "-y",
              "-q", "dependent")
    cred = http_base.replace("http://", "http://u:%sPw@" % CANARY) + "/t/tk-%sTok/chan" % CANARY
    out = []
    for args, name in ((["export"], "c-lock.yml"), (["list", "--explicit", "--md5"], "ex.txt")):
        text = t.menv_ok(*args, "-p", src).out
        t.check(http_base + "/chan/noarch/" in text, "%s: the export names the channel" % name,
                text)
        f = os.path.join(t.tmp, name)
        write_text(f, text.replace(http_base + "/chan/", cred + "/"))
        out.append(f)
    return out


def case_lock_json_secret(t):
    P = os.path.join(t.corpus, *NOARCH)
    srv = os.path.join(t.tmp, "srv")
    for chan in (os.path.join(srv, "chan"), os.path.join(srv, "t", "tk-%sTok" % CANARY, "chan")):
        os.makedirs(os.path.join(chan, "noarch"))
        for fn in ("dependency-1.0-0.conda", "dependent-1.0-0.conda"):
            shutil.copyfile(os.path.join(P, fn), os.path.join(chan, "noarch", fn))
        t.index(chan)
    http = t.http_server(srv)
    try:
        for lock in served_lock(t, http.base):
            for args in (["--dry-run", "--json"], ["--json"]):
                p = os.path.join(t.tmp, "e")
                shutil.rmtree(t.pkgs, ignore_errors=True)
                r = t.menv_run("create", "-p", p, "-f", lock, "-y", *args)
                what = "create -f %s %s" % (os.path.basename(lock), " ".join(args))
                t.check(r.rc == 0, "%s: succeeds" % what, r)
                t.check(CANARY not in r.out + r.err, "%s: no credentials or token printed"
                        % what, r)
                urls = [x["url"] for x in r.json()["actions"]["LINK"]] if r.rc == 0 else []
                t.eq(urls, [http.base + "/t/<TOKEN>/chan/noarch/%s-1.0-0.conda" % n
                            for n in ("dependency", "dependent")],
                     "%s: LINK names the URLs redacted" % what)
                shutil.rmtree(p, ignore_errors=True)
    finally:
        http.stop()


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.attack_<case>: what an outside attack on the last merges found, one case each
(python3 test_attack.py MENV SHARED CASE):

- error_secret: an error message quoting what the user gave (a `config --remove channels`
  value that is not in the list) held its password: every error's text is redacted where it
  is made (menv_error_set), so no message of any command can carry one.
"""
import os
import sys

import menvtest
from menvtest import write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")
CANARY = "Cnry"


def channel(t):
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    return ["-c", t.url(chan), "--override-channels", "-q", "-y"]


def no_canary(t, r, what):
    t.check(CANARY not in r.out and CANARY not in r.err, "%s: no secret in the output" % what,
            r)


def case_error_secret(t):
    url = "http://u:%sPw@127.0.0.1:1/zzz" % CANARY
    write_text(t.rc, "channels:\n  - http://127.0.0.1:1/chan\n")
    for js in ([], ["--json"]):
        r = t.menv_run("config", "--remove", "channels", url, *js)
        t.check(r.rc == 1, "config --remove of a value not listed fails %s" % js, r)
        t.check("127.0.0.1:1/zzz" in r.err + r.out, "the error names the value %s" % js, r)
        no_canary(t, r, "config --remove %s" % js)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

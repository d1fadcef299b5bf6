#!/usr/bin/env python3
"""cli.no_shell: a prefix is a path, never shell text.

`menv doctor -p "<tmp>/q'$(touch${IFS}PWNED)'x"` on an environment with bin/nvcc and bin/g++
runs both (their versions are in the report: they started from an argv array) and creates
no PWNED file anywhere (a popen() string built from the prefix ran the $(...) before).
The same prefix goes through list, run, install and env remove.
"""
import os

import menvtest
from menvtest import write_text

NVCC = """#!/bin/sh
[ "$1" = --version ] || exit 2
echo 'nvcc: NVIDIA (R) Cuda compiler driver'
echo 'Cuda compilation tools, release 11.8, V11.8.89'
echo 'Build cuda_11.8.r11.8/compiler.31833905_0'
"""
GXX = """#!/bin/sh
[ "$1" = -dumpfullversion ] || exit 2
echo 11.3.0
"""


def pwned(top):
    return [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if "PWNED" in f]


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    work = os.path.join(t.tmp, "work")
    os.makedirs(work)
    prefix = os.path.join(t.tmp, "q'$(touch${IFS}PWNED)'x")
    # create refuses quotes in a new prefix; an existing one can still be moved there
    r = t.menv_run("create", "-p", prefix, "-c", t.url(chan), "--override-channels", "-y",
                   "dependency", cwd=work)
    t.one_line_error(r, "create -p with a quote in the path", ["quote"], nonzero_only=True)
    t.menv_ok("create", "-p", os.path.join(t.tmp, "plain"), "-c", t.url(chan),
              "--override-channels", "-y", "dependency", cwd=work)
    os.rename(os.path.join(t.tmp, "plain"), prefix)
    for name, text in (("nvcc", NVCC), ("g++", GXX)):
        p = os.path.join(prefix, "bin", name)
        write_text(p, text)
        os.chmod(p, 0o755)
    r = t.menv_run("doctor", "-p", prefix, cwd=work)
    t.check("nvcc 11.8: %s/bin/nvcc" % prefix in r.out,
            "doctor ran the environment's nvcc (its version is reported)", r)
    t.check("host compiler g++ 11.3.0: %s/bin/g++" % prefix in r.out,
            "doctor ran the environment's g++ (its version is reported)", r)
    r = t.menv_run("doctor", "-p", prefix, "--json", cwd=work)
    t.check(r.try_json() is not None, "doctor --json on the prefix", r)
    for cmd in (("list", "-p", prefix), ("run", "-p", prefix, "true"),
                ("install", "-p", prefix, "-c", t.url(chan), "--override-channels", "-y",
                 "dependency"), ("env", "remove", "-p", prefix, "-y")):
        t.menv_run(*cmd, cwd=work)  # refused or done: either way no shell
    t.eq(pwned(t.tmp), [], "no PWNED file: no shell ran the prefix's text")
    t.eq(pwned(os.getcwd()), [], "no PWNED file in the test's working directory")


if __name__ == "__main__":
    menvtest.main(body)

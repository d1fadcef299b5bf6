#!/usr/bin/env python3
"""cli.attack5_<case>: what a fifth outside attack (the $TMPDIR sweep, lock reading, warm
solve caches, the threaded cache check) found, one case each
(python3 test_attack5.py MENV SHARED CASE):

- tmp_fifo_lock: a FIFO named like a run's lock (`$TMPDIR/.menv-4242.lock`; anyone can make
  one in a shared /tmp) held every command's start-up sweep in open() for ever (`env list`
  never returned). The sweep opens it without waiting, sees it is no regular file and leaves
  it; the command runs.
"""
import os
import subprocess
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


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.fifo_files: a file menv must read whole is a regular file, or one line of error.

A FIFO named conda-meta/x-1-0.json made `list`, `doctor`, `install` and `env remove` hang
forever (the record reader opened it and waited for a writer that never came); so did a FIFO
at ~/.condarc for every command. Now each read refuses it at once: exit 1, one line naming
the file and "not a regular file"; a directory named y-1-0.json likewise. `env remove` still
removes the environment (it tolerates unreadable records). Every run is under a timeout, so
the old hang fails the test instead of stalling it.
"""
import os
import shutil

import menvtest


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = os.path.join(t.tmp, "chan")
    os.makedirs(os.path.join(chan, "noarch"))
    shutil.copyfile(os.path.join(P, "dependency-1.0-0.conda"),
                    os.path.join(chan, "noarch", "dependency-1.0-0.conda"))
    t.index(chan)
    for kind in ("FIFO", "directory"):
        prefix = os.path.join(t.tmp, "env-" + kind)
        t.menv_ok("create", "-y", "-p", prefix)
        bad = os.path.join(prefix, "conda-meta", "x-1-0.json")
        if kind == "FIFO":
            os.mkfifo(bad)
        else:
            os.mkdir(bad)
        needles = ["'%s'" % bad, "not a regular file (a %s)" % (kind if kind == "FIFO" else "directory")]
        for args in (["list", "-p", prefix], ["doctor", "-p", prefix],
                     ["install", "-y", "-p", prefix, "-c", chan, "--override-channels",
                      "dependency"]):
            r = t.menv_run(*args, timeout=60)
            t.check(r.rc == 1, "%s: menv %s exits 1" % (kind, args[0]), r)
            t.check(any(all(n in line for n in needles) for line in (r.err + r.out).splitlines()),
                    "%s: menv %s names the file, not a regular file" % (kind, args[0]), r)
        t.check(not os.path.exists(os.path.join(prefix, "conda-meta", "dependency-1.0-0.json")),
                "%s: nothing was installed" % kind)
        r = t.menv_run("env", "remove", "-y", "-p", prefix, timeout=60)
        t.eq(r.rc, 0, "%s: env remove still works" % kind)
        t.check(not os.path.exists(prefix), "%s: env remove removed the environment" % kind, r)
    # a FIFO at ~/.condarc: refused, not waited on
    rc = os.path.join(t.home, ".condarc")
    os.mkfifo(rc)
    r = t.menv_run("config", "--show-sources", timeout=60)
    t.one_line_error(r, "~/.condarc a FIFO", ["'%s'" % rc, "not a regular file (a FIFO)"])
    os.unlink(rc)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.run_stdin: `menv run` gives the command its own stdin (issue 22): the activation
scripts (etc/conda/activate.d) run with /dev/null as theirs, so a script that reads a line
takes nothing from what is piped to the command. `printf 'a\\nb\\n' | menv run -p E cat`
prints both lines; the script itself sees end of file.
"""
import os
import subprocess

import menvtest
from menvtest import build_tar_bz2

READER = b"""if read -r __menv_line; then echo "script read: $__menv_line" >&2; \
else echo "script read: EOF" >&2; fi
unset __menv_line
"""


def body(t):
    chan = os.path.join(t.tmp, "chan")
    build_tar_bz2(os.path.join(chan, "linux-64", "reader-1.0-0.tar.bz2"),
                  {"name": "reader", "version": "1.0", "build": "0", "build_number": 0,
                   "depends": [], "subdir": "linux-64"},
                  files={"etc/conda/activate.d/reader.sh": READER})
    t.index(chan)
    env = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-p", env, "-c", t.url(chan), "--override-channels", "-q", "-y",
              "--no-smoke-check", "reader")
    p = subprocess.run([t.menv, "run", "-p", env, "cat"], input=b"a\nb\n", capture_output=True,
                       env=t.environ(), cwd=t.tmp, timeout=60)
    t.eq(p.returncode, 0, "menv run cat: exit 0")
    t.eq(p.stdout, b"a\nb\n", "menv run cat: the command reads all of its stdin")
    t.check(b"script read: EOF" in p.stderr,
            "the activate.d script reads end of file (/dev/null)", p.stderr)
    # an interactive-looking command gets the same descriptor menv got, not a copy
    r, w = os.pipe()
    os.write(w, b"x\n")
    os.close(w)
    p = subprocess.run([t.menv, "run", "-p", env, "sh", "-c", "read -r l; echo got:$l"],
                       stdin=r, capture_output=True, env=t.environ(), cwd=t.tmp, timeout=60)
    os.close(r)
    t.eq(p.stdout, b"got:x\n", "menv run sh -c read: the first line is the command's")


if __name__ == "__main__":
    menvtest.main(body)

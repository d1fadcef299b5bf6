#!/usr/bin/env python3
"""cli.shell_rc: `menv shell init` then `menv shell deinit` gives the rc file back byte for
byte (issue 22): a last line without a line break (init adds one before its block), with
one, an empty file, no file at all (deinit removes the file init made), init run twice; for
bash, zsh and fish. Text the user adds after the block keeps its own line breaks.
"""
import os

import menvtest

CASES = [
    ("no final newline", b"export A=1\nalias l=ls"),
    ("final newline", b"export A=1\nalias l=ls\n"),
    ("blank lines at the end", b"export A=1\n\n\n"),
    ("empty", b""),
    ("no file", None),
]


def read(path):
    if not os.path.lexists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def body(t):
    for shell in ("bash", "zsh", "fish"):
        for what, before in CASES:
            for times in (1, 2):
                rc = os.path.join(t.tmp, "rc-%s" % shell)
                if os.path.lexists(rc):
                    os.unlink(rc)
                if before is not None:
                    with open(rc, "wb") as f:
                        f.write(before)
                label = "%s, %s, init x%d" % (shell, what, times)
                for _ in range(times):
                    t.menv_ok("shell", "init", "--shell", shell, "--rc-file", rc)
                mid = read(rc)
                t.check(mid is not None and b"# >>> menv initialize >>>" in mid,
                        "%s: init wrote its block" % label, mid)
                if before:
                    t.check(mid.startswith(before.rstrip(b"\n")),
                            "%s: init kept the file's text" % label, mid)
                t.menv_ok("shell", "deinit", "--shell", shell, "--rc-file", rc)
                t.eq(read(rc), before, "%s, deinit: the rc file byte-identical" % label)
    # what the user wrote after the block stays, line breaks and all
    rc = os.path.join(t.tmp, "rc-after")
    with open(rc, "wb") as f:
        f.write(b"export A=1")
    t.menv_ok("shell", "init", "--shell", "bash", "--rc-file", rc)
    with open(rc, "ab") as f:
        f.write(b"export B=2\n")
    t.menv_ok("shell", "deinit", "--shell", "bash", "--rc-file", rc)
    t.eq(read(rc), b"export A=1\nexport B=2\n",
         "deinit with lines after the block: they keep their line break")


if __name__ == "__main__":
    menvtest.main(body)

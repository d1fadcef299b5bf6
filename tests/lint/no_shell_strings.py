#!/usr/bin/env python3
"""lint.no_shell_strings: no child process of menv starts from a shell string.

Fails (exit 1, one line per hit: FILE:LINE: text) when `popen(` or `system(` is called in
cli/ specs/ solver/ fetch/ envs/ (comments and string literals are left out, so a comment
may still name them). Children start from an argv array (posix_spawn, execve); see
DESIGN.md "No shell strings".

    python3 no_shell_strings.py SOURCE_DIR
"""
import os
import re
import sys

DIRS = ("cli", "specs", "solver", "fetch", "envs")
CALL = re.compile(r"\b(popen|system)\s*\(")
TOKEN = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(m):
    """A comment or literal as spaces, its newlines kept (line numbers stay right)."""
    return re.sub(r"[^\n]", " ", m.group(0))


def hits(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = TOKEN.sub(blank, text)
    lines = text.splitlines()
    for i, line in enumerate(code.splitlines()):
        if CALL.search(line):
            yield i + 1, lines[i].strip()


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    found = checked = 0
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(src, d)):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                checked += 1
                p = os.path.join(dirpath, fn)
                for n, text in hits(p):
                    print("%s:%d: a shell string (use posix_spawn/execve): %s"
                          % (os.path.relpath(p, src), n, text))
                    found += 1
    if checked < 20:
        print("only %d source files under %s: wrong SOURCE_DIR?" % (checked, src))
        return 1
    print("%d files, %d shell strings" % (checked, found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""lint.no_shell_strings: no child process of menv starts from a shell string.

Fails (exit 1, one line per hit: FILE:LINE: text) in the C sources of cli/ specs/ solver/
fetch/ envs/ bench/ (comments and string literals are left out, so a comment may still name
them) when

- `popen(` or `system(` is called;
- a `-c` option (the literal "-c", or a cluster of short options holding c such as "-ec")
  appears outside envs/child.c: a shell takes its script text after -c, so the one place that
  builds such an argv is menv_sh_argv() there, whose macro pastes the script between two ""
  so that only a string literal compiles (data reaches the script as $0, $1... or the
  environment). The few "-c" that are no shell's are listed in ALLOWED with the reason;
- menv_sh_argv_() (the function behind the macro) is called anywhere but in child.c, or the
  macro stops pasting its script between two "".

Before it reads the tree it checks itself on snippets that must be flagged (and ones that
must not), so it cannot pass by matching nothing. See DESIGN.md "No shell strings".

    python3 no_shell_strings.py SOURCE_DIR
"""
import os
import re
import sys

DIRS = ("cli", "specs", "solver", "fetch", "envs", "bench")
HELPER = os.path.join("envs", "child.c")
HELPER_H = os.path.join("envs", "child.h")
MACRO = re.compile(r'#define\s+menv_sh_argv\(shell,\s*script,[^)]*\)\s*\\?\s*'
                   r'menv_sh_argv_\(\(shell\),\s*""\s*script\s*"",')
CALL = re.compile(r"\b(popen|system)\s*\(")
HELPER_CALL = re.compile(r"\bmenv_sh_argv_\s*\(")
TOKEN = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
DASH_C = re.compile(r'"-[a-zA-Z]*c[a-zA-Z]*"')
# (file, text on the line): each a "-c" that is no shell's
ALLOWED = {
    # lbzip2 -d -c: decompress to stdout
    (os.path.join("fetch", "archive.c"), 'char *argv[] = {bin, (char *)"-d", (char *)"-c", NULL};'),
    # pip's requirement-file options, matched in a requirements file's lines
    (os.path.join("envs", "pip.c"), 'static const char *const opts[] = {"-r", "--requirement", "-c", "--constraint",'),
}


def blank(m):
    """A comment or literal as spaces, its newlines kept (line numbers stay right); a
    string literal keeps its quotes, so that a code line still shows where one was."""
    t = m.group(0)
    if t.startswith('"'):
        return '"' + re.sub(r"[^\n]", " ", t[1:-1]) + '"'
    return re.sub(r"[^\n]", " ", t)


def no_comments(text):
    """The text with its comments blanked, string literals kept."""
    return TOKEN.sub(lambda m: blank(m) if m.group(0).startswith("/") else m.group(0), text)


def hits(rel, text):
    """(line, why, text) for each shell string in one source file's text."""
    code = TOKEN.sub(blank, text)
    lits = no_comments(text)
    lines = text.splitlines()
    for i, (line, lit) in enumerate(zip(code.splitlines(), lits.splitlines())):
        src = lines[i].strip()
        if CALL.search(line):
            yield i + 1, "a shell string (use posix_spawn/execve)", src
        if DASH_C.search(lit) and rel != HELPER and (rel, src) not in ALLOWED:
            yield i + 1, "a -c outside menv_sh_argv (a shell's script must be a literal)", src
        if HELPER_CALL.search(line) and rel not in (HELPER, HELPER_H):
            yield i + 1, "menv_sh_argv_ called past its macro", src
    if rel == HELPER_H and not MACRO.search(text):
        yield 1, "menv_sh_argv no longer pastes its script between two \"\"", "menv_sh_argv"


SELF_TEST = [
    # (file, snippet, flagged)
    ("envs/x.c", 'FILE *f = popen(cmd, "r");', True),
    ("bench/x.c", "int rc = system(cmd);", True),
    ("envs/x.c", 'execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);', True),
    ("envs/x.c", 'argv[1] = (char *)"-c";', True),
    ("cli/x.c", 'char *a[] = {"bash", "-ec", script, NULL};', True),
    ("envs/x.c", "char **a = menv_sh_argv_(sh, text, \"sh\", NULL, 0);", True),
    ("envs/child.h", "#define menv_sh_argv(shell, script, name, args, nargs) \\\n"
     "\tmenv_sh_argv_((shell), script, (name), (args), (nargs))", True),
    ("envs/x.c", 'char **a = menv_sh_argv("/bin/sh", "exec \\"$1\\"", "sh", args, 1);', False),
    ("envs/x.c", '/* never popen() or system(), nor "-c" */ int systems(void);', False),
    ("envs/x.c", 'msg("run system(x) with sh -c");', False),
    ("envs/child.c", 'argv[1] = (char *)"-c";', False),
    ("envs/child.h", "#define menv_sh_argv(shell, script, name, args, nargs) \\\n"
     "\tmenv_sh_argv_((shell), \"\" script \"\", (name), (args), (nargs))", False),
]


def self_test():
    bad = 0
    for rel, snippet, flagged in SELF_TEST:
        got = bool(list(hits(os.path.normpath(rel), snippet)))
        if got != flagged:
            print("lint self-test: %s in %s: %s, expected %s"
                  % (snippet, rel, "flagged" if got else "passed",
                     "flagged" if flagged else "passed"))
            bad += 1
    return bad


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    if self_test():
        return 1
    found = checked = 0
    seen = set()
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(src, d)):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                checked += 1
                p = os.path.join(dirpath, fn)
                rel = os.path.relpath(p, src)
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if rel in (HELPER, HELPER_H):
                    seen.add(rel)
                for n, why, line in hits(rel, text):
                    print("%s:%d: %s: %s" % (rel, n, why, line))
                    found += 1
    if checked < 20 or len(seen) < 2:
        print("only %d source files under %s (%s missing): wrong SOURCE_DIR?"
              % (checked, src, ", ".join(sorted({HELPER, HELPER_H} - seen)) or "none"))
        return 1
    print("%d files, %d shell strings" % (checked, found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

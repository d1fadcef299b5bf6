#!/usr/bin/env python3
"""cli.input_types_<case>: issue 22's "Types" and "records are text we can read back" for the
files a user hands menv (environment files, lockfiles, .condarc): bad input gets one line
naming FILE:LINE(:COL), a non-zero exit, and nothing is created; what conda reads, menv reads
the same way (python3 test_input_types.py MENV SHARED CASE):

- lock_lines: a control character in an explicit lock's URL or a pixi entry's name named no
  line; an error the plan finds in a conda-lock entry (`create -f LOCK`, `install -f LOCK`:
  a URL that is no URL, a package file that is another package) named neither the lock nor
  the line. Now FILE:LINE: of the entry, the dry run's line the create's.
- lock_values: a conda-lock `dependencies` value that is a mapping or a list was read as "any
  version", `platform: 64` (a number) left the entry out silently (conda-lock's model takes
  strings only), and a `- ~` entry's error had no column: each is refused with FILE:LINE:COL.
- merge_keys: YAML merge keys (`<<: *anchor`) were kept as a key named "<<". A conda-lock
  file merges them as conda-lock (a YAML 1.1 loader) does, an environment file's mappings
  as conda does (its variables); where conda's round-trip reader drops merged keys (the
  top level of an environment file, .condarc) they are refused with FILE:LINE:COL.
- envfile_null: `dependencies: ~` is read as none with conda's warning (FILE:LINE:COL; conda
  26.7: "Invalid type for 'dependencies', expected a list", to be refused in 26.9), exit 0;
  `pip: ~` is `pip: []`: pip joins the conda side (BR-003), as conda adds it.
- lock_pip_python: an explicit lock with a pip line but no python passed `create --dry-run`
  and failed the create's pip step; the dry run fails with the create's line.
"""
import json
import os
import re
import sys

import menvtest
from menvtest import write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")


def channel(t, names=("dependency-1.0-0", "dependent-1.0-0")):
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, n + ".conda") for n in names]})
    return chan, ["-c", t.url(chan), "--override-channels"]


def exports(t):
    """The conda-lock and explicit exports of `dependent` from a file:// channel."""
    chan, C = channel(t)
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, *C, "-y", "-q", "dependent")
    return (t.menv_ok("export", "-p", src).out,
            t.menv_ok("list", "-p", src, "--explicit", "--md5").out, C)


def line_of(text, needle, nth=0):
    """The 1-based line of the nth line of `text` starting with `needle` (after blanks)."""
    hits = [i + 1 for i, ln in enumerate(text.split("\n")) if ln.lstrip().startswith(needle)]
    return hits[nth]


def refused_both_ways(t, what, f, needles, args=("create",), prefix=None):
    """`ARGS -p PREFIX -f F` with and without --dry-run: one line with every needle, exit 1,
    no prefix left (a create's); the two lines are the same."""
    lines = []
    for dry in (["--dry-run"], []):
        p = prefix or os.path.join(t.tmp, "new")
        r = t.menv_run(*args, "-p", p, "-f", f, "-y", "-q", *dry)
        t.one_line_error(r, "%s %s" % (what, dry), needles)
        if args[0] == "create":
            t.no_prefix_left(p, "%s %s" % (what, dry))
        lines.append(r.err)
    t.eq(lines[0], lines[1], "%s: the dry run says what the real command says" % what)


def case_lock_lines(t):
    lock, explicit, C = exports(t)
    # an explicit lock's URL with a control character inside it (its file name intact)
    at = line_of(explicit, "file://")
    bad = explicit.replace("file://", "file:///x\x01", 1)
    f = os.path.join(t.tmp, "ctl.txt")
    write_text(f, bad)
    refused_both_ways(t, "explicit control character", f,
                      ["%s:%d: package entry 1 ('dependency'): its url holds a control "
                       "character" % (f, at)])
    # a pixi lock's entry name with ESC: the line of its `packages` item
    url = re.search(r"(file://\S*/dependency-1.0-0.conda)", explicit).group(1)
    pixi = ("version: 6\nenvironments:\n  default:\n    channels:\n      - url: %s\n"
            "    packages:\n      linux-64:\n      - conda: %s\npackages:\n"
            "- conda: %s\n  name: \"depen\\edency\"\n" % (t.url(C[1][len("file://"):]), url,
                                                        url))
    f = os.path.join(t.tmp, "pixi.lock")
    write_text(f, pixi)
    refused_both_ways(t, "pixi control character", f,
                      ["%s:10: package entry 1 ('depen\\x1bdency'): its name holds a "
                       "control character" % f])
    # errors the plan finds name the lock and the entry's line, for create and install
    entry2 = line_of(lock, "- name: dependent")
    wrong = lock.replace("name: dependent\n", "name: zzz\n")
    rel = re.sub(r"url: file://\S*/(dependent-1.0-0.conda)", r"url: chan/noarch/\1", lock)
    base = os.path.join(t.tmp, "base")
    t.menv_ok("create", "-p", base, "-y", "-q", *C)
    for what, text, needle in (
            ("another package", wrong, "lockfile entry 'zzz 1.0 0': the package file "
             "'dependent-1.0-0.conda' is dependent 1.0 0"),
            ("a path for a URL", rel, "lockfile entry 'dependent 1.0 0': its url "
             "'chan/noarch/dependent-1.0-0.conda' is not a URL")):
        t.check(text != lock, "%s: the lock was changed" % what)
        f = os.path.join(t.tmp, "bad-lock.yml")
        write_text(f, text)
        refused_both_ways(t, "create: " + what, f, ["%s:%d: %s" % (f, entry2, needle)])
        before = t.menv_ok("list", "-p", base, "--json").out
        refused_both_ways(t, "install: " + what, f, ["%s:%d: %s" % (f, entry2, needle)],
                          args=("install",), prefix=base)
        t.eq(t.menv_ok("list", "-p", base, "--json").out, before,
             "install: %s: the environment is as it was" % what)


def case_lock_values(t):
    lock, _, C = exports(t)
    deps = line_of(lock, "dependency: \">=1.0,<2.0a0\"")
    first = line_of(lock, "- name: dependency")
    cases = [
        ("a mapping", lock.replace('dependency: ">=1.0,<2.0a0"', "dependency: {v: '>=1'}"),
         "%d:7: package entry 2 ('dependent'): the dependency 'dependency' is a mapping, "
         "not a version" % deps),
        ("a list", lock.replace('dependency: ">=1.0,<2.0a0"', "dependency: ['>=1']"),
         "%d:7: package entry 2 ('dependent'): the dependency 'dependency' is a list" % deps),
        ("platform a number", lock.replace("platform: linux-64", "platform: 64", 2),
         "package entry 1 ('dependency'): its platform 64 is not a string"),
        ("an entry ~", lock.replace("  - name: dependency\n", "  - ~\n  - name: dependency\n"),
         "%d:5: package entry 1 is not a mapping" % first),
    ]
    for what, text, needle in cases:
        t.check(text != lock, "%s: the lock was changed" % what)
        for anchor in (False, True):
            # an anchor sends the file to the general reader: the same line
            body = text.replace("version: 1\n", "version: &v 1\n", 1) if anchor else text
            f = os.path.join(t.tmp, "bad-lock.yml")
            write_text(f, body)
            w = "%s%s" % (what, " (general reader)" if anchor else "")
            refused_both_ways(t, w, f, [f + ":" + needle if needle[0].isdigit() else needle])
            r = t.menv_run("create", "-p", os.path.join(t.tmp, "n"), "-f", f, "--dry-run")
            t.check(re.match(r"menv: error: %s:\d+:\d+: " % re.escape(f), r.err),
                    "%s: FILE:LINE:COL" % w, r.err)
    # the platform's line: the first entry's `platform:` key
    f = os.path.join(t.tmp, "bad-lock.yml")
    write_text(f, lock.replace("platform: linux-64", "platform: 64", 2))
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "n"), "-f", f, "--dry-run")
    t.check(("%s:%d:5: package entry 1" % (f, line_of(lock, "platform: linux-64"))) in r.err,
            "platform a number: the line of the entry's platform", r.err)


def case_merge_keys(t):
    chan, C = channel(t)
    # an environment file: a mapping's merge resolved as conda resolves it (conda 26.7 stores
    # these variables as C = 3, A = 1, B = 2)
    env = os.path.join(t.tmp, "env.yml")
    write_text(env, "common: &c {A: '1', C: '9'}\nname: merged\ndependencies: [dependent]\n"
                    "variables:\n  <<: [*c, {A: '7', B: '2'}]\n  C: '3'\n")
    p = os.path.join(t.tmp, "e")
    t.menv_ok("create", "-p", p, "-f", env, *C, "-y", "-q")
    state = json.load(open(os.path.join(p, "conda-meta", "state")))
    t.eq(list(state["env_vars"].items()), [("C", "3"), ("A", "1"), ("B", "2")],
         "env file: the variables of the mapping and its merges, conda's values and order")
    # at the top level conda drops what is merged (it created an environment without the
    # merged dependencies): refused with the line, nothing created
    for text, line, col, needle in (
            ("common: &c\n  dependencies: [dependent]\nname: x\n<<: *c\n", 4, 1,
             "a merge key ('<<'): conda's environment file reader drops what is merged at its "
             "top level; write the keys out"),
            ("name: x\nvariables:\n  <<: 3\n", 3, 7,
             "a merge key ('<<') takes a mapping or a list of mappings")):
        bad = os.path.join(t.tmp, "bad.yml")
        write_text(bad, text)
        n = os.path.join(t.tmp, "n")
        for dry in (["--dry-run"], ["-y"]):
            r = t.menv_run("create", "-p", n, "-f", bad, *C, *dry)
            t.one_line_error(r, "env file %s %s" % (needle[:30], dry),
                             ["%s:%d:%d: %s" % (bad, line, col, needle)])
            t.no_prefix_left(n, "env file %s %s" % (needle[:30], dry))
    # a conda-lock file whose entries merge their common keys (conda-lock: PyYAML)
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, *C, "-y", "-q", "dependent")
    lock = t.menv_ok("export", "-p", src).out
    common = "    manager: conda\n    platform: linux-64\n"
    t.eq(lock.count(common), 2, "the export's entries say manager and platform")
    merged = lock.replace(common, "    <<: &mp {manager: conda, platform: linux-64}\n", 1)
    merged = merged.replace(common, "    <<: *mp\n", 1)
    f = os.path.join(t.tmp, "merged-lock.yml")
    write_text(f, merged)
    p2 = os.path.join(t.tmp, "from-lock")
    t.menv_ok("create", "-p", p2, "-f", f, "-y", "-q")
    t.eq(sorted(x["name"] for x in json.loads(
        t.menv_ok("list", "-p", p2, "--json").out)), ["dependency", "dependent"],
         "conda-lock with merge keys: both entries installed")
    # .condarc: refused with its line, config --show and a create alike
    t.set_rc("common: &c\n  channels: [%s]\n<<: *c\n" % t.url(chan))
    for args in (["config", "--show", "channels"],
                 ["create", "-p", os.path.join(t.tmp, "n"), "--dry-run", "dependent"]):
        r = t.menv_run(*args)
        t.one_line_error(r, ".condarc merge: " + args[0],
                         [":3:1: a merge key ('<<'): conda's .condarc reader drops what it "
                          "merges"])
    t.check(not os.path.exists(os.path.join(t.tmp, "n")), ".condarc merge: nothing created")


def case_envfile_null(t):
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, n + ".conda") for n in
                                              ("python-3.99.99-0", "pip-99.99.99-py399_0")]})
    C = ["-c", t.url(chan), "--override-channels"]
    f = os.path.join(t.tmp, "null.yml")
    write_text(f, "name: x\ndependencies: ~\n")
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-f", f, *C, "--dry-run")
    t.check(r.rc == 0, "dependencies: ~ is read (conda reads it as none)", r)
    t.eq(r.err_lines(), ["menv: warning: %s:2:15: 'dependencies' has no value: read as no "
                         "dependencies (conda warns that it will refuse this; give a list, [] "
                         "for none)" % f], "dependencies: ~: conda's warning, with the line")
    links = []
    for body in ("- pip: ~", "- pip: []"):
        write_text(f, "name: x\ndependencies:\n  - python\n  %s\n" % body)
        r = t.menv_run("create", "-p", os.path.join(t.tmp, "e"), "-f", f, *C, "--dry-run",
                       "--json")
        t.check(r.rc == 0, "%s: read" % body, r)
        links.append(sorted(x["name"] for x in r.json()["actions"]["LINK"]) if r.rc == 0
                     else None)
    t.eq(links[0], ["pip", "python"], "pip: ~ adds pip to the conda side, as conda does")
    t.eq(links[0], links[1], "pip: ~ is pip: []")


def case_lock_pip_python(t):
    _, explicit, C = exports(t)
    whl = os.path.join(t.tmp, "foo-1.0-py3-none-any.whl")
    write_text(whl, "not a wheel")
    text = explicit + "# pip foo @ %s\n" % t.url(whl)
    f = os.path.join(t.tmp, "pip.txt")
    write_text(f, text)
    p = os.path.join(t.tmp, "new")
    refused_both_ways(t, "explicit lock, pip line, no python", f,
                      ["the environment has no python to run pip with ('%s/bin/python'): add "
                       "'python' and 'pip' to the conda dependencies" % p])
    # into an environment without python: install -f refuses before changing it
    base = os.path.join(t.tmp, "base")
    t.menv_ok("create", "-p", base, "-y", "-q", *C)
    r = t.menv_run("install", "-p", base, "-f", f, "-y", "-q")
    t.one_line_error(r, "install -f: no python",
                     ["the environment has no python to run pip with ('%s/bin/python')" % base])
    t.eq(os.listdir(os.path.join(base, "conda-meta")).count("dependency-1.0-0.json"), 0,
         "install -f: nothing linked")


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

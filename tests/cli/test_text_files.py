#!/usr/bin/env python3
"""cli.text_files: what menv writes into line-oriented files stays one line of UTF-8 each,
and environment names follow conda's rules.

- `env update -f` with a file name holding newlines and a fake `==> DATE <==` block: the
  history gets one new block whose `# cmd:` line shows the newlines escaped (\\x0a); no forged
  revision, `install --revision` knows only the real ones
- `create -n $'e\\xff'`, a name with a newline, `-p` with a non-UTF-8 byte: refused with one
  line, nothing made
- `base` and `root` are reserved for create, env create and rename (rename -n src base made
  envs/base)
- `env remove -p LINK` (a symbolic link to an environment) is refused; the environment and
  its registry line stay whole
"""
import os

import menvtest
from menvtest import write_text


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda"),
                                              os.path.join(P, "dependency-2.0-0.conda")]})
    C = ["-c", t.url(chan), "--override-channels", "-y", "-q"]
    src = os.path.join(t.envs, "src")
    t.menv_ok("create", "-n", "src", *C, "dependency=1")

    # ---- a file name that would forge a history revision
    evil = os.path.join(t.tmp, "a\n==> 2001-01-01 00:00:00 <==\n+local::ghost-6.6.6-0")
    write_text(evil, "name: src\nchannels: [%s, nodefaults]\ndependencies: [dependency=2]\n"
               % t.url(chan))
    t.menv_ok("env", "update", "-n", "src", "-f", evil, "-y", "-q")
    with open(os.path.join(src, "conda-meta", "history"), "rb") as f:
        hist = f.read()
    text = hist.decode("utf-8")  # raises if not UTF-8
    heads = [ln for ln in text.splitlines() if ln.startswith("==>")]
    t.eq(len(heads), 2, "two revisions in the history (create, env update)")
    t.check("2001-01-01" not in "".join(heads), "no forged revision", text)
    t.check(not any(ln.startswith("+local::ghost") for ln in text.splitlines()),
            "no forged '+' line", text)
    cmd = [ln for ln in text.splitlines() if ln.startswith("# cmd:")][-1]
    t.check("a\\x0a==> 2001-01-01 00:00:00 <==\\x0a+local::ghost-6.6.6-0" in cmd,
            "the # cmd: line shows the newlines escaped", cmd)
    r = t.menv_run("install", "-n", "src", "--revision", "2", "-y", "--dry-run")
    t.one_line_error(r, "install --revision 2 (there are revisions 0 and 1)", ["2"],
                     nonzero_only=True, one_line=False)

    # ---- names and prefixes that are not UTF-8 text
    for name, shown in ((b"e\xff", "e\\xff"), (b"e\nx", "e\\x0ax"), (b"e\x1bx", "e\\x1bx")):
        r = t.menv_run("create", "-n", os.fsdecode(name), *C, "dependency")
        t.one_line_error(r, "create -n %r" % name, [shown], nonzero_only=True)
        t.check(not os.path.lexists(os.path.join(os.fsencode(t.envs), name)),
                "create -n %r: nothing made" % name)
    bad = os.path.join(os.fsencode(t.tmp), b"p\xfe")
    r = t.menv_run("create", "-p", os.fsdecode(bad), *C, "dependency")
    t.one_line_error(r, "create -p with a non-UTF-8 byte", ["UTF-8"], nonzero_only=True)
    t.check(not os.path.lexists(bad), "create -p non-UTF-8: nothing made")

    # ---- base and root are reserved everywhere
    envyml = os.path.join(t.tmp, "env.yml")
    write_text(envyml, "channels: [%s, nodefaults]\ndependencies: [dependency]\n"
               % t.url(chan))
    for reserved in ("base", "root"):
        for args in (("create", "-n", reserved, *C, "dependency"),
                     ("env", "create", "-n", reserved, "-f", envyml, "-y"),
                     ("rename", "-n", "src", reserved)):
            r = t.menv_run(*args)
            t.one_line_error(r, "menv %s ... %s" % (args[0], reserved), ["reserved"],
                             nonzero_only=True)
        t.check(not os.path.lexists(os.path.join(t.envs, reserved)),
                "no envs/%s made" % reserved)
    t.check(os.path.isdir(os.path.join(src, "conda-meta")), "src is still there")
    r = t.menv_ok("env", "list", "--json")
    t.eq(r.json()["envs"], [t.root, src], "env list: base once, src")

    # ---- env remove through a link
    link = os.path.join(t.tmp, "link")
    os.symlink(src, link)
    before = menvtest.tree_snapshot(src)
    r = t.menv_run("env", "remove", "-p", link, "-y")
    t.one_line_error(r, "env remove -p LINK", ["symbolic link", src], nonzero_only=True)
    t.eq(menvtest.tree_snapshot(src), before, "env remove -p LINK: the environment is whole")
    t.check(os.path.islink(link), "env remove -p LINK: the link is kept")
    r = t.menv_run("remove", "-p", link, "--all", "-y")
    t.check(r.rc != 0, "remove --all -p LINK is refused too", r)
    t.eq(menvtest.tree_snapshot(src), before, "remove --all -p LINK: the environment is whole")
    r = t.menv_ok("list", "-n", "src", "--json")
    t.eq([p["name"] for p in r.json()], ["dependency"], "list still shows src's package")


if __name__ == "__main__":
    menvtest.main(body)

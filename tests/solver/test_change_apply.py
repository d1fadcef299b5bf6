#!/usr/bin/env python3
"""Changes conda's request options make, applied for real (not --dry-run) through the
transaction engine: --force-reinstall relinks an unchanged package (a deleted file comes
back; history lists it as '-' and '+'), remove --force takes out the named package only
(what needs it stays), a plain remove prunes the dependencies nothing needs any more (conda's
pruning), and --only-deps installs what a package needs but not the package.
Usage: test_change_apply.py MENV SHARED"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "install"))
from insttest import files_of, main, pkg  # noqa: E402


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base/a.txt": "base one\n"})
    pkg(ch, "lib", "1.0", files={"share/lib/l.txt": "lib\n"})
    pkg(ch, "app", "1.0", depends=["base", "lib"], files={"share/app/app.txt": "app\n"})
    t.index(ch)
    c = ["-c", t.url(ch), "--override-channels"]
    p = os.path.join(t.tmp, "env")

    t.menv_ok("create", "-p", p, *c, "base")
    os.remove(os.path.join(p, "share/base/a.txt"))
    t.menv_ok("install", "-p", p, *c, "--force-reinstall", "base")
    t.check(os.path.exists(os.path.join(p, "share/base/a.txt")),
            "--force-reinstall: the deleted file is back")
    hist = open(os.path.join(p, "conda-meta", "history")).read().split("==> ")[-1]
    t.check("-" + t.url(ch) + "/linux-64::base-1.0-0" in hist and
            "+" + t.url(ch) + "/linux-64::base-1.0-0" in hist,
            "--force-reinstall: the history unlinks and links base-1.0-0", hist)
    t.menv_ok("install", "-p", p, *c, "base")
    t.eq(files_of(p), ["share/base/a.txt"], "install of the installed base changes nothing")

    t.menv_ok("install", "-p", p, *c, "app")
    t.eq(files_of(p), ["share/app/app.txt", "share/base/a.txt", "share/lib/l.txt"],
         "install app: app and lib")
    t.menv_ok("remove", "-p", p, "--force", "lib")
    t.eq(files_of(p), ["share/app/app.txt", "share/base/a.txt"],
         "remove --force lib: lib only, app stays")
    t.menv_ok("install", "-p", p, *c, "lib")
    t.menv_ok("remove", "-p", p, "app")
    # base was asked for (history), lib too (the last install); neither is an orphan
    t.eq(files_of(p), ["share/base/a.txt", "share/lib/l.txt"],
         "remove app: the packages asked for stay")

    q = os.path.join(t.tmp, "env2")
    t.menv_ok("create", "-p", q, *c, "app")
    t.menv_ok("remove", "-p", q, "app")
    t.eq(files_of(q), [], "remove app: base and lib, which only app needed, are pruned")

    d = os.path.join(t.tmp, "env3")
    t.menv_ok("create", "-p", d, *c, "lib")
    t.menv_ok("install", "-p", d, *c, "--only-deps", "app")
    t.eq(files_of(d), ["share/base/a.txt", "share/lib/l.txt"],
         "--only-deps app: what app needs, not app")


if __name__ == "__main__":
    main(body, "change_apply")

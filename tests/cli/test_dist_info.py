#!/usr/bin/env python3
"""cli.dist_info: unowned *.dist-info folders with hostile METADATA are skipped with a warning
naming each, and every listing and export stays UTF-8 with only the readable ones.

Hostile: a non-UTF-8 Name, a 3,000-character Name (once cut at 1,017 with a Version read
from the line's tail), no Version, no METADATA, a Name with a newline-like control byte.
"""
import os

import menvtest


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    t.menv_ok("create", "-n", "e", "-c", t.url(chan), "--override-channels", "-y", "-q",
              "dependency")
    sp = os.path.join(t.envs, "e", "lib", "python3.9", "site-packages")
    dists = {
        "good-1.0.dist-info": b"Metadata-Version: 2.1\nName: good\nVersion: 1.0\n\n",
        "binary-1.0.dist-info": b"Name: bin\xffary\nVersion: 1.0\n\n",
        "huge-1.0.dist-info": b"Name: " + b"h" * 1017 + b"Version: 6.6.6" + b"x" * 1970 +
                              b"\nVersion: 1.0\n\n",
        "nover-1.0.dist-info": b"Name: nover\n\n",
        "ctrl-1.0.dist-info": b"Name: ct\x1brl\nVersion: 1.0\n\n",
        "nometa-1.0.dist-info": None,
    }
    for d, meta in dists.items():
        os.makedirs(os.path.join(sp, d))
        if meta is not None:
            with open(os.path.join(sp, d, "METADATA"), "wb") as f:
                f.write(meta)
    bad = sorted(d for d in dists if d != "good-1.0.dist-info")

    def warned(r, what):
        lines = [ln for ln in r.err.splitlines() if ln.startswith("menv: warning: skipped ")]
        for d in bad:
            t.check(any(d in ln for ln in lines), "%s: a warning names %s" % (what, d), r.err)

    r = t.menv_ok("list", "-n", "e", "--json")
    names = sorted(p["name"] for p in r.json())
    t.eq(names, ["dependency", "good"], "list --json: the readable pip package only")
    warned(r, "list")
    for fmt in ("conda-lock", "environment", "explicit"):
        p = t.menv_run("export", "-n", "e", "--format", fmt)
        t.eq(p.rc, 0, "export --format %s exits 0" % fmt)
        raw = p.out.encode("utf-8", "surrogateescape")
        t.check("\ufffd" not in p.out, "export --format %s is UTF-8" % fmt)
        for needle in ("hhhh", "6.6.6", "nover", "bin", "ct"):
            t.check(needle not in p.out.replace("dependency", ""),
                    "export --format %s: nothing of the hostile dist-infos (%s)"
                    % (fmt, needle), p.out)
        if fmt != "explicit":
            t.check("good" in p.out, "export --format %s names good" % fmt, p.out)
            warned(p, "export --format %s" % fmt)
        del raw


if __name__ == "__main__":
    menvtest.main(body)

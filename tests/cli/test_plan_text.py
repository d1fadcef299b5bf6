#!/usr/bin/env python3
"""cli.plan_text: the plan a change prints, as mamba draws it (issue "At the terminal"):
sections Install / Upgrade / Downgrade / Change / Remove with rows sorted by name (a changed
package's old `-` row above its new `+` row), columns sized to their content, `Cached` for
what the package cache holds, the total download; a create ends with conda's activation
hint. Compared as exact text, piped (no terminal: no colour, columns as wide as they need),
and fitted to COLUMNS=80 with a long file:// channel shortened in its middle (between whole
characters, padded by terminal columns: a channel folder of wide characters)."""

import os
import re
import unicodedata

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def human(n):
    """A size as the plan shows it (conda's units: B, kB, MB, GB of 1000)."""
    if n < 1000:
        return "%d B" % n
    for unit, f in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if n < f * 1000 or unit == "GB":
            return "%.1f %s" % (n / f, unit)


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in (
        "dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-1.0-0.conda",
        "dependent-2.0-0.conda", "buildstring-1.0-versioned_1.conda",
        "buildstring-1.0-versioned_2.conda", "versioned-1.0-0.conda", "versioned-2.0-0.conda",
        "small-executable-1.0-0.conda", "clobber-a-1.0-0.conda")]
    size = {os.path.basename(f): os.path.getsize(f) for f in files}
    chans = os.path.join(t.tmp, "channels")
    t.make_channel(os.path.join("channels", "testchan"), {"noarch": files, "linux-64": []})
    # a named channel under channel_alias: the plan shows the name, as conda does
    t.set_rc("channel_alias: %s\nchannels: [testchan]\n" % t.url(chans))

    r = t.menv_ok("create", "-n", "p", "dependent=1.0", "buildstring=1.0=versioned_1",
                  "clobber-a", env={"COLUMNS": ""})
    prefix = os.path.join(t.envs, "p")
    want = ("\nTransaction\n\n  Prefix: %s\n\n  Install (5 packages):\n\n" % prefix +
            "".join("  + %-11s  1.0  %-11s  testchan  %s\n" % (n, b, human(size[f]))
                    for n, b, f in (("buildstring", "versioned_1",
                                     "buildstring-1.0-versioned_1.conda"),
                                    ("clobber-a", "0", "clobber-a-1.0-0.conda"),
                                    ("dependency", "0", "dependency-1.0-0.conda"),
                                    ("dependent", "0", "dependent-1.0-0.conda"),
                                    ("versioned", "0", "versioned-1.0-0.conda"))))
    t.check(r.out.startswith(want), "create: the plan, exact text", r.out)
    t.check(r.out.rstrip("\n").endswith("# To activate this environment, use\n#\n#     $ menv "
                                        "activate p\n#\n# To deactivate an active environment, "
                                        "use\n#\n#     $ menv deactivate"),
            "create: conda's activation hint with the name given", r.out[-300:])


    # every section but Reinstall at once: upgrades, a changed build, an install, cached rows
    r = t.menv_ok("install", "-n", "p", "--dry-run", "dependent=2.0",
                  "buildstring=1.0=versioned_2", "small-executable", env={"COLUMNS": ""})
    def sz(f):
        return human(size[f])
    rows = [
        "  Install (1 package):", "",
        "  + small-executable  1.0  0            testchan  %6s" % sz("small-executable-1.0-0.conda"),
        "",
        "  Upgrade (3 packages):", "",
        "  - dependency        1.0  0            testchan  %6s" % "",
        "  + dependency        2.0  0            testchan  %6s" % sz("dependency-2.0-0.conda"),
        "  - dependent         1.0  0            testchan  %6s" % "",
        "  + dependent         2.0  0            testchan  %6s" % sz("dependent-2.0-0.conda"),
        "  - versioned         1.0  0            testchan  %6s" % "",
        "  + versioned         2.0  0            testchan  %6s" % sz("versioned-2.0-0.conda"),
        "",
        "  Change (1 package):", "",
        "  - buildstring       1.0  versioned_1  testchan  %6s" % "",
        "  + buildstring       1.0  versioned_2  testchan  %6s" % sz("buildstring-1.0-versioned_2.conda"),
        ""]
    rows = [r_.rstrip() for r_ in rows]  # rows without a size end at their channel
    got = r.out.split("\n")
    t.eq(got[5:5 + len(rows)], rows, "install: every section, exact text")
    total = sum(size[f] for f in ("small-executable-1.0-0.conda", "dependency-2.0-0.conda",
                                  "dependent-2.0-0.conda", "versioned-2.0-0.conda",
                                  "buildstring-1.0-versioned_2.conda"))
    t.check("  Total download: %s\n" % human(total) in r.out,
            "install: the total download of what the cache lacks", r.out)

    # cached packages say so; a removal has its own section
    t.menv_ok("create", "-n", "q", "-q", "dependent=2.0")
    r = t.menv_ok("install", "-n", "p", "--dry-run", "dependent=2.0", env={"COLUMNS": ""})
    t.check("  + dependent   2.0  0  testchan  Cached" in r.out and
            "Total download: nothing (every package is in %s)" % t.pkgs in r.out,
            "install: Cached rows and nothing to download", r.out)
    r = t.menv_ok("remove", "-n", "p", "--dry-run", "clobber-a")
    t.check("  Remove (1 package):\n\n  - clobber-a  1.0  0  testchan\n" in r.out,
            "remove: the Remove section", r.out)

    # menv list: columns sized to their content, the channel as conda shows it
    r = t.menv_ok("list", "-n", "p")
    t.eq(r.out.split("\n"), ["# packages in environment at %s:" % prefix, "#",
                             "# Name      Version Build       Channel",
                             "buildstring 1.0     versioned_1 testchan",
                             "clobber-a   1.0     0           testchan",
                             "dependency  1.0     0           testchan",
                             "dependent   1.0     0           testchan",
                             "versioned   1.0     0           testchan", ""],
         "list: exact text")
    r = t.menv_ok("list", "-n", "p", "--show-channel-urls", "dependency")
    t.eq(r.out.split("\n")[3:], ["dependency 1.0     0     %s/testchan" % t.url(chans), ""],
         "list --show-channel-urls: the channel's URL")
    url = lambda f: "%s/testchan/noarch/%s" % (t.url(chans), f)
    md5 = lambda f: menvtest.md5_file(os.path.join(t.corpus, R, f))
    r = t.menv_ok("list", "-n", "p", "--explicit", "--md5", "^dep")
    t.eq(r.out.split("\n")[3:], ["@EXPLICIT",
                                 url("dependency-1.0-0.conda") + "#" + md5("dependency-1.0-0.conda"),
                                 url("dependent-1.0-0.conda") + "#" + md5("dependent-1.0-0.conda"),
                                 ""], "list --explicit --md5: URL#md5 lines after @EXPLICIT")
    r = t.menv_ok("list", "-n", "p", "--explicit")
    t.check("\n" + url("versioned-1.0-0.conda") + "\n" in r.out and "#" not in
            r.out.split("@EXPLICIT")[-1], "list --explicit: URLs without hashes", r.out)

    # fitted to 80 columns: a long file:// channel is shortened in its middle, no line wraps
    deep = os.path.join(t.tmp, "a-rather-long-folder-name-for-a-channel", "that-goes-on",
                        "and-on", "testchan")
    os.makedirs(os.path.dirname(deep))
    os.symlink(os.path.join(chans, "testchan"), deep)
    r = t.menv_ok("create", "-n", "w", "--dry-run", "--override-channels", "-c", t.url(deep),
                  "dependent", "buildstring", env={"COLUMNS": "80"})
    long_lines = [l for l in r.out.split("\n") if len(l) > 80]
    t.eq(long_lines, [], "COLUMNS=80: no line is longer than 80")
    t.check("..." in r.out and t.url(deep) not in r.out, "COLUMNS=80: the channel is shortened",
            r.out)
    r = t.menv_ok("create", "-n", "w", "--dry-run", "--override-channels", "-c", t.url(deep),
                  "dependent", "buildstring", env={"COLUMNS": ""})
    t.check(t.url(deep) in r.out, "piped without COLUMNS: the channel in full", r.out)

    # a channel folder of wide characters (環 is 3 bytes and 2 columns): cut between whole
    # characters at every terminal width, rows padded and fitted by columns, not bytes
    wide = os.path.join(t.tmp, "環境" * 20 + "-ü", "testchan")
    os.makedirs(os.path.dirname(wide))
    os.symlink(os.path.join(chans, "testchan"), wide)
    cols = lambda l: sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in l)
    for width in (80, 81, 82):
        out = t.menv_ok("create", "-n", "w", "--dry-run", "--override-channels", "-c",
                        t.url(wide), "dependent", "buildstring",
                        env={"COLUMNS": str(width)}).out
        cut = re.search("[.]{3}[\u5883\u74b0]", out)  # "...境" or "...環"
        t.check("\ufffd" not in out and "file:///" in out and cut,
                "COLUMNS=%d: the channel cut between whole characters" % width, out)
        t.eq([l for l in out.split("\n") if cols(l) > width], [],
             "COLUMNS=%d: no row over %d columns" % (width, width))
        rows = [l for l in out.split("\n") if l.startswith("  + ")]
        t.eq(sorted({cols(l) for l in rows}), [width],
             "COLUMNS=%d: every row ends at the same column, the terminal's" % width)


    # -q as conda 26.7.1's (run here: `conda create -q` prints its plan and leaves out the
    # download progress and the activation lines): the same plan, no activation hint, nothing
    # on stderr; create, install, update, remove alike; an error still says what went wrong
    r = t.menv_ok("create", "-q", "-n", "quiet", "dependent=1.0", "buildstring=1.0=versioned_1",
                  "clobber-a", env={"COLUMNS": "", "CONDA_CHANNELS": "testchan"})
    qwant = ("\nTransaction\n\n  Prefix: %s\n\n  Install (5 packages):\n\n"
             % os.path.join(t.envs, "quiet") +
             "".join("  + %-11s  1.0  %-11s  testchan  Cached\n" % (n, b)
                     for n, b in (("buildstring", "versioned_1"), ("clobber-a", "0"),
                                  ("dependency", "0"), ("dependent", "0"), ("versioned", "0"))))
    t.check(r.out.startswith(qwant), "create -q: the plan, as conda -q prints it", r.out)
    t.check("activate" not in r.out and r.out.rstrip("\n").splitlines()[-1].startswith(
        "Created %s: 5 linked" % os.path.join(t.envs, "quiet")),
            "create -q: no activation hint, the summary last", r.out[-300:])
    t.eq(r.err, "", "create -q: nothing on stderr")
    for args in (("install", "-q", "-n", "quiet", "small-executable"),
                 ("update", "-q", "-n", "quiet", "dependent"),
                 ("remove", "-q", "-n", "quiet", "clobber-a")):
        r = t.menv_ok(*args, env={"COLUMNS": ""})
        t.check("Transaction" in r.out and "activate" not in r.out, "%s -q: the plan" % args[0],
                r.out)
        t.eq(r.err, "", "%s -q: nothing on stderr" % args[0])
    r = t.menv_run("install", "-q", "-n", "quiet", "no-such-package")
    t.one_line_error(r, "install -q of a missing package", ["no-such-package"])

if __name__ == "__main__":
    menvtest.main(body, "plan_text")

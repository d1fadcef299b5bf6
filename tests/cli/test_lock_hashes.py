#!/usr/bin/env python3
"""cli.lock_hashes_<case>: issue 22's last hostile pass on lockfile input, one case each.
conda 26.7.1's answers for the same inputs are in lock_hashes_conda.json (run through conda
itself); each case reads the rows it follows.

- both_hashes: a lock entry that gives md5 and sha256, one of them wrong, was accepted when the
  other matched (the download was checked by the sha256 only) and the wrong md5 recorded;
  conda 26.7.1 does the same (its "both" row), menv refuses it. In every format that can give
  both (conda-lock, menv's own export, pixi.lock, micromamba's JSON), with the package cache
  cold, holding the package extracted, or holding only its file: exit 1, one line naming
  FILE:LINE, the package and the wrong hash (the dry run too where the cache holds the
  package), nothing linked, the package cache as it was. An explicit line's one hash, wrong,
  fails as conda's does (its "explicit" rows), the cache unchanged. The right lock installs.
- fragment: a URL's "#<md5>", "#sha256:<hex>" or pixi's "#sha256=" fragment beside the entry's
  own hash was dropped; one that disagrees is refused when the lock is read (FILE:LINE, dry
  run too), one the entry lacks is checked against the package, one that agrees installs.
- query: a lock URL's "?token=SECRET" is used to download and reaches no conda-meta record,
  history, cache file, export, list or output; an explicit line with a query is refused, as
  conda refuses it (its "explicit" rows), without printing the query.
"""
import json
import os
import re
import shutil
import sys

import menvtest
from menvtest import read_json, tree_snapshot, write_text

HERE = os.path.dirname(os.path.abspath(__file__))
FN = "versioned-2.0-0.conda"
BAD_MD5 = "0" * 32
BAD_SHA = "0" * 64
SECRET = "SECRETq7"


def conda_rows(what):
    rows = read_json(os.path.join(HERE, "lock_hashes_conda.json"))["cases"]
    return [r for r in rows if r["what"] == what]


def served(t):
    """The channel of versioned-2.0-0.conda over HTTP: (server, channel URL, md5, sha256)."""
    chan = os.path.join(t.tmp, "srv", "chan")
    os.makedirs(os.path.join(chan, "noarch"))
    shutil.copy(os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch", FN),
                os.path.join(chan, "noarch", FN))
    t.index(chan)
    rec = read_json(os.path.join(chan, "noarch", "repodata.json"))["packages.conda"][FN]
    srv = t.http_server(os.path.join(t.tmp, "srv"))
    return srv, srv.base + "/chan", rec["md5"], rec["sha256"]


def conda_lock(url, md5, sha):
    hashes = ", ".join("%s: %s" % kv for kv in (("md5", md5), ("sha256", sha)) if kv[1])
    return ("version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
            "  platforms: [linux-64]\n  sources: []\npackage:\n"
            "- name: versioned\n  version: '2.0'\n  manager: conda\n  platform: linux-64\n"
            "  dependencies: {}\n  url: %s\n  hash: {%s}\n  category: main\n"
            "  optional: false\n" % (url, hashes)), 8


def pixi(url, md5, sha):
    keys = "".join("  %s: %s\n" % kv for kv in (("md5", md5), ("sha256", sha)) if kv[1])
    return ("version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
            "      linux-64:\n      - conda: %s\npackages:\n- conda: %s\n%s"
            % (url, url, keys)), 9


def mamba(base, md5, sha):
    return json.dumps({
        "lockVersion": "1.0", "platform": "linux-64", "specs": ["versioned"],
        "channels": ["c"], "channelInfo": {"c": [{"url": base}]},
        "packages": {FN: {"name": "versioned", "version": "2.0", "build": "0",
                          "subdir": "noarch", "channel": "c",
                          "hash": {"md5": md5, "sha256": sha}}},
        "pipPackages": {}}, indent=2) + "\n", None  # entries' lines are not kept


def entry_line(text, needle):
    """The line (1-based) of the YAML list item holding `needle`."""
    lines = text.splitlines()
    i = next(k for k, l in enumerate(lines) if needle in l)
    while not lines[i].lstrip().startswith("- "):
        i -= 1
    return i + 1


def cache_state(t, state, warm):
    """The package cache as `state` says: cold (empty), extracted (as the right lock left it:
    `warm`, a copy), file (only <fn>)."""
    shutil.rmtree(t.pkgs, ignore_errors=True)
    if state != "cold":
        shutil.copytree(warm, t.pkgs, symlinks=True)
    if state == "file":
        shutil.rmtree(os.path.join(t.pkgs, FN[:-len(".conda")]))
    return tree_snapshot(t.pkgs)


def refused(t, lock, what, needles, warm, states=("cold", "extracted", "file"), dry=True):
    """create -q -f LOCK fails with one line naming every needle (-q: no progress lines
    before it), in each cache state; nothing linked, the package cache as it was."""
    for state in states:
        for args in ([], ["--dry-run"]) if dry and state == "extracted" else ([],):
            before = cache_state(t, state, warm)
            w = "%s, cache %s%s" % (what, state, " --dry-run" if args else "")
            r = t.menv_run("create", "-q", "-y", "-n", "x", "-f", lock, *args)
            t.one_line_error(r, w, needles)
            t.no_prefix_left(os.path.join(t.envs, "x"), w)
            t.eq(tree_snapshot(t.pkgs), before, "%s: the package cache is as it was" % w)


def case_both_hashes(t):
    srv, base, md5, sha = served(t)
    url = base + "/noarch/" + FN
    try:
        # conda accepts a wrong md5 beside the right sha256 and records it; menv refuses
        rows = {(r["md5"], r["sha256"]): r for r in conda_rows("both")}
        t.eq((rows[("BAD", "GOOD")]["conda"], rows[("GOOD", "BAD")]["conda"]),
             ("accepted", "error"), "conda's answers as recorded")
        good = os.path.join(t.tmp, "good.lock.yml")
        write_text(good, conda_lock(url, md5, sha)[0])
        t.menv_ok("create", "-y", "-q", "-n", "good", "-f", good)
        rec = read_json(os.path.join(t.envs, "good", "conda-meta", "versioned-2.0-0.json"))
        t.eq((rec["md5"], rec["sha256"]), (md5, sha), "the right lock's record")
        export = t.menv_ok("export", "-n", "good").out
        t.check(md5 in export and sha in export, "the export gives both hashes", export)
        warm = os.path.join(t.tmp, "warm-pkgs")
        shutil.copytree(t.pkgs, warm, symlinks=True)
        formats = {
            "conda-lock": lambda m, s: conda_lock(url, m, s),
            "pixi": lambda m, s: pixi(url, m, s),
            "mamba": lambda m, s: mamba(base, m, s),
            "export": lambda m, s: (export.replace(md5, m).replace(sha, s),
                                    entry_line(export, FN)),
        }
        for name, make in formats.items():
            ext = "json" if name == "mamba" else "yml"
            for wrong in ("md5", "sha256"):
                text, line = make(BAD_MD5 if wrong == "md5" else md5,
                                  BAD_SHA if wrong == "sha256" else sha)
                lock = os.path.join(t.tmp, "%s-%s.lock.%s" % (name, wrong, ext))
                write_text(lock, text)
                bad = BAD_MD5 if wrong == "md5" else BAD_SHA
                refused(t, lock, "%s, wrong %s" % (name, wrong),
                        ["%s:%s " % (os.path.basename(lock), "%d:" % line if line else ""),
                         wrong, bad,
                         ("versioned 2.0 0", FN)], warm)
            # the same format with both hashes right installs
            text, _ = make(md5, sha)
            lock = os.path.join(t.tmp, "%s-ok.lock.%s" % (name, ext))
            write_text(lock, text)
            cache_state(t, "file", warm)
            r = t.menv_run("create", "-y", "-n", "ok-" + name, "-f", lock)
            t.check(r.rc == 0, "%s: the right lock installs" % name, r)
        # explicit: one hash a line; a wrong one fails as conda's does, the cache unchanged
        for row in conda_rows("explicit"):
            if row["hash"] is None or row["line"].startswith("file:"):
                continue
            line = row["line"].replace("URL", url).replace("BADMD5", BAD_MD5)
            line = line.replace("BADSHA", BAD_SHA)
            lock = os.path.join(t.tmp, "explicit.txt")
            write_text(lock, "@EXPLICIT\n%s\n" % line)
            t.eq(row["conda"], "error", "conda refuses %s" % row["line"])
            refused(t, lock, "explicit %s" % row["line"],
                    ["explicit.txt:2: ", row["hash"] + " mismatch", FN], warm,
                    states=("cold",) if row["cache"] == "cold" else ("extracted", "file"),
                    dry=False)
    finally:
        srv.stop()


def case_fragment(t):
    srv, base, md5, sha = served(t)
    url = base + "/noarch/" + FN
    try:
        cases = [
            ("conda-lock #md5", conda_lock(url + "#" + BAD_MD5, md5, sha), "md5", BAD_MD5),
            ("conda-lock #sha256:", conda_lock(url + "#sha256:" + BAD_SHA, md5, sha), "sha256",
             BAD_SHA),
            ("conda-lock #sha256", conda_lock(url + "#" + BAD_SHA, None, sha), "sha256",
             BAD_SHA),
            ("pixi #md5", pixi(url + "#" + BAD_MD5, md5, sha), "md5", BAD_MD5),
            ("pixi #sha256=", pixi(url + "#sha256=" + BAD_SHA, None, sha), "sha256", BAD_SHA),
        ]
        for i, (what, (text, line), kind, bad) in enumerate(cases):
            lock = os.path.join(t.tmp, "f%d.lock.yml" % i)
            write_text(lock, text)
            before = len(srv.requests())
            for args in ([], ["--dry-run"]):
                r = t.menv_run("create", "-y", "-n", "f", "-f", lock, *args)
                t.one_line_error(r, "%s %s" % (what, args),
                                 ["f%d.lock.yml:%d: " % (i, line), "the %s in its url's "
                                  "fragment (%s)" % (kind, bad)])
                t.no_prefix_left(os.path.join(t.envs, "f"), what)
            t.eq(srv.requests()[before:], [], "%s: nothing fetched" % what)
        # a fragment the entry lacks is its hash: checked against the package
        lock = os.path.join(t.tmp, "only.lock.yml")
        write_text(lock, pixi(url + "#" + BAD_MD5, None, sha)[0])
        r = t.menv_run("create", "-q", "-y", "-n", "f", "-f", lock)
        t.one_line_error(r, "pixi: the fragment's md5 alone",
                         ["only.lock.yml:9: ", "md5 mismatch", BAD_MD5])
        t.no_prefix_left(os.path.join(t.envs, "f"), "the fragment's md5 alone")
        # one that agrees installs, and the record's url has no fragment
        for i, (text, _) in enumerate((conda_lock(url + "#" + md5.upper(), md5, sha),
                                       pixi(url + "#sha256:" + sha, md5, None))):
            lock = os.path.join(t.tmp, "same%d.lock.yml" % i)
            write_text(lock, text)
            r = t.menv_run("create", "-y", "-n", "same%d" % i, "-f", lock)
            if t.check(r.rc == 0, "agreeing fragment %d installs" % i, r):
                rec = read_json(os.path.join(t.envs, "same%d" % i, "conda-meta",
                                             "versioned-2.0-0.json"))
                t.eq((rec["url"], rec["md5"], rec["sha256"]), (url, md5, sha),
                     "agreeing fragment %d: the record" % i)
    finally:
        srv.stop()


def case_query(t):
    srv, base, md5, sha = served(t)
    url = base + "/noarch/" + FN
    try:
        for name, (text, _) in (("conda-lock", conda_lock(url + "?token=" + SECRET, md5, sha)),
                                ("pixi", pixi(url + "?token=" + SECRET + "#" + md5, None,
                                              sha))):
            lock = os.path.join(t.tmp, name + ".lock.yml")
            write_text(lock, text)
            env = "q-" + name
            shutil.rmtree(t.pkgs, ignore_errors=True)
            before = len(srv.requests())
            outs = []
            for args in (["--dry-run", "--json"], ["--json"]):
                r = t.menv_run("create", "-y", "-n", env, "-f", lock, *args)
                t.check(r.rc == 0, "%s %s: succeeds" % (name, args), r)
                outs += [r.out, r.err]
            t.check("/chan/noarch/%s?token=%s" % (FN, SECRET) in srv.requests()[before:],
                    "%s: the package was downloaded with the query" % name, srv.requests())
            rec = read_json(os.path.join(t.envs, env, "conda-meta", "versioned-2.0-0.json"))
            t.eq(rec["url"], url, "%s: the record's url has no query" % name)
            for args in (["export"], ["export", "--format", "explicit"], ["list"],
                         ["list", "--json"], ["list", "--explicit", "--md5"]):
                r = t.menv_ok(*args, "-n", env)
                outs += [r.out, r.err]
                t.check(url in r.out or "versioned" in r.out, "%s %s: names the package"
                        % (name, args), r.out)
            t.check(not any(SECRET in o for o in outs), "%s: no output holds the query" % name,
                    [o for o in outs if SECRET in o][:1])
            found = []
            for top in (t.root, t.home):
                for dp, _, files in os.walk(top):
                    for f in files:
                        p = os.path.join(dp, f)
                        if not os.path.islink(p) and SECRET.encode() in open(p, "rb").read():
                            found.append(p)
            t.eq(found, [], "%s: no file menv wrote holds the query" % name)
        # explicit: refused as conda refuses it, the query not shown
        rows = [r for r in conda_rows("explicit") if "?token=" in r["line"]]
        t.check(len(rows) == 2 and all(r["conda"] == "error" and "ParseError" in r["message"]
                                        for r in rows), "conda refuses a query", rows)
        for i, row in enumerate(rows):
            line = row["line"].replace("URL", url).replace("SECRET", SECRET)
            lock = os.path.join(t.tmp, "q%d.txt" % i)
            write_text(lock, "@EXPLICIT\n" + line.replace("#MD5", "#" + md5) + "\n")
            for args in ([], ["--dry-run"]):
                r = t.menv_run("create", "-y", "-n", "qe", "-f", lock, *args)
                t.one_line_error(r, "explicit %s %s" % (row["line"], args),
                                 ["q%d.txt:2: " % i, url + "' has a query"])
                t.check(SECRET not in r.out + r.err, "explicit %s: the query is not shown"
                        % row["line"], r.err)
                t.no_prefix_left(os.path.join(t.envs, "qe"), "explicit query")
    finally:
        srv.stop()


CASES = {"both_hashes": case_both_hashes, "fragment": case_fragment, "query": case_query}


def body(t, case=None):
    if case not in CASES:
        raise menvtest.Fatal("unknown case %r (one of %s)" % (case, ", ".join(CASES)))
    CASES[case](t)


if __name__ == "__main__":
    menvtest.main(body, "lock_hashes_" + (sys.argv[3] if len(sys.argv) > 3 else "?"))

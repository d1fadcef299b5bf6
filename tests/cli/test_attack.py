#!/usr/bin/env python3
"""cli.attack_<case>: what an outside attack on the last merges found, one case each
(python3 test_attack.py MENV SHARED CASE):

- error_secret: an error message quoting what the user gave (a `config --remove channels`
  value that is not in the list) held its password: every error's text is redacted where it
  is made (menv_error_set), so no message of any command can carry one.
- lock_cache_secret: a lockfile whose URLs hold user:password (and /t/TOKEN/) put them into
  the package cache: <pkgs>/<dist>/info/repodata_record.json (written at extraction, and
  rewritten when the package was already cached from a solve) and <pkgs>/urls.txt. The
  cache keeps the URLs redacted, as conda-meta does; the same lock installs again from it.
- yaml_nul: a NUL byte in a conda-lock file's text ("depend\\0ent" as a name) or a .condarc
  value ("a\\0b" as a channel) is refused with FILE:LINE:COL (the streaming lock reader
  and the .condarc reader cut the text at it: the plan showed a package "depend", config
  --show a channel "a"); menv_yaml_load refuses it for every YAML file.
- lock_control: a control character in a lock entry's text (a name "dep\\e[31mendent" or
  "dependent\\nevil", an url) is refused naming the entry, in every lock format (the plan
  drew the name raw: an escape sequence to the terminal, a newline splitting its row).
- repodata_control: a channel's record whose depends hold a control character
  ("x\\u001b[2Jy") is skipped with a warning; its dependency reached the terminal raw in the
  solve's problem tree and in repoquery depends. A record key with one is shown escaped in
  the warning that skips it (it was printed raw), from the JSON and from the .solv cache.
- underscore_glob: a channel's depends "ossl 1.1_*" or "ossl 1.1_.*" (conda: startswith
  1.1_, which only 1.1_ does) linked ossl 1.1a1: evr.c rewrote a trailing '_' before the end,
  '+', ',', '|' or ')' but not before a glob, so libsolv read the prefix as "1.1". The same
  specs requested on the command line linked 1.1_ (as conda does); both agree now.
- underscore_regex: the problem of a regex spec "ossl[version='^1\\.5$']" that nothing
  provides said "ossl _1\\.5$": every '^' of libsolv's text was turned back to '_', not only
  the ones evr.c wrote (after a letter or digit).
- prune_order: `create --dry-run --json python<3.3.2 pycosat=0.3.0 pycparser sphinx` on
  conda's test index printed pycparser before pycosat in FETCH and LINK, and the other way on
  the full pool (MENV_SOLVER_PRUNE=0): libsolv's transaction lists its steps in decision
  order, which the pruned solve changes. The steps are put in solvable order first; the
  output is byte for byte the same both ways, for this request and a few more.
- path_utf8: `config --add pkgs_dirs '/tmp/a\\xffb'` exited 0 and wrote `pkgs_dirs: []` into
  .condarc (the entry lost; --set root_prefix likewise wrote nothing of it), and
  CONDA_PKGS_DIRS/CONDA_ENVS_DIRS/MENV_ROOT_PREFIX holding one were shown as an empty list
  (`info` dropped the line). A path value that is not UTF-8 is refused naming the key or
  the variable; .condarc stays byte for byte as it was.
- envfile_match_all: an environment file's dependency "" or "*" was refused by the solve
  ("the spec '*' would match every package") naming no file or line; it is refused with
  FILE:LINE:COL when the file is read, before any channel is read.
"""
import json
import os
import re
import shutil
import sys

import menvtest
from menvtest import write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")
CANARY = "Cnry"


def channel(t):
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    return ["-c", t.url(chan), "--override-channels", "-q", "-y"]


def no_canary(t, r, what):
    t.check(CANARY not in r.out and CANARY not in r.err, "%s: no secret in the output" % what,
            r)


def case_error_secret(t):
    url = "http://u:%sPw@127.0.0.1:1/zzz" % CANARY
    write_text(t.rc, "channels:\n  - http://127.0.0.1:1/chan\n")
    for js in ([], ["--json"]):
        r = t.menv_run("config", "--remove", "channels", url, *js)
        t.check(r.rc == 1, "config --remove of a value not listed fails %s" % js, r)
        t.check("127.0.0.1:1/zzz" in r.err + r.out, "the error names the value %s" % js, r)
        no_canary(t, r, "config --remove %s" % js)


def grep_tree(top, needle):
    """Files under top whose bytes or name hold needle."""
    hits = []
    for dirpath, _, files in os.walk(top):
        for n in files:
            p = os.path.join(dirpath, n)
            if needle in p:
                hits.append(p)
                continue
            try:
                with open(p, "rb") as f:
                    if needle.encode() in f.read():
                        hits.append(p)
            except OSError:
                pass
    return hits


def case_lock_cache_secret(t):
    P = os.path.join(t.corpus, *NOARCH)
    srv = os.path.join(t.tmp, "srv")
    chan = os.path.join(srv, "t", "tk-%sTok" % CANARY, "chan")
    os.makedirs(os.path.join(chan, "noarch"))
    for fn in ("dependency-2.0-0.conda", "dependent-2.0-0.conda"):
        shutil.copyfile(os.path.join(P, fn), os.path.join(chan, "noarch", fn))
    t.index(chan)
    http = t.http_server(srv)
    try:
        host = http.base.replace("http://", "http://u:%sPw@" % CANARY)
        url = host + "/t/tk-%sTok/chan" % CANARY
        plain = http.base + "/t/tk-%sTok/chan" % CANARY
        # the lock: exported from an environment of the plain channel, its URLs given the
        # credentials the user's lock holds
        t.menv_ok("create", "-p", os.path.join(t.tmp, "src"), "-c", plain,
                  "--override-channels", "-y", "-q", "dependent")
        lock = t.menv_ok("export", "-p", os.path.join(t.tmp, "src")).out
        lock = re.sub(re.escape(http.base) + r"(/t/[^/\s]*)?/chan", url, lock)
        t.check(lock.count(CANARY) >= 4, "the lock holds the credentials", lock)
        write_text(os.path.join(t.tmp, "lock.yml"), lock)
        for i, what in enumerate(("cached from the solve", "fetched from the lock",
                                  "cached from the lock")):
            if what == "fetched from the lock":
                shutil.rmtree(t.pkgs)
            p = os.path.join(t.tmp, "env-%d" % i)
            r = t.menv_run("create", "-p", p, "-f", os.path.join(t.tmp, "lock.yml"), "-y")
            t.check(r.rc == 0, "%s: the lock installs" % what, r)
            no_canary(t, r, what)
            t.eq(grep_tree(t.root, CANARY) + grep_tree(p, CANARY) + grep_tree(t.home, CANARY),
                 [], "%s: no file menv wrote holds the credentials or token" % what)
            rec = os.path.join(t.pkgs, "dependent-2.0-0", "info", "repodata_record.json")
            if os.path.exists(rec):
                t.eq(menvtest.read_json(rec).get("url"),
                     http.base + "/t/<TOKEN>/chan/noarch/dependent-2.0-0.conda",
                     "%s: the cache's record names the URL redacted" % what)
    finally:
        http.stop()


def case_yaml_nul(t):
    C = channel(t)
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, *C, "dependency")
    lock = t.menv_ok("export", "-p", src).out
    t.check("name: dependency\n" in lock, "the export names the package", lock)
    bad = os.path.join(t.tmp, "nul.yml")
    write_text(bad, lock.replace("name: dependency\n", 'name: "depend\\0ency"\n'))
    line = [i + 1 for i, x in enumerate(open(bad).read().splitlines()) if "depend\\0" in x][0]
    for args in (["--dry-run"], []):
        p = os.path.join(t.tmp, "new")
        r = t.menv_run("create", "-p", p, "-f", bad, "-y", *args)
        t.one_line_error(r, "lock with a NUL %s" % args, [bad + ":%d:" % line, "NUL"])
        t.no_prefix_left(p, "lock with a NUL %s" % args)
    write_text(t.rc, 'channels:\n  - "a\\0b"\n')
    for args in (["config", "--show", "channels"], ["info"]):
        r = t.menv_run(*args)
        t.one_line_error(r, " ".join(args), [t.rc + ":2:5:", "NUL"])


def case_lock_control(t):
    C = channel(t)
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, *C, "dependency")
    lock = t.menv_ok("export", "-p", src).out
    explicit = t.menv_ok("list", "-p", src, "--explicit", "--md5").out
    cases = [("conda-lock name ESC", lock.replace("name: dependency\n",
                                                 'name: "depen\\e[31mdency"\n'), "name"),
             ("conda-lock name newline", lock.replace("name: dependency\n",
                                                     'name: "dependency\\nevil"\n'), "name"),
             ("conda-lock url", re.sub(r"url: (\S*dependency-1.0-0.conda)\n",
                                       r'url: "\1\\t"\n', lock), ""),
             ("explicit url", explicit.replace("dependency-1.0-0.conda",
                                               "dependency-1.0-0.conda\x1b[2J"), "")]
    for what, text, field in cases:
        t.check(text not in (lock, explicit), "%s: the lock was changed" % what, text)
        f = os.path.join(t.tmp, "bad.lock")
        write_text(f, text)
        for args in (["--dry-run"], []):
            p = os.path.join(t.tmp, "new")
            r = t.menv_run("create", "-p", p, "-f", f, "-y", *args)
            t.one_line_error(r, "%s %s" % (what, args), [f])
            t.check("\x1b" not in r.out + r.err and "evil" not in r.out,
                    "%s %s: no control character reaches the output" % (what, args), r)
            if field:
                t.check("its %s holds a control character" % field in r.err,
                        "%s %s: the error names the field" % (what, args), r.err)
            t.no_prefix_left(p, "%s %s" % (what, args))


def case_repodata_control(t):
    chan = os.path.join(t.tmp, "rd")
    t.write_repodata(chan, "noarch", packages={
        "evil-1.0-0.tar.bz2": {"name": "evil", "version": "1.0", "build": "0",
                               "depends": ["x\x1b[2Jy"], "md5": "0" * 32},
        "e\x1b[31mvil-1.0-0.tar.bz2": {"name": "e\x1b[31mvil", "version": "1.0\x1b[0m",
                                       "build": "0"}})
    C = ["-c", t.url(chan), "--override-channels"]
    for run in ("from the JSON", "from the cache"):
        for args in (["create", "-p", os.path.join(t.tmp, "x"), "-y", "--dry-run", "evil"],
                     ["repoquery", "depends", "evil"], ["search", "*"]):
            r = t.menv_run(*(args + C))
            what = "%s %s" % (" ".join(args[:2]), run)
            t.check("\x1b" not in r.out + r.err, "%s: no control character in the output"
                    % what, r)
            if args[0] == "create":
                t.check(r.rc != 0, "%s: evil is not available" % what, r)
                t.check("holds a control character" in r.err, "%s: the warning says why"
                        % what, r.err)


def case_underscore_glob(t):
    chan = os.path.join(t.tmp, "u")
    recs = {"ossl-%s-0.tar.bz2" % v: {"name": "ossl", "version": v, "build": "0"}
            for v in ("1.1_", "1.1a1", "1.1dev1", "1.0")}
    for name, dep in (("eqs", "ossl 1.1_*"), ("eqd", "ossl 1.1_.*"), ("ge", "ossl >=1.1_.*")):
        recs["%s-1.0-0.tar.bz2" % name] = {"name": name, "version": "1.0", "build": "0",
                                           "depends": [dep]}
    t.write_repodata(chan, "linux-64", packages=recs)
    t.write_repodata(chan, "noarch")
    C = ["-c", t.url(chan), "--override-channels"]
    # conda's answers (VersionOrder.startswith: "1.1a1" does not start with "1.1_")
    for spec, want in (("eqs", "1.1_"), ("eqd", "1.1_"), ("ge", "1.1a1"),
                       ("ossl 1.1_*", "1.1_"), ("ossl 1.1_.*", "1.1_")):
        r = t.menv_run("create", "--dry-run", "--json", "-p", os.path.join(t.tmp, "e"), spec,
                       *C)
        got = None
        if r.rc == 0:
            got = [x["version"] for x in r.json()["actions"]["LINK"] if x["name"] == "ossl"]
        t.check(got == [want], "%s links ossl %s" % (spec, want), r)


def case_underscore_regex(t):
    chan = os.path.join(t.tmp, "u")
    t.write_repodata(chan, "linux-64", packages={
        "ossl-1.1_-0.tar.bz2": {"name": "ossl", "version": "1.1_", "build": "0"}})
    t.write_repodata(chan, "noarch")
    C = ["-c", t.url(chan), "--override-channels"]
    for args in ([], ["--json"]):
        r = t.menv_run("create", "--dry-run", "-p", os.path.join(t.tmp, "e"),
                       "ossl[version='^1\\.5$']", *(args + C))
        text = r.out + r.err
        t.check(r.rc != 0 and "^1\\.5$" in text and "_1\\.5" not in text,
                "%s: the problem names the regex as written" % args, r)
        t.check("1.1_" in text, "%s: and the channel's 1.1_ with its '_'" % args, r)


def case_prune_order(t):
    with open(os.path.join(t.corpus, "repodata", "conda", "index.json"), encoding="utf-8") as f:
        recs = json.load(f)
    chan = os.path.join(t.tmp, "idx")
    t.write_repodata(chan, "linux-64", packages=recs)
    t.write_repodata(chan, "noarch")
    C = ["-c", t.url(chan), "--override-channels", "-p", os.path.join(t.tmp, "e")]
    for specs in (["python<3.3.2", "pycosat=0.3.0", "pycparser", "sphinx"],
                  ["numpy", "scipy", "pandas"], ["anaconda"], ["python=2.7", "numba"]):
        out = {}
        for prune in ("1", "0"):
            r = t.menv_run("create", "--dry-run", "--json", *(C + specs),
                           env={"MENV_SOLVER_PRUNE": prune, "CONDA_OVERRIDE_GLIBC": "2.17"})
            out[prune] = (r.rc, r.out, r.err)
        t.check(out["1"] == out["0"], "%s: the same output pruned and on the full pool"
                % " ".join(specs), "%r\n%r" % (out["1"][1:], out["0"][1:]))
        if specs[0] == "python<3.3.2":
            t.check(out["1"][0] == 0, "%s: solved" % " ".join(specs), out["1"][2])


def case_path_utf8(t):
    bad = os.fsdecode(b"/tmp/a\xffb")
    rc = os.path.join(t.tmp, "rc")
    before = b"channels:\n  - defaults\n"
    with open(rc, "wb") as f:
        f.write(before)
    env = {"MENVRC": rc, "CONDARC": rc}
    for args in (["--add", "pkgs_dirs"], ["--append", "envs_dirs"], ["--prepend", "pkgs_dirs"],
                 ["--set", "root_prefix"], ["--set", "ssl_verify"],
                 ["--set", "client_ssl_cert"]):
        r = t.menv_run("config", *args, bad, env=env)
        t.one_line_error(r, "config %s" % " ".join(args), ["not UTF-8", args[1]],
                         nonzero_only=True)
        with open(rc, "rb") as f:
            t.check(f.read() == before, "config %s: .condarc unchanged" % " ".join(args))
    for var, key in (("CONDA_PKGS_DIRS", "pkgs_dirs"), ("CONDA_ENVS_DIRS", "envs_dirs"),
                     ("MENV_ROOT_PREFIX", "root_prefix")):
        r = t.menv_run("config", "--show", key, env=dict(env, **{var: bad}))
        t.one_line_error(r, var, ["$" + var, "not UTF-8"])


def case_envfile_match_all(t):
    for dep in ('""', '"*"'):
        f = os.path.join(t.tmp, "environment.yml")
        write_text(f, "name: x\ndependencies:\n  - dependency\n  - %s\n" % dep)
        p = os.path.join(t.tmp, "new")
        r = t.menv_run("create", "-p", p, "-f", f, "--dry-run", "-c",
                       t.url(os.path.join(t.tmp, "none")), "--override-channels")
        t.one_line_error(r, "dependency %s" % dep, ["%s:4:5" % f, "would match every package"])
        t.no_prefix_left(p, "dependency %s" % dep)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

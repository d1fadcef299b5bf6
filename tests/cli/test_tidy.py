#!/usr/bin/env python3
"""cli.tidy_<case>: leftovers of issue 22's re-read and issue 24's conda answers, one case each
(python3 test_tidy.py MENV SHARED CASE):

- stdout_closed: `menv create ... >&-` (standard output closed before menv started). The
  environment is made whole (records, files, registered) or not at all, and the one failure,
  that the plan could not be written, is one line on stderr with its reason: "menv: error:
  cannot write standard output: Bad file descriptor", exit 1 (it said no reason); -q too
  (it still prints the plan, as conda's --quiet). A command with nothing to print (`config
  --add`) exits 0 and says nothing. A closed descriptor is
  never given to a file menv opens (it is held by /dev/null, read only, from the start): no
  file of the environment holds plan text. `list` and `export` with stdout closed: the same
  one line. (Python, which conda runs on, makes sys.stdout None for a closed descriptor and
  print() to it writes nothing; conda's own reporters then fail on None.write, so conda has
  no answer to copy here; menv says what happened.)
- repodata_bignum: a repodata record with "size": 99999999999999999999 (past int64), a
  "timestamp": 1e400 (past a double) or such a number in a field menv does not read, is
  kept as conda 26.7.1 keeps it (Python's json: ints are unbounded, 1e400 is inf): it was
  skipped with a warning ("too big integer", "real number overflow"). menv reads the size as
  the largest it holds (INT64_MAX), which no file has: the download's size check refuses the
  package, as conda's does (its ChecksumMismatchError on size); the timestamp is read as
  none. Dry runs plan all of them, with no warning.
"""
import glob
import hashlib
import json
import os
import subprocess
import sys

import menvtest
from menvtest import write_json, write_text

TR = os.path.join("packages", "conda", "test-recipes", "noarch")


def test_channel(t, name="chan"):
    P = os.path.join(t.corpus, TR)
    return t.make_channel(name, {"noarch": sorted(glob.glob(os.path.join(P, "*.conda")))})


def closed_run(t, args):
    """menv ARGS with file descriptor 1 closed: a Result (its out empty)."""
    p = subprocess.run([t.menv] + list(args), stdout=None, stderr=subprocess.PIPE,
                       env=t.environ(None), cwd=t.tmp, timeout=120,
                       preexec_fn=lambda: os.close(1))
    return menvtest.Result(list(args), p.returncode, "", p.stderr.decode(errors="replace"))


def tree_text(prefix):
    """Every regular file under prefix: {relative path: bytes}."""
    out = {}
    for d, _, files in os.walk(prefix):
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, prefix)] = fh.read()
    return out


def case_stdout_closed(t):
    chan = test_channel(t)
    C = ["-c", chan, "--override-channels"]
    ref = os.path.join(t.tmp, "ref")
    t.menv_ok("create", "-y", "-p", ref, *C, "dependent")
    want = sorted(os.listdir(os.path.join(ref, "conda-meta")))
    t.check(any(f.startswith("dependent-") for f in want), "the reference has dependent")

    prefix = os.path.join(t.tmp, "cls")  # as long as "ref"
    r = closed_run(t, ["create", "-y", "-p", prefix, *C, "dependent"])
    # progress lines first (stderr's own), then the one error, last
    errs = [x for x in r.err_lines() if x.startswith("menv: error: ")]
    t.check(r.rc == 1 and errs == r.err_lines()[-1:] == [
        "menv: error: cannot write standard output: Bad file descriptor"],
        "create >&-: exit 1, one last line naming the reason", r)
    t.eq(sorted(os.listdir(os.path.join(prefix, "conda-meta"))) if
         os.path.isdir(os.path.join(prefix, "conda-meta")) else None, want,
         "create >&-: the environment is whole (the records of the reference)")
    r2 = t.menv_run("env", "list", "--json")
    t.check(r2.rc == 0 and prefix in json.loads(r2.out).get("envs", []),
            "create >&-: the environment is registered", r2)
    # every file as the reference's (its prefix, of the same length, read as the reference's):
    # no plan text written into one through a reused descriptor 1
    files, rfiles = tree_text(prefix), tree_text(ref)
    t.eq(sorted(files), sorted(rfiles), "create >&-: the same files as the reference")
    differ = [p for p, b in files.items() if not p.startswith("conda-meta" + os.sep) and
              b.replace(prefix.encode(), ref.encode()) != rfiles.get(p)]
    t.eq(differ, [], "create >&-: each file's bytes as the reference's")
    t.menv_ok("doctor", "-p", prefix)

    # -q keeps the plan (as conda's --quiet, which only drops progress bars): the one line
    quiet = os.path.join(t.tmp, "quiet")
    r = closed_run(t, ["create", "-y", "-q", "-p", quiet, *C, "dependent"])
    t.one_line_error(r, "create -q >&-", ["cannot write standard output: Bad file descriptor"])
    t.eq(sorted(os.listdir(os.path.join(quiet, "conda-meta"))) if
         os.path.isdir(os.path.join(quiet, "conda-meta")) else None, want,
         "create -q >&-: the environment is whole")
    # a command with nothing to print: exit 0, silent, its work done
    r = closed_run(t, ["config", "--add", "channels", "extra-chan"])
    t.eq((r.rc, r.err), (0, ""), "config --add >&-: nothing to write, exit 0, silent")
    t.check("extra-chan" in open(t.rc).read(), "config --add >&-: the change is made")

    for args in (["list", "-p", prefix], ["export", "-p", prefix]):
        r = closed_run(t, args)
        t.one_line_error(r, "%s >&-" % args[0],
                         ["cannot write standard output: Bad file descriptor"])


def bignum_channel(t):
    chan = os.path.join(t.tmp, "bigchan")
    write_json(os.path.join(chan, "linux-64", "repodata.json"),
               {"info": {"subdir": "linux-64"}, "packages": {}, "packages.conda": {}})

    # bigsize's file is there, its hashes right: only its size can refuse it
    blob = b"0123456789"
    write_text(os.path.join(chan, "noarch", "bigsize-1.0-0.tar.bz2"), blob.decode())

    def rec(name, extra, depends="[]"):
        md5, sha = ("2" * 32, "1" * 64) if name != "bigsize" else (
            hashlib.md5(blob).hexdigest(), hashlib.sha256(blob).hexdigest())
        return ('{"name": "%s", "version": "1.0", "build": "0", "build_number": 0, '
                '"depends": %s, "subdir": "noarch", "md5": "%s", "sha256": "%s"%s}'
                % (name, depends, md5, sha, extra))
    pk = [("bigsize-1.0-0.tar.bz2", rec("bigsize", ', "size": 99999999999999999999')),
          ("bigts-1.0-0.tar.bz2", rec("bigts", ', "size": 10, "timestamp": 1e400')),
          ("bigother-1.0-0.tar.bz2",
           rec("bigother", ', "size": 10, "x": [-123456789012345678901234567890, -1e999]')),
          ("bigdep-1.0-0.tar.bz2",
           rec("bigdep", ', "size": 99999999999999999999, "timestamp": 1e400',
               '["bigts", "bigother"]'))]
    write_text(os.path.join(chan, "noarch", "repodata.json"),
               '{"info": {"subdir": "noarch"}, "packages.conda": {}, "packages": {%s}}'
               % ", ".join('"%s": %s' % kv for kv in pk))
    return chan


def case_repodata_bignum(t):
    chan = bignum_channel(t)
    C = ["-c", t.url(chan), "--override-channels", "--dry-run", "--json"]
    for spec, names in (("bigsize", ["bigsize"]), ("bigts", ["bigts"]),
                        ("bigother", ["bigother"]),
                        ("bigdep", ["bigdep", "bigother", "bigts"])):
        r = t.menv_run("create", "-p", os.path.join(t.tmp, "envs", "q"), *C, spec)
        t.check(r.rc == 0, "%s: planned (conda keeps the record)" % spec, r)
        t.check("skipped" not in r.err and "too big" not in r.err and
                "overflow" not in r.err, "%s: no warning" % spec, r.err)
        if r.rc == 0:
            link = json.loads(r.out)["actions"]["LINK"]
            t.eq(sorted(x["name"] for x in link), names, "%s: the plan links %s" % (spec, names))
    # the install: the size no file has is the download's to refuse, as conda's size check
    r = t.menv_run("create", "-y", "-q", "-p", os.path.join(t.tmp, "envs", "s"),
                   "-c", t.url(chan), "--override-channels", "bigsize")
    t.one_line_error(r, "bigsize: the download is refused on its size",
                     ["size mismatch for 'bigsize-1.0-0.tar.bz2'",
                      "expected 9223372036854775807 bytes, got 10"])
    t.check(not os.path.exists(os.path.join(t.tmp, "envs", "s", "conda-meta")),
            "bigsize: no environment made")


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.doctor: `menv doctor [--fix]` (conda doctor) on a real environment of corpus packages.

- a corrupt conda-meta record blocks `remove` and `list` (one line naming the file and its
  line:col); doctor names it; doctor --fix sets it aside as <file>.corrupt, links the
  package again from the package cache (its record written anew) and every command works
  again;
- a missing file and a changed file of a package are named with their package; --fix links
  the package again from the package cache: the files have their package's bytes again;
- a symbolic link planted in place of a package's file that leaves the prefix is named;
- a registry line of an environment that is gone is named when doctor checks the active
  environment (no -n/-p: conda doctor's question about this machine), as a note with the
  hint to --fix (another environment's line is no problem of this one), and --fix takes it
  out; asked about one environment (-n/-p), doctor names only that environment's problems;
- the exit status says whether a problem remains; --json carries the same findings."""

import json
import os

import menvtest
from menvtest import sha256_file, write_text

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def body(t):
    names = ("small-executable-1.0-0.conda", "dependency-2.0-0.conda", "dependent-2.0-0.conda",
             "clobber-a-1.0-0.conda")
    chan = t.make_channel("chan", {"noarch": [os.path.join(t.corpus, R, n) for n in names]})
    C = ["-c", t.url(chan), "--override-channels", "-q"]
    t.menv_ok("create", "-n", "d", *C, "dependent", "small-executable", "clobber-a")
    p = os.path.join(t.envs, "d")
    small, clob = os.path.join(p, "bin", "small"), os.path.join(p, "bin", "clobber-test-file")
    want = {small: sha256_file(small), clob: sha256_file(clob)}

    r = t.menv_run("doctor", "-n", "d")
    t.check(r.rc == 0 and "4 package records, 6 files checked, 0 problems left" in r.out,
            "a healthy environment: exit 0, every file checked", r)

    # damage: a missing file, a changed one, a link out, a stale registry line, a bad record
    os.unlink(small)
    write_text(clob, "changed by hand\n")
    activate = os.path.join(p, "etc", "conda", "activate.d", "small_executable.sh")
    os.unlink(activate)
    os.symlink("/etc/hostname", activate)
    reg = os.path.join(t.home, ".conda", "environments.txt")
    gone = os.path.join(t.tmp, "gone-env")
    with open(reg, "a") as f:
        f.write(gone + "\n")
    bad = os.path.join(p, "conda-meta", "dependent-2.0-0.json")
    good_record = json.load(open(bad))
    write_text(bad, '{"name": "dependent", "version": ')
    r = t.menv_run("remove", "-n", "d", "clobber-a", "-y")
    t.check(r.rc != 0 and "dependent-2.0-0.json:1:" in r.err,
            "a corrupt record stops remove, naming the file and its position", r)

    mine = [("changed-file", "clobber-test-file"), ("corrupt-record", "dependent-2.0-0.json"),
            ("link-out", "small_executable.sh"), ("missing-file", "small")]
    for how, args, env, expect in (
            ("-n d", ["-n", "d"], None, mine),
            ("-p", ["-p", p], None, mine),
            ("the active environment", [], {"CONDA_PREFIX": p},
             sorted(mine + [("stale-registry-other", "gone-env")]))):
        r = t.menv_run("doctor", *args, "--json", env=env)
        j = r.try_json() or {}
        kinds = sorted((f["kind"], os.path.basename(f["path"])) for f in j.get("findings", []))
        t.eq(kinds, expect, "doctor %s --json: every finding, by kind" % how)
        t.check(r.rc == 1 and j.get("problems") == len(mine),
                "doctor %s: exit 1 with %d problems" % (how, len(expect)), r)
    r = t.menv_run("doctor", "-n", "d")
    t.check("problem: '%s' of small-executable-1.0-0 is missing" % "bin/small" in r.out and
            "problem: 'bin/clobber-test-file' of clobber-a-1.0-0 was changed" in r.out and
            "links out of the prefix, to '/etc/hostname'" in r.out and
            "problem: %s:1:" % bad in r.out, "doctor: one line per problem, naming it", r.out)
    # another environment's stale registry line: a note with the hint, not this one's problem
    r = t.menv_run("doctor", env={"CONDA_PREFIX": p})
    t.check("note: the registry names '%s', which is no environment any more" % gone
            in r.out.splitlines() and
            "note: 1 registry line of other environments names what is gone; `menv doctor "
            "--fix` takes it out of ~/.conda/environments.txt" in r.out.splitlines() and
            not any(gone in x for x in r.out.splitlines() if x.startswith("problem:")) and
            "4 problems left" in r.out, "doctor: others' stale registry lines are a note "
            "with the hint to --fix, not problems of this environment", r.out)

    r = t.menv_run("doctor", "--fix", env={"CONDA_PREFIX": p})
    t.check(r.rc == 1 and "(fixed)" in r.out and "1 problem left" in r.out,
            "doctor --fix: all but the planted link fixed (exit 1: it stays)", r)
    t.check(os.path.exists(bad + ".corrupt"), "--fix: the corrupt record set aside as .corrupt")
    rec = json.load(open(bad)) if os.path.exists(bad) else {}
    t.eq((rec.get("name"), rec.get("version"), sorted(rec.get("files", []))),
         ("dependent", "2.0", sorted(good_record.get("files", []))),
         "--fix: dependent linked again from the package cache, its record written anew")
    t.eq({k: sha256_file(k) if os.path.exists(k) else None for k in want}, want,
         "--fix: the missing and the changed file have their package's bytes again")
    t.check(gone not in open(reg).read(), "--fix: the stale registry line is gone")
    r = t.menv_run("list", "-n", "d")
    t.check(r.rc == 0 and "small-executable" in r.out and "dependent" in r.out,
            "list works again and shows dependent", r)
    r = t.menv_run("remove", "-n", "d", "clobber-a", "-y", "-q")
    t.check(r.rc == 0 and not os.path.exists(clob), "remove works again", r)


if __name__ == "__main__":
    menvtest.main(body, "doctor")

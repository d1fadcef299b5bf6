#!/usr/bin/env python3
"""cli.dry_run_checks: `create --dry-run` refuses what the real create refuses, with the same
one line and exit 1. An environment file's `variables: {"A=B": 1}` passed the dry run and
only the real create refused it ("invalid variable name", when it stored the variables); now
the file is refused when it is read, naming FILE:LINE:COL, by both (and by `env create`,
`env update`), and nothing is created. A valid name (letters, digits, '_', not starting with a
digit) still works, its value stored as written.
"""
import json
import os

import menvtest


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    bad = [('{"A=B": 1}', "A=B"), ('{"1A": x}', "1A"), ('{"A B": x}', "A B"),
           ('{"ok": 1, "B-C": 2}', "B-C"), ('{"": 1}', "")]
    for i, (vars_, name) in enumerate(bad):
        f = os.path.join(t.tmp, "env%d.yml" % i)
        menvtest.write_text(f, "name: e%d\nchannels: [%s, nodefaults]\ndependencies: [dependency]\n"
                               "variables: %s\n" % (i, t.url(chan), vars_))
        col = vars_.index('"%s"' % name) + len("variables: ") + 1
        runs = {}
        for what, args in (("create --dry-run", ("create", "--dry-run", "-f", f)),
                           ("create", ("create", "-y", "-f", f)),
                           ("env create --dry-run", ("env", "create", "--dry-run", "-f", f)),
                           ("create --dry-run --json", ("create", "--dry-run", "--json", "-f",
                                                        f))):
            r = t.menv_run(*args)
            runs[what] = r
            t.one_line_error(r, "variables %s: %s" % (vars_, what),
                             ["%s:4:%d:" % (f, col), "invalid variable name '%s'" % name])
            t.no_prefix_left(os.path.join(t.envs, "e%d" % i), "variables %s: %s"
                             % (vars_, what))
        t.eq(runs["create --dry-run"].err, runs["create"].err,
             "variables %s: the dry run's error is the create's" % vars_)
    # a valid one still lands in conda-meta/state
    f = os.path.join(t.tmp, "good.yml")
    menvtest.write_text(f, "name: good\nchannels: [%s, nodefaults]\ndependencies: [dependency]\n"
                           "variables: {_A1: 'x=y', b: 2}\n" % t.url(chan))
    t.menv_ok("create", "--dry-run", "-f", f)
    t.menv_ok("create", "-y", "-f", f)
    with open(os.path.join(t.envs, "good", "conda-meta", "state")) as fh:
        t.eq(json.load(fh).get("env_vars"), {"_A1": "x=y", "b": "2"},
             "valid variables are stored as written")
    # env update reads the same file and refuses it the same way
    f = os.path.join(t.tmp, "env0.yml")
    r = t.menv_run("env", "update", "-y", "-n", "good", "-f", f)
    t.one_line_error(r, "env update with variables A=B", ["invalid variable name 'A=B'"])


if __name__ == "__main__":
    menvtest.main(body)

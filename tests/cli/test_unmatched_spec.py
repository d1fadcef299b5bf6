#!/usr/bin/env python3
"""cli.unmatched_spec: a requested spec whose name the channels have but no package of which
matches (`pytorch>=2.0` where there is only pytorch 1.13.1, built for another python) is an
unsatisfiable request, as with mamba's "nothing provides requested": one error line naming
the spec and the requested specs that rule out what there is, after a problem tree listing
the packages of that name and the dependency each requested spec excludes; --json carries
the same tree. A name no channel has stays "not available"; -q keeps the error one line.

Channel `c`: python 3.9.2 and 3.11.2; tool 1.0 (needs python >=3.11,<3.12.0a0) and tool 0.9
(needs python >=3.9,<3.10.0a0)."""
import json
import os

import menvtest
from menvtest import build_tar_bz2


def pkg(chan, name, version, depends):
    build_tar_bz2(os.path.join(chan, "noarch", "%s-%s-0.tar.bz2" % (name, version)),
                  {"name": name, "version": version, "build": "0", "build_number": 0,
                   "depends": depends, "subdir": "noarch"},
                  {"share/%s/version.txt" % name: version.encode()})


def body(t):
    c = os.path.join(t.tmp, "c")
    pkg(c, "python", "3.9.2", [])
    pkg(c, "python", "3.11.2", [])
    pkg(c, "tool", "1.0", ["python >=3.11,<3.12.0a0"])
    pkg(c, "tool", "0.9", ["python >=3.9,<3.10.0a0"])
    t.index(c)
    C = ["-c", t.url(c), "--override-channels", "--dry-run"]
    p = os.path.join(t.tmp, "e")

    r = t.menv_run("create", "-p", p, *C, "python=3.9", "tool>=2")
    t.eq(r.rc, 1, "python=3.9 tool>=2: exit 1")
    lines = r.err_lines()
    head = "problem 1: no version of tool matches tool>=2; the channels have 1.0, 0.9"
    tree = lines[lines.index(head):] if head in lines else lines
    t.eq(tree, [
        head,
        "requested tool>=2, which no package of the channels matches; they have:",
        "  └─ tool-1.0-0",
        "       needs python >=3.11,<3.12.0a0, but python 3.9* is requested",
        "  └─ tool-0.9-0",
        "menv: error: could not solve for the requested packages: nothing provides requested "
        "tool>=2 for python 3.9* (the channels have tool 1.0, which needs python "
        ">=3.11,<3.12.0a0; tool 0.9)"], "python=3.9 tool>=2: the tree and the error line")

    r = t.menv_run("create", "-p", p, *C, "-q", "python=3.9", "tool>=2")
    t.one_line_error(r, "-q", ["nothing provides requested tool>=2 for python 3.9*"])

    r = t.menv_run("create", "-p", p, *C, "-q", "--json", "python=3.9", "tool>=2")
    d = r.try_json() or {}
    probs = d.get("problems", [])
    t.eq(d.get("error"), "unsatisfiable", "--json: the error is 'unsatisfiable'")
    t.eq(probs[:1] and probs[0].get("tree"), [{
        "requested": "tool>=2", "nothing_matches": True,
        "available": [{"package": "tool-1.0-0",
                       "excluded_by": [{"dep": "python >=3.11,<3.12.0a0",
                                        "requested": "python 3.9*"}]},
                      {"package": "tool-0.9-0", "excluded_by": []}]}],
         "--json: the tree names the packages there are and what excludes them")

    # nothing else requested: the packages there are, no 'for'
    r = t.menv_run("create", "-p", p, *C, "-q", "tool>=2")
    t.eq(r.err_lines(), ["menv: error: could not solve for the requested packages: nothing "
                         "provides requested tool>=2 (the channels have tool 1.0, tool 0.9)"],
         "tool>=2 alone: the packages there are")
    # python=3.11: tool 1.0 is allowed, so only 0.9 is excluded
    r = t.menv_run("create", "-p", p, *C, "-q", "python=3.11", "tool>=2")
    t.eq(r.err_lines(), ["menv: error: could not solve for the requested packages: nothing "
                         "provides requested tool>=2 for python 3.11* (the channels have tool "
                         "0.9, which needs python >=3.9,<3.10.0a0; tool 1.0)"],
         "python=3.11 tool>=2: tool 0.9 is the one python 3.11 excludes")
    # a name no channel has is still 'not available'
    r = t.menv_run("create", "-p", p, *C, "-q", "nope>=1")
    t.one_line_error(r, "unknown name", ["package 'nope>=1' is not available"])
    t.check(not os.path.exists(p), "nothing was created")


menvtest.main(body)

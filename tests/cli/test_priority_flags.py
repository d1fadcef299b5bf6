#!/usr/bin/env python3
"""cli.priority_flags: --strict-channel-priority and --no-channel-priority on create, install
and update, as conda reads them (strict: a name found in a higher-priority channel is taken
only from there; no priority: the newest version from any channel wins).

Channel `high` (listed first) has tool 1.0, channel `low` has tool 1.0 and 2.0."""
import json
import os

import menvtest
from menvtest import build_tar_bz2


def pkg(chan, version):
    build_tar_bz2(os.path.join(chan, "noarch", "tool-%s-0.tar.bz2" % version),
                  {"name": "tool", "version": version, "build": "0", "build_number": 0,
                   "depends": [], "subdir": "noarch"},
                  {"share/tool/version.txt": version.encode()})


def installed(t, prefix):
    rec = [json.load(open(os.path.join(prefix, "conda-meta", f)))
           for f in os.listdir(os.path.join(prefix, "conda-meta")) if f.startswith("tool-")]
    return (rec[0]["version"], rec[0]["channel"].split("/")[-2]) if rec else None


def body(t):
    high, low = os.path.join(t.tmp, "high"), os.path.join(t.tmp, "low")
    pkg(high, "1.0")
    pkg(low, "1.0")
    pkg(low, "2.0")
    t.index(high)
    t.index(low)
    C = ["-q", "-c", t.url(high), "-c", t.url(low), "--override-channels"]

    p = os.path.join(t.tmp, "env-strict")
    t.menv_ok("create", "-p", p, *C, "tool")
    t.eq(installed(t, p), ("1.0", "high"), "create (strict by default): 1.0 from high")
    p2 = os.path.join(t.tmp, "env-flag-strict")
    t.menv_ok("create", "-p", p2, *C, "--strict-channel-priority", "tool")
    t.eq(installed(t, p2), ("1.0", "high"), "create --strict-channel-priority: 1.0 from high")
    p4 = os.path.join(t.tmp, "env-none")
    t.menv_ok("create", "-p", p4, *C, "--no-channel-priority", "tool")
    t.eq(installed(t, p4), ("2.0", "low"), "create --no-channel-priority: 2.0 from low")
    p3 = os.path.join(t.tmp, "env-strict-2")

    # update and install take the same flags
    t.menv_ok("update", "-p", p, *C, "tool")
    t.eq(installed(t, p), ("1.0", "high"), "update (strict): stays at 1.0 from high")
    t.menv_ok("update", "-p", p, *C, "--no-channel-priority", "tool")
    t.eq(installed(t, p), ("2.0", "low"), "update --no-channel-priority: 2.0 from low")
    t.menv_ok("install", "-p", p2, *C, "--no-channel-priority", "tool>=2")
    t.eq(installed(t, p2), ("2.0", "low"), "install --no-channel-priority tool>=2")
    t.menv_ok("create", "-p", p3, *C, "--strict-channel-priority", "tool")
    r = t.menv_run("install", "-p", p3, *C, "--strict-channel-priority", "tool>=2")
    t.one_line_error(r, "install --strict-channel-priority tool>=2",
                     ["no package matches 'tool>=2'", "tool 2.0 of channel '%s'" % t.url(low),
                      "strict channel priority", "--no-channel-priority"])
    t.eq(installed(t, p3), ("1.0", "high"), "the refused install changed nothing")


menvtest.main(body)

#!/usr/bin/env python3
"""cli.queries: `menv search` and `menv repoquery depends|whoneeds [--tree]` on a channel of
real corpus packages (conda's test recipes): records newest first, dependencies as the
package declares them, reverse dependencies from the channel or from an environment."""
import json
import os

import menvtest


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    files = [os.path.join(P, f) for f in ("dependency-1.0-0.conda", "dependency-2.0-0.conda",
                                          "dependent-1.0-0.conda", "dependent-2.0-0.conda",
                                          "another_dependent-2.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files})
    C = ["-c", t.url(chan), "--override-channels"]

    r = t.menv_ok("search", *C, "dependency", "--json")
    got = [(x["name"], x["version"]) for x in json.loads(r.out)]
    t.eq(got, [("dependency", "2.0"), ("dependency", "1.0")], "search: newest first")
    r = t.menv_ok("search", *C, "depend*", "--json")
    names = sorted({x["name"] for x in json.loads(r.out)})
    t.eq(names, ["dependency", "dependent"], "search: a name glob")
    r = t.menv_ok("search", *C, "dependency<2", "--json")
    t.eq([x["version"] for x in json.loads(r.out)], ["1.0"], "search: a version constraint")
    # newest first: the version, then the build number (not the build string's order)
    bn = t.write_repodata(os.path.join(t.tmp, "bn"), "noarch", packages={
        "bn-1.0-a_2.tar.bz2": {"name": "bn", "version": "1.0", "build": "a_2", "build_number": 2},
        "bn-1.0-z_0.tar.bz2": {"name": "bn", "version": "1.0", "build": "z_0", "build_number": 0},
        "bn-1.0-m_1.tar.bz2": {"name": "bn", "version": "1.0", "build": "m_1", "build_number": 1},
        "bn-0.9-y_5.tar.bz2": {"name": "bn", "version": "0.9", "build": "y_5", "build_number": 5}})
    os.makedirs(os.path.join(bn, "linux-64"), exist_ok=True)
    t.write_repodata(bn, "linux-64")
    r = t.menv_ok("search", "-c", t.url(bn), "--override-channels", "bn", "--json")
    t.eq([(x["version"], x["build_number"]) for x in r.json()],
         [("1.0", 2), ("1.0", 1), ("1.0", 0), ("0.9", 5)],
         "search: newest version first, then the highest build number")
    r = t.menv_run("search", *C, "nothing-like-this")
    t.one_line_error(r, "search: no match", ["nothing-like-this"])

    # the dependencies the newest dependent declares, read from its own index.json
    idx = menvtest.Package(files[3]).index
    r = t.menv_ok("repoquery", "depends", *C, "dependent", "--json")
    t.eq(json.loads(r.out)["depends"], idx["depends"], "repoquery depends: as declared")
    r = t.menv_ok("repoquery", "depends", "--tree", *C, "another_dependent")
    lines = r.out.splitlines()
    t.check(lines[0].startswith("another_dependent 2.0 0") and
            any("dependent 2.0 0" in l for l in lines[1:]) and
            any("dependency 2.0 0" in l for l in lines[1:]),
            "repoquery depends --tree walks down to dependency", r.out)

    r = t.menv_ok("repoquery", "whoneeds", *C, "dependency", "--json")
    got = sorted((x["name"], x["version"]) for x in json.loads(r.out))
    t.eq(got, [("dependent", "1.0"), ("dependent", "2.0")], "repoquery whoneeds: the channel")
    t.menv_ok("create", "-q", "-n", "e", *C, "another_dependent")
    r = t.menv_ok("repoquery", "whoneeds", "-n", "e", "dependent", "--json")
    t.eq([x["name"] for x in json.loads(r.out)], ["another_dependent"],
         "repoquery whoneeds -n: the installed packages")


menvtest.main(body)

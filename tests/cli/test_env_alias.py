#!/usr/bin/env python3
"""cli.env_alias: conda env's create and export (conda/cli/main_env_create.py,
main_env_export.py). `menv env create` reads ./environment.yml when no -f is given and makes
the same environment as `menv create -f`; `menv env export` prints the environment.yml that
`menv export --format environment` prints; a -f or --format given is kept."""

import json
import os

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def records(prefix):
    meta = os.path.join(prefix, "conda-meta")
    out = {}
    for n in sorted(os.listdir(meta)):
        if n.endswith(".json"):
            with open(os.path.join(meta, n)) as f:
                j = json.load(f)
            out[n] = (j["name"], j["version"], j["build"], j["sha256"])
    return out


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in (
        "dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-1.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files, "linux-64": []})
    work = os.path.join(t.tmp, "work")
    os.makedirs(work)
    with open(os.path.join(work, "environment.yml"), "w") as f:
        f.write("name: a\nchannels: [%s, nodefaults]\ndependencies:\n  - dependent=1.0\n" % t.url(chan))
    other = os.path.join(t.tmp, "other.yml")
    with open(other, "w") as f:
        f.write("name: b\nchannels: [%s, nodefaults]\ndependencies:\n  - dependency=2.0\n" % t.url(chan))

    t.menv_ok("env", "create", cwd=work)
    a = records(os.path.join(t.envs, "a"))
    t.eq(sorted(v[:3] for v in a.values()),
         [("dependency", "1.0", "0"), ("dependent", "1.0", "0")],
         "env create without -f: ./environment.yml's environment")
    t.menv_ok("create", "-f", os.path.join(work, "environment.yml"), "-n", "a2")
    t.eq(records(os.path.join(t.envs, "a2")), a, "the same records as create -f")

    t.menv_ok("env", "create", "-f", other, cwd=work)
    t.eq([v[:3] for v in records(os.path.join(t.envs, "b")).values()],
         [("dependency", "2.0", "0")], "env create -f FILE: that file, not ./environment.yml")
    r = t.menv_run("env", "create", cwd=t.tmp)
    t.check(r.rc != 0 and "environment.yml" in r.err and len(r.err.strip().split("\n")) == 1,
            "env create without a file: one line naming environment.yml", r)

    e1 = t.menv_ok("env", "export", "-n", "a").out
    e2 = t.menv_ok("export", "-n", "a", "--format", "environment").out
    t.eq(e1, e2, "env export is export --format environment")
    t.check(e1.startswith("name: a\n") and "dependent=1.0=0" in e1, "an environment.yml", e1)
    e3 = t.menv_ok("env", "export", "-n", "a", "--format", "explicit").out
    t.check(e3.startswith("# This file may be used") or "@EXPLICIT" in e3,
            "env export --format explicit is kept", e3)


if __name__ == "__main__":
    menvtest.main(body, "env_alias")

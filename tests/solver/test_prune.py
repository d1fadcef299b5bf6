#!/usr/bin/env python3
"""Builds no solution can hold are left out of the solve (solver/prune.c, menv issue 25), with
the full pool's answers. A channel holds `foo` 1.0 in 1,500 builds that need `ghost` (which no
channel has), foo 2.0 (needs ghost too), foo 0.9 (no dependencies), `bar` (needs foo), `baz`
(needs foo >=2: dead through foo 2.0) and `qux` (needs foo <1, and `ghost` in another build).
libsolv writes a conflict rule for every pair of builds of a name it reaches: on the full pool
(MENV_SOLVER_PRUNE=0) `bar` costs 1.1 million rules and tens of MB, pruned a few. Each request
must answer alike both ways: `bar` and `qux` with foo 0.9, `baz` refused with the same error;
and the pruned solve of `bar` must stay at least 20 MB below the full one's peak RSS.
Usage: test_prune.py MENV
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

N = 1500


def channel(root):
    pk = {}

    def add(name, version, build, depends):
        pk["%s-%s-%s.tar.bz2" % (name, version, build)] = {
            "name": name, "version": version, "build": build, "build_number": 0,
            "depends": depends, "subdir": "linux-64", "md5": "0" * 32, "size": 1}
    for i in range(N):
        add("foo", "1.0", "dead_%d" % i, ["ghost"])
    add("foo", "2.0", "dead", ["ghost >=1"])
    add("foo", "0.9", "live", [])
    add("bar", "1.0", "0", ["foo"])
    add("baz", "1.0", "0", ["foo >=2"])
    add("qux", "1.0", "0", ["foo <1"])
    add("qux", "1.1", "0", ["foo <1", "ghost"])
    for sd, recs in (("linux-64", pk), ("noarch", {})):
        os.makedirs(os.path.join(root, sd))
        with open(os.path.join(root, sd, "repodata.json"), "w") as f:
            json.dump({"info": {"subdir": sd}, "packages": recs}, f)


def solve(menv, chan, spec, prune, tmp):
    env = dict(os.environ, HOME=tmp, MENVRC="/dev/null", CONDARC="/dev/null",
               MENV_ROOT_PREFIX=os.path.join(tmp, "root"), CONDA_OVERRIDE_CUDA="",
               CONDA_OVERRIDE_GLIBC="2.36", MENV_SOLVER_PRUNE=prune)
    cmd = [menv, "create", "--dry-run", "--json", "-p", os.path.join(tmp, "env"),
           "--override-channels", "-c", "file://" + chan, spec]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    menv = sys.argv[1]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        chan = os.path.join(tmp, "chan")
        channel(chan)
        for spec, want in (("bar", ["bar=1.0=0", "foo=0.9=live"]),
                           ("qux", ["foo=0.9=live", "qux=1.0=0"]), ("baz", None)):
            got = {}
            for prune in ("0", "1"):
                rc, out, err = solve(menv, chan, spec, prune, os.path.join(tmp, spec + prune))
                if rc == 0:
                    got[prune] = sorted("%s=%s=%s" % (r["name"], r["version"], r["build_string"])
                                        for r in json.loads(out)["actions"]["LINK"])
                else:
                    got[prune] = (rc, (err.strip().splitlines() or [""])[0])
            if got["0"] != got["1"]:
                fails.append(f"{spec}: full pool {got['0']}, pruned {got['1']}")
            elif want is not None and got["1"] != want:
                fails.append(f"{spec}: {got['1']}, want {want}")
            elif want is None and (not isinstance(got["1"], tuple) or got["1"][0] == 0):
                fails.append(f"{spec}: solved {got['1']}, want a refusal")
            else:
                print(f"ok: {spec}: {got['1']}")
        # the pool's size: peak RSS of the solve of bar, full and pruned
        rss = {}
        for prune in ("0", "1"):
            t = os.path.join(tmp, "rss" + prune)
            env = dict(os.environ, HOME=t, MENVRC="/dev/null", CONDARC="/dev/null",
                       MENV_ROOT_PREFIX=os.path.join(t, "root"), CONDA_OVERRIDE_CUDA="",
                       CONDA_OVERRIDE_GLIBC="2.36", MENV_SOLVER_PRUNE=prune)
            cmd = [menv, "create", "--dry-run", "-p", os.path.join(t, "env"),
                   "--override-channels", "-c", "file://" + chan, "bar"]
            subprocess.run(cmd, env=env, capture_output=True)
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            rss[prune] = ru.ru_maxrss / 1024.0
        print("peak RSS of bar: full pool %.1f MB, pruned %.1f MB" % (rss["0"], rss["1"]))
        if rss["0"] - rss["1"] < 20:
            fails.append("the pruned solve of bar is not 20 MB below the full pool's: "
                         "%.1f / %.1f MB" % (rss["1"], rss["0"]))
    for f in fails:
        print("FAIL", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

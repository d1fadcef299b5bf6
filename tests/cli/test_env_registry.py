#!/usr/bin/env python3
"""cli.env_registry: conda's registry of environments, ~/.conda/environments.txt.

- every successful create (-p, -n, -f environment.yml, -f lockfile, --json) appends its prefix
  (normalized: no trailing '/'), once; ~/.conda is made when missing; --dry-run and a failed
  create register nothing; lines menv did not write are kept
- `menv env list` and `--json` show the registered -p prefixes after base and the named ones;
  a prefix removed by hand is skipped; nothing is listed twice
- `remove --all` takes the line out; creating the same path again gives one line, not two
- four concurrent creates: four lines, no temporary file left in ~/.conda
- an unwritable registry (~/.conda is a file) is a warning on stderr; create still exits 0
"""
import json
import os
import shutil
import subprocess

import menvtest
from menvtest import write_text


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    reg = os.path.join(t.home, ".conda", "environments.txt")
    envs_dir = os.path.join(t.tmp, "by path")  # a blank in the path
    p1 = os.path.join(envs_dir, "p1")
    named = os.path.join(t.envs, "named")

    # ---- create -p, with a trailing '/' and a '//': registered normalized
    r = t.menv_ok("create", "-p", envs_dir + "//p1/", *C, "dependency")
    t.eq(r.err_lines(), [], "create -p: no warning on stderr")
    t.check(os.path.isdir(os.path.join(t.home, ".conda")), "create makes ~/.conda")
    t.eq(lines(reg), [p1], "create -p: the registry holds the prefix")

    t.menv_ok("create", "-n", "named", *C, "dependency")
    t.eq(lines(reg), [p1, named], "create -n: appended")

    # ---- create -f environment.yml and -f lockfile, --json
    yml = os.path.join(t.tmp, "environment.yml")
    write_text(yml, "name: fromfile\nchannels: [%s, nodefaults]\ndependencies: [dependency]\n"
               % t.url(chan))
    p2 = os.path.join(envs_dir, "p2")
    t.menv_ok("create", "-f", yml, "-p", p2, "-q")
    lock = os.path.join(t.tmp, "lock.yml")
    write_text(lock, t.menv_ok("export", "-p", p1).out)
    p3 = os.path.join(envs_dir, "p3")
    t.menv_ok("create", "-f", lock, "-p", p3, "-q")
    p4 = os.path.join(envs_dir, "p4")
    r = t.menv_ok("create", "-p", p4, *C, "--json", "dependency")
    t.eq(r.json().get("success"), True, "create --json: stdout is the JSON report")
    t.eq(lines(reg), [p1, named, p2, p3, p4],
         "create -f environment.yml, -f lockfile, --json: each appended once")

    # ---- nothing registered without a new environment
    t.menv_ok("create", "-p", os.path.join(envs_dir, "dry"), *C, "--dry-run", "dependency")
    r = t.menv_run("create", "-p", os.path.join(envs_dir, "unsat"), *C, "dependency=9")
    t.check(r.rc != 0, "create of an unsatisfiable spec fails", r)
    r = t.menv_run("create", "-p", p1, *C, "dependency")
    t.check(r.rc != 0, "create on an existing prefix fails", r)
    t.eq(lines(reg), [p1, named, p2, p3, p4],
         "--dry-run, a failed solve, an existing prefix: the registry is unchanged")

    # ---- env list
    r = t.menv_ok("env", "list")
    body_lines = [ln for ln in r.out.splitlines() if not ln.startswith("#")]
    t.eq(body_lines, [f"{'base':<20}     {t.root}", f"{'named':<20}     {named}",
                      f"{'':<20}     {p1}", f"{'':<20}     {p2}", f"{'':<20}     {p3}",
                      f"{'':<20}     {p4}"],
         "env list: base, named, then the registered prefixes in order, each once")
    r = t.menv_ok("env", "list", "--json")
    t.eq(r.json(), {"envs": [t.root, named, p1, p2, p3, p4]}, "env list --json")
    r = t.menv_ok("env", "list", env={"CONDA_PREFIX": p2 + "/"})
    t.check(f"{'':<20}  *  {p2}" in r.out, "env list marks the active registered prefix", r.out)

    # ---- a prefix removed by hand is skipped (its line stays, as conda leaves it)
    shutil.rmtree(p2)
    os.makedirs(os.path.join(envs_dir, "p3-like"))  # a directory without conda-meta/
    with open(reg, "a") as f:
        f.write("\n/nonexistent/conda/env\n%s\n%s/\n" % (os.path.join(envs_dir, "p3-like"), p3))
    foreign = lines(reg)
    r = t.menv_ok("env", "list", "--json")
    t.eq(r.json(), {"envs": [t.root, named, p1, p3, p4]},
         "env list skips missing prefixes, non-environments and duplicates")
    t.eq(r.err_lines(), [], "env list: silent about skipped prefixes")

    # ---- remove --all takes the line out; a second create of the path adds it once
    t.menv_ok("remove", "-p", p1, "--all", "-y", "-q")
    t.check(not os.path.exists(p1), "remove --all removes the prefix")
    t.eq(lines(reg), [x for x in foreign if x != p1],
         "remove --all takes out its line and keeps the others as they were")
    t.menv_ok("create", "-p", p1 + "/", *C, "dependency")
    t.menv_ok("create", "-p", os.path.join(envs_dir, "p2"), *C, "dependency")
    got = lines(reg)
    t.check((got.count(p1), got.count(p2)) == (1, 1),
            "creating a removed or hand-deleted prefix again: one line each", got)
    t.eq(got[:len(foreign) - 1], [x for x in foreign if x != p1],
         "the lines before are kept as they were")
    r = t.menv_ok("env", "list", "--json")
    t.eq(sorted(r.json()["envs"]), sorted([t.root, named, p1, p2, p3, p4]),
         "env list: each environment once")

    # ---- concurrent creates never lose a line
    cs = [os.path.join(envs_dir, "c%d" % i) for i in range(4)]
    procs = [subprocess.Popen([t.menv, "create", "-p", c] + C + ["dependency"],
                              env=t.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for c in cs]
    outs = [p.communicate(timeout=120) for p in procs]
    t.check([p.returncode for p in procs] == [0] * 4, "four concurrent creates succeed",
            b"".join(e for _, e in outs))
    got = lines(reg)
    t.check([got.count(c) for c in cs] == [1] * 4, "four concurrent creates: four lines", got)
    t.eq(sorted(os.listdir(os.path.join(t.home, ".conda"))),
         ["environments.txt", "environments.txt.lock"], "no temporary file left in ~/.conda")

    # ---- an unwritable registry: a warning, never a failed create
    home2 = os.path.join(t.tmp, "home2")
    write_text(os.path.join(home2, ".conda"), "a file, not a directory\n")
    p5 = os.path.join(envs_dir, "p5")
    r = t.menv_run("create", "-p", p5, *C, "dependency", env={"HOME": home2})
    t.eq(r.rc, 0, "create with ~/.conda a file: exit 0")
    t.check(os.path.isdir(os.path.join(p5, "conda-meta")), "the environment was created")
    warn = [ln for ln in r.err_lines() if ln.startswith("menv: warning: ")]
    t.check(len(warn) == 1 and p5 in warn[0] and "registry" in warn[0],
            "one warning naming the prefix and the registry", r.err)
    r = t.menv_run("env", "list", "--json", env={"HOME": home2})
    t.eq(r.rc, 0, "env list with ~/.conda a file: exit 0")
    t.eq(r.try_json(), {"envs": [t.root, named]}, "env list with ~/.conda a file: JSON")
    r = t.menv_run("remove", "-p", p5, "--all", "-y", "-q", env={"HOME": home2})
    t.eq((r.rc, r.err_lines()), (0, []), "remove --all with ~/.conda a file: exit 0, silent")
    home3 = os.path.join(t.tmp, "home3")
    os.makedirs(home3)
    r = t.menv_run("remove", "-p", p4, "--all", "-y", "-q", env={"HOME": home3})
    t.eq((r.rc, r.err_lines()), (0, []), "remove --all without a registry: exit 0, silent")
    t.eq(os.listdir(home3), [], "remove --all without a registry creates nothing")


if __name__ == "__main__":
    menvtest.main(body)

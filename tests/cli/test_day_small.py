#!/usr/bin/env python3
"""cli.day_small: the smaller findings of a team's day with menv (issue 23), each as it was
seen and as it must be now.

- `create -f FILE` (or a lockfile, or specs) onto an existing environment: refused with what
  to run instead (`menv env update -p P -f FILE`, `menv install -p P -f LOCK`, or remove it);
  its `--dry-run` gives the same refusal and exit status, never "nothing was changed";
- a count of one is singular ("1 package", "1 file", "1 entry", ...) in every summary line;
- `menv info`: every key right-aligned to the same column;
- `menv list` and `menv search` fit a 100-column terminal (COLUMNS=100) as the plan does: the
  channel gives way, shortened in its middle; without a width the lines are whole;
- creating from a lock (conda-lock v1 or explicit: no sizes in them) into an empty package
  cache shows each package's real size and the total download (file:// and http://), not
  "-" and "0 B";
- the summary counts what pip installed ("(1 pip)"), not the lines of the `pip:` section (an
  option line, a requirement already there);
- `remove` takes `--no-smoke-check` and `--smoke-check` as install and update do (its usage
  listed them, its parser refused them)."""

import tarfile

import os
import re

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def human(n):
    return "%d B" % n if n < 1000 else "%.1f kB" % (n / 1e3) if n < 1e6 else "%.1f MB" % (n / 1e6)


def plan_sizes(out):
    """{name: size column} of a plan's rows, and its Total download line."""
    rows = {}
    for l in out.splitlines():
        m = re.match(r"  \+ (\S+)\s+\S+\s+\S+\s+\S+\s+(\S+(?: [kMG]?B)?)$", l)
        if m:
            rows[m.group(1)] = m.group(2)
    total = [l.strip() for l in out.splitlines() if "Total download" in l]
    return rows, total


# a stand-in for `python -m pip install ... -r FILE`: a dist-info folder for each NAME==VERSION
# line that is not installed yet, as pip does
FAKE_PIP = r"""#!/bin/sh
prefix=$(cd "$(dirname "$0")/.." && pwd)
[ "$1 $2 $3" = "-m pip install" ] || exit 3
req=
while [ $# -gt 0 ]; do [ "$1" = -r ] && req=$2; shift; done
sp="$prefix/lib/python3.9/site-packages"
mkdir -p "$sp"
while read -r line; do
    case "$line" in *==*)
        n=${line%%==*}; v=${line#*==}; d="$sp/$n-$v.dist-info"
        [ -d "$d" ] && continue
        mkdir -p "$d"
        printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$n" "$v" > "$d/METADATA";;
    esac
done < "$req"
"""


def fake_python(path):
    ti = tarfile.TarInfo("bin/python")
    data = FAKE_PIP.encode()
    ti.size, ti.mode, ti.mtime = len(data), 0o755, 1700000000
    return menvtest.build_conda(path, {"name": "python", "version": "3.9.0", "build": "0",
                                       "build_number": 0, "depends": [], "subdir": "linux-64"},
                                [(ti, data)])


def snapshot(prefix):
    return menvtest.tree_snapshot(prefix)


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in ("dependency-1.0-0.conda",
                                                     "dependent-1.0-0.conda")]
    # a long channel path, as a team's shared folder is
    chan = t.make_channel("a-team-shared-folder-of-conda-packages-for-the-day-long-test",
                          {"noarch": files, "linux-64": []})
    C = ["-c", t.url(chan), "--override-channels"]
    envfile = os.path.join(t.tmp, "environment.yml")
    menvtest.write_text(envfile, "name: e\nchannels: [%s, nodefaults]\ndependencies:\n"
                        "  - dependent=1.0\n" % t.url(chan))
    t.menv_ok("create", "-q", "-y", "-f", envfile)
    e = os.path.join(t.envs, "e")
    lock = os.path.join(t.tmp, "e-lock.yml")
    menvtest.write_text(lock, t.menv_ok("export", "-n", "e").out)
    before = snapshot(e)

    # create onto an existing environment, and its dry run
    for what, args, hint in (
            ("create -f environment.yml", ["-f", envfile],
             "update it with 'menv env update -p %s -f %s'" % (e, envfile)),
            ("create -f LOCK", ["-n", "e", "-f", lock],
             "install the lock into it with 'menv install -p %s -f %s'" % (e, lock)),
            ("create -n e SPEC", ["-n", "e"] + C + ["dependency"],
             "add packages with 'menv install -p %s SPEC...'" % e)):
        want = ("menv: error: prefix '%s' already exists: %s, or remove it first ('menv env "
                "remove -p %s')" % (e, hint, e))
        r = t.menv_run("create", "-y", *args)
        t.eq((r.rc, r.err_lines()), (1, [want]), what + " onto an existing environment")
        d = t.menv_run("create", "-y", "--dry-run", *args)
        t.eq((d.rc, d.err_lines()), (1, [want]), what + " --dry-run: the same refusal")
        t.check("nothing was changed" not in d.out, what + " --dry-run: no 'nothing was "
                "changed'", d.out)
    t.eq(snapshot(e), before, "the existing environment is left as it was")

    # a lock into an empty package cache: the real sizes and the total
    want = {os.path.basename(f).split("-1.0")[0]: os.path.getsize(f) for f in files}
    total = "Total download: %s" % human(sum(want.values()))
    fresh = {"MENV_ROOT_PREFIX": os.path.join(t.tmp, "fresh-root")}
    r = t.menv_run("create", "-n", "f", "-f", lock, "--dry-run", env=fresh)
    t.eq((r.rc,) + plan_sizes(r.out), (0, {k: human(v) for k, v in want.items()}, [total]),
         "create -f conda-lock into an empty cache: every row's size and the total")
    srv = t.http_server(chan)
    try:
        explicit = os.path.join(t.tmp, "explicit.txt")
        menvtest.write_text(explicit, "@EXPLICIT\n" + "".join(
            "%s/noarch/%s#sha256:%s\n" % (srv.base, os.path.basename(f), menvtest.sha256_file(f))
            for f in files))
        r = t.menv_run("create", "-n", "g", "-f", explicit, "--dry-run", env=fresh)
        t.eq((r.rc,) + plan_sizes(r.out), (0, {k: human(v) for k, v in want.items()}, [total]),
             "create -f explicit (http://) into an empty cache: the sizes the server names")
        r = t.menv_run("create", "-n", "g", "-f", explicit, "-y", "-q", env=fresh)
        t.eq(r.rc, 0, "and the real create from it works")
    finally:
        srv.stop()

    # the pip count: one line an option, one requirement there already
    pychan = os.path.join(t.tmp, "py")
    fake_python(os.path.join(pychan, "linux-64", "python-3.9.0-0.conda"))
    menvtest.build_conda(os.path.join(pychan, "noarch", "pip-23.0-0.conda"),
                         {"name": "pip", "version": "23.0", "build": "0", "build_number": 0,
                          "depends": ["python"], "subdir": "noarch", "noarch": "generic"}, [])
    t.index(pychan)
    pyfile = os.path.join(t.tmp, "py.yml")
    menvtest.write_text(pyfile, "name: py\nchannels: [%s, nodefaults]\ndependencies:\n"
                        "  - python\n  - pip:\n    - --index-url file:///nowhere\n"
                        "    - alpha==1.0\n" % t.url(pychan))
    r = t.menv_run("create", "-y", "--no-smoke-check", "-f", pyfile)
    t.check(r.rc == 0 and ": 3 linked (1 pip), " in r.out,
            "create with a pip: section of an option line and one package: '3 linked (1 pip)'",
            r)
    menvtest.write_text(pyfile, "name: py\nchannels: [%s, nodefaults]\ndependencies:\n"
                        "  - python\n  - pip:\n    - alpha==1.0\n    - beta==2.0\n"
                        % t.url(pychan))
    r = t.menv_run("env", "update", "-y", "--no-smoke-check", "-f", pyfile)
    t.check(r.rc == 0 and ": 0 packages removed, 1 linked (1 pip), " in r.out,
            "env update where pip installs one of two lines: '1 linked (1 pip)'", r)

    # one is singular
    one = t.make_channel("one", {"noarch": files[:1]}, index=False)
    r = t.menv_ok("index", one)
    t.check(re.fullmatch(r"indexed 1 package into \d+ repodata\.json files? under .*\n", r.out)
            and "1 packages" not in r.out, "index: 1 package", r.out)
    t.menv_ok("create", "-q", "-y", "-n", "one", "-c", t.url(one), "--override-channels",
              "dependency")
    r = t.menv_run("doctor", "-n", "one")
    t.check(re.search(r": 1 package record, \d+ files? checked, 0 problems left$", r.out, re.M)
            and not re.search(r"\b1 files\b", r.out), "doctor: 1 package record", r.out)
    # remove takes the smoke check's toggles as install and update do (it refused them while
    # its usage listed them)
    t.menv_ok("create", "-q", "-y", "-n", "rm", "-c", t.url(one), "--override-channels",
              "dependency")
    rm = os.path.join(t.envs, "rm")
    r = t.menv_run("remove", "-y", "-n", "rm", "--smoke-check", "--no-smoke-check", "dependency")
    t.eq((r.rc, r.err_lines()),
         (2, ["menv: error: --smoke-check and --no-smoke-check contradict each other"]),
         "remove --smoke-check --no-smoke-check: the one-line contradiction, exit 2")
    t.check(os.listdir(os.path.join(rm, "conda-meta")) and any(
        n.startswith("dependency-") for n in os.listdir(os.path.join(rm, "conda-meta"))),
        "the contradiction removed nothing", os.listdir(os.path.join(rm, "conda-meta")))
    r = t.menv_run("remove", "-y", "-n", "rm", "--no-smoke-check", "dependency")
    t.check(r.rc == 0 and "Smoke check" not in r.out + r.err and not any(
        n.startswith("dependency-") for n in os.listdir(os.path.join(rm, "conda-meta"))),
        "remove --no-smoke-check: accepted, the package removed, no smoke check", r)
    r = t.menv_ok("remove", "--help")
    t.check("--no-smoke-check" in r.out.split("options:")[-1]
            and "--smoke-check " in r.out.split("options:")[-1],
            "remove --help lists both toggles among its options", r.out)
    r = t.menv_ok("remove", "-y", "-n", "one", "--all")
    t.check("Removed %s: 1 package\n" % os.path.join(t.envs, "one") in r.out,
            "remove --all of one package: 'Removed P: 1 package'", r.out)
    r = t.menv_ok("clean", "--index-cache", "--dry-run")
    t.check(not re.search(r"\b1 entries\b", r.out), "clean: never '1 entries'", r.out)

    # info: the keys end in one column
    r = t.menv_ok("info", env={"CONDA_PREFIX": e, "CONDA_SHLVL": "1"})
    cols = {line.index(" : ") for line in r.out.splitlines() if " : " in line}
    t.eq(len(cols), 1, "info: every ' : ' in the same column")
    t.check("active env location : %s" % e in r.out and "      menv version : " in r.out,
            "info: keys right-aligned to the longest", r.out)

    # list and search in 100 columns
    for cmd in (["list", "-n", "e"], ["search"] + C + ["dependen*"]):
        wide = t.menv_ok(*cmd).out
        t.check(any(len(l) > 100 for l in wide.splitlines()),
                "menv %s: without a width the channel is whole (over 100 columns here)"
                % cmd[0], wide)
        r = t.menv_ok(*cmd, env={"COLUMNS": "100"})
        lines = r.out.splitlines()
        t.check(lines and all(len(l) <= 100 for l in lines),
                "menv %s with COLUMNS=100: every line fits" % cmd[0], r.out)
        rows = [l for l in lines if l.startswith("dependen")]
        t.check(rows and all(l.split()[:3] in (["dependency", "1.0", "0"],
                                               ["dependent", "1.0", "0"]) for l in rows)
                and all("..." in l for l in rows),
                "menv %s with COLUMNS=100: name, version, build whole; the channel "
                "shortened in its middle" % cmd[0], r.out)
        t.eq(len(lines), len(wide.splitlines()), "menv %s: the same rows" % cmd[0])


if __name__ == "__main__":
    menvtest.main(body, "day_small")

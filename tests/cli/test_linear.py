#!/usr/bin/env python3
"""cli.linear: inputs of 100,000 entries give the same answers as small ones (issue 22,
"Linear in the input"). Speed is measured by bench/run --only linear; here only its growth
is asserted (CPU seconds, N against N/10), and the cases check that the hashed and sorted
lookups answer what the list scans did.

- history: an environment whose conda-meta/history requests 100,000 specs (set, removed,
  set again, neutered) plans `install --dry-run` exactly as with a history holding only the
  specs of its installed packages, and `export --from-history` lists conda's
  get_requested_specs_map (computed here) of the installed names, in conda's order;
- explicit lock of 100,000 entries: `create --dry-run --json -f` links each entry once, in
  the lock's order; one name locked twice at the end is the one-line error naming both;
- conda-lock v1 of 100,000 entries whose depends chain them (entry i needs entry i+1): the
  plan links them dependencies first, the reverse of the file;
- `list --revisions --json` of a revision that upgrades 50,000 of 100,000 packages and
  removes others gives the diff computed here;
- growth: `create --dry-run -f` of an explicit lock and of a conda-lock chain of N entries
  costs at most GROWTH times the CPU seconds (user + system, of the process, from wait4) of
  the same lock of N/10 entries. Linear work is about 10 times (less: the start-up is the
  same), quadratic work 100 times; CPU time, never wall time, as the machine may be loaded.
MENV_LINEAR_N=n runs every case with n entries instead (at least 1000).
"""
import json
import os
import subprocess

import menvtest
from menvtest import build_tar_bz2, write_text

# MENV_LINEAR_N: the number of entries (default 100,000); .ci/run's ASan stage runs 10,000,
# where each 100,000-entry run takes minutes and gigabytes of memory
N = int(os.environ.get("MENV_LINEAR_N", "100000"))
if N < 1000:
    raise SystemExit("MENV_LINEAR_N must be at least 1000 (the revisions case removes 500)")
if N % 4:
    raise SystemExit("MENV_LINEAR_N must be a multiple of 4 (the revisions case's quarters)")
NS, NS1 = f"{N:,}", f"{N + 1:,}"


def channel(t):
    chan = os.path.join(t.tmp, "chan")
    for name, ver in (("a", "1.0"), ("a", "2.0"), ("b", "1.0")):
        build_tar_bz2(os.path.join(chan, "linux-64", "%s-%s-0.tar.bz2" % (name, ver)),
                      {"name": name, "version": ver, "build": "0", "build_number": 0,
                       "depends": [], "subdir": "linux-64"},
                      files={"share/%s.txt" % name: ver.encode()})
    t.index(chan)
    return chan


def history_block(cmd, update=(), remove=(), neutered=()):
    out = "==> 2024-01-01 00:00:00 <==\n# cmd: %s\n" % cmd
    for word, specs in (("update", update), ("remove", remove), ("neutered", neutered)):
        if specs:
            out += "# %s specs: [%s]\n" % (word, ", ".join("'%s'" % s for s in specs))
    return out


def plan(r):
    j = r.json()
    return ([(x["name"], x["version"]) for x in j["actions"].get("LINK", [])],
            [(x["name"], x["version"]) for x in j["actions"].get("UNLINK", [])])


def history_case(t, chan):
    env = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-p", env, "-c", t.url(chan), "--override-channels", "-q",
              "--no-smoke-check", "a=1.0")
    hist = os.path.join(env, "conda-meta", "history")
    with open(hist) as f:
        created = f.read()
    # x0..x(N-1) asked for, the odd ones removed, every tenth set again, a's spec changed by
    # the big block and neutered at the end; b is asked for but not installed
    xs = ["x%d >=1" % i for i in range(N)]
    big = [
        (xs + ["a >=2", "b"], [], []),
        ([], ["x%d" % i for i in range(1, N, 2)], []),
        (["x%d <9" % i for i in range(0, N, 10)], [], []),
        ([], [], ["a >=2,<3"]),
    ]
    text = created + "".join(history_block("menv install", *b) for b in big)
    write_text(hist, text)
    r_big = t.menv_run("install", "-p", env, "--dry-run", "--json", "-c", t.url(chan),
                       "--override-channels", "b")
    exp_big = t.menv_run("export", "-p", env, "--from-history")
    # the same history less every spec of a name that is not installed
    small = [([s for s in u if s.split()[0] in ("a",)], [s for s in rm if s.split()[0] == "a"],
              [s for s in ne if s.split()[0] == "a"]) for u, rm, ne in big]
    write_text(hist, created + "".join(history_block("menv install", *b) for b in small))
    r_small = t.menv_run("install", "-p", env, "--dry-run", "--json", "-c", t.url(chan),
                         "--override-channels", "b")
    exp_small = t.menv_run("export", "-p", env, "--from-history")
    write_text(hist, text)
    t.eq((r_big.rc, r_small.rc), (0, 0), f"install --dry-run with {NS} history specs: exit 0")
    if r_big.rc == 0 and r_small.rc == 0:
        t.eq(plan(r_big), plan(r_small),
             f"install --dry-run: the plan of a {NS}-spec history is the small history's")
        t.eq(tuple(sorted(x) for x in plan(r_big)), ([("a", "2.0"), ("b", "1.0")], [("a", "1.0")]),
             "install --dry-run: the neutered 'a >=2,<3' of the history holds")
    t.eq(exp_big.rc, 0, f"export --from-history of a {NS}-spec history: exit 0")
    t.eq(exp_big.out, exp_small.out,
         f"export --from-history: a {NS}-spec history gives the small history's file")
    # without conda-meta/.menv-request: every spec of the history, later ones of a name
    # replacing earlier ones, removed ones dropped (in the order names were first asked for)
    os.unlink(os.path.join(env, "conda-meta", ".menv-request"))
    r = t.menv_run("export", "-p", env, "--from-history")
    want = {}
    for update, remove, neutered in [(["a=1.0"], [], [])] + big:
        for s in remove:
            want.pop(s.split()[0], None)
        for s in update:
            want[s.split()[0].split("=")[0]] = s
    text = r.out.split("dependencies:", 1)[-1]
    deps = [l[4:] for l in text.splitlines() if l.startswith("  - ")]
    t.eq(r.rc, 0, "export --from-history without .menv-request: exit 0")
    t.eq(deps, list(want.values()),
         f"export --from-history: a {NS}-spec history's requested specs, as conda maps them")


def explicit_lock(path, entries):
    lines = ["@EXPLICIT"]
    for name, ver in entries:
        lines.append("file:///nonexistent/linux-64/%s-%s-0.tar.bz2#%032x" %
                     (name, ver, len(lines)))
    write_text(path, "\n".join(lines) + "\n")


def lock_case(t):
    lock = os.path.join(t.tmp, "big.txt")
    names = ["p%d" % i for i in range(N)]
    explicit_lock(lock, [(n, "1.0") for n in names])
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "new"), "--dry-run", "--json", "-f",
                   lock, timeout=300)
    t.eq(r.rc, 0, f"create --dry-run -f of a {NS}-entry explicit lock: exit 0")
    if r.rc == 0:
        link = r.json()["actions"]["LINK"]
        t.eq([x["name"] for x in link], names,
             "create --dry-run -f: every locked entry linked once, in the lock's order")
        t.eq(sorted({x["url"].rsplit("/", 2)[1] for x in link}), ["linux-64"],
             "create --dry-run -f: every entry's channel subdir read from its own URL")
        t.eq(link[N - 1]["url"], "file:///nonexistent/linux-64/p%d-1.0-0.tar.bz2" % (N - 1),
             "create --dry-run -f: the last entry keeps its own file name")
    explicit_lock(lock, [(n, "1.0") for n in names] + [("p7", "2.0")])
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "new"), "--dry-run", "-f", lock,
                   timeout=300)
    t.one_line_error(r, f"a name locked twice in {NS1} entries",
                     ["'p7' is locked twice (1.0-0 and 2.0-0)", lock])

    # conda-lock v1: q_i depends on q_(i+1); dependencies first is the file reversed
    cl = os.path.join(t.tmp, "chain-lock.yml")
    conda_lock_chain(cl, N)
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "new"), "--dry-run", "--json", "-f",
                   cl, timeout=300)
    t.eq(r.rc, 0, f"create --dry-run -f of a {NS}-entry conda-lock chain: exit 0")
    if r.rc == 0:
        t.eq([x["name"] for x in r.json()["actions"]["LINK"]],
             ["q%d" % i for i in reversed(range(N))],
             f"create --dry-run -f: a chain of {NS} depends linked dependencies first")


# N entries may cost at most this many times the CPU of N/10: linear is about 10, quadratic 100
GROWTH = 30


def cpu_seconds(t, args):
    """Exit code and CPU seconds (user + system) of `menv ARGS`, from wait4 of the process."""
    p = subprocess.Popen([t.menv] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=t.environ(), cwd=t.tmp)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime


def conda_lock_chain(path, n):
    body = ["version: 1", "metadata:", "  platforms: [linux-64]", "  channels: []",
            "package:"]
    for i in range(n):
        body += ["- name: q%d" % i, "  version: '1.0'", "  manager: conda",
                 "  platform: linux-64",
                 "  dependencies: {%s}" % ("q%d: '1.0'" % (i + 1) if i + 1 < n else ""),
                 "  url: file:///nonexistent/linux-64/q%d-1.0-0.tar.bz2" % i,
                 "  hash: {md5: %032x}" % i]
    write_text(path, "\n".join(body) + "\n")


def growth_case(t):
    for what, make in (("explicit lock", lambda path, n: explicit_lock(
                           path, [("p%d" % i, "1.0") for i in range(n)])),
                       ("conda-lock chain", conda_lock_chain)):
        cpu = {}
        for n in (N // 10, N):
            path = os.path.join(t.tmp, "growth-%d.lock" % n)
            make(path, n)
            args = ["create", "-p", os.path.join(t.tmp, "new"), "--dry-run", "-q", "-f", path]
            # the small lock's largest of three runs: a run slowed by the machine lowers the
            # ratio, never raises it
            runs = [cpu_seconds(t, args) for _ in range(1 if n == N else 3)]
            t.eq([rc for rc, _ in runs], [0] * len(runs),
                 f"create --dry-run -f of a {n:,}-entry {what}: exit 0")
            cpu[n] = max(c for _, c in runs)
        ratio = cpu[N] / max(cpu[N // 10], 0.01)
        print(f"  {what}: {N // 10:,} entries {cpu[N // 10]:.3f} s CPU, {NS} entries "
              f"{cpu[N]:.3f} s CPU ({ratio:.1f} times)")
        t.check(ratio <= GROWTH,
                f"create --dry-run -f of a {what}: {NS} entries cost {ratio:.1f} times the "
                f"CPU of {N // 10:,} (at most {GROWTH}: linear in the entries)")


def revisions_case(t):
    env = os.path.join(t.tmp, "revs")
    os.makedirs(os.path.join(env, "conda-meta"))
    first = ["+c/linux-64::r%d-1.0-0" % i for i in range(N)]
    up = ["-c/linux-64::r%d-1.0-0" % i for i in range(0, N, 2)] + \
         ["+c/linux-64::r%d-2.0-0" % i for i in range(0, N, 4)] + \
         ["+c/linux-64::r%d-0.5-0" % i for i in range(2, N, 4)] + \
         ["-c/linux-64::r%d-1.0-0" % i for i in range(1, 1000, 2)] + \
         ["+c/linux-64::new%d-1.0-0" % i for i in range(3)]
    write_text(os.path.join(env, "conda-meta", "history"),
               "==> 2024-01-01 00:00:00 <==\n# cmd: one\n" + "\n".join(first) + "\n" +
               "==> 2024-01-02 00:00:00 <==\n# cmd: two\n" + "\n".join(up) + "\n")
    r = t.menv_run("list", "-p", env, "--revisions", "--json")
    t.eq(r.rc, 0, f"list --revisions --json of {NS}-package revisions: exit 0")
    if r.rc != 0:
        return
    rev = r.json()[1]
    t.eq(len(rev["upgrade"]), N // 4, f"list --revisions: every upgrade of {NS} found")
    t.eq(len(rev["downgrade"]), N // 4, "list --revisions: every downgrade found")
    t.eq(rev["upgrade"][:2], ["r0-1.0-0 -> 2.0-0", "r4-1.0-0 -> 2.0-0"],
         "list --revisions: an upgrade row")
    t.eq(len(rev["remove"]), 500, "list --revisions: the removals without a new version")
    t.eq(rev["install"], ["c/linux-64::new%d-1.0-0" % i for i in range(3)],
         "list --revisions: the packages new in the revision")


def body(t):
    print(f"cli.linear: {NS} entries")
    chan = channel(t)
    history_case(t, chan)
    lock_case(t)
    growth_case(t)
    revisions_case(t)


if __name__ == "__main__":
    menvtest.main(body)

"""Changes to one environment made at the same time lose nothing (issue 22, "shared files",
"no lost write"):
- four installs of distinct packages started together into one prefix: conda-meta/history
  holds the create's block and one block per install, each whole (its own `==> DATE <==`
  header, its `# cmd:` line naming its package, its `+` line for that package and none of
  another's), none interleaved or lost; the records are all five packages;
- `rename -n src dst` and `remove --all -n src` (and `env remove -n src`) started together:
  exactly one of them wins whole. The rename first: dst is the clone (every record, file
  and the history), src gone, the removal fails in one line; the removal first: neither
  exists, the rename fails in one line. `env list` shows what is on disk, the registry names
  no missing environment and nothing is left beside the environments. Both orders are also
  forced with the rename's gate (MENV_TEST_GATE_RENAME, read while it holds src's lock)."""
import os
import re
import subprocess
import time

from insttest import main, pkg, records

N = 4


def blocks(prefix):
    """The history as [(header, [lines])]."""
    out = []
    with open(os.path.join(prefix, "conda-meta", "history")) as f:
        for line in f.read().splitlines():
            if line.startswith("==> "):
                out.append((line, []))
            elif out:
                out[-1][1].append(line)
            else:
                out.append(("<none>", [line]))
    return out


def open_gate(gate, proc):
    """Lets the process reading the FIFO `gate` go on (once it reads it, or has exited)."""
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline:
        try:
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:   # ENXIO: no reader yet
            time.sleep(0.02)
            continue
        os.write(fd, b"go\n")
        os.close(fd)
        return


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base.txt": "base\n"})
    for i in range(N):
        pkg(ch, "p%d" % i, "1.0", depends=["base"],
            files={"share/p%d/%s.txt" % (i, "x" * 40 + str(k)): "p%d %d\n" % (i, k)
                   for k in range(30)})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    prefix = os.path.join(t.envs, "h")
    t.menv_ok("create", "-p", os.path.join(t.tmp, "warm"), *c, *["p%d" % i for i in range(N)])
    t.menv_ok("create", "-n", "h", *c, "base")

    # ---- four installs at once
    procs = [subprocess.Popen([t.menv, "install", "-n", "h", *c, "p%d" % i], env=t.environ(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i in range(N)]
    outs = [p.communicate(timeout=120) for p in procs]
    t.eq([p.returncode for p in procs], [0] * N, "four parallel installs exit 0")
    t.eq(sorted(records(prefix)), ["base"] + ["p%d" % i for i in range(N)],
         "every install's package is recorded")
    bl = blocks(prefix)
    t.eq(len(bl), 1 + N, "history: one block for the create and one per install")
    hdr = re.compile(r"==> \d{4}-\d\d-\d\d \d\d:\d\d:\d\d <==$")
    got = set()
    for k, (h, lines) in enumerate(bl):
        t.check(hdr.match(h) is not None, "history block %d: a whole header" % k, h)
        cmds = [l for l in lines if l.startswith("# cmd:")]
        plus = [l for l in lines if l.startswith("+")]
        minus = [l for l in lines if l.startswith("-")]
        t.eq(len(cmds), 1, "history block %d: one # cmd: line" % k)
        t.eq(minus, [], "history block %d: nothing removed" % k)
        if k == 0:
            t.check(cmds and " create " in cmds[0] and len(plus) == 1 and
                    plus[0].endswith("::base-1.0-0"), "history block 0: the create's", lines)
            continue
        m = re.search(r" install .* (p\d)$", cmds[0]) if cmds else None
        name = m.group(1) if m else None
        t.check(name is not None, "history block %d: the cmd line of an install" % k, lines)
        t.eq([l.split("::")[-1] for l in plus], ["%s-1.0-0" % name],
             "history block %d: the + line of its own package" % k)
        t.check(all(l.startswith(("#", "+", "-")) for l in lines),
                "history block %d: no line of another block inside it" % k, lines)
        got.add(name)
    t.eq(sorted(got), ["p%d" % i for i in range(N)], "each install's block once")

    # ---- rename and remove --all on one environment at once
    src, dst = os.path.join(t.envs, "src"), os.path.join(t.envs, "dst")
    reg = os.path.join(t.home, ".conda", "environments.txt")
    want = {}

    def reset():
        for d in (src, dst):
            if os.path.exists(d):
                t.menv_ok("env", "remove", "-y", "-q", "-p", d)
        t.menv_ok("create", "-n", "src", *c, "p0", "p1")
        t.menv_ok("install", "-n", "src", *c, "p2")
        want["records"] = {k: (v["version"], sorted(f["_path"] for f in v["paths_data"]["paths"]))
                           for k, v in records(src).items()}
        want["history"] = open(os.path.join(src, "conda-meta", "history")).read()

    def settle(what, ren, rem, remover):
        rout, rerr = ren.communicate(timeout=60)
        mout, merr = rem.communicate(timeout=60)
        rerr, merr = rerr.decode(), merr.decode()
        listed = sorted(p for p in t.menv_ok("env", "list", "--json").json()["envs"]
                        if p in (src, dst))
        regl = sorted(l.strip() for l in open(reg)) if os.path.exists(reg) else []
        t.eq([l for l in regl if l.startswith(t.envs) and not os.path.exists(l)], [],
             "%s: the registry names no missing environment" % what)
        t.eq([n for n in os.listdir(t.envs) if n.startswith(".")], [],
             "%s: nothing left beside the environments" % what)
        t.check(not os.path.exists(src), "%s: src is gone either way" % what)
        if ren.returncode == 0:
            t.check(rem.returncode != 0, "%s: rename won, the removal did not claim success"
                    % what, merr)
            lines = [l for l in merr.splitlines() if l.startswith("menv: error:")]
            # by path once it has the prefix, by name when it looks it up after the rename
            t.check(len(lines) == 1 and (src in lines[0] or "environment 'src' not found" in
                                         lines[0]),
                    "%s: the removal fails in one line naming src" % what, merr)
            got = {k: (v["version"], sorted(f["_path"] for f in v["paths_data"]["paths"]))
                   for k, v in records(dst).items()} if os.path.isdir(dst) else None
            t.eq(got, want["records"], "%s: dst holds every record of src" % what)
            for k, (v, paths) in want["records"].items():
                missing = [x for x in paths if not os.path.lexists(os.path.join(dst, x))]
                t.eq(missing, [], "%s: dst has every file of %s" % (what, k))
            t.eq(open(os.path.join(dst, "conda-meta", "history")).read(), want["history"],
                 "%s: dst has src's history" % what)
            t.eq(listed, [dst], "%s: env list shows dst" % what)
            return "rename"
        t.eq(rem.returncode, 0, "%s: the removal won" % what)
        lines = [l for l in rerr.splitlines() if l.startswith("menv: error:")]
        t.check(len(lines) == 1, "%s: the rename fails in one line" % what, rerr)
        t.check(not os.path.exists(dst), "%s: the removal won: no dst" % what)
        t.eq(listed, [], "%s: env list shows neither" % what)
        return remover

    winners = []
    removers = (["remove", "--all", "-y", "-q", "-n", "src"], ["env", "remove", "-y", "-q",
                                                                "-n", "src"])
    for k in range(6):
        reset()
        rm = removers[k % 2]
        ren = subprocess.Popen([t.menv, "rename", "-n", "src", "dst"], env=t.environ(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.01 * k)
        rem = subprocess.Popen([t.menv] + rm, env=t.environ(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        winners.append(settle("together %d (%s)" % (k, rm[0]), ren, rem, rm[0]))
    t.note("winners: %s" % winners)

    # both orders forced: the rename holds src at its gate; the removal waits or goes first
    for first in ("rename", "remove"):
        for rm in removers:
            reset()
            gate = os.path.join(t.tmp, "gate")
            if os.path.exists(gate):
                os.unlink(gate)
            os.mkfifo(gate)
            lockfile = os.path.join(src, "conda-meta", ".menv.lock")
            if first == "remove":
                rem = subprocess.Popen([t.menv] + rm, env=t.environ(
                    {"MENV_TEST_PAUSE_AFTER_UNLINK": "1"}), stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
                deadline = time.time() + 30
                while time.time() < deadline and not (
                        os.path.exists(lockfile) and
                        open(lockfile).read().strip() == str(rem.pid)):
                    time.sleep(0.02)
            ren = subprocess.Popen([t.menv, "rename", "-n", "src", "dst"],
                                   env=t.environ({"MENV_TEST_GATE_RENAME": gate}),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if first == "rename":
                deadline = time.time() + 30
                while time.time() < deadline and not (
                        os.path.exists(lockfile) and
                        open(lockfile).read().strip() == str(ren.pid)):
                    time.sleep(0.02)
                rem = subprocess.Popen([t.menv] + rm, env=t.environ(),
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                time.sleep(0.3)
            open_gate(gate, ren)
            w = settle("%s first (%s)" % (first, rm[0]), ren, rem, rm[0])
            t.eq(w, first if first == "rename" else rm[0], "%s first (%s) wins"
                 % (first, rm[0]))


if __name__ == "__main__":
    main(body, "concurrent_history")

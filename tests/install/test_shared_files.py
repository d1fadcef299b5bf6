"""Shared files are read-modify-written under a lock and replaced atomically (issue 22): 16
parallel `menv config --append channels chN` keep all 16 channels (before: 3-4 survived), in a
.condarc reached through a link too; 16 parallel creates of distinct -p prefixes leave 16
registry lines; 16 parallel `env config vars set` on one environment keep 16 variables."""
import json
import os
import subprocess

from insttest import main, pkg
from menvtest import write_text

N = 16


def parallel(t, argvs, env=None):
    procs = [subprocess.Popen([t.menv] + a, env=t.environ(env), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for a in argvs]
    outs = [p.communicate(timeout=120) for p in procs]
    return [p.returncode for p in procs], b"".join(e for _, e in outs).decode()


def body(t):
    # ---- .condarc (MENVRC): every append survives, in order of nothing but present once
    rcs, err = parallel(t, [["config", "--append", "channels", "ch%d" % i] for i in range(N)])
    t.eq(rcs, [0] * N, "16 parallel config --append exit 0")
    r = t.menv_ok("config", "--get", "channels", "--json")
    got = r.json()["get"]["channels"]
    t.eq(sorted(got), sorted(["defaults"] + ["ch%d" % i for i in range(N)]),
         "16 parallel config --append: all 16 channels are in the file")
    t.eq([n for n in os.listdir(t.tmp) if ".tmp-" in n], [], "no temporary file left")

    # ---- through a link (a dotfiles checkout): the link's target is edited and stays a file
    dot = os.path.join(t.tmp, "dotfiles")
    os.makedirs(dot)
    write_text(os.path.join(dot, "condarc"), "# mine\nchannels:\n  - base\n")
    link = os.path.join(t.home, ".condarc")
    os.symlink(os.path.join(dot, "condarc"), link)
    rcs, err = parallel(t, [["config", "--file", link, "--add", "channels", "p%d" % i]
                            for i in range(N)])
    t.eq(rcs, [0] * N, "16 parallel config --add through a link exit 0")
    t.eq(os.readlink(link), os.path.join(dot, "condarc"), "the link stays a link")
    text = open(os.path.join(dot, "condarc")).read()
    t.check(text.startswith("# mine\n"), "the header comment is kept", text)
    got = [l.strip()[2:] for l in text.splitlines() if l.strip().startswith("- ")]
    t.eq(sorted(got), sorted(["base"] + ["p%d" % i for i in range(N)]),
         "16 parallel config --add: all 16 channels are in the link's target")
    # --set and --remove in parallel with --append on one file: each keeps its change
    rcs, err = parallel(t, [["config", "--file", link, "--remove", "channels", "p%d" % i]
                            for i in range(8)] +
                        [["config", "--file", link, "--set", "ssl_verify", "false"]] +
                        [["config", "--file", link, "--append", "channels", "q%d" % i]
                         for i in range(7)])
    t.eq(rcs, [0] * N, "16 parallel mixed edits exit 0")
    text = open(os.path.join(dot, "condarc")).read()
    got = [l.strip()[2:] for l in text.splitlines() if l.strip().startswith("- ")]
    t.eq(sorted(got), sorted(["base"] + ["p%d" % i for i in range(8, N)] +
                             ["q%d" % i for i in range(7)]),
         "mixed edits: 8 removed, 7 appended, none lost")
    t.check("ssl_verify: false\n" in text, "mixed edits: --set kept", text)
    # an edit whose folder is missing: one line, nothing written
    r = t.menv_run("config", "--file", os.path.join(t.tmp, "nope", "rc"), "--add", "channels",
                   "x")
    t.one_line_error(r, "edit of a file in a missing folder", ["nope"])
    t.check(not os.path.exists(os.path.join(t.tmp, "nope")), "no folder made")

    # ---- the registry: 16 parallel creates of -p prefixes, 16 lines
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "one", "1.0", files={"share/one.txt": "one\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    t.menv_ok("create", "-p", os.path.join(t.tmp, "warm"), *c, "one")  # fills the cache
    prefixes = [os.path.join(t.tmp, "p", "e%02d" % i) for i in range(N)]
    rcs, err = parallel(t, [["create", "-p", p, *c, "one"] for p in prefixes])
    t.eq(rcs, [0] * N, "16 parallel creates exit 0")
    reg = [l.rstrip("\n") for l in open(os.path.join(t.home, ".conda", "environments.txt"))]
    t.eq(sorted(reg), sorted(prefixes + [os.path.join(t.tmp, "warm")]),
         "16 parallel creates: 16 registry lines (and the first)")
    rcs, err = parallel(t, [["env", "remove", "-y", "-q", "-p", p] for p in prefixes[:8]])
    t.eq(rcs, [0] * 8, "8 parallel env removes exit 0")
    reg = [l.rstrip("\n") for l in open(os.path.join(t.home, ".conda", "environments.txt"))]
    t.eq(sorted(reg), sorted(prefixes[8:] + [os.path.join(t.tmp, "warm")]),
         "8 parallel env removes: exactly their 8 lines gone")

    # ---- conda-meta/state: 16 parallel `env config vars set` on one environment
    p = prefixes[-1]
    rcs, err = parallel(t, [["env", "config", "vars", "set", "-p", p, "V%d=%d" % (i, i)]
                            for i in range(N)])
    t.eq(rcs, [0] * N, "16 parallel env config vars set exit 0")
    st = json.load(open(os.path.join(p, "conda-meta", "state")))
    t.eq(st.get("env_vars"), {"V%d" % i: str(i) for i in range(N)},
         "16 parallel env config vars set: 16 variables")


if __name__ == "__main__":
    main(body, "shared_files")

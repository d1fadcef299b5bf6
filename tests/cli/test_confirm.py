#!/usr/bin/env python3
"""cli.confirm: conda's "Proceed ([y]/n)?" (conda/cli/common.py confirm) after the plan, asked
only on a terminal (run here through a pseudo-terminal): n stops with nothing changed, an empty
line proceeds, an unknown answer is asked again; -y, --dry-run and a pipe never ask."""

import json
import os
import pty
import select
import time

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def on_tty(t, args, answers):
    """menv ARGS on a pseudo-terminal, each of `answers` typed at a question: (exit, output)."""
    env = t.environ()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(t.tmp)
        os.execve(t.menv, [t.menv] + list(args), env)
    out, asked, t0 = b"", 0, time.time()
    while time.time() - t0 < 60:
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
        if out.count(b"Proceed ([y]/n)? ") > asked and asked < len(answers):
            os.write(fd, answers[asked])
            asked += 1
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st), out.decode("utf-8", "replace").replace("\r\n", "\n")


def version(t, name):
    meta = os.path.join(t.envs, "a", "conda-meta")
    for n in os.listdir(meta):
        if n.startswith(name + "-") and n.endswith(".json"):
            with open(os.path.join(meta, n)) as f:
                return json.load(f)["version"]
    return None


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in (
        "dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-1.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files, "linux-64": []})
    t.set_rc("channels: [%s]\n" % t.url(chan))
    t.menv_ok("create", "-n", "a", "dependency=1.0")

    rc, out = on_tty(t, ["install", "-n", "a", "dependency=2.0"], [b"n\n"])
    t.check(rc != 0 and "Exiting." in out and "Upgrade" in out.split("Proceed")[0],
            "n: the plan, the question, Exiting., a non-zero exit", out)
    t.eq(version(t, "dependency"), "1.0", "n: nothing changed")

    rc, out = on_tty(t, ["install", "-n", "a", "dependency=2.0"], [b"maybe\n", b"\n"])
    t.eq(out.count("Proceed ([y]/n)? "), 2, "an unknown answer: asked again")
    t.check(rc == 0 and "Invalid choice: maybe" in out, "then an empty line proceeds", out)
    t.eq(version(t, "dependency"), "2.0", "empty answer: installed")

    for args in (["install", "-n", "a", "-y", "dependency=1.0"],
                 ["remove", "-n", "a", "--dry-run", "dependency"]):
        rc, out = on_tty(t, args, [])
        t.check(rc == 0 and "Proceed" not in out, "%s: no question" % " ".join(args), out)
    t.eq(version(t, "dependency"), "1.0", "-y: changed without a question")
    r = t.menv_ok("install", "-n", "a", "dependent")
    t.check("Proceed" not in r.out + r.err, "piped: no question", r)
    t.eq(version(t, "dependent"), "1.0", "piped: installed")


if __name__ == "__main__":
    menvtest.main(body, "confirm")

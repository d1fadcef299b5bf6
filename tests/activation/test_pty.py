"""Activation in an interactive shell on a pseudo-terminal, set up the way a user does it
(python3 test_pty.py MENV SHARED SHELL): `menv shell init` writes the rc file, the shell starts
interactively and reads it, `menv activate` changes the prompt and PATH, `menv deactivate`
takes both back.
"""

import os
import pty
import re
import select
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acttest  # noqa: E402

ANSI = re.compile(rb"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|[()][A-Z0-9]|[=>])")


class Pty:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(argv[0], argv, env)
        self.buf = b""

    def read_until(self, pattern, timeout=20):
        end = time.time() + timeout
        rx = re.compile(pattern)
        while time.time() < end:
            text = ANSI.sub(b"", self.buf).replace(b"\r", b"")
            m = rx.search(text)
            if m:
                return m
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    break
                if not data:
                    break
                self.buf += data
        return None

    def send(self, line):
        os.write(self.fd, line.encode() + b"\r")

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass
        for _ in range(50):
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return
            time.sleep(0.1)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)


def body(t):
    shell = t.arg
    exe = acttest.need_shell(shell)
    fish = shell == "fish"
    alpha = t.named("alpha", state_vars={"GREETING": "hello world"}, bins=["alphatool"])
    env = dict(t.env, TERM="dumb")
    if shell == "bash":
        rc = os.path.join(t.home, ".bashrc")
        argv = [exe, "-i"]
    elif shell == "zsh":
        rc = os.path.join(t.home, ".zshrc")
        env["ZDOTDIR"] = t.home
        argv = [exe, "-i"]
    elif shell == "dash":
        rc = os.path.join(t.home, ".dashrc")
        env["ENV"] = rc
        argv = [exe, "-i"]
    else:
        rc = os.path.join(t.env["XDG_CONFIG_HOME"], "fish", "config.fish")
        argv = [exe, "-i"]
    if not fish:
        acttest.write(rc, "PS1='pp> '\n")
    r = t.run("shell", "init", "--shell", acttest.HOOK_NAME[shell], "--rc-file", rc)
    t.eq(r[0], 0, f"menv shell init --shell {acttest.HOOK_NAME[shell]}")

    p = Pty(argv, env)
    try:
        t.check(p.read_until(rb"pp> " if not fish else rb"[#>] ") is not None,
                f"interactive {shell} started and read its rc file", p.buf[-300:])
        p.send("menv activate alpha")
        if fish:
            p.send('echo "M1[$CONDA_DEFAULT_ENV]["(command -v alphatool)"][$GREETING]"')
        else:
            p.send('echo "M1[$CONDA_DEFAULT_ENV][$(command -v alphatool)][$GREETING]"')
        m = p.read_until(rb"M1\[alpha\]\[([^\]\n]*)\]\[([^\]\n]*)\]")
        t.check(m is not None, "activated in the interactive shell", p.buf[-500:])
        if m:
            t.eq(m.group(1).decode(), alpha + "/bin/alphatool", "PATH has the env's bin")
            t.eq(m.group(2).decode(), "hello world", "the env's variable is set")
        t.check(p.read_until(rb"M1\[alpha\][^\n]*\n[\s\S]*\(alpha\) ", timeout=10) is not None,
                "the prompt shows (alpha)", p.buf[-300:])
        p.send("menv deactivate")
        if fish:
            p.send('echo "M2["(set -q CONDA_DEFAULT_ENV; and echo $CONDA_DEFAULT_ENV; '
                   'or echo none)"][$CONDA_SHLVL]"')
        else:
            p.send('echo "M2[${CONDA_DEFAULT_ENV-none}][$CONDA_SHLVL]"')
        m = p.read_until(rb"M2\[([^\]\n]*)\]\[(\d+)\]")
        t.check(m is not None and m.group(1) == b"none" and m.group(2) == b"0",
                "deactivated: no environment, level 0", p.buf[-500:])
        if not fish:
            start = len(p.buf)
            p.send('echo "M3"')
            p.read_until(rb"\nM3\n")
            time.sleep(0.3)
            p.read_until(rb"$^", timeout=0.5)
            tail = ANSI.sub(b"", p.buf[start:]).replace(b"\r", b"")
            t.check(b"(alpha)" not in tail, "the prompt lost (alpha)", tail)
        p.send("exit")
    finally:
        p.close()


acttest.main(body)

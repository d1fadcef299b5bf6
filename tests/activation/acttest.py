"""Helpers for menv's activation tests (python3 standard library only).

Each test script runs as   python3 test_X.py MENV_BINARY SHARED_DIR [ARG]   and calls
`main(body)`: `body(t)` gets a `T` with a private temp dir (HOME, root prefix), a scrubbed
base environment, helpers to make prefixes by hand, to write and run scripts in a real shell
(bash, zsh, fish, dash) that dump `env -0` at checkpoints, and soft assertions: a failed check
is printed and the test goes on; exit 1 if any failed (also when a Skip came after it), else
77 (skip) when a shell is missing or a part of the test was skipped (t.skip_part).
MENV_TEST_KEEP=1 keeps the temp dir.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

SKIP_RC = 77
SHELLS = ("bash", "zsh", "fish", "dash")
HOOK_NAME = {"bash": "bash", "zsh": "zsh", "fish": "fish", "dash": "posix"}


class Skip(Exception):
    pass


class Fatal(Exception):
    pass


def shell_path(shell):
    return shutil.which(shell, path="/usr/bin:/bin:/usr/local/bin")


def need_shell(shell):
    p = shell_path(shell)
    if not p:
        pkg = {"dash": "dash", "bash": "bash", "zsh": "zsh", "fish": "fish"}[shell]
        raise Skip(f"{shell} is not installed (Debian package '{pkg}')")
    return p


def available_shells():
    return [s for s in SHELLS if shell_path(s)]


def q(shell, s):
    """Quote s for shell (the tests' own quoting, independent of menv's)."""
    if shell == "fish":
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + s.replace("'", "'\\''") + "'"


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def parse_env0(data):
    env = {}
    for ent in data.split(b"\0"):
        if not ent:
            continue
        k, _, v = ent.partition(b"=")
        env[k.decode("utf-8", "surrogateescape")] = v.decode("utf-8", "surrogateescape")
    return env


class Script:
    """A script for one shell: commands and checkpoints that dump the environment."""

    def __init__(self, t, shell):
        self.t, self.shell, self.lines = t, shell, []
        self.fish = shell == "fish"
        self.dir = tempfile.mkdtemp(prefix=f"dumps-{shell}-", dir=t.tmp)

    def raw(self, posix, fish=None):
        self.lines.append(fish if (self.fish and fish is not None) else posix)
        return self

    def hook(self):
        m = q(self.shell, self.t.menv)
        if self.fish:
            return self.raw(f"{m} shell hook --shell fish | source")
        return self.raw(f'eval "$({m} shell hook --shell {HOOK_NAME[self.shell]})"')

    def menv(self, *args, rc=None):
        """`menv ARGS` through the hook function; rc=NAME saves its exit status."""
        cmd = "menv " + " ".join(q(self.shell, a) for a in args)
        self.raw(cmd)
        if rc:
            p = q(self.shell, os.path.join(self.dir, rc + ".rc"))
            self.raw(f"echo $? > {p}", f"echo $status > {p}")
        return self

    def dump(self, name):
        """env -0 into NAME.env, PS1 into NAME.ps1 (posix shells)."""
        p = q(self.shell, os.path.join(self.dir, name))
        if self.fish:
            self.raw(f"env -0 > {p}.env")
        else:
            self.raw(f"env -0 > {p}.env; printf '%s' \"${{PS1-}}\" > {p}.ps1")
        return self

    def which(self, name, prog):
        p = q(self.shell, os.path.join(self.dir, name + ".which"))
        return self.raw(f"command -v {prog} > {p} 2>&1", f"command -v {prog} > {p} 2>&1")

    def unset(self, var):
        return self.raw(f"unset {var}", f"set -e {var}")

    def run(self, env=None, timeout=60):
        body = "\n".join(self.lines) + "\n"
        path = os.path.join(self.dir, "script." + ("fish" if self.fish else "sh"))
        write(path, body)
        exe = need_shell(self.shell)
        argv = {"bash": [exe, "--norc", "--noprofile", path], "zsh": [exe, "-f", path],
                "fish": [exe, "--no-config", path], "dash": [exe, path]}[self.shell]
        p = subprocess.run(argv, env=env or self.t.env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout)
        self.out, self.err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        self.rc = p.returncode
        return self

    def env(self, name):
        with open(os.path.join(self.dir, name + ".env"), "rb") as f:
            return parse_env0(f.read())

    def raw_env(self, name):
        with open(os.path.join(self.dir, name + ".env"), "rb") as f:
            return f.read()

    def ps1(self, name):
        p = os.path.join(self.dir, name + ".ps1")
        return open(p).read() if os.path.exists(p) else None

    def rc_of(self, name):
        return int(open(os.path.join(self.dir, name + ".rc")).read().strip())

    def which_of(self, name):
        return open(os.path.join(self.dir, name + ".which")).read().strip()


class T:
    def __init__(self, menv, shared, arg):
        self.menv, self.shared, self.arg = os.path.abspath(menv), shared, arg
        self.failures = 0
        self.skipped = []
        self.tmp = tempfile.mkdtemp(prefix="menv-act-")
        self.home = os.path.join(self.tmp, "home")
        self.root = os.path.join(self.tmp, "root")
        os.makedirs(self.home)
        os.makedirs(os.path.join(self.root, "envs"))
        # a scrubbed environment: only what the tests set
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": self.home,
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "MENV_ROOT_PREFIX": self.root,
            "MENVRC": os.path.join(self.home, "menvrc"),
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "TMPDIR": self.tmp,
        }
        write(self.env["MENVRC"], "changeps1: true\n")

    # -- checks
    def check(self, cond, what, detail=""):
        if cond:
            print(f"ok   {what}")
        else:
            self.failures += 1
            print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, what, f"got {got!r}, want {want!r}")

    def skip_part(self, why):
        """Part of the test cannot run here: it goes on, but is reported as skipped (77)
        unless a check failed (1)."""
        self.skipped.append(why)
        print(f"skip (part): {why}")

    # -- running menv directly
    def run(self, *args, env=None, input=None, cwd=None, timeout=60):
        p = subprocess.run([self.menv, *args], env=env or self.env, input=input, cwd=cwd,
                           capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    # -- prefixes
    def prefix(self, path, *, state_vars=None, env_vars_d=None, activate=None, deactivate=None,
               bins=()):
        """A prefix made by hand: conda-meta/, state env_vars, env_vars.d/NAME.json objects,
        activate.d/deactivate.d files {name: text} (written in reverse name order), and
        executables in bin/."""
        os.makedirs(os.path.join(path, "conda-meta"), exist_ok=True)
        write(os.path.join(path, "conda-meta", "history"), "")
        if state_vars is not None:
            write(os.path.join(path, "conda-meta", "state"),
                  json.dumps({"env_vars": state_vars}, indent=2))
        for name, obj in (env_vars_d or {}).items():
            write(os.path.join(path, "etc", "conda", "env_vars.d", name), json.dumps(obj))
        for sub, files in (("activate.d", activate), ("deactivate.d", deactivate)):
            for name in sorted(files or {}, reverse=True):
                write(os.path.join(path, "etc", "conda", sub, name), files[name])
        for b in bins:
            write(os.path.join(path, "bin", b), f"#!/bin/sh\necho {b} from {path}\n",
                  stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        return path

    def named(self, name, **kw):
        return self.prefix(os.path.join(self.root, "envs", name), **kw)

    def script(self, shell):
        return Script(self, shell)

    def corpus_env(self, prefix):
        """An environment created by menv from the real corpus package with activate.d and
        deactivate.d scripts (activate_deactivate_package)."""
        pkg = os.path.join(self.shared, "corpus", "packages", "conda", "test-recipes", "noarch",
                           "activate_deactivate_package-1.0-0.conda")
        if not os.path.exists(pkg):
            raise Skip(f"corpus package missing: {pkg}")
        chan = os.path.join(self.tmp, "chan")
        os.makedirs(os.path.join(chan, "noarch"), exist_ok=True)
        os.makedirs(os.path.join(chan, "linux-64"), exist_ok=True)
        shutil.copy(pkg, os.path.join(chan, "noarch"))
        rc, out, err = self.run("index", chan)
        if rc:
            raise Fatal(f"menv index failed: {err}")
        rc, out, err = self.run("create", "-q", "-p", prefix, "-c", chan, "--override-channels",
                                "activate_deactivate_package")
        if rc:
            raise Fatal(f"menv create failed: {err}")
        return prefix


def main(body):
    if len(sys.argv) < 3:
        print("usage: test_X.py MENV SHARED [ARG]", file=sys.stderr)
        sys.exit(2)
    t = T(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    try:
        body(t)
    except Skip as e:
        print(f"skip: {e}")
        t.skipped.append(str(e))
    except Fatal as e:
        print(f"FATAL {e}")
        t.failures += 1
    finally:
        if os.environ.get("MENV_TEST_KEEP"):
            print(f"kept {t.tmp}")
        else:
            shutil.rmtree(t.tmp, ignore_errors=True)
    # a failed check fails the test even when a Skip came after it
    if t.failures:
        print(f"{t.failures} checks failed")
        rc = 1
    elif t.skipped:
        print("skipped: " + "; ".join(t.skipped))
        rc = SKIP_RC
    else:
        print("all checks passed")
        rc = 0
    sys.exit(rc)

#!/usr/bin/env python3
"""cli.tool_install: menv installs like a tool (issue 23). `cmake --install BUILD --prefix P`
puts P/bin/menv (the same program: `--version`, no library or RPATH from the build tree),
the completion scripts where bash-completion, zsh and fish look (P/share/bash-completion/
completions/menv, P/share/zsh/site-functions/_menv, P/share/fish/vendor_completions.d/
menv.fish: what `menv completion SHELL` prints; bash loads it), and the smoke check's ops/
sources in P/share/menv/ops, which the installed menv uses even after P is moved. The README's
quick start installs it and puts P/bin on PATH before "Using it" calls a bare `menv`.

Called as: test_tool_install.py MENV SHARED CMAKE BUILD_DIR SOURCE_DIR"""

import os
import re
import shutil
import subprocess

import menvtest


def body(t, cmake, build, source):
    prefix = os.path.join(t.tmp, "inst")
    p = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True,
                       text=True)
    t.eq(p.returncode, 0, "cmake --install exits 0: " + p.stderr[-500:])
    exe = os.path.join(prefix, "bin", "menv")
    t.check(os.access(exe, os.X_OK), "P/bin/menv is installed and executable")
    if not os.access(exe, os.X_OK):
        raise menvtest.Fatal("no P/bin/menv")
    want_version = subprocess.run([t.menv, "--version"], capture_output=True, text=True).stdout
    t.check(re.fullmatch(r"menv \d+\.\d+\.\d+\n", want_version), "menv --version", want_version)

    # moved elsewhere: nothing points back into the build tree or the install prefix
    moved = os.path.join(t.tmp, "moved")
    shutil.move(prefix, moved)
    exe = os.path.join(moved, "bin", "menv")
    r = subprocess.run([exe, "--version"], capture_output=True, text=True,
                       env=t.environ())
    t.eq((r.returncode, r.stdout, r.stderr), (0, want_version, ""),
         "the installed menv --version, after the prefix moved")
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    t.check("not found" not in ldd and build not in ldd, "every library resolves (ldd)", ldd)
    dyn = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
    t.check(build not in dyn and source not in dyn,
            "no RPATH/RUNPATH into the build or source tree", dyn)

    share = os.path.join(moved, "share")
    for shell, rel, first in (
            ("bash", "bash-completion/completions/menv", "# menv completion for bash"),
            ("zsh", "zsh/site-functions/_menv", "#compdef menv"),
            ("fish", "fish/vendor_completions.d/menv.fish", None)):
        path = os.path.join(share, rel)
        text = open(path).read() if os.path.exists(path) else None
        gen = t.menv_ok("completion", shell).out
        t.eq(text, gen, "share/%s is `menv completion %s`" % (rel, shell))
        if first and text:
            t.check(text.splitlines()[0].startswith(first), "share/%s: its first line" % rel,
                    text.splitlines()[0])
    bash = shutil.which("bash")
    if bash:
        r = subprocess.run([bash, "--norc", "-c", 'source "$1" && complete -p menv', "-",
                            os.path.join(share, "bash-completion/completions/menv")],
                           capture_output=True, text=True)
        t.eq(r.stdout, "complete -o default -F _menv_complete menv\n",
             "bash loads the installed completion")

    # the ops/ sources beside the installed menv: its children see MENV_OPS_DIR there
    ops = os.path.realpath(os.path.join(share, "menv", "ops"))
    t.check(os.access(os.path.join(ops, "configure"), os.X_OK), "share/menv/ops/configure")
    t.menv_ok("create", "-q", "-y", "-n", "e", "--override-channels", "-c",
              t.url(t.make_channel("chan", {"noarch": [], "linux-64": []})))
    r = subprocess.run([exe, "run", "-n", "e", "printenv", "MENV_OPS_DIR"], capture_output=True,
                       text=True, env=t.environ())
    t.eq((r.returncode, r.stdout), (0, ops + "\n"),
         "the installed menv uses P/share/menv/ops for the smoke check")
    r = subprocess.run([exe, "run", "-n", "e", "printenv", "MENV_OPS_DIR"], capture_output=True,
                       text=True, env=t.environ({"MENV_OPS_DIR": "/elsewhere"}))
    t.eq(r.stdout, "/elsewhere\n", "a MENV_OPS_DIR the user set wins")

    # the README's quick start installs menv and puts it on PATH before "Using it"
    readme = open(os.path.join(source, "README.md")).read()
    quick = readme.split("## Using it")[0]
    m = re.search(r"cmake --install build --prefix (\S+)", quick)
    t.check(m is not None, "README quick start: cmake --install build --prefix P", quick[-1500:])
    if m:
        bindir = re.escape(m.group(1).replace("~", "$HOME")) + "/bin"
        t.check(re.search(r'export PATH="?%s:\$PATH' % bindir, quick),
                "README quick start: P/bin on PATH", quick[-1500:])


if __name__ == "__main__":
    menvtest.main(body, "tool_install")

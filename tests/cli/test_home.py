#!/usr/bin/env python3
"""cli.home: HOME unset, empty, relative, a file or missing: a command that needs it fails
with one line naming HOME, and nothing is written to "/" or the current directory instead
(`shell init --shell bash` wrote ./.bashrc or /.bashrc, `config --add channels x` wrote
/.condarc, the default root prefix was /.menv).

With MENV_ROOT_PREFIX and MENVRC (or --file / --rc-file) set, the same commands need no HOME
and work.

Every other command that may need HOME (install, update, remove, env remove, rename, run, list,
export, doctor, search, clean, lock, mirror, shell activate, env create/update, env config vars
list/set), on an environment made with a good HOME, with HOME unset, empty, relative, a file
or missing (unset and a file without MENV_ROOT_PREFIX/MENVRC, where every command stops at
loading the settings; unset, relative and a file with them; no XDG_CONFIG_HOME): each
works (warnings aside) or fails with one line naming HOME, and writes nothing to the current
directory or "/".
"""
import os
import shutil
import subprocess

import menvtest
from menvtest import tree_snapshot

ROOT_FILES = ("/.bashrc", "/.zshrc", "/.profile", "/.condarc", "/.menv", "/.conda", "/.config")


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(os.path.join(cwd, "rel"))  # HOME=rel names a directory here
    afile = os.path.join(t.tmp, "afile")
    menvtest.write_text(afile, "")
    before_root = {p: os.path.lexists(p) for p in ROOT_FILES}

    def run(env, *args):
        e = t.environ()
        for k in ("HOME", "MENVRC", "MENV_ROOT_PREFIX"):
            e.pop(k, None)
        e.update(env)
        p = subprocess.run([t.menv] + [str(a) for a in args], capture_output=True, env=e,
                           cwd=cwd, timeout=120)
        return menvtest.Result(list(args), p.returncode, p.stdout.decode("utf-8", "replace"),
                               p.stderr.decode("utf-8", "replace"))

    C = ["-c", t.url(chan), "--override-channels", "-y"]
    cases = [("unset", {}), ("empty", {"HOME": ""}), ("relative", {"HOME": "rel"}),
             ("a file", {"HOME": afile}), ("missing", {"HOME": os.path.join(t.tmp, "nohome")})]
    for label, env in cases:
        for args in (("shell", "init", "--shell", "bash"), ("shell", "deinit", "--shell", "zsh"),
                     ("config", "--add", "channels", "x"), ("config", "--show"),
                     ("create", "-n", "x", *C, "dependency"), ("env", "list"), ("info",)):
            r = run(env, *args)
            what = "HOME %s: menv %s" % (label, " ".join(args[:3]))
            t.one_line_error(r, what, ["HOME"])
        t.eq(tree_snapshot(cwd), {"rel": ("d", 0, 0, os.stat(os.path.join(cwd, "rel")).st_ino,
                                          None)},
             "HOME %s: nothing written to the current directory" % label)
        t.eq({p: os.path.lexists(p) for p in ROOT_FILES}, before_root,
             "HOME %s: nothing written to /" % label)

    # ---- every command that may need HOME: works, or one line naming HOME
    envp = os.path.join(t.tmp, "kind-env")
    t.menv_ok("create", "-p", envp, *C, "dependency")
    saved = os.path.join(t.tmp, "kind-env-saved")
    shutil.copytree(envp, saved, symlinks=True)
    yml = os.path.join(t.tmp, "e.yml")
    menvtest.write_text(yml, "channels: [%s, nodefaults]\ndependencies: [dependency]\n"
                        % t.url(chan))
    lock = os.path.join(t.tmp, "lock.yml")
    menvtest.write_text(lock, t.menv_ok("export", "-p", envp).out)
    kinds = [("install", "-p", envp, *C, "dependency"), ("update", "-p", envp, *C, "dependency"),
             ("remove", "-p", envp, "-y", "dependency"), ("env", "remove", "-p", envp, "-y"),
             ("rename", "-p", envp, "-y", "renamed"), ("run", "-p", envp, "true"),
             ("list", "-p", envp), ("export", "-p", envp), ("doctor", "-p", envp),
             ("search", *C[:3], "dependency"), ("clean", "--all", "-y"),
             ("lock", "-f", yml, "--platform", "linux-64", "--lockfile",
              os.path.join(t.tmp, "out-lock.yml")),
             ("mirror", "-f", lock, os.path.join(t.tmp, "mirror")),
             ("shell", "activate", "--shell", "bash", envp),
             ("env", "create", "-p", os.path.join(t.tmp, "kind-new"), "-y", "-f", yml),
             ("env", "update", "-p", envp, "-y", "-f", yml),
             ("env", "config", "vars", "list", "-p", envp),
             ("env", "config", "vars", "set", "-p", envp, "A=1")]
    roots = {"MENV_ROOT_PREFIX": os.path.join(t.tmp, "root3"), "MENVRC": os.path.join(t.tmp, "rc3"),
             "XDG_CONFIG_HOME": ""}
    # without MENV_ROOT_PREFIX every command stops at the same first step: two cases show it
    for (label, env), extra in [(c, {"XDG_CONFIG_HOME": ""}) for c in (cases[0], cases[3])] + \
            [(c, roots) for c in (cases[0], cases[2], cases[3])]:
        for args in kinds:
            r = run(dict(env, **extra), *args)
            if r.rc == 0 and args[0] in ("install", "update", "remove", "env", "rename"):
                for p in (envp, os.path.join(t.tmp, "kind-new"),
                          os.path.join(roots["MENV_ROOT_PREFIX"], "envs", "renamed")):
                    shutil.rmtree(p, ignore_errors=True)
                shutil.copytree(saved, envp, symlinks=True)
            what = "HOME %s%s: menv %s" % (label, ", MENV_ROOT_PREFIX set" if "MENVRC" in extra
                                           else "", " ".join(args[:4]))
            if r.rc != 0:
                t.one_line_error(r, what, ["HOME"])
            if label == "unset" and "MENVRC" in extra:
                t.note("%s: exit %d %s" % (what, r.rc, " | ".join(r.err_lines())[:150]))
            if r.rc == 0 and "MENVRC" in extra:
                t.check(all(l.startswith("menv: warning: ") or not l.startswith("menv:")
                            for l in r.err_lines()), "%s: works, warnings at most" % what, r)
            t.eq(sorted(os.listdir(cwd)), ["rel"],
                 "%s: nothing written to the current directory" % what)
            t.eq({p: os.path.lexists(p) for p in ROOT_FILES}, before_root,
                 "%s: nothing written to /" % what)

    # ---- what needs no HOME works without it
    root = os.path.join(t.tmp, "root2")
    rc = os.path.join(t.tmp, "rc2")
    env = {"MENV_ROOT_PREFIX": root, "MENVRC": rc}
    r = run(env, "create", "-p", os.path.join(t.tmp, "envp"), *C, "dependency")
    t.eq(r.rc, 0, "HOME unset, MENV_ROOT_PREFIX set: create -p works")
    t.check(os.path.isdir(os.path.join(t.tmp, "envp", "conda-meta")), "the environment exists")
    # the registry warning says what is wrong with HOME (it said "HOME is not set" for all)
    want = {"unset": "HOME is not set", "empty": "HOME is empty",
            "relative": "HOME 'rel' is not an absolute path",
            "a file": "HOME '%s' is not a directory" % afile,
            "missing": "HOME '%s' is not a directory" % os.path.join(t.tmp, "nohome")}
    for i, (label, henv) in enumerate(cases):
        p = os.path.join(t.tmp, "envh%d" % i)
        r = run(dict(env, **henv), "create", "-p", p, *C, "dependency")
        t.eq(r.rc, 0, "HOME %s, MENV_ROOT_PREFIX set: create -p works" % label)
        warn = [l for l in r.err_lines() if "registry" in l]
        t.eq(len(warn), 1, "HOME %s: one warning about the registry" % label)
        t.check(bool(warn) and warn[0].startswith("menv: warning: ") and want[label] in warn[0],
                "HOME %s: the registry warning says %r" % (label, want[label]), r.err)
    r = run(env, "config", "--add", "channels", "x")
    t.eq(r.rc, 0, "HOME unset, MENVRC set: config --add works")
    with open(rc) as f:
        t.check("- x" in f.read(), "config --add wrote MENVRC")
    bashrc = os.path.join(t.tmp, "bashrc")
    r = run(env, "shell", "init", "--shell", "bash", "--rc-file", bashrc)
    t.eq(r.rc, 0, "HOME unset: shell init --rc-file works")
    t.check(os.path.isfile(bashrc), "shell init wrote the --rc-file")
    t.eq(sorted(os.listdir(cwd)), ["rel"], "still nothing in the current directory")
    t.eq({p: os.path.lexists(p) for p in ROOT_FILES}, before_root, "still nothing in /")


if __name__ == "__main__":
    menvtest.main(body)

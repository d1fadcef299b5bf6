#!/usr/bin/env python3
"""activation.cuda_home_<shell>: the environment's CUDA toolkit is the one builds see.

The toolchain channel's `cudatoolkit` carries an activate.d/deactivate.d pair (as
conda-forge's nvcc_linux-64 / cuda-nvcc do) that sets CUDA_HOME and CUDA_PATH to the prefix
and puts the old values back on deactivation. Here a prefix holds a bin/nvcc and exactly the
scripts tests/channels/toolchain/recipes.py writes into that package; in a real shell, through
menv's hook: activation sets both to the prefix whatever the machine had
(CUDA_HOME=/usr/local/cuda, unset, or set but empty), and deactivation restores the exact old
values, unset included (the whole `env -0` as before).

With bash also `menv doctor`: in the activated shell it finds nothing wrong; with
CUDA_HOME pointed at another toolkit again it names it (one line with the fix, exit 1), and
so it does for the environment's own variable (conda-meta/state) naming another toolkit."""
import os
import sys

import acttest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "channels", "toolchain"))
import recipes  # noqa: E402  (the channel builder's recipes: the package's real scripts)

WHAT = "CUDA_HOME and CUDA_PATH name the environment's toolkit"


def make_env(t, name, state_vars=None):
    files = recipes.activation_files("cudatoolkit", recipes.CUDA_VARS, WHAT)
    act = {os.path.basename(p): text for _, p, text, _ in files if "/activate.d/" in p}
    deact = {os.path.basename(p): text for _, p, text, _ in files if "/deactivate.d/" in p}
    prefix = t.named(name, activate=act, deactivate=deact, bins=("nvcc",),
                     state_vars=state_vars)
    return prefix


def body(t):
    shell = t.arg
    acttest.need_shell(shell)
    prefix = make_env(t, "cuda")
    for case, before in (("machine's CUDA_HOME", {"CUDA_HOME": "/usr/local/cuda"}),
                         ("both set", {"CUDA_HOME": "/opt/a", "CUDA_PATH": "/opt/b"}),
                         ("unset", {}),
                         ("set but empty", {"CUDA_HOME": ""})):
        env = dict(t.env)
        env.update(before)
        s = t.script(shell).hook().dump("before")
        s.menv("activate", "cuda", rc="act").dump("active")
        s.menv("deactivate", rc="deact").dump("after")
        s.run(env=env)
        what = f"{shell}, {case}"
        t.eq(s.rc_of("act"), 0, f"{what}: activate exits 0")
        a = s.env("active")
        t.eq((a.get("CUDA_HOME"), a.get("CUDA_PATH")), (prefix, prefix),
             f"{what}: CUDA_HOME and CUDA_PATH are the prefix while active")
        t.eq(s.rc_of("deact"), 0, f"{what}: deactivate exits 0")
        b, after = s.env("before"), s.env("after")
        t.eq(("CUDA_HOME" in after, after.get("CUDA_HOME"), "CUDA_PATH" in after,
              after.get("CUDA_PATH")),
             ("CUDA_HOME" in b, before.get("CUDA_HOME"), "CUDA_PATH" in b,
              before.get("CUDA_PATH")),
             f"{what}: deactivate restores the exact old values (unset stays unset)")
        t.check(after == b, f"{what}: after deactivate every variable is as before",
                sorted(set(after.items()) ^ set(b.items())))
    if shell != "bash":
        return

    # doctor, in the activated shell and with the variables set by hand
    env = dict(t.env, CUDA_HOME="/usr/local/cuda")
    s = t.script(shell).hook().menv("activate", "cuda")
    out_ok, out_bad = os.path.join(s.dir, "ok"), os.path.join(s.dir, "bad")
    s.raw(f"menv doctor > {out_ok} 2>&1; echo $? >> {out_ok}")
    s.raw(f"export CUDA_HOME=/usr/local/cuda; menv doctor > {out_bad} 2>&1; echo $? >> {out_bad}")
    s.run(env=env)
    ok, bad = open(out_ok).read(), open(out_bad).read()
    t.check("CUDA_HOME" not in ok and "CUDA_PATH" not in ok,
            "doctor in the activated shell: no CUDA_HOME problem", ok)
    t.eq(ok.splitlines()[-1], "0", "doctor in the activated shell: exit 0")
    nvcc = os.path.join(prefix, "bin", "nvcc")
    line = ("problem: CUDA_HOME=/usr/local/cuda (this shell) is another CUDA toolkit than the "
            "environment's nvcc (%s): builds that read it (torch.utils.cpp_extension, CMake) "
            "would use that one; fix: export CUDA_HOME=\"$CONDA_PREFIX\"" % nvcc)
    t.check(line in bad.splitlines(), "doctor with CUDA_HOME=/usr/local/cuda: one line with "
            "the fix", bad)
    t.eq(bad.splitlines()[-1], "1", "doctor with CUDA_HOME=/usr/local/cuda: exit 1")

    # the same without a shell: only the active environment's doctor reads this process's
    # CUDA_HOME; a CUDA_HOME naming the prefix, or a folder whose bin/nvcc is the same file,
    # is fine
    link = os.path.join(t.tmp, "toolkit-link")
    os.symlink(prefix, link)
    for value, active, want in (("/usr/local/cuda", prefix, 1), ("/usr/local/cuda", None, 0),
                                (prefix, prefix, 0), (link, prefix, 0), ("", prefix, 0)):
        e = dict(t.env, CUDA_HOME=value)
        if active:
            e["CONDA_PREFIX"] = active
        rc, out, err = t.run("doctor", "-p", prefix, env=e)
        n = sum("CUDA_HOME=" in x for x in out.splitlines())
        t.eq((rc, n), (want, want), f"doctor -p with CUDA_HOME={value!r}, "
             f"{'active' if active else 'not active'}: {want} problem(s)")
    # the environment's own variable
    other = make_env(t, "cuda-var", state_vars={"CUDA_HOME": "/usr/local/cuda"})
    rc, out, err = t.run("doctor", "-p", other)
    want = ("problem: the environment's variable CUDA_HOME=/usr/local/cuda (conda-meta/state) "
            "is another CUDA toolkit than its nvcc (%s/bin/nvcc); fix: menv env config vars "
            "unset -p %s CUDA_HOME" % (other, other))
    t.check(rc == 1 and want in out.splitlines(), "doctor: the environment's own CUDA_HOME "
            "variable naming another toolkit, with the fix", out + err)
    rc, out, err = t.run("env", "config", "vars", "unset", "-p", other, "CUDA_HOME")
    rc, out, err = t.run("doctor", "-p", other)
    t.check(rc == 0 and "CUDA_HOME" not in out, "doctor after the fix: exit 0", out + err)


acttest.main(body)

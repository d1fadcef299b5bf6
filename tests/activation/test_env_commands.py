"""`menv env config vars`, `menv env list`, `menv info`'s active environment, `menv shell
init/deinit` on rc files, the hook's syntax in every installed shell, and `menv activate`
without the hook (python3 test_env_commands.py MENV SHARED).
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acttest  # noqa: E402


def body(t):
    a = t.named("alpha")
    b = t.named("beta")
    elsewhere = t.prefix(os.path.join(t.tmp, "by path", "env"))
    notenv = os.path.join(t.root, "envs", "not-an-env")
    os.makedirs(notenv)

    # env config vars
    rc, out, err = t.run("env", "config", "vars", "list", "-n", "alpha")
    t.eq((rc, out), (0, ""), "vars list of an env without state: nothing")
    rc, out, err = t.run("env", "config", "vars", "set", "-n", "alpha",
                         "XLA_FLAGS=--gpu_data_dir=/opt/cuda-12", "TWO=alpha beta",
                         "QUOTES=it's \"x\"", "EMPTY=", "NL=a\nb")
    t.eq(rc, 0, "vars set: exit 0")
    state = json.load(open(os.path.join(a, "conda-meta", "state")))
    t.eq(state.get("env_vars"), {"XLA_FLAGS": "--gpu_data_dir=/opt/cuda-12", "TWO": "alpha beta",
                                 "QUOTES": "it's \"x\"", "EMPTY": "", "NL": "a\nb"},
         "vars set writes conda's {env_vars: {...}}, splitting at the first '=' (BR-029)")
    rc, out, err = t.run("env", "config", "vars", "list", "-p", a)
    t.eq(out, "XLA_FLAGS = --gpu_data_dir=/opt/cuda-12\nTWO = alpha beta\n"
         "QUOTES = it's \"x\"\nEMPTY = \nNL = a\nb\n", "vars list -p: NAME = value lines")
    rc, out, err = t.run("env", "config", "vars", "list", "-n", "alpha", "--json")
    t.eq(json.loads(out).get("TWO"), "alpha beta", "vars list --json")
    with open(os.path.join(a, "conda-meta", "state")) as f:
        st = json.load(f)
    st["other_key"] = {"kept": True}
    with open(os.path.join(a, "conda-meta", "state"), "w") as f:
        json.dump(st, f)
    rc, out, err = t.run("env", "config", "vars", "set", "-n", "alpha", "TWO=changed")
    rc, out, err = t.run("env", "config", "vars", "unset", "-n", "alpha", "XLA_FLAGS", "NOPE")
    t.eq(rc, 0, "vars unset (an absent name is ignored)")
    state = json.load(open(os.path.join(a, "conda-meta", "state")))
    t.eq(state.get("env_vars"), {"TWO": "changed", "QUOTES": "it's \"x\"", "EMPTY": "",
                                 "NL": "a\nb"}, "set replaces in place, unset removes")
    t.eq(state.get("other_key"), {"kept": True}, "other keys of conda-meta/state are kept")
    rc, out, err = t.run("env", "config", "vars", "set", "-n", "alpha", "1BAD=x")
    t.eq(rc, 2, "an invalid variable name is refused")
    rc, out, err = t.run("env", "config", "vars", "set", "-n", "alpha", "NOEQUALS")
    t.eq(rc, 2, "set without '=' is refused")
    rc, out, err = t.run("env", "config", "vars", "set", "-n", "nope", "A=1")
    t.check(rc == 1 and "nope" in err, "set on a missing environment fails naming it", err)
    rc, out, err = t.run("env", "config", "vars", "list",
                         env=dict(t.env, CONDA_PREFIX=a, CONDA_SHLVL="1"))
    t.check(rc == 0 and "TWO = changed" in out, "without -n/-p: the active environment", out)

    # env list
    env = dict(t.env, CONDA_PREFIX=elsewhere, CONDA_SHLVL="2", CONDA_PREFIX_1=b)
    rc, out, err = t.run("env", "list", env=env)
    lines = [ln for ln in out.splitlines() if not ln.startswith("#")]
    t.eq(rc, 0, "env list: exit 0")
    t.eq(lines, [f"{'base':<20}     {t.root}", f"{'alpha':<20}     {a}",
                 f"{'beta':<20}     {b}", f"{'':<20}  *  {elsewhere}"],
         "env list: base, named envs sorted, the active -p env marked '*'")
    rc, out, err = t.run("env", "list", "--json", env=dict(t.env, CONDA_PREFIX=a))
    t.eq(json.loads(out), {"envs": [t.root, a, b]}, "env list --json")
    rc, out, err = t.run("env", "list", env=dict(t.env, CONDA_PREFIX=a))
    t.check(f"{'alpha':<20}  *  {a}" in out, "the active named env is marked", out)

    # info
    rc, out, err = t.run("info", env=dict(t.env, CONDA_PREFIX=a, CONDA_DEFAULT_ENV="alpha",
                                          CONDA_SHLVL="1"))
    t.check("active environment : alpha" in out and f"active env location : {a}" in out,
            "info shows the active environment", out)
    rc, out, err = t.run("info", "--json", env=dict(t.env, CONDA_PREFIX=a,
                                                    CONDA_DEFAULT_ENV="alpha"))
    j = json.loads(out)
    t.eq((j.get("active_prefix"), j.get("active_prefix_name")), (a, "alpha"),
         "info --json: active_prefix, active_prefix_name")
    rc, out, err = t.run("info")
    t.check("active environment : None" in out, "info without an active environment", out)

    # activate without the hook
    rc, out, err = t.run("activate", "alpha")
    t.check(rc == 1 and "shell hook" in err and len(err.strip().splitlines()) == 1,
            "'menv activate' without the hook explains the set-up in one line", err)

    # the hook parses in each installed shell
    for sh in acttest.available_shells():
        name = acttest.HOOK_NAME[sh]
        rc, hook, err = t.run("shell", "hook", "--shell", name)
        t.eq(rc, 0, f"shell hook --shell {name}")
        exe = acttest.shell_path(sh)
        check = [exe, "--no-execute", "-c", hook] if sh == "fish" else [exe, "-n", "-c", hook]
        r = subprocess.run(check, capture_output=True)
        t.eq(r.returncode, 0, f"{sh} accepts the hook's syntax " + r.stderr.decode()[:200])
    rc, out, err = t.run("shell", "hook", "--shell", "tcsh")
    t.eq(rc, 2, "an unknown shell is a usage error")

    # init / deinit
    for sh in ("bash", "zsh", "fish", "posix"):
        rcfile = os.path.join(t.home, f"rc-{sh}")
        original = "# my settings\nexport KEEP=1\n"
        acttest.write(rcfile, original)
        os.chmod(rcfile, 0o600)
        r1 = t.run("shell", "init", "--shell", sh, "--rc-file", rcfile)
        after1 = open(rcfile).read()
        r2 = t.run("shell", "init", "--shell", sh, "--rc-file", rcfile)
        after2 = open(rcfile).read()
        t.check(r1[0] == 0 and "modified" in r1[2], f"init {sh}: modified", r1[2])
        t.check(after1.startswith(original) and after1.count(">>> menv initialize >>>") == 1
                and t.menv in after1 and "shell hook --shell " + sh in after1,
                f"init {sh}: one block that evals the hook", after1)
        t.check(after2 == after1 and "no change" in r2[2], f"init {sh} again: unchanged")
        t.eq(os.stat(rcfile).st_mode & 0o777, 0o600, f"init {sh}: the file's mode is kept")
        r3 = t.run("shell", "deinit", "--shell", sh, "--rc-file", rcfile)
        t.eq(open(rcfile).read(), original, f"deinit {sh}: the file is as before")
        r4 = t.run("shell", "deinit", "--shell", sh, "--rc-file", rcfile)
        t.check(r3[0] == 0 and r4[0] == 0 and "no change" in r4[2], f"deinit {sh} idempotent")
    # a symlinked rc file stays a symlink; a missing one is created with its directory
    real = os.path.join(t.home, "dotfiles", "bashrc")
    acttest.write(real, "x=1\n")
    link = os.path.join(t.home, ".bashrc")
    os.symlink(real, link)
    t.run("shell", "init", "--shell", "bash")
    t.check(os.path.islink(link) and "menv initialize" in open(real).read(),
            "init follows a symlinked ~/.bashrc")
    rc, out, err = t.run("shell", "init", "--shell", "fish")
    fishrc = os.path.join(t.env["XDG_CONFIG_HOME"], "fish", "config.fish")
    t.check(rc == 0 and os.path.exists(fishrc) and "| source" in open(fishrc).read(),
            "init --shell fish creates config.fish", err)


acttest.main(body)

#!/usr/bin/env python3
"""cli.active_default: the active environment ($CONDA_PREFIX, as menv's activation sets it) is
the default of every command that takes -n/-p, as in conda (DESIGN.md's invariant; issue 23).

The commands are enumerated from menv itself (the options each command parses, as `menv
completion bash` lists them): every command that takes --name must appear in CASES below, so
a new one cannot skip the rule. For each case the command without -n/-p and with
CONDA_PREFIX set prints exactly what it prints with `-p PREFIX`; without CONDA_PREFIX it
fails with one line. The refusals kept for safety (env remove, remove --all and rename of the
active environment) still refuse, with the environment left as it was; create makes a new
environment and still needs -n/-p."""

import os
import re
import shutil
import subprocess

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")

# command -> its cases: (argv without -n/-p, how to compare)
#   "same": stdout and exit code equal to the run with -p PREFIX
#   "refuse": non-zero with one line naming the active environment; nothing changed
#   "needs": non-zero with one line asking for -n/-p (it makes a new environment)
CASES = {
    "list": [(["list"], "same"), (["list", "--explicit", "--md5"], "same"),
             (["list", "--revisions"], "same"), (["list", "--json"], "same")],
    "export": [(["export"], "same"), (["export", "--format", "explicit"], "same")],
    "env": [(["env", "export"], "same"), (["env", "config", "vars", "list"], "same"),
            (["env", "update", "-f", "@ENVFILE", "--dry-run"], "same"),
            (["env", "remove", "-y"], "refuse")],
    "install": [(["install", "--dry-run", "dependent=2.0"], "same")],
    "update": [(["update", "--dry-run", "dependency"], "same")],
    "remove": [(["remove", "--dry-run", "dependent"], "same"),
               (["remove", "-y", "--all"], "refuse")],
    "doctor": [(["doctor"], "same")],
    "smoke": [(["smoke"], "same")],
    "run": [(["run", "printenv", "CONDA_PREFIX"], "same")],
    "repoquery": [(["repoquery", "whoneeds", "dependency"], "same")],
    "rename": [(["rename", "renamed"], "refuse")],
    "create": [(["create", "-y", "dependency"], "needs")],
}


def commands_taking_name(t):
    """{command: options} from the bash completion menv generates from its option tables."""
    out = t.menv_ok("completion", "bash").out
    cmds = {}
    for m in re.finditer(r"^        ([a-z-]+)\)\n(.*?);;$", out, re.M | re.S):
        cmds[m.group(1)] = m.group(2)
    return sorted(c for c, body in cmds.items() if re.search(r"(^|[ \"])--name( |\")", body))


def untimed(text):
    return re.sub(r"\(\d+\.\d+ s\)", "(T s)", text)


def records(prefix):
    return sorted(n for n in os.listdir(os.path.join(prefix, "conda-meta"))
                  if n.endswith(".json"))


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in (
        "dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-1.0-0.conda",
        "dependent-2.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files})
    t.set_rc("channels: [%s]\n" % t.url(chan))
    t.menv_ok("create", "-q", "-y", "-n", "a", "dependent=1.0")
    a = os.path.join(t.envs, "a")
    envfile = os.path.join(t.tmp, "env.yml")
    menvtest.write_text(envfile, "dependencies:\n  - dependent=1.0\n")

    got = commands_taking_name(t)
    t.eq(got, sorted(CASES), "the commands that take -n/-p (from menv's option tables) are "
         "exactly those this test covers")

    before = records(a)
    for cmd in sorted(CASES):
        for argv, how in CASES[cmd]:
            argv = [envfile if x == "@ENVFILE" else x for x in argv]
            what = "menv %s with %s active" % (" ".join(argv), a)
            r = t.menv_run(*argv, env={"CONDA_PREFIX": a})
            if how == "same":
                # -p goes after the subcommand words, before the rest
                words = 4 if argv[0] == "env" and argv[1] == "config" else \
                    2 if argv[0] in ("env", "repoquery") else 1
                ref = t.menv_run(*(argv[:words] + ["-p", a] + argv[words:]))
                t.check("no environment given" not in r.err, what + ": no refusal", r)
                t.eq((r.rc, untimed(r.out)), (ref.rc, untimed(ref.out)),
                     what + ": the output of -p PREFIX")
                if cmd != "smoke":
                    t.eq(r.rc, 0, what + ": exit 0")
                if cmd == "run":
                    t.eq(r.out, a + "\n", what + ": runs in the active environment")
                # nothing active: one line, non-zero (the default came from CONDA_PREFIX)
                if cmd not in ("repoquery",):
                    r0 = t.menv_run(*argv)
                    t.one_line_error(r0, "menv %s with nothing active" % " ".join(argv),
                                     ["no environment given"], nonzero_only=True)
            elif how == "refuse":
                t.one_line_error(r, what + ": refused", ["active environment"], nonzero_only=True)
                t.eq(records(a), before, what + ": the environment is left as it was")
            else:
                t.one_line_error(r, what + ": still needs -n/-p", ["-n NAME", "-p PREFIX"],
                                 nonzero_only=True)
                t.eq(records(a), before, what + ": the active environment is untouched")
    t.check(os.path.isdir(a) and not os.path.exists(os.path.join(t.envs, "renamed")),
            "no refusal removed or renamed the active environment")

    # a real change of the active environment, and whoneeds of the channels with -c
    t.menv_ok("install", "-q", "-y", "dependent=2.0", env={"CONDA_PREFIX": a})
    t.check("dependent-2.0-0.json" in records(a), "install without -n: the active one",
            records(a))
    r = t.menv_ok("repoquery", "whoneeds", "-c", t.url(chan), "--override-channels",
                  "dependency", "--json", env={"CONDA_PREFIX": a})
    t.check('"dependent"' in r.out and r.out.count('"name"') == 2,
            "repoquery whoneeds -c: the channel, not the active environment", r.out)

    # activated by menv's own shell hook (bash), not by a hand-set CONDA_PREFIX
    bash = shutil.which("bash")
    if bash:
        script = ('eval "$("$MENV" shell hook --shell bash)" && menv activate a && '
                  'menv list --explicit && menv export --format explicit')
        env = t.environ({"MENV": t.menv})
        p = subprocess.run([bash, "--norc", "-c", script], capture_output=True, env=env,
                           cwd=t.tmp, text=True)
        want = t.menv_ok("list", "-n", "a", "--explicit").out + \
            t.menv_ok("export", "-n", "a", "--format", "explicit").out
        t.eq((p.returncode, p.stdout), (0, want),
             "after `menv activate a` in bash: list and export need no -n")


if __name__ == "__main__":
    menvtest.main(body, "active_default")

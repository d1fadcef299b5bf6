"""Activation in a real shell, non-interactively (python3 test_shells.py MENV SHARED SHELL).

Through the shell hook: activate a named environment (activate.d scripts in order,
env_vars.d, conda-meta/state variables with hostile values), stack a second one whose path
holds blanks, quotes and `$`, deactivate back, switch without --stack (conda's semantics:
the first environment is taken off and comes back on deactivate), re-activate the active
environment, deactivate at level 0, a missing environment, and a real corpus package's
activate.d/deactivate.d scripts. After every deactivation the whole environment (`env -0`)
must equal the one before, entry for entry, byte for byte.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acttest  # noqa: E402

TRICKY = {
    "XLA_FLAGS": "--gpu_data_dir=/opt/cuda-12",
    "TWO_WORDS": "alpha beta",
    "QUOTES": "it's \"x\"",
    "TRAILING": "ends-with-space ",
    "MULTI": "line1\nline2\n",
    "DOLLAR": "$HOME $(touch INJ1) `touch INJ2` ${x} \\ \\' %s %d",
    "SEMI": "a; touch INJ3 # b",
    "EMPTY": "",
    "UNI": "h\u00e9llo w\u00f6rld",
    "GLOB": "* ? [a]",
    "DASH": "-n",
}

PRE = {"LOG_LEVEL": "info", "CFLAGS": "-g", "PRE_NL": "x\ny'z \"w\"", "PRE_EQ": "a=b=c"}

ALPHA_ACT = {
    "zz-last.sh": 'export SEEN="${SEEN}z"\n',
    "20-consumer.sh": 'export COMBINED="$BASE_FLAGS -extra"; export SEEN="${SEEN}2"\n',
    "10-base.sh": 'export BASE_FLAGS="-O2"; export SEEN="${SEEN}1"\n'
                  'export CFLAGS="$CFLAGS -alpha"\n',
    "zz-last.fish": 'set -gx SEEN "$SEEN"z\n',
    "20-consumer.fish": 'set -gx COMBINED "$BASE_FLAGS -extra"; set -gx SEEN "$SEEN"2\n',
    "10-base.fish": 'set -gx BASE_FLAGS -O2; set -gx SEEN "$SEEN"1\n'
                    'set -gx CFLAGS "$CFLAGS -alpha"\n',
    "99-not-a-script.txt": "exit 99\n",
}
ALPHA_DEACT = {
    "10-base.sh": 'unset BASE_FLAGS; export UNDO="${UNDO}1"\n',
    "20-consumer.sh": 'unset COMBINED; export UNDO="${UNDO}2"\n',
    "10-base.fish": 'set -e BASE_FLAGS; set -gx UNDO "$UNDO"1\n',
    "20-consumer.fish": 'set -e COMBINED; set -gx UNDO "$UNDO"2\n',
}
BETA_ACT = {
    "b.sh": 'export CFLAGS="$CFLAGS -beta"; export B_SCRIPT=1\n',
    "b.fish": 'set -gx CFLAGS "$CFLAGS -beta"; set -gx B_SCRIPT 1\n',
}


def entries(script, name):
    return sorted(e for e in script.raw_env(name).split(b"\0") if e)


def body(t):
    shell = t.arg
    acttest.need_shell(shell)
    fish = shell == "fish"
    t.env.update(PRE)
    alpha = t.named("alpha", state_vars=dict(TRICKY, LOG_LEVEL="debug"),
                    env_vars_d={"10-a.json": {"FROM_D": "d1", "LOG_LEVEL": "fromd"}},
                    activate=ALPHA_ACT, deactivate=ALPHA_DEACT, bins=["alphatool"])
    beta = t.prefix(os.path.join(t.tmp, "we ird $x 'q' d\"q", "env b"),
                    state_vars={"LOG_LEVEL": "fromB", "B_ONLY": "b v"}, activate=BETA_ACT,
                    bins=["betatool"])
    corpus = t.corpus_env(os.path.join(t.tmp, "corpus env"))

    s = t.script(shell).hook()
    if not fish:
        s.raw("PS1='orig> '")
    s.dump("d0")
    s.menv("activate", "alpha", rc="a1").dump("d1").which("w1", "alphatool")
    s.menv("activate", "--stack", beta, rc="a2").dump("d2").which("w2a", "alphatool")
    s.which("w2b", "betatool")
    s.menv("deactivate", rc="x2").dump("d3")
    s.menv("activate", beta, rc="a4").dump("d4")
    s.menv("deactivate", rc="x4").dump("d5").unset("UNDO").dump("d5b")
    s.menv("activate", "alpha", rc="a6").unset("UNDO").dump("d6")
    s.menv("deactivate", rc="x6").dump("d7").unset("UNDO").dump("d8")
    s.menv("deactivate", rc="x8").dump("d9")
    s.menv("activate", "no-such-env", rc="bad").dump("d10")
    s.menv("activate", corpus, rc="c1").dump("c1")
    s.menv("deactivate", rc="c2").dump("c2")
    s.run()
    t.check(s.rc == 0, f"{shell} script ran", s.err)
    if s.err.strip():
        print("stderr:", s.err)

    d0 = s.env("d0")
    for k, v in PRE.items():
        t.eq(d0.get(k), v, f"{shell}: test variable {k} reached the shell")
    t.eq(d0.get("CONDA_SHLVL"), "0", "the hook sets CONDA_SHLVL=0")

    # activate alpha
    t.eq(s.rc_of("a1"), 0, "activate alpha: exit 0")
    d1 = s.env("d1")
    t.eq(d1.get("CONDA_SHLVL"), "1", "CONDA_SHLVL=1")
    t.eq(d1.get("CONDA_PREFIX"), alpha, "CONDA_PREFIX")
    t.eq(d1.get("CONDA_DEFAULT_ENV"), "alpha", "CONDA_DEFAULT_ENV is the name")
    t.eq(d1.get("CONDA_PROMPT_MODIFIER"), "(alpha) ", "CONDA_PROMPT_MODIFIER")
    t.eq(d1["PATH"], alpha + "/bin:" + d0["PATH"], "PATH: the prefix's bin first, rest kept")
    t.eq(s.which_of("w1"), alpha + "/bin/alphatool", "the environment's program is found")
    t.eq(d1.get("SEEN"), "12z", "activate.d scripts ran in byte order of their names (BR-028)")
    t.eq(d1.get("COMBINED"), "-O2 -extra", "a later script sees an earlier one's variable")
    t.eq(d1.get("CFLAGS"), "-g -alpha", "a script extended an existing variable")
    for k, v in TRICKY.items():
        t.eq(d1.get(k), v, f"state variable {k} survives exactly")
    t.eq(d1.get("FROM_D"), "d1", "env_vars.d variable set")
    t.eq(d1.get("LOG_LEVEL"), "debug", "conda-meta/state wins over env_vars.d and the shell")
    if not fish:
        t.eq(s.ps1("d1"), "(alpha) orig> ", "PS1 gets the prompt modifier (changeps1)")
    t.check(not any(f.startswith("INJ") for f in os.listdir(t.tmp)),
            "no value ran as shell code", str(os.listdir(t.tmp)))

    # stacked beta
    t.eq(s.rc_of("a2"), 0, "activate --stack beta: exit 0")
    d2 = s.env("d2")
    t.eq(d2.get("CONDA_SHLVL"), "2", "stacked: CONDA_SHLVL=2")
    t.eq(d2.get("CONDA_PREFIX"), beta, "stacked: CONDA_PREFIX is the path with blanks/quotes")
    t.eq(d2.get("CONDA_PREFIX_1"), alpha, "stacked: CONDA_PREFIX_1")
    t.eq(d2.get("CONDA_STACKED_2"), "true", "stacked: CONDA_STACKED_2")
    t.eq(d2.get("CONDA_DEFAULT_ENV"), beta, "a prefix outside envs/ is its own name")
    t.eq(d2["PATH"], beta + "/bin:" + d1["PATH"], "stacked: both bins on PATH, beta first")
    t.eq(s.which_of("w2a"), alpha + "/bin/alphatool", "stacked: alpha's program still found")
    t.eq(s.which_of("w2b"), beta + "/bin/betatool", "stacked: beta's program found")
    t.eq(d2.get("SEEN"), "12z", "stacked: alpha's script variables kept")
    t.eq(d2.get("CFLAGS"), "-g -alpha -beta", "stacked: beta's script extended CFLAGS")
    t.eq(d2.get("LOG_LEVEL"), "fromB", "stacked: beta's own variable")
    t.eq(d2.get("B_ONLY"), "b v", "stacked: beta's variable with a blank")
    if not fish:
        t.eq(s.ps1("d2"), "(" + beta.replace("$", "?") + ") orig> ",
             "PS1 modifier replaced, '$' made inert")

    t.eq(s.rc_of("x2"), 0, "deactivate beta: exit 0")
    t.eq(entries(s, "d3"), entries(s, "d1"), "deactivating the stacked env restores alpha's "
         "environment byte for byte")
    if not fish:
        t.eq(s.ps1("d3"), "(alpha) orig> ", "PS1 back to alpha's")

    # switch to beta without --stack
    t.eq(s.rc_of("a4"), 0, "activate beta (switch): exit 0")
    d4 = s.env("d4")
    t.eq(d4.get("CONDA_SHLVL"), "2", "switch: CONDA_SHLVL=2")
    t.eq(d4.get("CONDA_PREFIX_1"), alpha, "switch: CONDA_PREFIX_1 is alpha")
    t.check("CONDA_STACKED_2" not in d4, "switch: not stacked")
    t.eq(d4["PATH"], beta + "/bin:" + d0["PATH"], "switch: alpha's bin left PATH")
    t.eq(d4.get("UNDO"), "21", "switch: alpha's deactivate.d ran in reverse order")
    for k in ("SEEN", "COMBINED", "BASE_FLAGS", "FROM_D", "XLA_FLAGS", "EMPTY"):
        t.check(k not in d4, f"switch: alpha's {k} is gone")
    t.eq(d4.get("CFLAGS"), "-g -beta", "switch: CFLAGS without alpha's part")
    t.eq(s.rc_of("x4"), 0, "deactivate beta: exit 0")
    t.eq(s.env("d5").get("UNDO"), "21", "deactivate.d side effects are kept (conda)")
    t.eq(entries(s, "d5b"), entries(s, "d1"), "deactivating the switched-to env brings alpha "
         "back exactly")

    # re-activating the active environment
    t.eq(s.rc_of("a6"), 0, "re-activate alpha: exit 0")
    t.eq(entries(s, "d6"), entries(s, "d1"), "re-activating alpha: same level, same values "
         "(scripts not applied twice)")

    # back to level 0
    t.eq(s.rc_of("x6"), 0, "deactivate alpha: exit 0")
    d7 = s.env("d7")
    t.eq(d7.get("UNDO"), "21", "deactivate: deactivate.d ran in reverse (BR-028)")
    t.check("BASE_FLAGS" not in d7 and "COMBINED" not in d7, "deactivate: script vars unset")
    t.eq(d7.get("LOG_LEVEL"), "info", "deactivate: the shell's LOG_LEVEL is back")
    t.eq(entries(s, "d8"), entries(s, "d0"), "after the last deactivate the environment is "
         "byte-identical to before activation")
    if not fish:
        t.eq(s.ps1("d8"), "orig> ", "PS1 restored")
    t.eq(s.rc_of("x8"), 0, "deactivate at level 0 is a no-op with exit 0")
    t.eq(entries(s, "d9"), entries(s, "d0"), "deactivate at level 0 changes nothing")
    t.check(s.rc_of("bad") != 0, "activating a missing environment fails")
    t.check("no-such-env" in s.err, "the error names the environment", s.err)
    t.eq(entries(s, "d10"), entries(s, "d0"), "a failed activate changes nothing")

    # a real package's scripts (the corpus' activate_deactivate_package; .sh only)
    t.eq(s.rc_of("c1"), 0, "activate the corpus environment")
    c1 = s.env("c1")
    if fish:
        t.check("TEST" not in c1, "fish does not run .sh activate.d scripts")
    else:
        t.eq(c1.get("TEST"), "teststringfromactivate", "the package's activate.sh ran")
        t.check(c1["PATH"].startswith("teststringfromactivate/bin/test:" + corpus + "/bin:"),
                "the package's script prepended to PATH", c1["PATH"])
    t.eq(entries(s, "c2"), entries(s, "d0"), "deactivating the corpus environment restores "
         "everything, including the variable its deactivate.sh re-exports")


acttest.main(body)

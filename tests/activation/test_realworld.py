"""Real-world activation cases of ../shared/cases/realworld.md, each checked in every installed
shell (bash, zsh, fish, dash) and through `menv run` (python3 test_realworld.py MENV SHARED
BR008|BR028|BR029). A shell that is not installed is reported and left out; the test skips
(77) only when none is.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acttest  # noqa: E402


def printf_vars(s, names, fname):
    """A line that writes NAME=<value>| or NAME unset| for each name into fname."""
    p = acttest.q(s.shell, os.path.join(s.dir, fname))
    if s.fish:
        parts = [f"if set -q {n}; printf '%s=%s|' {n} \"${n}\"; else; printf '%s unset|' {n}; end"
                 for n in names]
        return "begin; " + "; ".join(parts) + f"; end > {p}"
    parts = [f"if [ -n \"${{{n}+x}}\" ]; then printf '%s=%s|' {n} \"${n}\"; "
             f"else printf '%s unset|' {n}; fi" for n in names]
    return "{ " + "; ".join(parts) + f"; }} > {p}"


def state_of(s, fname):
    return open(os.path.join(s.dir, fname)).read()


def create_from_yaml(t, text, prefix):
    yml = os.path.join(t.tmp, "environment.yml")
    acttest.write(yml, text)
    rc, out, err = t.run("create", "-q", "-f", yml, "-p", prefix)
    if rc:
        raise acttest.Fatal(f"menv create -f failed: {err}")
    return prefix


def br008(t):
    # the case's channel does not exist: with no dependencies, none is read
    p = create_from_yaml(t, "name: withvars\nchannels: [file:///srv/chan/main]\n"
                         "dependencies: []\nvariables:\n  DATA_ROOT: /srv/data dir/cache\n"
                         "  LOG_LEVEL: debug\n  EMPTY_ONE: \"\"\n",
                         os.path.join(t.root, "envs", "withvars"))
    import json
    st = json.load(open(os.path.join(p, "conda-meta", "state")))
    t.eq(st, {"env_vars": {"DATA_ROOT": "/srv/data dir/cache", "LOG_LEVEL": "debug",
                           "EMPTY_ONE": ""}}, "create stores variables: in conda-meta/state")
    t.env["LOG_LEVEL"] = "info"
    names = ["DATA_ROOT", "LOG_LEVEL", "EMPTY_ONE"]
    for sh in acttest.available_shells():
        s = t.script(sh).hook()
        s.menv("activate", "withvars").raw(printf_vars(s, names, "on"))
        s.menv("deactivate").raw(printf_vars(s, names, "off"))
        s.run()
        t.eq(state_of(s, "on"), "DATA_ROOT=/srv/data dir/cache|LOG_LEVEL=debug|EMPTY_ONE=|",
             f"{sh}: after activate: blank kept, LOG_LEVEL=debug, EMPTY_ONE set and empty")
        t.eq(state_of(s, "off"), "DATA_ROOT unset|LOG_LEVEL=info|EMPTY_ONE unset|",
             f"{sh}: after deactivate: LOG_LEVEL=info restored, the others unset")
    rc, out, err = t.run("run", "-n", "withvars", "printenv", "DATA_ROOT")
    t.eq((rc, out), (0, "/srv/data dir/cache\n"), "run -n withvars printenv DATA_ROOT")
    rc, out, err = t.run("run", "-n", "withvars", "printenv", "LOG_LEVEL")
    t.eq(out, "debug\n", "run: the environment's LOG_LEVEL wins over the caller's")


def br028(t):
    p = t.named("ordered", activate={
        "zz-last.sh": 'export SEEN="${SEEN}z"\n',
        "20-consumer.sh": 'export COMBINED="$BASE_FLAGS -extra"; export SEEN="${SEEN}2"\n',
        "10-base.sh": 'export BASE_FLAGS="-O2"; export SEEN="${SEEN}1"\n',
        # byte order, not locale order: upper case sorts before lower case
        "Z-upper.sh": 'export SEEN="${SEEN}Z"\n',
        "zz-last.fish": 'set -gx SEEN "$SEEN"z\n',
        "20-consumer.fish": 'set -gx COMBINED "$BASE_FLAGS -extra"; set -gx SEEN "$SEEN"2\n',
        "10-base.fish": 'set -gx BASE_FLAGS -O2; set -gx SEEN "$SEEN"1\n',
        "Z-upper.fish": 'set -gx SEEN "$SEEN"Z\n',
        "README": "exit 3\n", "x.bat": "exit 3\n", "x.sh.orig": "exit 3\n",
    }, deactivate={
        "10-base.sh": 'unset BASE_FLAGS; export UNDO="${UNDO}1"\n',
        "20-consumer.sh": 'unset COMBINED; export UNDO="${UNDO}2"\n',
        "Z-upper.sh": 'export UNDO="${UNDO}Z"\n',
        "10-base.fish": 'set -e BASE_FLAGS; set -gx UNDO "$UNDO"1\n',
        "20-consumer.fish": 'set -e COMBINED; set -gx UNDO "$UNDO"2\n',
        "Z-upper.fish": 'set -gx UNDO "$UNDO"Z\n',
    })
    names = ["SEEN", "COMBINED", "BASE_FLAGS", "UNDO"]
    for sh in acttest.available_shells():
        s = t.script(sh).hook()
        s.menv("activate", p).raw(printf_vars(s, names, "on"))
        s.menv("deactivate").raw(printf_vars(s, names, "off"))
        s.run()
        t.check(s.rc == 0 and not s.err.strip(), f"{sh}: no errors (no non-script file ran)",
                s.err)
        t.eq(state_of(s, "on"), "SEEN=12Zz|COMBINED=-O2 -extra|BASE_FLAGS=-O2|UNDO unset|",
             f"{sh}: activate.d in byte order of names")
        t.eq(state_of(s, "off"), "SEEN unset|COMBINED unset|BASE_FLAGS unset|UNDO=Z21|",
             f"{sh}: deactivate.d in reverse order, activation's variables gone")
    rc, out, err = t.run("run", "-p", p, "sh", "-c", 'printf "%s|%s" "$SEEN" "$COMBINED"')
    t.eq(out, "12Zz|-O2 -extra", "run: the same order")


def br029(t):
    vals = {"XLA_FLAGS": "--gpu_data_dir=/opt/cuda-12", "TWO_WORDS": "alpha beta",
            "QUOTES": "it's \"x\"", "TRAILING": "ends-with-space "}
    yml = ("name: eqvars\ndependencies: []\nvariables:\n"
           "  XLA_FLAGS: \"--gpu_data_dir=/opt/cuda-12\"\n  TWO_WORDS: \"alpha beta\"\n"
           "  QUOTES: \"it's \\\"x\\\"\"\n  TRAILING: \"ends-with-space \"\n")
    p1 = create_from_yaml(t, yml, os.path.join(t.tmp, "from yaml"))
    p2 = t.prefix(os.path.join(t.tmp, "from cli"))
    rc, out, err = t.run("env", "config", "vars", "set", "-p", p2,
                         *[f"{k}={v}" for k, v in vals.items()])
    t.eq(rc, 0, "env config vars set NAME=value... (split at the first '=')")
    names = list(vals)
    want_on = "".join(f"{k}={v}|" for k, v in vals.items())
    want_off = "".join(f"{k} unset|" for k in vals)
    for p, how in ((p1, "environment.yml"), (p2, "env config vars set")):
        for sh in acttest.available_shells():
            s = t.script(sh).hook()
            s.menv("activate", p).raw(printf_vars(s, names, "on"))
            p_ = acttest.q(sh, os.path.join(s.dir, "xla"))
            s.raw(f"printf '%s|' \"$XLA_FLAGS\" > {p_}")
            s.menv("deactivate").raw(printf_vars(s, names, "off"))
            s.run()
            t.eq(state_of(s, "on"), want_on, f"{sh} ({how}): each value exactly as written")
            t.eq(state_of(s, "xla"), "--gpu_data_dir=/opt/cuda-12|",
                 f"{sh} ({how}): printf '%s|' \"$XLA_FLAGS\"")
            t.eq(state_of(s, "off"), want_off, f"{sh} ({how}): deactivate removes them")
        rc, out, err = t.run("run", "-p", p, "sh", "-c",
                             "printf '%s|' " + " ".join(f'"${k}"' for k in names))
        t.eq(out, "".join(f"{v}|" for v in vals.values()), f"run ({how}): the same values")


def body(t):
    if not acttest.available_shells():
        raise acttest.Skip("no shell installed")
    for sh in acttest.SHELLS:
        if not acttest.shell_path(sh):
            t.skip_part(f"{sh} is not installed; left out")
    {"BR008": br008, "BR028": br028, "BR029": br029}[t.arg](t)


acttest.main(body)

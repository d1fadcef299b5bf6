"""cli.usage_options: a usage line advertises only options its command takes.

For each command of `menv --help` and each subcommand the completion names (and the shell
functions activate/deactivate), every option the usage part of `--help` names (`-n`,
`--dry-run`, `--[no-]smoke-check` as both) is one of the `options:` lines, and the parser
takes it: `menv CMD OPT [VALUE...] --help` exits 0 (a refused option exits 2 with "unrecognized
option"). `create` listed --no-wait and `update` --only-deps and --satisfied-skip-solve in
their usage while their parsers refused them. `env --help` is the overview of its
subcommands (each checked on its own) and is left out.
Also: `remove --help` says what --all does for remove (it showed "(clean: everything)"),
`clean --help` what it does for clean, `update --help` for update.
"""
import re

import menvtest

OPT_LINE = re.compile(r"^  (?:-(\S), |    )--([a-z][a-z0-9-]*)((?: [A-Z=]+)*) +(\S.*)$")


def subcommands(t):
    subs = {}
    for line in t.menv_ok("completion", "fish").out.splitlines():
        m = re.match(r"complete -c menv -n '__fish_seen_subcommand_from (\S+)' -a '([^']*)'$",
                     line)
        if m:
            subs[m.group(1)] = m.group(2).split()
    return subs


def usage_options(usage):
    """The options a usage text names, as '--long' and '-s'."""
    opts = set()
    for m in re.finditer(r"--\[no-\]([a-z][a-z0-9-]*)", usage):
        opts.update(("--" + m.group(1), "--no-" + m.group(1)))
    usage = re.sub(r"--\[no-\][a-z0-9-]*", "", usage)
    opts.update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", usage))
    opts.update(re.findall(r"(?<![\w-])-[a-zA-Z](?![\w-])", usage))
    return opts


def listed(out):
    """{option: number of values} of the options: section ('--name' and '-n' both)."""
    got = {}
    for line in out.split("\noptions:\n", 1)[-1].splitlines():
        m = OPT_LINE.match(line)
        if not m:
            continue
        nargs = len(m.group(3).split())
        got["--" + m.group(2)] = nargs
        if m.group(1):
            got["-" + m.group(1)] = nargs
    return got


def check_command(t, words, run_words):
    """The usage's options of `menv WORDS --help`; each tried after RUN_WORDS (None: the
    overview of a command with subcommands, tried through each of them)."""
    r = t.menv_run(*words, "--help")
    what = "menv %s --help" % " ".join(words)
    t.eq(r.rc, 0, what + " exits 0")
    if "\noptions:\n" not in r.out:
        t.check(False, what + " has an options: section", r.out)
        return 0
    usage, _ = r.out.split("\noptions:\n", 1)
    takes = listed(r.out)
    named = usage_options(usage)
    for opt in sorted(named):
        t.check(opt in takes, "%s: the usage's %s is one of its options" % (what, opt), r.out)
        if opt not in takes or run_words is None:
            continue
        # the parser takes it: the option (with a value for each it needs), then --help
        args = list(run_words) + [opt] + ["1"] * takes[opt] + ["--help"]
        r2 = t.menv_run(*args)
        t.eq((r2.rc, "unrecognized option" in r2.err), (0, False),
             "menv %s: the parser takes %s" % (" ".join(args), opt))
    return len(named)


def body(t):
    r = t.menv_ok("--help")
    names = [l.split()[0] for l in r.out.splitlines() if l.startswith("  ")]
    t.check(len(names) > 20, "menv --help lists the commands", r.out)
    subs = subcommands(t)
    checked = 0
    for n in names:
        if n != "env":
            checked += check_command(t, [n], None if n in subs else [n])
        for s in subs.get(n, []):
            # `env config --help` is `env config vars`' help: tried as `env config vars list`
            run = [n, s, "vars", "list"] if (n, s) == ("env", "config") else [n, s]
            checked += check_command(t, [n, s], run)
    t.check(checked > 150, "the usage lines name many options (%d checked)" % checked)

    # the three a usage listed and the parser refused
    t.eq(t.menv_run("create", "--no-wait", "--help").rc, 0, "create takes --no-wait")
    upd = t.menv_ok("update", "--help").out.split("\noptions:\n")[0]
    for opt in ("--only-deps", "--satisfied-skip-solve"):
        t.check(opt not in upd, "update's usage does not name %s" % opt, upd)
        t.eq(t.menv_run("update", opt, "--help").rc, 2, "update refuses %s" % opt)
    ins = t.menv_ok("install", "--help").out.split("\noptions:\n")[0]
    t.check("--only-deps" in ins and "--satisfied-skip-solve" in ins,
            "install's usage names --only-deps and --satisfied-skip-solve", ins)

    # --all's text is the command's own
    def all_line(cmd):
        return [l for l in t.menv_ok(cmd, "--help").out.splitlines()
                if l.startswith("      --all ")]
    t.eq([l.split(None, 1)[1] for l in all_line("remove")],
         ["every package: the whole environment"], "remove --help: --all removes it all")
    t.eq([l.split(None, 1)[1] for l in all_line("update")], ["every package"],
         "update --help: --all is every package")
    t.eq([l.split(None, 1)[1] for l in all_line("clean")],
         ["tarballs, packages, index cache and locks"], "clean --help: --all's text")


if __name__ == "__main__":
    menvtest.main(body)

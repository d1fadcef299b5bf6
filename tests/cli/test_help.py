"""Every command's --help, from args.c's one table of options: for each command of `menv
--help` (and each subcommand the completion names), `--help` exits 0, prints the command's
usage and an `options:` section with one line of text per option, and those options are
exactly the ones the command's parser takes (what the completion offers for it).
`menv activate --help` exits 0 (it failed with 1: it is a shell function), `menv env list
--help` prints env list's own help (it printed env's usage and exited 2), and so does every
subcommand (`env create --help` printed create's usage, `shell init --help` the hook's);
clean, info and config parse through the table too."""
import re

import menvtest

OPT_LINE = re.compile(r"^  (-(\S), |    )--([a-z][a-z0-9-]*)( [A-Z=]+(?: [A-Z]+)?)? +(\S.*)$")


def fish_tables(fish):
    """{command: set of long options} and {command: [subcommands]} from the fish script."""
    opts, subs = {}, {}
    for line in fish.splitlines():
        m = re.match(r"complete -c menv -n '__fish_seen_subcommand_from (\S+)' -l (\S+)$", line)
        if m:
            opts.setdefault(m.group(1), set()).add("--" + m.group(2))
        m = re.match(r"complete -c menv -n '__fish_seen_subcommand_from (\S+)' -a '([^']*)'$", line)
        if m:
            subs[m.group(1)] = m.group(2).split()
    return opts, subs


def help_options(t, words, out):
    """The long options of the `options:` section of a --help output, each line checked."""
    t.check("\noptions:\n" in out, "menv %s --help has an options: section" % " ".join(words),
            out)
    lines = out.split("\noptions:\n", 1)[-1].splitlines()
    longs = []
    for l in lines:
        m = OPT_LINE.match(l)
        t.check(m is not None, "menv %s --help: '%s' is one option with its text"
                % (" ".join(words), l))
        if m:
            longs.append("--" + m.group(3))
    return longs


def body(t):
    r = t.menv_ok("--help")
    names = [l.split()[0] for l in r.out.splitlines() if l.startswith("  ")]
    t.check(len(names) > 20, "menv --help lists the commands", r.out)
    opts, subs = fish_tables(t.menv_ok("completion", "fish").out)

    for n in names:
        r = t.menv_run(n, "--help")
        t.eq(r.rc, 0, "menv %s --help exits 0" % n)
        t.check(r.out.startswith("usage: menv %s" % n),
                "menv %s --help starts with its usage" % n, r.out)
        longs = help_options(t, [n], r.out)
        t.check("--help" in longs, "menv %s --help lists --help" % n, r.out)
        t.eq(len(longs), len(set(longs)), "menv %s --help lists each option once" % n)
        if n in opts and n not in subs:
            t.eq(sorted(longs), sorted(opts[n]),
                 "menv %s --help lists exactly the options its parser takes" % n)
        for s in subs.get(n, []):
            r = t.menv_run(n, s, "--help")
            t.eq(r.rc, 0, "menv %s %s --help exits 0" % (n, s))
            # its own usage: `env create --help` printed create's, `shell init --help` the
            # hook's ("depends|whoneeds" names both of repoquery's)
            first = r.out.split("\n", 1)[0].split()
            t.check(first[:3] == ["usage:", "menv", n] and len(first) > 3
                    and s in first[3].split("|"),
                    "menv %s %s --help: its own usage 'usage: menv %s %s ...'" % (n, s, n, s),
                    r.out)
            help_options(t, [n, s], r.out)

    # activate and deactivate are shell functions: --help is no error
    r = t.menv_run("activate", "--help")
    t.eq(r.rc, 0, "menv activate --help exits 0")
    t.eq(r.out.splitlines()[0], "usage: menv activate [--stack] [NAME|PREFIX]",
         "menv activate --help: its usage")
    t.eq(help_options(t, ["activate"], r.out), ["--help", "--stack"],
         "menv activate --help: --help and --stack")
    t.eq(t.menv_run("activate").rc, 1, "menv activate without the hook still fails (1)")

    # env list has its own help
    r = t.menv_run("env", "list", "--help")
    t.eq((r.rc, r.out), (0, "usage: menv env list [--json]\n\noptions:\n"
                            "  -h, --help                     show this help\n"
                            "      --json                     print the result as JSON on "
                            "stdout\n"), "menv env list --help: env list's own help, exit 0")
    r = t.menv_run("env", "list", "--bogus")
    t.eq((r.rc, r.err.splitlines()[-1]), (2, "usage: menv env list [--json]"),
         "menv env list --bogus: its usage on stderr, exit 2")

    # clean, info and config go through the table
    r = t.menv_run("clean", "--help")
    t.check("  -t, --tarballs                 downloaded package files\n" in r.out,
            "clean --help: -t, --tarballs with its text", r.out)
    t.eq(t.menv_run("clean").rc, 2, "clean with nothing to clean: exit 2")
    t.eq(t.menv_run("clean", "--bogus").rc, 2, "clean --bogus: exit 2")
    t.eq(t.menv_run("info", "extra").rc, 2, "info with an operand: exit 2")
    r = t.menv_run("config", "--help")
    t.check("      --set KEY VALUE            set a value\n" in r.out,
            "config --help: --set KEY VALUE with its text", r.out)
    r = t.menv_run("config", "--show", "--get")
    t.eq(r.rc, 2, "config --show --get: one view only, exit 2")
    r = t.menv_run("config", "--set", "channels")
    t.eq(r.rc, 2, "config --set KEY without VALUE: exit 2")
    t.check("menv: error: --set takes KEY VALUE" in r.err, "config --set KEY: says so", r.err)
    r = t.menv_run("config", "--show-sources", "extra")
    t.eq(r.rc, 2, "config --show-sources KEY: exit 2")

    # each option belongs to the commands that take it (--smoke-check and --set shared one
    # key of the table: remove took --set KEY VALUE, config took --smoke-check)
    r = t.menv_run("remove", "--help")
    t.check("--set" not in r.out and "--smoke-check" in r.out,
            "remove --help: --smoke-check, no --set", r.out)
    t.check("      --force                    remove: leave what depends on it" in r.out,
            "remove --help: --force says what it does for remove", r.out)
    r = t.menv_run("remove", "-n", "nothere", "--set", "a", "b", "x")
    t.eq(r.rc, 2, "remove --set KEY VALUE: a usage error, exit 2")
    r = t.menv_run("config", "--smoke-check")
    t.eq(r.rc, 2, "config --smoke-check: a usage error, exit 2")
    r = t.menv_run("config", "--help")
    t.check("--smoke-check" not in r.out, "config --help: no --smoke-check", r.out)


if __name__ == "__main__":
    menvtest.main(body)

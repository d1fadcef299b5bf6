"""Shell completion generated from menv's own tables: the bash script, sourced in bash and
driven through COMP_WORDS/COMP_CWORD, completes `menv cr` to create, `menv create --na` to
--name, a subcommand and options of new commands; zsh's and fish's scripts parse (zsh -n,
fish -n) and name every command of `menv --help`; fish's, run by fish itself, completes the
same words; a command's options are exactly what its parser takes."""
import os
import shutil
import subprocess

import menvtest


def bash_complete(script, words):
    """The COMPREPLY of the generated function for the command line `words` (the last word
    is the one being completed)."""
    arr = " ".join("'%s'" % w for w in words)
    prog = ('source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; _menv_complete; '
            'printf "%%s\\n" "${COMPREPLY[@]}"' % (arr, len(words) - 1))
    p = subprocess.run(["bash", "-c", prog, "bash", script], capture_output=True, text=True)
    return sorted(l for l in p.stdout.splitlines() if l)


def body(t):
    r = t.menv_ok("--help")
    names = [l.split()[0] for l in r.out.splitlines() if l.startswith("  ")]
    t.check(len(names) > 20 and "rename" in names and "config" in names,
            "menv --help lists the commands", r.out)

    bash = os.path.join(t.tmp, "menv.bash")
    out = t.menv_ok("completion", "bash").out
    t.eq(t.menv_ok("shell", "completion", "bash").out, out,
         "menv shell completion bash = menv completion bash")
    menvtest.write_text(bash, out)
    t.eq(bash_complete(bash, ["menv", "cr"]), ["create"], "bash: menv cr -> create")
    t.eq(bash_complete(bash, ["menv", "create", "--na"]), ["--name"],
         "bash: menv create --na -> --name")
    t.eq(bash_complete(bash, ["menv", "re"]), ["remove", "rename", "repoquery"],
         "bash: menv re -> remove rename repoquery")
    t.eq(bash_complete(bash, ["menv", "env", "re"]), ["remove"], "bash: menv env re -> remove")
    t.eq(bash_complete(bash, ["menv", "rename", "--f"]), ["--force"],
         "bash: menv rename --f -> --force")
    t.eq(bash_complete(bash, ["menv", "config", "--show"]), ["--show", "--show-sources"],
         "bash: menv config --show -> --show --show-sources")
    t.eq(bash_complete(bash, ["menv", "clean", "--ta"]), ["--tarballs"],
         "bash: a hand-parsed command's options (clean --ta -> --tarballs)")
    t.eq(bash_complete(bash, ["menv", ""]), sorted(names), "bash: every command of --help")
    t.eq(bash_complete(bash, ["menv", "export", "--"]),
         ["--file", "--format", "--from-history", "--help", "--json", "--name", "--no-builds",
          "--prefix"], "bash: export's options are exactly those its parser takes")
    r = t.menv_run("export", "--no-such-option")
    t.check(r.rc != 0, "(export refuses an option it does not list)", r)

    zsh_out = t.menv_ok("completion", "zsh").out
    fish_out = t.menv_ok("completion", "fish").out
    for n in names:
        t.check("\n        '%s:" % n in zsh_out, "zsh: names '%s' with its help" % n)
        t.check("-n __fish_use_subcommand -a %s -d " % n in fish_out,
                "fish: names '%s' with its help" % n)
    zsh = os.path.join(t.tmp, "menv.zsh")
    fish = os.path.join(t.tmp, "menv.fish")
    menvtest.write_text(zsh, zsh_out)
    menvtest.write_text(fish, fish_out)
    if shutil.which("zsh"):
        p = subprocess.run(["zsh", "-n", zsh], capture_output=True, text=True)
        t.eq((p.returncode, p.stderr), (0, ""), "zsh -n: the script parses")
        p = subprocess.run(["zsh", "-f", "-c", "autoload -U compinit; compinit -u -d %s/zcd; "
                            "source %s; print -r -- $_comps[menv]" % (t.tmp, zsh)],
                           capture_output=True, text=True, env=t.environ())
        t.eq(p.stdout, "_menv\n", "zsh: the function is registered for menv")
    else:
        t.note("zsh not installed: its script checked by text only")
    if shutil.which("fish"):
        p = subprocess.run(["fish", "-n", fish], capture_output=True, text=True)
        t.eq((p.returncode, p.stderr), (0, ""), "fish -n: the script parses")
        p = subprocess.run(["fish", "--no-config", "-c", "source %s; complete -C 'menv cr'; "
                            "complete -C 'menv create --na'" % fish],
                           capture_output=True, text=True, env=t.environ())
        t.eq(p.stdout.splitlines(),
             ["create\tcreate an environment from specs or an environment file", "--name"],
             "fish: menv cr -> create, menv create --na -> --name")
    else:
        t.note("fish not installed: its script checked by text only")
    r = t.menv_run("completion", "tcsh")
    t.one_line_error(r, "completion for a shell menv does not know", ["tcsh"],
                     nonzero_only=True)


if __name__ == "__main__":
    menvtest.main(body, "completion")

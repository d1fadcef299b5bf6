#!/usr/bin/env python3
"""cli.no_shell: a prefix is a path, never shell text.

`menv doctor -p "<tmp>/q'$(touch${IFS}PWNED)'x"` on an environment with bin/nvcc and bin/g++
runs both (their versions are in the report: they started from an argv array) and creates
no PWNED file anywhere (a popen() string built from the prefix ran the $(...) before).
The same prefix goes through every command that takes one and every child menv starts for
it: list, run, install (a post-link script), update, remove (a pre-unlink script), export,
doctor --fix, smoke (its probe and build steps in sh), shell activate (the script evaluated
by bash, zsh, dash and fish), the pip step of env update, rename (to the hostile name and
back) and env remove; then an environment NAMED `$(touch${IFS}PWNED)`, unquoted, through the
same commands with -n. No PWNED file appears anywhere (the test's folder, which holds HOME,
TMPDIR and the working directory, nor the test's working directory).
"""
import os
import shutil
import subprocess
import tarfile

import menvtest
from menvtest import write_text

NVCC = """#!/bin/sh
[ "$1" = --version ] || exit 2
echo 'nvcc: NVIDIA (R) Cuda compiler driver'
echo 'Cuda compilation tools, release 11.8, V11.8.89'
echo 'Build cuda_11.8.r11.8/compiler.31833905_0'
"""
GXX = """#!/bin/sh
[ "$1" = -dumpfullversion ] || exit 2
echo 11.3.0
"""


def pwned(top):
    return [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if "PWNED" in f]


# a stand-in for `python -m pip install|uninstall` (the pip step): a dist-info per NAME==VER
FAKE_PY = r"""#!/bin/sh
prefix=$(cd "$(dirname "$0")/.." && pwd)
sp="$prefix/lib/python3.9/site-packages"
[ "$1 $2" = "-m pip" ] || exit 0
[ "$3" = install ] || exit 0
req=
while [ $# -gt 0 ]; do [ "$1" = -r ] && req=$2; shift; done
mkdir -p "$sp"
while read -r line; do
    case "$line" in *==*)
        n=${line%%==*}; v=${line#*==}; d="$sp/$n-$v.dist-info"
        mkdir -p "$d"
        printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$n" "$v" > "$d/METADATA"
        printf '%s-%s.dist-info/METADATA,,\n' "$n" "$v" > "$d/RECORD";;
    esac
done < "$req"
"""
# link scripts that say they ran (in $PREFIX/ran), with the prefix only as $PREFIX
POST = 'echo "post-link $PKG_NAME" >> "$PREFIX/ran"\n'
PRE = 'echo "pre-unlink $PKG_NAME" >> "$PREFIX/ran"\n'
OPS_CONFIGURE = "#!/bin/sh\necho \"configure: targets sm_90 ($1)\"\nmkdir -p \"$1\"\n"


def member(name, text, mode=0o755):
    ti = tarfile.TarInfo(name)
    data = text.encode()
    ti.size, ti.mode, ti.mtime = len(data), mode, 1700000000
    return ti, data


def pkg(chan, name, version, files, subdir="linux-64"):
    menvtest.build_conda(os.path.join(chan, subdir, "%s-%s-0.conda" % (name, version)),
                         {"name": name, "version": version, "build": "0", "build_number": 0,
                          "depends": [], "subdir": subdir},
                         [member(n, text) for n, text in files])


def pwned(top):
    return [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if "PWNED" in f]


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")],
                                   "linux-64": []}, index=False)
    pkg(chan, "hook", "1.0", [("bin/.hook-post-link.sh", POST), ("bin/.hook-pre-unlink.sh", PRE),
                              ("share/hook/1", "1\n")])
    pkg(chan, "hook", "2.0", [("bin/.hook-post-link.sh", POST), ("bin/.hook-pre-unlink.sh", PRE),
                              ("share/hook/2", "2\n")])
    pkg(chan, "python", "3.9.0", [("bin/python", FAKE_PY)])
    t.index(chan)
    C = ["-c", t.url(chan), "--override-channels", "-y"]
    work = os.path.join(t.tmp, "work")
    tmpdir = os.path.join(t.tmp, "tmpdir")
    ops = os.path.join(t.tmp, "ops")
    for d in (work, tmpdir, ops):
        os.makedirs(d)
    write_text(os.path.join(ops, "configure"), OPS_CONFIGURE)
    os.chmod(os.path.join(ops, "configure"), 0o755)
    env = {"TMPDIR": tmpdir, "MENV_OPS_DIR": ops}

    def run(*cmd, **kw):
        return t.menv_run(*cmd, cwd=work, env=env, **kw)

    prefix = os.path.join(t.tmp, "q'$(touch${IFS}PWNED)'x")
    # create refuses quotes in a new prefix; an existing one can still be moved there
    r = run("create", "-p", prefix, *C, "dependency")
    t.one_line_error(r, "create -p with a quote in the path", ["quote"], nonzero_only=True)
    run("create", "-p", os.path.join(t.tmp, "plain"), *C, "dependency", "python", "hook=1.0")
    os.rename(os.path.join(t.tmp, "plain"), prefix)
    tools(prefix)
    r = run("doctor", "-p", prefix)
    t.check("nvcc 11.8: %s/bin/nvcc" % prefix in r.out,
            "doctor ran the environment's nvcc (its version is reported)", r)
    t.check("host compiler g++ 11.3.0: %s/bin/g++" % prefix in r.out,
            "doctor ran the environment's g++ (its version is reported)", r)
    r = run("doctor", "-p", prefix, "--json")
    t.check(r.try_json() is not None, "doctor --json on the prefix", r)
    through(t, run, prefix, ["-p", prefix], C, work, env)
    t.eq(pwned(t.tmp), [], "no PWNED file: no shell ran the prefix's text")
    t.eq(pwned(os.getcwd()), [], "no PWNED file in the test's working directory")

    # a NAME that is shell text, unquoted
    name = "$(touch${IFS}PWNED)"
    r = run("create", "-n", name, *C, "dependency", "python", "hook=1.0")
    named = os.path.join(t.envs, name)
    if r.rc == 0:
        t.check(os.path.isdir(os.path.join(named, "conda-meta")), "create -n NAME made it", r)
        tools(named)
        through(t, run, named, ["-n", name], C, work, env)
    else:
        t.one_line_error(r, "create -n %s refused" % name, [], nonzero_only=True)
    t.eq(pwned(t.tmp), [], "no PWNED file: no shell ran the name's text")
    t.eq(pwned(os.getcwd()), [], "no PWNED file in the test's working directory (name)")


def tools(prefix):
    for name, text in (("nvcc", NVCC), ("g++", GXX)):
        p = os.path.join(prefix, "bin", name)
        write_text(p, text)
        os.chmod(p, 0o755)


def through(t, run, prefix, sel, C, work, env):
    """Every command and child on one hostile environment (`sel` selects it)."""
    ran = os.path.join(prefix, "ran")

    def scripts():
        return open(ran).read().split("\n") if os.path.exists(ran) else []

    t.check("post-link hook" in scripts(), "%s: the post-link script ran" % prefix)
    for cmd in (("list", *sel), ("run", *sel, "true"), ("export", *sel),
                ("install", *sel, *C, "dependency"), ("env", "config", "vars", "list", *sel)):
        run(*cmd)  # refused or done: either way no shell
    r = run("update", *sel, *C, "hook")
    t.check(r.rc == 0 and "pre-unlink hook" in scripts() and
            os.path.exists(os.path.join(prefix, "share", "hook", "2")),
            "update %s: hook 2.0, its link scripts ran" % prefix, r)
    r = run("smoke", *sel)
    t.check("configure" in r.out + r.err, "smoke %s: the steps ran" % prefix, r)
    # activation: every shell evaluates what `shell activate` prints
    for sh, hook in (("bash", 'eval "$("$MENV" shell activate --shell bash "$P")"'),
                     ("zsh", 'eval "$("$MENV" shell activate --shell zsh "$P")"'),
                     ("dash", 'eval "$("$MENV" shell activate --shell posix "$P")"'),
                     ("fish", 'eval ($MENV shell activate --shell fish $P | string collect)')):
        exe = shutil.which(sh)
        if not exe:
            t.skip_part("no %s" % sh)
            continue
        e = t.environ(dict(env, MENV=t.menv, P=prefix))
        p = subprocess.run([exe, "-c", hook + '; echo "prefix=$CONDA_PREFIX"'], cwd=work, env=e,
                           capture_output=True, text=True, timeout=60)
        t.check("prefix=%s\n" % prefix in p.stdout, "%s: activation of %s" % (sh, prefix),
                p.stdout + p.stderr)
    # the pip step
    f = os.path.join(t.tmp, "pip.yml")
    write_text(f, "channels: [%s, nodefaults]\ndependencies:\n  - python\n  - pip:\n"
               "    - fakepkg==1.0\n" % t.url(os.path.join(t.tmp, "chan")))
    r = run("env", "update", *sel, "-y", "-f", f)
    t.check(os.path.isdir(os.path.join(prefix, "lib", "python3.9", "site-packages",
                                       "fakepkg-1.0.dist-info")),
            "env update %s: the pip step ran" % prefix, r)
    # doctor --fix on a broken record
    rec = [n for n in os.listdir(os.path.join(prefix, "conda-meta")) if n.startswith("hook-")]
    if rec:
        write_text(os.path.join(prefix, "conda-meta", rec[0]), "{bad\n")
    r = run("doctor", *sel, "--fix")
    t.check(r.rc == 0, "doctor --fix %s" % prefix, r)
    r = run("remove", *sel, "-y", "hook")
    t.check(r.rc == 0 and scripts().count("pre-unlink hook") == 2,
            "remove %s: its pre-unlink script ran" % prefix, r)
    # rename to the hostile name and back, then env remove
    back = os.path.join(t.tmp, "back")
    r = run("rename", *sel, "-y", back)
    if r.rc == 0:
        r = run("rename", "-p", back, "-y", prefix)
        t.check(r.rc == 0 or os.path.isdir(back), "rename back to %s" % prefix, r)
        run("rename", "-p", back, "-y", "$(touch${IFS}PWNED)x")
    run("env", "remove", *sel, "-y")


if __name__ == "__main__":
    menvtest.main(body)

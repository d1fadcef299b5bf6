"""`menv run` (python3 test_run.py MENV SHARED): the command runs in the activated environment
without a shell wrapper: variables from conda-meta/state and env_vars.d, activate.d scripts'
effects, PATH; exit codes (including 127 for a missing command), stdin passed through,
stdout/stderr interleaving kept, SIGINT and SIGTERM reaching the command, arguments passed
unchanged, --cwd, --env VAR=VALUE (split at the first '='), --clean-env, -n NAME, and the
active environment as default.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acttest  # noqa: E402


def body(t):
    t.env["OUTER"] = "from outside"
    p = t.named("runenv", state_vars={"DATA_ROOT": "/srv/data dir/cache", "EQ": "a=b=c",
                                      "EMPTY_ONE": "", "NL": "x\ny"},
                env_vars_d={"x.json": {"FROM_D": "d"}},
                activate={"10-a.sh": 'export SEEN="${SEEN}1"; echo "script says hi"\n',
                          "20-b.sh": 'export SEEN="${SEEN}2"; export FROM_SCRIPT="$DATA_ROOT"\n',
                          "30-c.fish": "set -gx FISHY 1\n"},
                bins=["tool"])

    rc, out, err = t.run("run", "-n", "runenv", "printenv", "DATA_ROOT")
    t.eq((rc, out), (0, "/srv/data dir/cache\n"), "run -n: state variable with blanks")
    t.check("script says hi" in err, "a script's stdout goes to stderr, not the command's "
            "stdout", err)
    rc, out, err = t.run("run", "-p", p, "sh", "-c",
                         'printf "%s|" "$EQ" "$EMPTY_ONE" "${EMPTY_ONE+set}" "$NL" "$FROM_D" '
                         '"$SEEN" "$FROM_SCRIPT" "${FISHY-unset}" "$CONDA_PREFIX" '
                         '"$CONDA_DEFAULT_ENV" "$CONDA_SHLVL" "$OUTER"')
    want = "|".join(["a=b=c", "", "set", "x\ny", "d", "12", "/srv/data dir/cache", "unset", p,
                     "runenv", "1", "from outside"]) + "|"
    t.eq(out, want, "run -p: variables, scripts in order, CONDA_* set, outer env kept")
    rc, out, err = t.run("run", "-p", p, "sh", "-c", 'echo "$PATH"')
    t.eq(out.strip(), p + "/bin:" + t.env["PATH"], "PATH has the prefix's bin first")
    rc, out, err = t.run("run", "-p", p, "tool")
    t.eq(out.strip(), f"tool from {p}", "the command is looked up on the activated PATH")

    for code in (0, 1, 3, 42, 255):
        rc, out, err = t.run("run", "-p", p, "sh", "-c", f"exit {code}")
        t.eq(rc, code, f"exit status {code} is returned")
    rc, out, err = t.run("run", "-p", p, "no-such-command-xyz")
    t.eq(rc, 127, "a missing command exits 127")
    t.check("no-such-command-xyz" in err, "and names the command", err)

    rc, out, err = t.run("run", "-p", p, "cat", input=b"line one\nline two\n")
    t.eq(out, "line one\nline two\n", "stdin is passed through")

    r = subprocess.run([t.menv, "run", "-p", p, "sh", "-c",
                        "echo out1; echo err1 >&2; echo out2; echo err2 >&2"],
                       env=t.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = [ln for ln in r.stdout.decode().splitlines() if ln != "script says hi"]
    t.eq(lines, ["out1", "err1", "out2", "err2"], "interleaved stdout/stderr keep their order")

    # streaming: the first line arrives before the command ends
    proc = subprocess.Popen([t.menv, "run", "-p", p, "sh", "-c", "echo first; sleep 3; echo last"],
                            env=t.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t0 = time.time()
    first = proc.stdout.readline()
    t.check(first == b"first\n" and time.time() - t0 < 2.5, "output streams live",
            f"{first!r} after {time.time() - t0:.1f}s")
    proc.communicate()

    args = ["a b", "$HOME", "q'q", 'd"q', "", "x=y", "-n", "new\nline"]
    rc, out, err = t.run("run", "-p", p, "printf", "%s|", *args)
    t.eq(out, "|".join(args) + "|", "arguments reach the command unchanged")

    # signals
    # the handler uses os.write/os._exit: print() could be re-entered if the signal comes
    # while 'ready' is still being written
    prog = ("import os, signal, time\n"
            "def h(s, f):\n"
            "    os.write(1, b'got %d\\n' % s); os._exit(42)\n"
            "signal.signal(signal.SIGINT, h)\n"
            "os.write(1, b'ready\\n')\n"
            "time.sleep(30)\n")
    proc = subprocess.Popen([t.menv, "run", "-p", p, sys.executable, "-c", prog], env=t.env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ready = proc.stdout.readline()
    t.eq(ready, b"ready\n", "the command started")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    t.eq((proc.returncode, out.decode().strip()), (42, f"got {int(signal.SIGINT)}"),
         "SIGINT reaches the command; its exit status comes back")
    proc = subprocess.Popen([t.menv, "run", "-p", p, "sh", "-c", "echo ready; exec sleep 30"],
                            env=t.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    t.eq(proc.returncode, -signal.SIGTERM, "SIGTERM reaches the command (killed by it)")

    # options
    d = os.path.join(t.tmp, "work dir")
    os.makedirs(d)
    rc, out, err = t.run("run", "-p", p, "--cwd", d, "pwd")
    t.eq(out.strip(), d, "--cwd")
    rc, out, err = t.run("run", "-p", p, "--env", "EQ=new=val", "--env", "ADDED=1 2",
                         "sh", "-c", 'printf "%s|" "$EQ" "$ADDED"')
    t.eq(out, "new=val|1 2|", "--env VAR=VALUE splits at the first '=' and overrides")
    rc, out, err = t.run("run", "-p", p, "--env", "1BAD=x", "true")
    t.eq(rc, 2, "--env with an invalid name is a usage error")
    rc, out, err = t.run("run", "-p", p, "--clean-env", "sh", "-c",
                         'printf "%s|" "${OUTER-unset}" "$HOME" "$DATA_ROOT" "$SEEN" "$PATH"')
    parts = out.split("|")
    t.eq(parts[:4], ["unset", t.home, "/srv/data dir/cache", "12"],
         "--clean-env: outer variables dropped, HOME and the environment's own kept")
    t.check(parts[4].startswith(p + "/bin:"), "--clean-env: PATH starts with the env's bin",
            parts[4])
    rc, out, err = t.run("run", "-p", p, "--", "sh", "-c", "echo dashdash")
    t.eq(out, "dashdash\n", "'--' ends menv's options")
    rc, out, err = t.run("run", "-p", p, "sh", "-c", "echo $0 $1", "-p", "x")
    t.eq(out, "-p x\n", "options after the command belong to the command")

    env = dict(t.env, CONDA_PREFIX=p, CONDA_SHLVL="1")
    rc, out, err = t.run("run", "printenv", "CONDA_SHLVL", env=env)
    t.eq((rc, out), (0, "2\n"), "without -n/-p the active environment is used, one level up")
    rc, out, err = t.run("run", "true")
    t.eq(rc, 2, "no environment at all is a usage error")
    rc, out, err = t.run("run", "-n", "missing", "true")
    t.eq(rc, 1, "a missing environment fails")
    t.check("missing" in err, "and is named", err)
    rc, out, err = t.run("run", "-p", p)
    t.eq(rc, 2, "no command is a usage error")

    # a real package's activate.sh (the corpus' activate_deactivate_package)
    c = t.corpus_env(os.path.join(t.tmp, "corpus env"))
    rc, out, err = t.run("run", "-p", c, "sh", "-c", 'printf "%s|%s" "$TEST" "$PATH"')
    t.eq(out.split("|")[0], "teststringfromactivate", "a package's activate.sh ran for run")
    t.check(out.split("|")[1].startswith("teststringfromactivate/bin/test:" + c + "/bin:"),
            "its PATH change is seen", out)


acttest.main(body)

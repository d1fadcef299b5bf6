#!/usr/bin/env python3
"""cli.secrets: a canary secret given to EVERY command never comes back out.

The canaries (each holds "Cnry") sit in the places a user puts credentials:
- channel URLs with user:password (the password "%40"-encoded, and a raw several-'@' one),
  and with an anaconda token (/t/tk-Cnry.../), served by a loopback HTTP server;
- a pip index URL with a password (in an environment file and in a lockfile's
  menv.pip_options);
- an oci:// URL with a password (a docker-registry with htpasswd).
Every command of the command table (read from `menv --help`) and every subcommand (read from
the generated completion script) is run at least once; the test fails if one is not covered.
Then: no stdout/stderr line of any run holds a canary, and no byte (or file name) that menv
wrote holds one: the root prefix (environments, package cache, repodata cache), HOME, -p
environments, exported and mirrored files. Left out of the walk: what the user gave menv
(the served channels, the environment and lock files written here, the rc file).
"""
import os
import re
import shutil
import subprocess

import menvtest
from menvtest import Fatal, write_text

CANARY = "Cnry"
PW = "Cnry%40pw-9x"  # decoded: Cnry@pw-9x
TOK = "tk-Cnry7tok"
PIPPW = "PipCnry3"
OCIPW = "OciCnry5"

try:
    import test_oci
except Exception:  # pragma: no cover - the module is beside this one
    test_oci = None


def commands(t):
    """{command: set(subcommands)} from `menv --help` and `menv completion bash`."""
    r = t.menv_ok("--help")
    cmds = {}
    for line in r.out.splitlines():
        m = re.match(r"^  (\S+)\s{2,}", line)
        if m:
            cmds[m.group(1)] = set()
    bash = t.menv_ok("completion", "bash").out
    for name in cmds:
        m = re.search(r"\n        %s\)\n            if \[ \"\$COMP_CWORD\" -eq 2 \]; then "
                      r"words=\"([^\"]*)\"" % re.escape(name), bash)
        if m:
            cmds[name] = set(m.group(1).split())
    return cmds


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    srv = os.path.join(t.tmp, "srv")
    for sub in ("chan", os.path.join("t", TOK, "chan2")):
        d = os.path.join(srv, sub, "noarch")
        os.makedirs(d)
        for fn in ("dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-1.0-0.conda",
                   "dependent-2.0-0.conda"):
            shutil.copyfile(os.path.join(P, fn), os.path.join(d, fn))
        t.index(os.path.join(srv, sub))
    http = t.http_server(srv)
    hostport = http.base[len("http://"):]
    ch_auth = "http://kuser:%s@%s/chan" % (PW, hostport)
    ch_tok = "http://%s/t/%s/chan2" % (hostport, TOK)
    ch_bad = "http://kuser:Cnry@pw@%s/t/%s/nochan" % (hostport, TOK)  # 404, several '@'
    pip_url = "http://bob:%s@127.0.0.1:9/simple" % PIPPW
    C = ["-c", ch_auth, "-c", ch_tok, "--override-channels", "-y"]
    # what the user wrote, and the HTTP server's own log: left out of the walk
    given = {srv, t.rc, os.path.join(t.tmp, "http.log")}
    results = []
    covered = set()

    def run(cmd, *args, rc=None, env=None, timeout=180):
        words = cmd.split()
        covered.add(words[0])
        if len(words) > 1:
            covered.add(tuple(words[:2]))
        r = t.menv_run(*words, *args, env=env, timeout=timeout)
        results.append(r)
        if rc is not None:
            t.check(r.rc == rc, "menv %s: exit %d (got %d)" % (" ".join(r.args), rc, r.rc), r)
        return r

    def user_file(name, text):
        p = os.path.join(t.tmp, name)
        write_text(p, text)
        given.add(p)
        return p

    t.set_rc("channels:\n  - %s\n  - %s\n" % (ch_auth, ch_tok))

    # ---- changing environments
    run("create", "-n", "e1", *C, "dependency=1", rc=0)
    run("create", "-n", "dry", *C, "dependent", "--dry-run", "--json", rc=0)
    run("create", "-n", "bad", "-c", ch_bad, "--override-channels", "-y", "dependency")
    run("install", "-n", "e1", *C, "dependent=1", rc=0)
    run("update", "-n", "e1", *C, "dependency", rc=0)
    run("update", "-n", "e1", *C, "--all", "--json", rc=0)
    run("remove", "-n", "e1", "dependent", "-y", rc=0)
    run("install", "-n", "e1", *C, "dependent", "-v", rc=0)
    run("install", "-n", "e1", "--revision", "1", "-y", rc=0)
    envyml = user_file("environment.yml",
                       "name: fromfile\nchannels:\n  - %s\n  - %s\n  - nodefaults\n"
                       "dependencies:\n  - dependency\n" % (ch_auth, ch_tok))
    pipyml = user_file("pip.yml",
                       "name: withpip\nchannels:\n  - %s\n  - nodefaults\n"
                       "dependencies:\n  - dependency\n  - pip:\n"
                       "    - --index-url %s\n    - --extra-index-url=%s\n    - somepkg\n"
                       % (ch_auth, pip_url, pip_url))
    run("create", "-n", "e2", "-f", envyml, "-y", rc=0)
    run("create", "-n", "e3", "-f", pipyml, "--dry-run")
    run("create", "-n", "e3", "-f", pipyml, "-y")
    run("env create", "-n", "e4", "-f", envyml, "-y", rc=0)
    run("env update", "-n", "e4", "-f", pipyml, "--dry-run")
    run("env update", "-n", "e4", "-f", envyml, "-y", rc=0)
    run("env update", "-n", "e4", "-f", pipyml, "-y")
    run("lock", "-f", envyml, "--lockfile", os.path.join(t.tmp, "locked.yml"), "--platform",
        "linux-64", rc=0)
    run("lock", "-f", pipyml, "--lockfile", "-", "--platform", "linux-64")
    # a lock whose menv.pip_options hold a password (pip has nothing to install)
    lock_text = t.menv_ok("export", "-n", "e2").out
    lock_text = lock_text.replace(
        "metadata:\n", "metadata:\n  pip_options:\n    - --index-url %s\n"
        "  custom_metadata:\n    menv.pip_options: \"--extra-index-url %s\"\n"
        % (pip_url, pip_url), 1)
    userlock = user_file("userlock.yml", lock_text)
    run("create", "-n", "e5", "-f", userlock, "-y", rc=0)
    req = menvtest.read_json(os.path.join(t.envs, "e5", "conda-meta", ".menv-request"))
    t.eq(req.get("pip_options"), ["--index-url http://127.0.0.1:9/simple",
                                  "--extra-index-url http://127.0.0.1:9/simple"],
         "the lock's pip options are kept in .menv-request, without the password")
    run("create", "-p", os.path.join(t.tmp, "byp"), "-f", os.path.join(t.tmp, "locked.yml"),
        "-y", rc=0)

    # ---- reading environments
    run("list", "-n", "e1", rc=0)
    run("list", "-n", "e1", "--json", rc=0)
    run("list", "-n", "e5", "--show-channel-urls")
    for fmt in ("conda-lock", "explicit", "environment"):
        run("export", "-n", "e5", "--format", fmt, rc=0)
        run("export", "-n", "e1", "--format", fmt, "--file",
            os.path.join(t.tmp, "export-%s.out" % fmt), rc=0)
    run("export", "-n", "e1", "--from-history", rc=0)
    run("export", "-n", "e3", "--from-history")
    run("export", "-n", "e4", "--json", rc=0)
    run("env export", "-n", "e1", rc=0)
    run("env export", "-n", "e4", "--from-history", rc=0)
    run("env list", rc=0)
    run("env list", "--json", rc=0)
    run("env config", "vars", "list", "-n", "e1", rc=0)
    run("doctor", "-n", "e1", rc=0)
    run("doctor", "-n", "e1", "--json")
    run("doctor", "-n", "e1", "--fix", "-y")
    run("run", "-n", "e1", "true", rc=0)
    run("smoke", "-n", "e1", timeout=300)

    # ---- channels and settings
    run("search", *C[:4], "dependency", rc=0)
    run("search", "dependency", "--json", rc=0)  # channels from the rc file
    run("search", "-c", ch_bad, "--override-channels", "dependency")
    run("repoquery depends", *C[:4], "dependent", rc=0)
    run("repoquery whoneeds", *C[:4], "dependency", rc=0)
    run("repoquery depends", "-n", "e1", "dependent")
    run("info", rc=0)
    run("info", "--json", rc=0)
    run("config", "--show", rc=0)
    run("config", "--show", "--json", rc=0)
    run("config", "--show-sources", rc=0)
    run("config", "--describe", "channels", rc=0)
    run("config", "--add", "channels", ch_bad, rc=0)
    run("config", "--get", "channels")
    run("mirror", "-c", ch_auth, "--platform", "linux-64", os.path.join(t.tmp, "mirror1"),
        rc=0)
    run("mirror", "-c", ch_tok, "--platform", "linux-64", "file://" +
        os.path.join(t.tmp, "mirror2"), rc=0)
    run("mirror", "-c", ch_tok, "--platform", "linux-64",
        "oci://dave:%s@127.0.0.1:9/team" % OCIPW)
    run("index", os.path.join(t.tmp, "mirror1"), rc=0)

    # ---- OCI with a password (docker-registry + htpasswd)
    servers = []
    if test_oci and test_oci.REGISTRY and test_oci.HTPASSWD:
        hp = os.path.join(t.tmp, "htpasswd")
        out = subprocess.run([test_oci.HTPASSWD, "-Bbn", "dave", OCIPW], capture_output=True,
                             check=True).stdout
        with open(hp, "wb") as f:
            f.write(out)
        given.add(hp)
        reg = test_oci.Registry(os.path.join(t.tmp, "registry"), htpasswd=hp)
        servers.append(reg)
        given.add(os.path.join(t.tmp, "registry", "config.yml"))
        given.add(os.path.join(t.tmp, "registry", "registry.log"))
        oci = "oci://dave:%s@%s/team" % (OCIPW, reg.base)
        run("mirror", "-c", ch_auth, "--platform", "linux-64", oci, rc=0)
        run("create", "-n", "e6", "-c", oci, "--override-channels", "-y", "dependent", rc=0)
        run("export", "-n", "e6", rc=0)
    else:
        t.check(False, "docker-registry and htpasswd are installed (.ci/setup installs them)")

    try:
        # ---- renaming and removing
        run("rename", "-n", "e2", "e2r", rc=0)
        run("rename", "-n", "e5", "e1", "--force", "-y")
        run("env remove", "-n", "e4", "-y", rc=0)

        # ---- shells and activation (the rc files are menv's: HOME is walked)
        run("shell hook", "--shell", "bash", rc=0)
        run("shell init", "--shell", "bash", rc=0)
        run("shell deinit", "--shell", "bash", rc=0)
        run("shell activate", "e1", "--shell", "bash", rc=0)
        run("shell deactivate", "--shell", "bash", rc=0)
        run("shell completion", "bash", rc=0)
        run("activate", "e1")
        run("deactivate")
        for sh in ("bash", "zsh", "fish"):
            run("completion", sh, rc=0)

        # ---- cleaning last (it empties the cache the others read)
        run("clean", "--index-cache", "-y", rc=0)
        run("clean", "--all", "-y", rc=0)
    finally:
        for s in servers:
            s.stop()
        http.stop()

    # ---- every command and subcommand of the table ran
    for name, subs in sorted(commands(t).items()):
        t.check(name in covered, "command '%s' is run with the canary" % name)
        for s in sorted(subs):
            t.check((name, s) in covered, "subcommand '%s %s' is run with the canary"
                    % (name, s))
    t.note("commands run: %s" % ", ".join(sorted(c if isinstance(c, str) else " ".join(c)
                                                    for c in covered)))

    # ---- no output line holds a canary
    for r in results:
        for stream, text in (("stdout", r.out), ("stderr", r.err)):
            bad = [ln for ln in text.splitlines() if CANARY in ln or "pw-9x" in ln]
            t.eq(bad, [], "menv %s: no %s line holds a secret" % (" ".join(r.args), stream))

    # ---- no byte menv wrote holds a canary
    leaks = []
    walked = 0
    needles = (CANARY.encode(), b"pw-9x", CANARY.lower().encode())
    for dirpath, dirnames, filenames in os.walk(t.tmp):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in given]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if p in given:
                continue
            rel = os.path.relpath(p, t.tmp)
            if any(n.decode() in name for n in needles):
                leaks.append("name: " + rel)
            if os.path.isfile(p) and not os.path.islink(p):
                walked += 1
                with open(p, "rb") as f:
                    data = f.read()
                for n in needles:
                    i = data.find(n)
                    if i >= 0:
                        leaks.append("%s: ...%r..." % (rel, data[max(0, i - 60):i + 20]))
                        break
    t.eq(leaks, [], "no file menv wrote holds a secret")
    t.check(walked > 100, "the walk read what menv wrote (%d files)" % walked)


if __name__ == "__main__":
    menvtest.main(body)

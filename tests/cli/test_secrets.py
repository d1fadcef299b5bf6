#!/usr/bin/env python3
"""cli.secrets: a canary secret given to EVERY command never comes back out.

The canaries (each holds "Cnry") sit in the places a user puts credentials:
- channel URLs with user:password (the password "%40"-encoded, and a raw several-'@' one),
  and with an anaconda token (/t/tk-Cnry.../), served by a loopback HTTP server;
- a pip index URL with a password (in an environment file and in a lockfile's
  menv.pip_options);
- an oci:// URL with a password (a docker-registry with htpasswd).
Every command of the command table (read from `menv --help`) and every subcommand (read from
the generated completion script) is run at least once, and every option of `config` (its
verbs) and of `list` (read from their --help); the test fails if one is not covered.
Credentials also come from the settings: `config` edits of channels, channel_alias,
custom_channels, default_channels and proxy_servers (also without a scheme) with secret
values, an environment made through a channel_alias and a custom channel with user:password
and a NETRC file, a proxy with a password that cannot be reached, and `env config vars`
holding URLs (conda-meta/state keeps them for activation until unset; nothing prints them).
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
PROXYPW = "PxCnry6"
NO_RETRY = {"CONDA_REMOTE_MAX_RETRIES": "0"}  # a refused connection fails at once

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


# commands whose every option (read from `menv CMD --help`) is run with a canary
FLAGGED = ("config", "list")


def options(t, cmd):
    """{option: long option} of `menv CMD --help`, short ones mapped to their long name."""
    opts = {}
    for line in t.menv_ok(cmd, "--help").out.splitlines():
        m = re.match(r"^  (?:(-\w), )?\s*(--[\w-]+)", line)
        if m and m.group(2) != "--help":
            opts[m.group(2)] = m.group(2)
            if m.group(1):
                opts[m.group(1)] = m.group(2)
    return opts


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
        if words[0] in FLAGGED:  # the options of config and list, each to be run
            covered.update((words[0], a) for a in args if str(a).startswith("-"))
        if words == ["env", "config"] and len(args) > 1:  # env config vars list|set|unset
            covered.add(("env config vars", args[1]))
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
        "oci://dave:%s@127.0.0.1:9/team" % OCIPW, env=NO_RETRY)
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
        settings(t, run, user_file, given, hostport, srv)
        secret_settings(t, run, user_file, given, hostport, srv)

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
    for cmd in FLAGGED:
        opts = options(t, cmd)
        t.check(len(set(opts.values())) >= {"config": 14, "list": 9}[cmd],
                "'menv %s --help' lists its options (%s)" % (cmd, sorted(opts)))
        ran = {opts.get(a) for c, a in (x for x in covered if isinstance(x, tuple))
               if c == cmd}
        for o in sorted(set(opts.values())):
            t.check(o in ran, "option '%s %s' is run with the canary" % (cmd, o))
    use = t.menv_ok("env", "config", "vars", "--help").out
    for verb in sorted(set(re.findall(r"menv env config vars (\w+)", use))):
        t.check(("env config vars", verb) in covered,
                "'env config vars %s' is run with the canary" % verb)
    t.check(len(set(re.findall(r"menv env config vars (\w+)", use))) == 3,
            "env config vars --help names list, set and unset", use)
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


def settings(t, run, user_file, given, hostport, srv):
    """Every verb of `menv config` with a secret-bearing value, on the user's rc file (which
    may keep it: the user put it there), on --file, --system and --env files, and the errors
    that quote a value; then what menv prints of a proxy with a password."""
    ch = "http://kuser:%s@%s/chan" % (PW, hostport)
    tok = "http://%s/t/%s/chan2" % (hostport, TOK)
    keep = open(t.rc).read()
    cfg = user_file("cfg.condarc", "")
    given.update({os.path.join(t.root, ".condarc"), os.path.join(t.envs, "e1", ".condarc")})
    edits = [("--set", "channel_alias", "http://kuser:%s@%s/" % (PW, hostport)),
             ("--append", "channels", ch), ("--prepend", "channels", tok),
             ("--add", "channels", ch),  # already there: a warning quoting it
             ("--append", "default_channels", tok), ("--prepend", "default_channels", ch),
             ("--set", "custom_channels.cust", "http://kuser:%s@%s/cust" % (PW, hostport)),
             ("--set", "proxy_servers.http", "http://puser:%s@127.0.0.1:9" % PROXYPW),
             # curl and requests take a proxy without a scheme as http://
             ("--set", "proxy_servers.https", "puser:%s@127.0.0.1:9" % PROXYPW),
             ("--set", "pip_index_url", "http://bob:%s@127.0.0.1:9/simple" % PIPPW)]
    for flag, key, val in edits:
        run("config", flag, key, val)
        run("config", "--file", cfg, flag, key, val, "--json")
    run("config", "--system", "--append", "channels", ch, rc=0)
    active = {"CONDA_PREFIX": os.path.join(t.envs, "e1")}
    run("config", "--env", "--append", "channels", tok, rc=0, env=active)
    run("config", "--show-sources", "--json", rc=0, env=active)
    run("info", "--json", rc=0, env=active)
    run("env export", "-n", "e1", rc=0, env=active)
    run("doctor", "-n", "e1", rc=0, env=active)
    for args in (("--show",), ("--show", "channels", "custom_channels", "proxy_servers",
                                "channel_alias", "default_channels", "--json"),
                 ("--show-sources",), ("--show-sources", "--json"),
                 ("--describe", "channels", "proxy_servers"),
                 ("--describe", "custom_channels", "--json"),
                 ("--get",), ("--get", "--json"), ("--get", "proxy_servers", "channels"),
                 ("--file", cfg, "--get", "--json")):
        run("config", *args, rc=0)
    shown = run("config", "--show", "proxy_servers", "--json", rc=0).try_json()
    t.eq(shown, {"proxy_servers": {"http": "http://127.0.0.1:9", "https": "127.0.0.1:9"}},
         "config --show: the proxies without their user:password")
    got = run("config", "--get", "proxy_servers.https", "--json", rc=0).try_json() or {}
    t.eq(got.get("get"), {"proxy_servers.https": "127.0.0.1:9"},
         "config --get proxy_servers.https: without its user:password")
    run("info", rc=0)
    run("info", "--json", rc=0)
    # errors quoting a value: not in the list, a list key set, a map key appended to, a
    # value that is no URL, a file that is not YAML
    run("config", "--remove", "channels", "http://kuser:%s@%s/nochan" % (PW, hostport))
    run("config", "--remove", "channels", "http://kuser:%s@%s/nochan" % (PW, hostport),
        "--json")
    run("config", "--set", "channels", ch)
    run("config", "--append", "custom_channels", ch)
    run("config", "--set", "channel_alias", "http://kuser:Cnry pw@%s x" % hostport)
    run("config", "--append", "channels", "http://kuser:Cnry pw@%s/x y" % hostport)
    bad = user_file("bad.condarc", "channels: [%s\n" % ch)
    run("config", "--file", bad, "--get", "channels")
    run("config", "--file", bad, "--append", "channels", tok)
    # the proxy is unreachable: the error (and -v's lines) name no password
    r = run("search", "-c", "http://%s/chan" % hostport, "--override-channels", "dependency",
            env=NO_RETRY)
    t.check(r.rc != 0 and "127.0.0.1 port 9" in r.err, "the search went to the proxy", r)
    run("create", "-n", "viaproxy", "-c", "http://%s/chan" % hostport, "--override-channels",
        "-y", "dependency", "-v", env=NO_RETRY)
    run("create", "-n", "viaproxy", "-c", "http://%s/chan" % hostport, "--override-channels",
        "-y", "dependency", "--json", env=NO_RETRY)
    for flag, key, val in edits:
        if flag in ("--append", "--prepend", "--add"):
            run("config", "--remove", key, val)
    run("config", "--remove-key", "proxy_servers", rc=0)
    run("config", "--file", cfg, "--remove-key", "custom_channels", "--json", rc=0)
    run("config", "--remove-key", "no_such_key")
    write_text(t.rc, keep)


def secret_settings(t, run, user_file, given, hostport, srv):
    """Credentials that come from the settings and not the command line: a channel_alias and
    a custom channel with user:password, and a NETRC file. An environment made through them,
    its lock, plans, history, list --explicit/--md5/--revisions, exports, env config vars."""
    shutil.copytree(os.path.join(srv, "chan"), os.path.join(srv, "cust", "chanc"))
    netrc = user_file("netrc", "machine 127.0.0.1 login nuser password NetrcCnry8\n")
    env = {"NETRC": netrc}
    rc_text = ("channel_alias: http://kuser:%s@%s/\ncustom_channels:\n"
               "  chanc: http://kuser:%s@%s/cust\nchannels:\n  - chan\n  - chanc\n"
               % (PW, hostport, PW, hostport))
    keep = open(t.rc).read()
    write_text(t.rc, rc_text)
    run("create", "-n", "ea", "dependency=1", "-y", "-v", env=env, rc=0)
    run("create", "-n", "eb", "-c", "chanc", "dependent", "--dry-run", "--json", env=env,
        rc=0)
    run("install", "-n", "ea", "dependent=1", "-y", env=env, rc=0)
    run("update", "-n", "ea", "--all", "-y", "--json", env=env, rc=0)
    run("create", "-n", "ec", "-c", "nochan", "--override-channels", "dependency", "-y",
        env=env)
    run("create", "-n", "ed", "-c", "http://%s/chan" % hostport, "--override-channels",
        "dependency", "-y", env=env, rc=0)  # the password from NETRC
    yml = user_file("alias.yml", "name: x\nchannels:\n  - chan\n  - chanc\n"
                    "dependencies:\n  - dependent\n")
    run("lock", "-f", yml, "--lockfile", "-", "--platform", "linux-64", env=env, rc=0)
    run("create", "-n", "ee", "-f", yml, "-y", env=env, rc=0)
    run("search", "dependency", "-c", "chanc", env=env, rc=0)
    run("repoquery depends", "-c", "chanc", "dependent", env=env, rc=0)
    run("install", "-n", "ed", "http://kuser:%s@%s/chan::dependent" % (PW, hostport), "-y",
        env=env, rc=0)
    run("export", "-n", "ed", "--from-history", rc=0)
    r = run("list", "-n", "ed", "--revisions", "--json", rc=0)
    t.eq([x.get("cmd") for x in r.try_json() or []],
         ["menv create -n ed -c http://%s/chan --override-channels -y dependency" % hostport,
          "menv install -n ed -y http://%s/chan::dependent" % hostport],
         "list --revisions --json: the commands, the URL of a spec without its password")
    run("list", "-n", "ed", "--revisions", rc=0)
    run("mirror", "-c", "chanc", "--platform", "linux-64", os.path.join(t.tmp, "mirror3"),
        env=env, rc=0)
    run("doctor", "-n", "ea", rc=0)
    run("config", "--show-sources", rc=0,
        env={"CONDA_CHANNEL_ALIAS": "http://kuser:%s@%s/" % (PW, hostport)})
    run("info", "--json", rc=0,
        env={"CONDA_CHANNEL_ALIAS": "http://kuser:%s@%s/" % (PW, hostport)})
    varyml = user_file("vars.yml", "name: x\nchannels:\n  - chan\ndependencies:\n"
                       "  - dependency\nvariables:\n  PIP_INDEX_URL: http://bob:%s@h/simple\n"
                       % PIPPW)
    run("create", "-n", "ef", "-f", varyml, "-y", env=env, rc=0)
    run("env update", "-n", "ef", "-f", varyml, "-y", env=env, rc=0)
    run("env export", "-n", "ef", "--from-history", rc=0)
    run("export", "-n", "ef", rc=0)
    run("list", "-n", "ef", "--revisions", "--json", rc=0)
    state = menvtest.read_json(os.path.join(t.envs, "ef", "conda-meta", "state"))
    t.eq(state.get("env_vars"), {"PIP_INDEX_URL": "http://bob:%s@h/simple" % PIPPW},
         "the environment file's variables are in conda-meta/state as written")
    run("env config", "vars", "unset", "-n", "ef", "PIP_INDEX_URL", rc=0)  # (for the walk)
    for args in (("--explicit",), ("--explicit", "--md5"), ("--revisions",),
                 ("--revisions", "--json"), ("--show-channel-urls", "--json"),
                 ("--full-name", "dependency", "--show-channel-urls"), ("--no-builds",)):
        run("list", "-n", "ea", *args, rc=0)
    run("list", "--prefix", os.path.join(t.envs, "ee"), "--explicit", "--md5", rc=0)
    for fmt in ("conda-lock", "explicit", "environment"):
        run("export", "-n", "ea", "--format", fmt, rc=0)
    run("export", "-n", "ea", "--from-history", rc=0)
    # an explicit lockfile whose URLs hold the password and the token (the user's file)
    expl = user_file("explicit.txt", "@EXPLICIT\nhttp://kuser:%s@%s/chan/noarch/"
                     "dependency-1.0-0.conda\nhttp://%s/t/%s/chan2/noarch/dependent-1.0-0.conda\n"
                     % (PW, hostport, hostport, TOK))
    run("create", "-n", "eg", "-f", expl, "-y", "--json", env=env, rc=0)
    r = run("list", "-n", "eg", "--explicit", rc=0)
    t.eq(r.out.splitlines()[-2:], ["http://%s/chan/noarch/dependency-1.0-0.conda" % hostport,
                                   "http://%s/t/<TOKEN>/chan2/noarch/dependent-1.0-0.conda"
                                   % hostport],
         "list --explicit: the explicit file's URLs without password or token")
    run("list", "-n", "eg", "--revisions", rc=0)
    run("export", "-n", "eg", "--from-history", rc=0)
    run("env update", "-n", "eg", "-f", expl, "-y", env=env)
    # env config vars holding URLs with a password and a token: conda-meta/state keeps them
    # (the user's data, what activation exports) until unset; nothing prints them
    vset = ("PIP_INDEX_URL=http://bob:%s@127.0.0.1:9/simple" % PIPPW,
            "TOKURL=http://%s/t/%s/x" % (hostport, TOK))
    run("env config", "vars", "set", "-n", "ea", *vset, rc=0)
    r = run("env config", "vars", "list", "-n", "ea", rc=0)
    t.eq(r.out, "PIP_INDEX_URL = http://127.0.0.1:9/simple\nTOKURL = http://%s/t/<TOKEN>/x\n"
         % hostport, "env config vars list: the values, URLs as menv shows them everywhere")
    r = run("env config", "vars", "list", "-n", "ea", "--json", rc=0)
    t.eq(r.try_json(), {"PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                        "TOKURL": "http://%s/t/<TOKEN>/x" % hostport},
         "env config vars list --json: the same")
    state = menvtest.read_json(os.path.join(t.envs, "ea", "conda-meta", "state"))
    t.eq(state.get("env_vars", {}).get("PIP_INDEX_URL"), vset[0].split("=", 1)[1],
         "conda-meta/state keeps the value (activation exports it)")
    run("env config", "vars", "set", "-n", "ea", "1BAD=http://bob:%s@h/x" % PIPPW, rc=2)
    run("env export", "-n", "ea", rc=0)
    run("env export", "-n", "ea", "--json", rc=0)
    run("env config", "vars", "unset", "-n", "ea", "PIP_INDEX_URL", "TOKURL", rc=0)
    run("env config", "vars", "list", "-n", "ea", "--json", rc=0)
    write_text(t.rc, keep)


if __name__ == "__main__":
    menvtest.main(body)

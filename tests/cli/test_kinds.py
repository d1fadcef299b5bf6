#!/usr/bin/env python3
"""cli.kinds_<case>: kinds of bad or unusual input found by issue 22's last tryout, one case
each (python3 test_kinds.py MENV SHARED CASE):

- envs_dirs: every entry of envs_dirs is used, as conda's context.envs_dirs: a name is looked
  up in each in order (locate_prefix_by_name), a create goes to the first writable one
  (first_writable_envs_dir), env list names the environments of each; config --show and
  info print the whole pkgs_dirs and envs_dirs lists.
- config_add: `config --add/--append/--set/--remove` on a .condarc that menv refuses to read
  (a mapping, a number or a null in `channels`, a number in proxy_servers) fails with its
  FILE:LINE:COL and leaves the file byte for byte as it was (it exited 0 and rewrote it);
  --remove-key, which can take the bad value out, still works.
- fifo_rc: a FIFO at ~/.condarc (or ~/.config/conda/.condarc, or a link to one, mode 000
  too) is one line naming it, exit 1, never a wait, for config --show (text and --json),
  --get and info. (Fixed with cli.fifo_files, which tried --show-sources only.)
- map_values: a value of proxy_servers, custom_channels or migrated_custom_channels that is
  a number, a bool, a list or a mapping is refused with FILE:LINE:COL and KEY.SUB (conda's
  MapParameter(str)); quoted, the same text is taken.
- envfile_nul: a NUL byte in an environment file's text ("A\\0B" as a variables: name, a
  value, a dependency) is refused with FILE:LINE:COL (the name was cut to "A" and stored).
- tilde_user: "~nouser/x" (no such user) in pkgs_dirs, envs_dirs or root_prefix is refused
  with one line naming the key and the entry, and nothing is made in the current directory
  (conda's expanduser leaves it and abspath makes it <cwd>/~nouser/x; menv took it as a
  relative path too); "~root/x" is root's home as expanduser makes it.
- lock_platforms: a conda-lock file of 50,000 platforms, none the current one: the error
  names the first five and "and 49995 more" (it listed all 50,000 on one line).
- stdin_file: errors and warnings of `-f /dev/stdin` (an environment file or a lock piped
  in) name /dev/stdin, never the temporary copy menv reads it from (they named
  $TMPDIR/menv-file-...), in text and --json.
- doctor_pyc: a package's .pyc (and .pyo) rewritten in place, as python rewrites a stale
  one, is not a changed file for `menv doctor` (conda 26's doctor skips .pyc/.pyo in its
  altered-files check); a changed .py beside it still is.
- userinfo_slash: "http://Tq4z/Wm8y@127.0.0.1:1/chan" (a token or user name holding a raw
  '/') is refused as an ambiguous channel, one line quoting it from after the '@', on the
  command line, in an environment file and in --json; neither half appears (it was kept
  whole as the host "Tq4z" and a path).
- removal_json: `remove --all --json` killed at each step (MENV_TEST_CRASH_AFTER=N) and run
  again: a run that finishes the interrupted removal says so in --json
  (finished_interrupted_removal, a message naming the prefix) instead of a bare success with
  an empty UNLINK list; a run that removes the packages itself lists them.
- remove_config_dirs: `remove --all -p P` and `env remove -p P` refuse a P that is, or holds,
  any entry of envs_dirs or pkgs_dirs (only the root prefix, the first writable envs dir and
  the package cache written were guarded), also through a link or "..", with one line
  naming the entry and its key; an environment holding none of them is still removed.
- removal_sigint: `remove --all --json` with Ctrl-C at each step (MENV_TEST_CRASH_SIGNAL=INT)
  exits 130 saying it was interrupted and whether the environment was left as it was or its
  removal finished (at the first two steps it exited 1 with "'dependency-1.0-0' is no longer
  installed": the interrupted parse of the records read as unreadable records), and the next
  command finds it whole or gone.
- create_later_dir: `create -n NAME` (and env create) when NAME is an environment of a later
  envs_dirs entry is refused as existing, naming that prefix, as conda's target_prefix finds
  it there (locate_prefix_by_name); it made a second NAME in the first writable envs dir,
  after which -n NAME still named the other. A new name still goes to the first writable dir.
- ipv6_channel: "http://[::1]:PORT/chan" (an IPv6 host, as urlparse reads it) is a channel:
  it was refused as "invalid channel" with no reason (its "::" taken for a channel::package
  spec); a create through it records the package's URL under that host. "::" outside the
  brackets ("http://[::1]:1/a::b", "chan::x") is still refused.
- registry_sigint: a Ctrl-C while create or env remove updates ~/.conda/environments.txt
  (the prefix made or removed already; MENV_TEST_PAUSE_REGISTRY holds the update): the
  update is finished. It stopped there: create exited 0 with a warning and the new
  environment missing from `env list`; env remove left the removed one listed.
- spec_lines: a bad value in an environment file (a MatchSpec "numpy>>1", block or flow
  style, a channel) is refused with FILE:LINE:COL (the MatchSpec error named no line); a
  conda-lock entry with FILE:LINE where the entry starts; an explicit file with FILE:LINE.
- path_keys: a path-typed setting (pkgs_dirs and envs_dirs entries, root_prefix, ssl_verify's
  CA bundle, client_ssl_cert, client_ssl_cert_key) that is "~nouser/x", relative or (an
  entry) empty is refused with FILE:LINE:COL from .condarc, $VAR from the environment, and
  one line from config --add/--append/--prepend/--set, the file left as it was (`config
  --add envs_dirs '~nouser/x'` was written and took effect as <cwd>/~nouser/x).
- ssl_verify: a number, quoted or not (`ssl_verify: 5`, `"1.0"`, `'0'`), is a bool as conda
  26.7.1's typify makes it (zero false, any other true), from .condarc, CONDA_SSL_VERIFY and
  `--set`; it was read as the CA bundle file "5", then refused as "not a number" (quoted
  too); other text is a path, refused with FILE:LINE:COL when relative.
- late_sigint: Ctrl-C (MENV_TEST_CRASH_SIGNAL=INT) at each crash point of create, install,
  remove, remove --all, env remove, rename and doctor --fix: before the commit point the
  command exits 130 with the environment as it was; after it the change runs to its end and
  the command exits 130 saying "interrupted after ...; the ACTION of 'PREFIX' was finished"
  in one line (create, install and remove exited 0, env remove 130: every command agrees).
- late_sigint_more: the same for update, env create -f, env update -f, install --revision N
  and create -f LOCK (a conda-lock that export wrote): Ctrl-C at each crash point exits 130,
  the environment as it was before the commit point, the change whole after it with one
  line saying so. Each run starts from a copy of a prepared prefix (no create per point).
- env_list_width: `env list` pads names by terminal columns, not bytes: the prefixes of
  "ümlaut", "環境" (two wide characters) and an ASCII name start in one column.
"""
import os
import pwd
import sys

import menvtest
from menvtest import tree_snapshot, write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")


def channel(t):
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    return ["-c", t.url(chan), "--override-channels", "-q", "-y"]


def case_envs_dirs(t):
    C = channel(t)
    afile = os.path.join(t.tmp, "afile")
    write_text(afile, "not a folder\n")
    e1 = os.path.join(afile, "envs")  # cannot be made: a file is in the way
    e2 = os.path.join(t.tmp, "e2")
    e3 = os.path.join(t.tmp, "e3")
    p1, p2 = os.path.join(t.tmp, "pk1"), os.path.join(t.tmp, "pk2")
    t.set_rc("envs_dirs: [%s, %s, %s]\npkgs_dirs: [%s, %s]\n" % (e1, e2, e3, p1, p2))
    j = t.menv_ok("config", "--show", "--json").json()
    t.eq((j.get("envs_dirs"), j.get("pkgs_dirs")), ([e1, e2, e3], [p1, p2]),
         "config --show --json: the whole lists")
    out = t.menv_ok("config", "--show", "envs_dirs", "pkgs_dirs").out
    t.eq(out, "envs_dirs:\n  - %s\n  - %s\n  - %s\npkgs_dirs:\n  - %s\n  - %s\n"
         % (e1, e2, e3, p1, p2), "config --show envs_dirs pkgs_dirs (conda's text)")
    j = t.menv_ok("info", "--json").json()
    t.eq((j.get("envs_dirs"), j.get("pkgs_dirs")), ([e1, e2, e3], [p1, p2]),
         "info --json: the whole lists")
    # a create goes to the first writable entry (e1 cannot be made)
    t.menv_ok("create", "-n", "made", *C, "dependency")
    t.check(os.path.isdir(os.path.join(e2, "made", "conda-meta")),
            "create -n: in the first writable envs dir", sorted(os.listdir(t.tmp)))
    # an environment of the third entry is found by name
    t.menv_ok("create", "-p", os.path.join(e3, "third"), *C, "dependency")
    r = t.menv_ok("list", "-n", "third", "--json")
    t.eq([p.get("name") for p in r.json()], ["dependency"], "list -n NAME of the third envs dir")
    r = t.menv_ok("run", "-n", "third", "sh", "-c", "printf %s \"$CONDA_PREFIX\"")
    t.eq(r.out, os.path.join(e3, "third"), "run -n NAME of the third envs dir")
    # the first entry that holds the name wins
    t.menv_ok("create", "-p", os.path.join(e3, "made"), *C, "dependency")
    r = t.menv_ok("run", "-n", "made", "sh", "-c", "printf %s \"$CONDA_PREFIX\"")
    t.eq(r.out, os.path.join(e2, "made"), "a name in two envs dirs: the first one's")
    r = t.menv_ok("env", "list", "--json")
    t.eq(r.json().get("envs"), [t.root, os.path.join(e2, "made"), os.path.join(e3, "made"),
                                os.path.join(e3, "third")], "env list --json: every envs dir")
    rows = [l.split()[0] for l in t.menv_ok("env", "list").out.splitlines()
            if l and not l.startswith("#")]
    t.eq(rows, ["base", "made", "made", "third"], "env list: names of every envs dir")
    r = t.menv_run("list", "-n", "nosuch")
    t.one_line_error(r, "list -n nosuch", ["'nosuch' not found", e1])


def case_config_add(t):
    bad = [("channels:\n  - a\n  - {x: y}\n", 3, 5,
            "channels must be a list of strings, not a mapping"),
           ("channels:\n  - a\n  - 42\n", 3, 5, "not an int '42'"),
           ("channels: [a, ~]\n", 1, 15, "not a null '~'"),
           ("offline: false\nproxy_servers:\n  http: 8080\n", 3, 9,
            "proxy_servers.http must be a str, not an int '8080'")]
    edits = [("--add", "channels", "x"), ("--append", "channels", "x"),
             ("--prepend", "pkgs_dirs", "/p"), ("--set", "offline", "true"),
             ("--remove", "channels", "a"), ("--set", "proxy_servers.https", "http://p")]
    for text, line, col, needle in bad:
        for e in edits:
            t.set_rc(text)
            r = t.menv_run("config", *e)
            t.one_line_error(r, "%r: config %s" % (text, " ".join(e)),
                             ["%s:%d:%d:" % (t.rc, line, col), needle])
            t.eq(open(t.rc).read(), text, "%r: config %s leaves the file as it was"
                 % (text, " ".join(e)))
    # --remove-key takes the bad value out
    t.set_rc("offline: false\nchannels:\n  - a\n  - {x: y}\n")
    t.menv_ok("config", "--remove-key", "channels")
    t.eq(open(t.rc).read(), "offline: false\n", "--remove-key channels fixes the file")
    t.menv_ok("config", "--add", "channels", "x")
    t.eq(open(t.rc).read(), "offline: false\nchannels:\n  - x\n  - defaults\n",
         "then --add works")


def case_fifo_rc(t):
    home_rc = os.path.join(t.home, ".condarc")
    xdg_rc = os.path.join(t.home, ".config", "conda", ".condarc")
    os.makedirs(os.path.dirname(xdg_rc))
    fifo = os.path.join(t.tmp, "fifo")
    os.mkfifo(fifo)
    setups = [("~/.condarc a FIFO", home_rc, lambda: os.mkfifo(home_rc), home_rc),
              ("~/.condarc a FIFO of mode 000", home_rc, lambda: os.mkfifo(home_rc, 0), home_rc),
              ("~/.config/conda/.condarc a FIFO", xdg_rc, lambda: os.mkfifo(xdg_rc), xdg_rc),
              ("~/.condarc a link to a FIFO", home_rc, lambda: os.symlink(fifo, home_rc),
               home_rc)]
    for what, path, make, named in setups:
        make()
        for cmd in (("config", "--show"), ("config", "--show", "--json"),
                    ("config", "--show", "channels"), ("config", "--get"), ("info",)):
            if cmd[-1] == "--get" and path == xdg_rc:
                continue  # --get reads ~/.condarc alone, as conda's
            r = t.menv_run(*cmd, env={"MENVRC": ""}, timeout=30)
            t.one_line_error(r, "%s: menv %s" % (what, " ".join(cmd)),
                             ["'%s'" % named, "not a regular file (a FIFO)"])
        os.unlink(path)


def case_map_values(t):
    for key in ("proxy_servers", "custom_channels", "migrated_custom_channels"):
        for val, what in (("42", "an int '42'"), ("true", "a bool 'true'"),
                          ("4.5", "a float '4.5'"), ("[a, b]", "a list"),
                          ("{a: b}", "a mapping")):
            text = "offline: false\n%s:\n  http: 'http://ok'\n  https: %s\n" % (key, val)
            t.set_rc(text)
            for cmd in (("info",), ("config", "--show"), ("config", "--show", key)):
                r = t.menv_run(*cmd)
                t.one_line_error(r, "%s.https: %s: menv %s" % (key, val, " ".join(cmd)),
                                 ["%s:4:10:" % t.rc, "%s.https must be a str, not %s"
                                  % (key, what)])
        t.set_rc("%s:\n  https: '42'\n" % key)
        r = t.menv_run("config", "--show", key, "--json")
        t.eq((r.rc, (r.try_json() or {}).get(key, {}).get("https")), (0, "42"),
             "%s.https: '42' quoted is the text" % key)


def case_envfile_nul(t):
    C = channel(t)
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(cwd)
    for what, text, line, col in (
            ("a variable name", 'variables:\n  "A\\0B": x\n', 3, 3),
            ("a variable name (\\x00)", 'variables:\n  "PATHX\\x00": x\n', 3, 3),
            ("a variable value", 'variables:\n  A: "x\\0y"\n', 3, 6),
            ("a dependency", 'dependencies:\n  - "dependency\\0 >=9"\n', 3, 5)):
        yml = os.path.join(t.tmp, "env.yml")
        write_text(yml, "name: nul\n" + text)
        prefix = os.path.join(t.tmp, "p")
        for dry in (["--dry-run"], []):
            r = t.menv_run("create", "-p", prefix, "-f", yml, *dry, *C, cwd=cwd)
            t.one_line_error(r, "%s with a NUL: create %s" % (what, " ".join(dry)),
                             ["%s:%d:%d:" % (yml, line, col), "NUL"])
        t.check(not os.path.exists(prefix), "%s with a NUL: no environment made" % what)
        t.eq(os.listdir(cwd), [], "%s with a NUL: nothing made in the cwd" % what)


NOUSER = "nouser-kinds-22"


def no_such_user(t):
    """True when NOUSER names no account here (else the case's part is skipped, saying so)."""
    try:
        pwd.getpwnam(NOUSER)
    except KeyError:
        return True
    t.skip_part("a user %s exists here" % NOUSER)
    return False


def case_tilde_user(t):
    C = channel(t)
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(cwd)
    nouser = NOUSER
    if not no_such_user(t):
        return
    for key, rc, env in (("pkgs_dirs", "pkgs_dirs: ['~%s/p']\n" % nouser, None),
                         ("envs_dirs", "envs_dirs: ['~%s/e']\n" % nouser, None),
                         ("pkgs_dirs", "", {"CONDA_PKGS_DIRS": "~%s/p" % nouser}),
                         ("root_prefix", "", {"MENV_ROOT_PREFIX": "~%s/r" % nouser})):
        t.set_rc(rc)
        for cmd in (("info",), ("config", "--show"),
                    ("create", "-n", "e", *C, "dependency"),
                    ("create", "-p", os.path.join(t.tmp, "pe"), *C, "dependency"),
                    ("clean", "--all", "-y")):
            r = t.menv_run(*cmd, cwd=cwd, env=env)
            t.one_line_error(r, "%s ~%s: menv %s" % (key, nouser, cmd[0]),
                             [key, "'~%s/" % nouser, "no user '%s'" % nouser])
        t.eq(os.listdir(cwd), [], "%s ~%s: nothing made in the cwd" % (key, nouser))
        t.check(not os.path.exists(os.path.join(t.tmp, "pe")), "%s: no environment" % key)
    home = pwd.getpwnam("root").pw_dir
    t.set_rc("pkgs_dirs: ['~root/p']\nenvs_dirs: ['~root/e/']\n")
    j = t.menv_ok("info", "--json", cwd=cwd).json()
    t.eq((j.get("pkgs_dirs"), j.get("envs_dirs")),
         ([os.path.join(home, "p")], [os.path.join(home, "e")]),
         "~root/x is root's home (os.path.expanduser)")


def case_lock_platforms(t):
    plats = ["osx-%05d" % i for i in range(50000)]
    lock = os.path.join(t.tmp, "big.conda-lock.yml")
    write_text(lock, "version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
               "  platforms:\n" + "".join("  - %s\n" % p for p in plats) +
               "  sources: [environment.yml]\npackage: []\n")
    prefix = os.path.join(t.tmp, "p")
    for dry in (["--dry-run"], []):
        r = t.menv_run("create", "-p", prefix, "-f", lock, *dry,
                       env={"CONDA_SUBDIR": "linux-64"})
        t.one_line_error(r, "50,000 platforms: create %s" % " ".join(dry),
                         ["has no packages for platform 'linux-64' (it locks osx-00000, "
                          "osx-00001, osx-00002, osx-00003, osx-00004 and 49995 more)"])
        t.check(len(r.err) < 400, "50,000 platforms: a short line (%d bytes)" % len(r.err))
    t.check(not os.path.exists(prefix), "50,000 platforms: no environment")


def case_stdin_file(t):
    import subprocess
    tmpdir = os.path.join(t.tmp, "tmpdir")
    os.makedirs(tmpdir)
    lock = ("version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
            "  platforms: [osx-arm64]\n  sources: [environment.yml]\npackage: []\n")
    for what, text, extra, needle, rc in (
            ("a bad environment file", "name: x\ndependencies:\n  - [a]\n", [],
             "/dev/stdin:3:5: a dependency must be a string", 1),
            ("a bad environment file, --json", "name: x\ndependencies:\n  - [a]\n",
             ["--json"], "/dev/stdin:3:5: a dependency must be a string", 1),
            ("a lock of another platform", lock, [],
             "/dev/stdin has no packages for platform 'linux-64'", 1),
            ("an unknown key (a warning)", "name: x\nfoo: 1\ndependencies: []\n", [],
             "/dev/stdin:2: unknown key 'foo'", 0)):
        p = subprocess.run([t.menv, "create", "-p", os.path.join(t.tmp, "p"), "-f",
                            "/dev/stdin", "--dry-run"] + extra, input=text.encode(),
                           capture_output=True,
                           env=t.environ({"TMPDIR": tmpdir, "CONDA_SUBDIR": "linux-64"}),
                           timeout=60)
        out = (p.stdout + p.stderr).decode()
        t.check(p.returncode == rc and needle in out,
                "-f /dev/stdin, %s: names /dev/stdin" % what, out)
        t.check("menv-file" not in out and tmpdir not in out,
                "-f /dev/stdin, %s: no temporary file named" % what, out)
        t.eq(os.listdir(tmpdir), [], "-f /dev/stdin, %s: the copy is removed" % what)


def case_doctor_pyc(t):
    chan = os.path.join(t.tmp, "pycchan")
    sp = "lib/python3.9/site-packages/m/"
    files = {sp + "__init__.py": b"X = 1\n",
             sp + "__pycache__/__init__.cpython-39.pyc": b"\x61\x0d\x0d\x0a" + b"\0" * 12,
             sp + "old.pyo": b"\x03\xf3\x0d\x0a" + b"\0" * 4}
    import hashlib
    import json
    files["info/paths.json"] = json.dumps({"paths_version": 1, "paths": [
        {"_path": k, "path_type": "hardlink", "sha256": hashlib.sha256(v).hexdigest(),
         "size_in_bytes": len(v)} for k, v in files.items()]}).encode()
    menvtest.build_tar_bz2(os.path.join(chan, "noarch", "pyc-1.0-0.tar.bz2"),
                           {"name": "pyc", "version": "1.0", "build": "0", "build_number": 0,
                            "depends": [], "subdir": "noarch"}, files)
    t.index(chan)
    p = os.path.join(t.tmp, "env")
    t.menv_ok("create", "-p", p, "-c", t.url(chan), "--override-channels", "-q", "-y", "pyc")
    r = t.menv_run("doctor", "-p", p, "--json")
    t.eq((r.rc, (r.try_json() or {}).get("findings")), (0, []), "a healthy environment")
    # what python does to a stale .pyc: writes a new one (another mtime, other bytes)
    for rel in (sp + "__pycache__/__init__.cpython-39.pyc", sp + "old.pyo"):
        with open(os.path.join(p, rel), "wb") as f:
            f.write(b"\x61\x0d\x0d\x0a" + b"\1" * 40)
    r = t.menv_run("doctor", "-p", p, "--json")
    t.eq((r.rc, (r.try_json() or {}).get("findings")), (0, []),
         "rewritten .pyc and .pyo: no changed file")
    write_text(os.path.join(p, sp + "__init__.py"), "X = 2\n")
    r = t.menv_run("doctor", "-p", p, "--json")
    kinds = sorted((f.get("kind"), os.path.basename(f.get("path", "")))
                   for f in (r.try_json() or {}).get("findings", []))
    t.eq((r.rc != 0, kinds), (True, [("changed-file", "__init__.py")]),
         "a changed .py is still named")


def case_userinfo_slash(t):
    import json
    for url in ("http://Tq4z/Wm8y@127.0.0.1:1/chan", "https://u:Tq4z/a/Wm8y@h.example/c/x"):
        host_on = url.split("@", 1)[1]
        envfile = os.path.join(t.tmp, "env.yml")
        write_text(envfile, "name: x\nchannels: ['%s']\ndependencies: [dependency]\n" % url)
        runs = [t.menv_run("create", "--dry-run", "-n", "x", "-c", url, "--override-channels",
                           "dependency"),
                t.menv_run("search", "-c", url, "--override-channels", "dependency"),
                t.menv_run("create", "-y", "-p", os.path.join(t.tmp, "p"), "-f", envfile)]
        for r in runs:
            t.one_line_error(r, "%s: menv %s" % (host_on, " ".join(r.args[:2])),
                             ["invalid channel '%s://%s'" % (url.split(":")[0], host_on),
                              ("ambiguous", "malformed")])
        r = t.menv_run("create", "--dry-run", "--json", "-n", "x", "-c", url,
                       "--override-channels", "dependency")
        runs.append(r)
        msg = (r.try_json() or {}).get("message", "")
        t.check(r.rc == 1 and msg.startswith("invalid channel '"), "--json: the error", r)
        for r in runs:
            for n in ("Tq4z", "Wm8y"):
                t.check(n not in r.out and n not in r.err, "%s: %r in no output" % (url, n), r)
    t.check(not os.path.exists(os.path.join(t.tmp, "p")), "no environment")


def case_removal_json(t):
    C = channel(t)
    p = os.path.join(t.tmp, "env")
    finished = 0
    for n in range(1, 60):
        if os.path.exists(p):
            t.menv_ok("remove", "--all", "-y", "-p", p)
        t.menv_ok("create", "-y", "-p", p, *C, "dependency")
        r = t.menv_run("remove", "--all", "-y", "--json", "-p", p,
                       env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            break
        gone = not os.path.exists(p)
        r = t.menv_run("remove", "--all", "-y", "--json", "-p", p)
        j = r.try_json() or {}
        if gone:  # killed after the removal was whole: nothing is left to remove
            t.check(r.rc == 1 and "not found" in j.get("message", ""),
                    "crash after %d, the prefix gone: the rerun finds nothing" % n, r.out)
            continue
        unlink = [u.get("name") for u in j.get("actions", {}).get("UNLINK", [])]
        if j.get("finished_interrupted_removal"):
            finished += 1
            t.check(j.get("success") is True and unlink == [] and "finished the interrupted "
                    "removal of '%s'" % p in j.get("message", ""),
                    "crash after %d: the finish is reported as such" % n, r.out)
        else:
            t.check(r.rc == 0 and unlink == ["dependency"],
                    "crash after %d: the rerun removes and lists the package" % n, r.out)
        t.check(not os.path.exists(p), "crash after %d: the rerun removed the prefix" % n)
    t.check(finished > 0, "some crash point left a removal to finish (%d)" % finished)


def case_remove_config_dirs(t):
    C = channel(t)
    big = os.path.join(t.tmp, "big")  # an environment that holds later envs/pkgs dirs
    t.menv_ok("create", "-p", big, *C, "dependency")
    link = os.path.join(t.tmp, "lnk")
    os.symlink(big, link)
    own = os.path.join(t.tmp, "own")  # an environment that is itself an entry
    t.menv_ok("create", "-p", own, *C, "dependency")
    inner = os.path.join(big, "inner")
    cases = [  # (envs_dirs second entry, pkgs_dirs second entry, prefix given, dir named)
        (os.path.join(big, "envs2"), None, big, "envs_dirs"),
        (None, os.path.join(big, "pk2"), big, "pkgs_dirs"),
        (os.path.join(link, "envs2"), None, big, "envs_dirs"),  # through a link
        (None, os.path.join(link, "a", "b"), big, "pkgs_dirs"),
        (os.path.join(big, "envs2"), None, link, "envs_dirs"),  # the link given
        (os.path.join(big, "envs2"), None, os.path.join(big, "x", ".."), "envs_dirs"),
        (own, None, own, "envs_dirs"),  # the entry itself
        (None, own, own, "pkgs_dirs"),
    ]
    for ed, pd, given, key in cases:
        t.set_rc("envs_dirs: [%s%s]\npkgs_dirs: [%s%s]\n"
                 % (t.envs, ", " + ed if ed else "", t.pkgs, ", " + pd if pd else ""))
        for cmd in (["remove", "--all"], ["env", "remove"]):
            what = "%s -p %s with %s %s" % (" ".join(cmd), given, key, ed or pd)
            r = t.menv_run(*cmd, "-y", "-p", given)
            t.one_line_error(r, what, ["cannot be removed", "(%s)" % key], nonzero_only=True)
            for p in (big, own):
                t.check(os.path.isfile(os.path.join(p, "conda-meta", "history")),
                        "%s: %s is still there" % (what, p))
    os.makedirs(inner)
    t.set_rc("envs_dirs: [%s]\npkgs_dirs: [%s, %s]\n" % (t.envs, t.pkgs, inner))
    t.menv_ok("remove", "--all", "-y", "-p", own)  # an unrelated one still goes
    t.check(not os.path.exists(own), "an environment holding no config dir is removed")


def case_removal_sigint(t):
    C = channel(t)
    p = os.path.join(t.tmp, "env")
    states = set()
    for n in range(1, 60):
        if not os.path.exists(p):
            t.menv_ok("create", "-y", "-p", p, *C, "dependency")
        r = t.menv_run("remove", "--all", "-y", "--json", "-p", p,
                       env={"MENV_TEST_CRASH_AFTER": str(n), "MENV_TEST_CRASH_SIGNAL": "INT"})
        if r.rc == 0:
            t.check(n > 8, "Ctrl-C at %d: not ignored (rc 0)" % n, r.out)
            break
        msg = (r.try_json() or {}).get("message", "")
        t.check(r.rc == 130 and msg.startswith("interrupted") and p in msg,
                "Ctrl-C at %d: exit 130, the interruption and the prefix reported" % n, r)
        if os.path.exists(p):  # the old state, whole: the next command lists and removes it
            states.add("old")
            t.check("left as it was" in msg or "rolled back" in msg,
                    "Ctrl-C at %d: says the environment stays" % n, msg)
            r = t.menv_ok("list", "-p", p, "--json")
            t.eq([x.get("name") for x in r.json()], ["dependency"],
                 "Ctrl-C at %d: the next list shows the package" % n)
            r = t.menv_run("remove", "--all", "-y", "--json", "-p", p)
            t.eq([u.get("name") for u in (r.try_json() or {}).get("actions", {})
                  .get("UNLINK", [])], ["dependency"],
                 "Ctrl-C at %d: the next remove removes and lists it" % n)
        else:  # the new state: removed, and the next command finds nothing
            states.add("new")
            t.check("was finished" in msg, "Ctrl-C at %d: says the removal finished" % n, msg)
            r = t.menv_run("remove", "--all", "-y", "--json", "-p", p)
            t.check(r.rc == 1 and "not found" in (r.try_json() or {}).get("message", ""),
                    "Ctrl-C at %d: the next remove finds no environment" % n, r)
        t.check(not os.path.exists(p), "Ctrl-C at %d: removed in the end" % n)
    t.eq(states, {"old", "new"}, "Ctrl-C points before and after the commit point")


def case_create_later_dir(t):
    C = channel(t)
    e1, e2 = os.path.join(t.tmp, "e1"), os.path.join(t.tmp, "e2")
    t.set_rc("envs_dirs: [%s, %s]\npkgs_dirs: [%s]\n" % (e1, e2, t.pkgs))
    dup = os.path.join(e2, "dup")
    t.menv_ok("create", "-p", dup, *C, "dependency")
    before = tree_snapshot(dup)
    ef = os.path.join(t.tmp, "env.yml")
    write_text(ef, "name: dup\nchannels: [%s]\ndependencies: [dependency]\n" % t.url(
        os.path.join(t.tmp, "chan")))
    for args in (["create", "-n", "dup", *C, "dependency"],
                 ["create", "-n", "dup", *C, "--json", "dependency"],
                 ["env", "create", "-q", "-f", ef], ["env", "create", "-q", "-n", "dup", "-f", ef],
                 ["create", "-n", "dup", *C, "--dry-run", "dependency"]):
        r = t.menv_run(*args)
        if "--json" in args:
            t.check(r.rc != 0 and dup in (r.try_json() or {}).get("message", ""),
                    "%s: refused naming %s" % (" ".join(args), dup), r)
        else:
            t.one_line_error(r, " ".join(args), ["'%s' already exists" % dup],
                             nonzero_only=True)
        t.check(not os.path.exists(os.path.join(e1, "dup")),
                "%s: no second 'dup' in the first envs dir" % " ".join(args), os.listdir(t.tmp))
        t.eq(tree_snapshot(dup), before, "%s: the existing one untouched" % " ".join(args))
    r = t.menv_ok("run", "-n", "dup", "sh", "-c", "printf %s \"$CONDA_PREFIX\"")
    t.eq(r.out, dup, "-n dup still names the one of the second envs dir")
    t.menv_ok("create", "-n", "fresh", *C, "dependency")
    t.check(os.path.isdir(os.path.join(e1, "fresh", "conda-meta")),
            "a new name still goes to the first writable envs dir")
    r = t.menv_run("rename", "-n", "fresh", "dup")
    t.one_line_error(r, "rename to a name of the second envs dir", ["'dup' already exists"],
                     nonzero_only=True)
    t.check(os.path.isdir(os.path.join(e1, "fresh", "conda-meta"))
            and not os.path.exists(os.path.join(e1, "dup")), "rename: nothing moved")


def case_ipv6_channel(t):
    import http.server
    import socket
    import threading
    # always: the URL reaches the downloader (nothing listens on port 1)
    t.set_rc("remote_max_retries: 0\n")
    r = t.menv_run("create", "-n", "v6", "-c", "http://[::1]:1/chan", "--override-channels",
                   "--dry-run", "-q", "dependency")
    t.one_line_error(r, "http://[::1]:1/chan", ["cannot download 'http://[::1]:1/chan/"])
    for bad in ("http://[::1]:1/a::b", "chan::x"):
        r = t.menv_run("create", "-n", "v6", "-c", bad, "--override-channels", "--dry-run",
                       "-q", "dependency")
        t.one_line_error(r, bad, ["invalid channel '%s'" % bad])
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    os.makedirs(os.path.join(chan, "linux-64"), exist_ok=True)
    t.write_repodata(chan, "linux-64")

    class V6(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=t.tmp, **kw)

        def log_message(self, *a):
            pass
    try:
        srv = V6(("::1", 0), Quiet)
    except OSError as e:  # no IPv6 loopback here (some containers): the checks above ran
        t.note("no IPv6 loopback here (%s): the create through it is not tried" % e)
        return
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = "http://[::1]:%d/chan" % srv.server_address[1]
        p = os.path.join(t.tmp, "p6")
        t.menv_ok("create", "-p", p, "-c", url, "--override-channels", "-q", "-y",
                  "dependency")
        rec = menvtest.read_json(os.path.join(p, "conda-meta", "dependency-1.0-0.json"))
        t.eq(rec.get("url"), url + "/noarch/dependency-1.0-0.conda",
             "the record's url is under the IPv6 host")
    finally:
        srv.shutdown()
        srv.server_close()


def case_registry_sigint(t):
    import signal
    import subprocess
    import time
    C = channel(t)
    reg = os.path.join(t.home, ".conda", "environments.txt")
    lock = reg + ".lock"
    p = os.path.join(t.tmp, "made")
    # create has made the environment: it finishes, exits 130 and says so; env remove has unlinked every
    # package: it finishes the removal and exits 130 saying so (case removal_sigint)
    for args, listed, answer in (
            (["create", "-p", p] + C + ["dependency"], True,
             (130, "menv: error: interrupted after its packages were linked; the create of "
              "'%s' was finished\n" % p)),
            (["env", "remove", "-p", p, "-y"], False,
             (130, "menv: error: interrupted after its packages were unlinked; the removal "
              "of '%s' was finished\n" % p))):
        if os.path.exists(lock):
            os.unlink(lock)
        proc = subprocess.Popen([t.menv] + args, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=t.tmp,
                                env=t.environ({"MENV_TEST_PAUSE_REGISTRY": "2"}))
        deadline = time.time() + 60
        while not os.path.exists(lock) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        what = "Ctrl-C in the registry update of %s" % args[0:2]
        t.eq((proc.returncode, err.decode()), answer, "%s: exit code and stderr" % what)
        lines = open(reg).read().splitlines() if os.path.exists(reg) else []
        t.eq(p in lines, listed, "%s: the registry %s the prefix"
             % (what, "names" if listed else "no longer names"))
        t.eq(os.path.isdir(os.path.join(p, "conda-meta")), listed,
             "%s: the prefix is %s" % (what, "made" if listed else "removed"))


def case_spec_lines(t):
    C = channel(t)
    prefix = os.path.join(t.tmp, "p")
    yml = os.path.join(t.tmp, "env.yml")
    for what, text, where, needle in (
            ("a MatchSpec, block style", "name: x\ndependencies:\n  - dependency\n"
             "  - numpy>>1\n", "4:5", "invalid match spec 'numpy>>1'"),
            ("a MatchSpec, flow style", 'name: x\ndependencies: [ "numpy>>1" ]\n', "2:17",
             "invalid match spec 'numpy>>1'"),
            ("a MatchSpec, an empty version", "dependencies:\n  - 'numpy =='\n", "2:5",
             "'numpy =='"),
            ("a channel", "channels:\n  - ok\n  - 'http://u/p@h.example/c'\n"
             "dependencies: [dependency]\n", "3:5", "invalid channel")):
        write_text(yml, text)
        for extra in (["--dry-run"], [], ["--dry-run", "--json"]):
            r = t.menv_run("create", "-p", prefix, "-f", yml, *extra, *C)
            if "--json" in extra:
                msg = (r.try_json() or {}).get("message", "")
                t.check(r.rc == 1 and msg.startswith("%s:%s: " % (yml, where))
                        and needle in msg, "%s: --json names FILE:LINE:COL" % what, r)
                continue
            t.one_line_error(r, "%s: create %s" % (what, " ".join(extra)),
                             ["%s:%s: " % (yml, where), needle])
        t.check(not os.path.exists(prefix), "%s: no environment" % what)
    # conda-lock: an entry's error names the line where the entry starts
    lock = os.path.join(t.tmp, "x.conda-lock.yml")
    write_text(lock, "version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
               "  platforms: [linux-64]\n  sources: [environment.yml]\npackage:\n"
               "- name: a\n  version: '1'\n  manager: conda\n  platform: linux-64\n"
               "  dependencies: {}\n  url: https://x.example/c/linux-64/a-1-0.conda\n"
               "  hash: {md5: 0123456789abcdef0123456789abcdef}\n"
               "- name: b\n  version: '1'\n  manager: apt\n  platform: linux-64\n"
               "  url: https://x.example/c/linux-64/b-1-0.conda\n  hash: {md5: x}\n")
    r = t.menv_run("create", "-p", prefix, "-f", lock, "--dry-run",
                   env={"CONDA_SUBDIR": "linux-64"})
    t.one_line_error(r, "conda-lock entry", ["%s:15: package entry 2 ('b')" % lock, "apt"])
    # explicit: the line of the bad URL
    exp = os.path.join(t.tmp, "x.txt")
    write_text(exp, "# comment\n@EXPLICIT\nnot a url\n")
    r = t.menv_run("create", "-p", prefix, "-f", exp, "--dry-run")
    t.one_line_error(r, "explicit file", ["%s:3" % exp])
    t.check(not os.path.exists(prefix), "lockfiles: no environment")


def case_path_keys(t):
    nouser = NOUSER
    if not no_such_user(t):
        return
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(cwd)
    bad = (("~%s/x" % nouser, "no user '%s'" % nouser), ("rel/x", "is a relative path"),
           ("./x", "is a relative path"), ("$KINDS_UNSET_22/x", "is a relative path"))
    before = "channels: [a]\n"
    for key in ("envs_dirs", "pkgs_dirs"):
        for val, needle in bad + (("", "is empty"),):
            for op in ("--add", "--append", "--prepend"):
                t.set_rc(before)
                r = t.menv_run("config", op, key, val, cwd=cwd)
                t.one_line_error(r, "config %s %s %r" % (op, key, val),
                                 ["invalid value '%s'" % val, key, needle], nonzero_only=True)
                t.eq(open(t.rc).read(), before, "config %s %s %r: the file unchanged"
                     % (op, key, val))
            # read from .condarc: FILE:LINE:COL of the entry
            t.set_rc("offline: false\n%s:\n  - /ok\n  - '%s'\n" % (key, val))
            for cmd in (("info",), ("config", "--show"), ("env", "list")):
                r = t.menv_run(*cmd, cwd=cwd)
                t.one_line_error(r, "%s: [%r] %s" % (key, val, " ".join(cmd)),
                                 ["%s:4:5: %s entry '%s'" % (t.rc, key, val), needle])
    for key in ("root_prefix", "ssl_verify", "client_ssl_cert", "client_ssl_cert_key"):
        for val, needle in bad:
            t.set_rc(before)
            r = t.menv_run("config", "--set", key, val, cwd=cwd)
            t.one_line_error(r, "config --set %s %r" % (key, val),
                             ["invalid value '%s'" % val, key, needle], nonzero_only=True)
            t.eq(open(t.rc).read(), before, "config --set %s %r: unchanged" % (key, val))
            t.set_rc("offline: false\n%s: '%s'\n" % (key, val))
            r = t.menv_run("info", cwd=cwd, env={"MENV_ROOT_PREFIX": ""}
                           if key == "root_prefix" else None)
            t.one_line_error(r, "%s: %r info" % (key, val),
                             ["%s:2:%d: %s '%s'" % (t.rc, len(key) + 3, key, val), needle])
    t.set_rc("")
    for var, key in (("CONDA_ENVS_DIRS", "envs_dirs"), ("CONDA_PKGS_DIRS", "pkgs_dirs"),
                     ("MENV_ROOT_PREFIX", "root_prefix")):
        r = t.menv_run("info", cwd=cwd, env={var: "rel/x"})
        t.one_line_error(r, "%s=rel/x" % var, ["$%s: %s" % (var, key), "relative"])
    t.eq(os.listdir(cwd), [], "nothing made in the cwd")
    # what is still taken
    t.set_rc("envs_dirs: ['/e/./x/']\npkgs_dirs: ['$KINDS_T/p', '~/p']\n"
             "client_ssl_cert: None\nssl_verify: /etc/ssl/certs\n")
    j = t.menv_ok("info", "--json", env={"KINDS_T": "/kt"}).json()
    t.eq((j.get("envs_dirs"), j.get("pkgs_dirs")),
         (["/e/x"], ["/kt/p", os.path.join(t.home, "p")]), "full paths, $VAR and ~ expanded")


def case_ssl_verify(t):
    # conda 26.7.1 reads ssl_verify through PrimitiveParameter(element_type=(str, bool)): its
    # typify is auxlib's boolify(value, return_string=True) on the value as YAML loads it, so
    # a number, quoted or not, is a bool (zero false, any other true) and only other text is
    # a CA bundle's path. The answers of its typify(value, (str, bool)), run here:
    # '1.0' True, '0' False, '0.0' False, '5' True, '-1' True, '0x1f' '0x1f' (a path);
    # 5 True, 4.5 True, 0.0 False. (menv refused every number but 0 and 1 as "not a number",
    # quoted or not: `ssl_verify: "1.0"` too.)
    for val, shown in (("5", True), ("4.5", True), ("-1", True), ("'5'", True),
                       ('"1.0"', True), ("'0'", False), ('"0.0"', False), ("0.0", False),
                       ("true", True), ("false", False), ("0", False), ("1", True),
                       ("truststore", True), ("/etc/ssl/certs/ca.pem", "/etc/ssl/certs/ca.pem")):
        t.set_rc("ssl_verify: %s\n" % val)
        r = t.menv_run("config", "--show", "ssl_verify", "--json")
        t.eq((r.rc, (r.try_json() or {}).get("ssl_verify")), (0, shown),
             "ssl_verify: %s is taken" % val)
    r = t.menv_run("config", "--show", "ssl_verify", "--json",
                   env={"CONDA_SSL_VERIFY": "5"})
    t.eq((r.rc, (r.try_json() or {}).get("ssl_verify")), (0, True), "CONDA_SSL_VERIFY=5")
    # text that is no number is a path: a relative one is refused (README: stricter than
    # conda on purpose), with FILE:LINE:COL naming it
    for val, what in (("0x1f", "0x1f"), ("'1.0.0'", "1.0.0")):
        t.set_rc("offline: false\nssl_verify: %s\n" % val)
        for cmd in (("info",), ("config", "--show", "ssl_verify"),
                    ("create", "-n", "x", "--dry-run", "dependency")):
            r = t.menv_run(*cmd)
            t.one_line_error(r, "ssl_verify: %s: %s" % (val, " ".join(cmd)),
                             ["%s:2:13: ssl_verify '%s' is a relative path" % (t.rc, what)])
    t.set_rc("")
    r = t.menv_run("config", "--set", "ssl_verify", "5")
    t.check(r.rc == 0, "config --set ssl_verify 5", r)
    r = t.menv_run("config", "--show", "ssl_verify", "--json")
    t.eq((r.rc, (r.try_json() or {}).get("ssl_verify")), (0, True), "--set 5: read as true")


def sweep_late_sigint(t, what, setup, argv, state, old, new, action, named, one_line=True,
                      after=None):
    """Ctrl-C (MENV_TEST_CRASH_SIGNAL=INT) at each crash point of `argv`, after `setup()`:
    before the commit point exit 130 and state() is `old`; after it exit 130, one line
    "interrupted after ...; the <action> of '<named>' was finished" (the last of several
    when not one_line: rename's progress lines) and state() is `new` (then `after()`)."""
    setup()
    t.menv_ok(*argv)
    t.eq(state(), new, "%s: uninterrupted, the new state" % what)
    finished = 0
    for n in range(1, 80):
        setup()
        r = t.menv_run(*argv, env={"MENV_TEST_CRASH_SIGNAL": "INT",
                                   "MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            t.check(n > 1, "%s: Ctrl-C at %d not ignored" % (what, n), r)
            break
        got = state()
        if "was finished" in r.err:
            finished += 1
            last = (r.err_lines() or [""])[-1]
            t.check(last.startswith("menv: error: interrupted after ") and
                    last.endswith("; the %s of '%s' was finished" % (action, named)) and
                    (not one_line or len(r.err_lines()) == 1),
                    "%s: Ctrl-C at %d past the commit point: one line says so" % (what, n),
                    r.err)
            t.eq((r.rc, got), (130, new), "%s: Ctrl-C at %d: exit 130, the change whole"
                 % (what, n))
            if after:
                after()
        else:
            t.eq((r.rc, got), (130, old), "%s: Ctrl-C at %d: exit 130, as it was (%s)"
                 % (what, n, r.err.strip()))
    t.check(finished > 0, "%s: some Ctrl-C came past the commit point" % what)


def case_late_sigint(t):
    import shutil
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("lchan", {"noarch": [os.path.join(P, n) for n in (
        "dependency-2.0-0.conda", "dependent-2.0-0.conda")], "linux-64": []})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    p = os.path.join(t.envs, "a")

    def names(prefix):
        r = t.menv_run("list", "-p", prefix, "--json")
        return sorted(x.get("name") for x in (r.try_json() or [])) if r.rc == 0 else None

    # each run starts from a snapshot (the prefix and conda's registry as `env remove` and
    # `create` leave them, made once) instead of an env remove and a create per crash point
    dst = os.path.join(t.envs, "b")
    registry = os.path.join(t.home, ".conda", "environments.txt")
    snaps = {}
    for pkgs in ((), ("dependency",), ("dependent",)):
        t.menv_run("env", "remove", "-y", "-p", p)
        t.menv_run("env", "remove", "-y", "-p", dst)
        if pkgs:
            t.menv_ok("create", "-p", p, *C, *pkgs)
            shutil.copytree(p, os.path.join(t.tmp, "snap", *pkgs), symlinks=True)
        snaps[pkgs] = open(registry).read() if os.path.exists(registry) else None

    def fresh(*pkgs):
        for d in (p, dst):
            shutil.rmtree(d, ignore_errors=True)
        if pkgs:
            shutil.copytree(os.path.join(t.tmp, "snap", *pkgs), p, symlinks=True)
        if snaps[pkgs] is None:
            if os.path.exists(registry):
                os.unlink(registry)
        else:
            write_text(registry, snaps[pkgs])

    cmds = [  # (what, setup, argv, old state, new state, action, prefix named)
        ("create", lambda: fresh(), ["create", "-p", p, *C, "dependent"],
         None, ["dependency", "dependent"], "create", p),
        ("install", lambda: fresh("dependency"), ["install", "-p", p, *C, "dependent"],
         ["dependency"], ["dependency", "dependent"], "change", p),
        ("remove", lambda: fresh("dependent"), ["remove", "-p", p, "-y", "dependent"],
         ["dependency", "dependent"], [], "change", p),  # dependency goes with it
        ("remove --all", lambda: fresh("dependent"), ["remove", "--all", "-y", "-p", p],
         ["dependency", "dependent"], None, "removal", p),
        ("env remove", lambda: fresh("dependent"), ["env", "remove", "-y", "-p", p],
         ["dependency", "dependent"], None, "removal", p),
        ("rename", lambda: fresh("dependent"),
         ["rename", "-y", "-n", "a", "b"], ["dependency", "dependent"], None, "rename", p),
    ]
    for what, setup, argv, old, new, action, named in cmds:
        after = (lambda: t.eq(names(dst), ["dependency", "dependent"], "rename: b is a")) \
            if what == "rename" else None
        sweep_late_sigint(t, what, setup, argv, lambda: names(p), old, new, action, named,
                          one_line=what != "rename", after=after)
    # doctor --fix: the repair past its relink
    finished = 0
    rec = os.path.join(p, "conda-meta", "dependent-2.0-0.json")
    for n in range(1, 40):
        shutil.rmtree(p, ignore_errors=True)
        t.menv_ok("create", "-p", p, *C, "dependent")
        write_text(rec, "{bad\n")
        r = t.menv_run("doctor", "-p", p, "--fix", env={"MENV_TEST_CRASH_SIGNAL": "INT",
                                                       "MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            break
        text = open(rec).read()
        t.eq(r.rc, 130, "doctor --fix: Ctrl-C at %d: exit 130" % n)
        if "was finished" in r.err:
            finished += 1
            t.one_line_error(r, "doctor --fix: Ctrl-C at %d" % n,
                             ["the repair of '%s' was finished" % p], nonzero_only=True)
            t.check('"dependent"' in text, "doctor --fix: Ctrl-C at %d: repaired" % n)
        else:
            t.eq(text, "{bad\n", "doctor --fix: Ctrl-C at %d: the record as it was" % n)
    t.check(finished > 0, "doctor --fix: some Ctrl-C came past the repair")


def case_late_sigint_more(t):
    import shutil
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("lchan", {"noarch": [os.path.join(P, n) for n in (
        "dependency-1.0-0.conda", "dependency-2.0-0.conda", "dependent-2.0-0.conda")],
        "linux-64": []})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    p = os.path.join(t.envs, "a")
    snaps = os.path.join(t.tmp, "snaps")

    def state(prefix):
        r = t.menv_run("list", "-p", prefix, "--json")
        return sorted("%s=%s" % (x.get("name"), x.get("version"))
                      for x in (r.try_json() or [])) if r.rc == 0 else None

    def snap(name, *argvs):
        t.menv_run("env", "remove", "-y", "-p", p)
        for argv in argvs:
            t.menv_ok(*argv)
        shutil.copytree(p, os.path.join(snaps, name), symlinks=True)

    def restore(name):
        def go():
            shutil.rmtree(p, ignore_errors=True)
            if name:
                shutil.copytree(os.path.join(snaps, name), p, symlinks=True)
        return go

    old1, new2 = ["dependency=1.0"], ["dependency=2.0"]
    snap("v1", ["create", "-p", p, *C, "dependency=1.0"])
    snap("v1v2", ["create", "-p", p, *C, "dependency=1.0"], ["update", "-p", p, *C, "dependency"])
    write_text(os.path.join(t.tmp, "new.yml"), "channels: [%s, nodefaults]\ndependencies:\n"
               "  - dependent\n" % t.url(chan))
    write_text(os.path.join(t.tmp, "up.yml"), "channels: [%s, nodefaults]\ndependencies:\n"
               "  - dependency=2.0\n" % t.url(chan))
    t.menv_run("env", "remove", "-y", "-p", p)
    t.menv_ok("create", "-p", p, *C, "dependent")
    lock = os.path.join(t.tmp, "lock.yml")
    write_text(lock, t.menv_ok("export", "-p", p).out)
    both = ["dependency=2.0", "dependent=2.0"]
    cmds = [  # (what, setup, argv, old state, new state, action)
        ("update", restore("v1"), ["update", "-p", p, *C, "dependency"], old1, new2, "change"),
        ("env create", restore(None), ["env", "create", "-p", p, "-q", "-y", "-f",
                                       os.path.join(t.tmp, "new.yml")], None, both, "create"),
        ("env update", restore("v1"), ["env", "update", "-p", p, "-q", "-y", "-f",
                                       os.path.join(t.tmp, "up.yml")], old1, new2, "change"),
        # conda's install --revision reads the channels (.condarc's, -c's), not the cache
        ("install --revision", restore("v1v2"), ["install", "-p", p, "-q", "-y", *C,
                                                 "--revision", "0"], new2, old1, "change"),
        ("create -f LOCK", restore(None), ["create", "-p", p, "-q", "-y", "-f", lock], None,
         both, "create"),
    ]
    for what, setup, argv, old, new, action in cmds:
        sweep_late_sigint(t, what, setup, argv, lambda: state(p), old, new, action, p)

def case_env_list_width(t):
    import unicodedata

    def width(s):
        return sum(0 if unicodedata.combining(c) else
                   2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
    names = ["plain", "\u00fcmlaut", "\u74b0\u5883", "e\u0301t\u00e9"]
    for n in names:
        write_text(os.path.join(t.envs, n, "conda-meta", "history"), "")
    r = t.menv_ok("env", "list")
    cols = {}
    for line in r.out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split(" ")[0]
        at = line.index("/")
        cols[name] = width(line[:at])
    t.eq(sorted(cols), sorted(["base"] + names), "env list: every environment")
    t.eq(set(cols.values()), {20 + 2 + 1 + 2}, "env list: every prefix starts in column 25 "
         "(name padded to 20, '  ', the active mark, '  '):\n" + r.out)


def case_name_length(t):
    C = channel(t)
    long = "n" * 300
    t.menv_ok("create", "-n", "ok", *C, "dependency")
    cmds = [("create", "-n", long, *C, "dependency"),
            ("create", "-n", long, "--dry-run", *C, "dependency"),
            ("install", "-n", long, *C, "dependency"),
            ("update", "-n", long, *C, "dependency"),
            ("remove", "-n", long, "-y", "dependency"),
            ("remove", "-n", long, "-y", "--all"),
            ("env", "remove", "-n", long, "-y"),
            ("env", "update", "-n", long, "-f", os.path.join(t.tmp, "env.yml")),
            ("run", "-n", long, "true"),
            ("export", "-n", long),
            ("list", "-n", long),
            ("doctor", "-n", long),
            ("smoke", "-n", long),
            ("env", "config", "vars", "list", "-n", long),
            ("repoquery", "whoneeds", "-n", long, "dependency"),
            ("shell", "activate", "--shell", "bash", long),
            ("rename", "-n", long, "other"),
            ("rename", "-n", "ok", long),
            ("rename", "-n", "ok", "--dry-run", long)]
    write_text(os.path.join(t.tmp, "env.yml"), "dependencies:\n  - dependency\n")
    for cmd in cmds:
        r = t.menv_run(*cmd)
        t.one_line_error(r, "%s -n <300 bytes>" % " ".join(cmd[:2]),
                         ["'" + "n" * 60 + "...'", "300 bytes", "NAME_MAX"],
                         nonzero_only=True)
    # from an environment file's name:
    f = os.path.join(t.tmp, "named.yml")
    write_text(f, "name: %s\ndependencies:\n  - dependency\n" % long)
    r = t.menv_run("create", "-f", f, *C)
    t.one_line_error(r, "create -f with a 300-byte name:", ["NAME_MAX"], nonzero_only=True)
    t.eq(sorted(os.listdir(t.envs)), ["ok"], "nothing made beside the one environment")
    t.check(os.path.isdir(os.path.join(t.envs, "ok", "conda-meta")), "ok is still there")
    # a -p PATH with a component over NAME_MAX
    deep = os.path.join(t.tmp, long, "env")
    for cmd in (("create", "-p", deep, *C, "dependency"), ("list", "-p", deep),
                ("install", "-p", deep, *C, "dependency"), ("run", "-p", deep, "true"),
                ("env", "remove", "-p", deep, "-y"), ("rename", "-n", "ok", deep),
                ("shell", "activate", "--shell", "bash", deep)):
        r = t.menv_run(*cmd)
        t.one_line_error(r, "%s -p <a 300-byte component>" % cmd[0],
                         ["component", "300 bytes", "NAME_MAX"], nonzero_only=True)
    t.check(not os.path.exists(os.path.join(t.tmp, long[:255])), "nothing made for -p")
    # the prefix a name makes would be PATH_MAX (4096) bytes or longer
    far = os.path.join(t.tmp, *(["d" * 250] * 16))
    t.set_rc("envs_dirs: [%s]\n" % far)
    r = t.menv_run("create", "-n", "x" * 200, *C, "dependency")
    t.one_line_error(r, "create -n: a prefix over PATH_MAX", ["PATH_MAX"], nonzero_only=True)
    t.check(not os.path.exists(os.path.join(t.tmp, "d" * 250)), "nothing made for it")
    t.set_rc("")
    # -p under PATH_MAX but without room for the staging folder beside it and the records in
    # it: refused before any work (it passed, fetched, and failed at the staging folder with
    # its parents left behind); one of 3,800 bytes is created and removed whole
    def deep_path(total):
        q = os.path.join(t.tmp, "deep")
        while len(q) + 201 + 4 < total:
            q = os.path.join(q, "d" * 200)
        return os.path.join(q, "e" * (total - len(q) - 1))
    near = deep_path(4031)
    t.eq(len(near), 4031, "a 4,031-byte prefix")
    r = t.menv_run("create", "-y", "-p", near, *C, "dependency")
    t.one_line_error(r, "create -p <4,031 bytes>", ["4031 bytes", "at most 3839", "PATH_MAX"],
                     nonzero_only=True)
    t.check(not os.path.exists(os.path.join(t.tmp, "deep")), "nothing made for it")
    fits = deep_path(3800)
    t.menv_ok("create", "-y", "-p", fits, *C, "dependency")
    t.check(os.path.isfile(os.path.join(fits, "conda-meta", "history")), "a 3,800-byte prefix")
    t.menv_ok("env", "remove", "-y", "-p", fits)
    # 255 bytes is a name like any other
    n255 = "m" * 255
    t.menv_ok("create", "-n", n255, *C, "dependency")
    r = t.menv_ok("list", "-n", n255, "--json")
    t.eq([p.get("name") for p in r.json()], ["dependency"], "a 255-byte name: list")
    t.menv_ok("rename", "-n", n255, "short")
    t.menv_ok("rename", "-n", "short", n255)
    t.menv_ok("env", "remove", "-n", n255, "-y")
    t.eq(sorted(os.listdir(t.envs)), ["ok"], "the 255-byte environment renamed and removed")


def case_envs_path(t):
    C = channel(t)
    e1, e2 = os.path.join(t.tmp, "ep1"), os.path.join(t.tmp, "ep2")
    for var in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "MENV_ENVS_PATH"):
        j = t.menv_ok("info", "--json", env={var: " %s : %s " % (e1, e2)}).json()
        t.eq(j.get("envs_dirs"), [e1, e2], "%s=A:B is envs_dirs [A, B]" % var)
    j = t.menv_ok("info", "--json", env={"CONDA_ENVS_PATH": ""}).json()
    t.eq(j.get("envs_dirs"), [t.envs], "CONDA_ENVS_PATH='' is no setting")
    t.menv_ok("create", "-n", "viapath", *C, "dependency", env={"CONDA_ENVS_PATH": e2})
    t.check(os.path.isdir(os.path.join(e2, "viapath", "conda-meta")),
            "create -n with CONDA_ENVS_PATH: in its first entry", os.listdir(t.tmp))
    r = t.menv_ok("run", "-n", "viapath", "sh", "-c", "printf %s \"$CONDA_PREFIX\"",
                  env={"CONDA_ENVS_PATH": "%s:%s" % (e1, e2)})
    t.eq(r.out, os.path.join(e2, "viapath"), "run -n finds it in the second entry")
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(cwd)
    nouser = NOUSER if no_such_user(t) else None
    bad = [("rel/x", "relative"), ("%s::%s" % (e1, e2), "'' is empty"),
           (":" + e1, "'' is empty")]
    if nouser:
        bad.append(("~%s/e" % nouser, "no user '%s'" % nouser))
    for var in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        for val, needle in bad:
            for cmd in (("info",), ("create", "-n", "e", *C, "dependency"), ("env", "list")):
                r = t.menv_run(*cmd, cwd=cwd, env={var: val})
                t.one_line_error(r, "%s=%r: %s" % (var, val, cmd[0]),
                                 ["$%s: envs_dirs entry" % var, needle])
    t.eq(os.listdir(cwd), [], "nothing made in the cwd")
    r = t.menv_run("info", env={"CONDA_ENVS_PATH": e1, "CONDA_ENVS_DIRS": e2})
    t.one_line_error(r, "CONDA_ENVS_PATH and CONDA_ENVS_DIRS",
                     ["$CONDA_ENVS_DIRS and $CONDA_ENVS_PATH", "only one"])
    # .condarc: envs_path is envs_dirs; both in one file refused where the second stands
    t.set_rc("envs_path:\n  - %s\n" % e1)
    t.eq(t.menv_ok("info", "--json").json().get("envs_dirs"), [e1], "envs_path: in .condarc")
    t.set_rc("envs_path:\n  - rel\n")
    r = t.menv_run("info")
    t.one_line_error(r, "envs_path: [rel]", ["%s:2:5: envs_path entry 'rel'" % t.rc,
                                             "relative"])
    t.set_rc("envs_dirs: [%s]\nenvs_path: [%s]\n" % (e1, e2))
    r = t.menv_run("info")
    t.one_line_error(r, "envs_dirs and envs_path in one file", ["%s:2:1:" % t.rc, "only one"])


def case_cold_warm(t):
    import json
    with open(os.path.join(t.corpus, "repodata", "conda", "index.json"), encoding="utf-8") as f:
        recs = json.load(f)
    chan = os.path.join(t.tmp, "idx")
    t.write_repodata(chan, "linux-64", packages=recs)
    t.write_repodata(chan, "noarch")
    C = ["--dry-run", "-c", t.url(chan), "--override-channels", "-p", os.path.join(t.tmp, "e")]
    env = {"CONDA_OVERRIDE_GLIBC": "2.17", "MENV_SOLVER_LOAD": "full"}
    cases = [("python 2.7*, numpy 1.7*", ["pandas"], 1),
             ("python 2.7*, numpy 1.7*", ["scipy", "numpy=1.8"], 1),
             ("zlib", ["pandas", "python=2.6"], 1),
             ("zlib", ["scipy", "python=2.6", "numpy=1.5"], 1),
             ("numpy 1.7*", ["pandas"], 0),
             ("zlib", ["numpy", "scipy", "pandas"], 0),
             ("zlib", ["anaconda"], 0),
             ("zlib", ["python<3.3.2", "pycosat=0.3.0", "pycparser", "sphinx"], 0)]
    for i, (pins, specs, want) in enumerate(cases):
        t.set_rc("pinned_packages:\n" + "".join("  - '%s'\n" % p.strip()
                                                 for p in pins.split(",")))
        root = os.path.join(t.tmp, "root%d" % i)
        e = dict(env, MENV_ROOT_PREFIX=root)
        out = []
        for run in ("cold", "warm", "warm again"):
            for args in ([], ["--json"]):
                r = t.menv_run("create", *(C + args + specs), env=e)
                out.append((run, args, r.rc, r.out, r.err))
        cache = os.path.join(root, "pkgs", "cache")
        t.check(any(n.endswith(".solv") for n in os.listdir(cache)),
                "%s: the .solv cache was written" % specs, os.listdir(cache))
        t.eq(out[0][2], want, "%s with pins %s: exit %d" % (specs, pins, want))
        for o in out[2:]:
            k = 0 if not o[1] else 1
            t.check(o[2:] == out[k][2:], "%s with pins %s: %s %s = cold, byte for byte"
                    % (specs, pins, o[0], o[1]),
                    "cold:\n%s%s\n%s:\n%s%s" % (out[k][4], out[k][3][-1500:], o[0], o[4],
                                                 o[3][-1500:]))


def case_envfile_null(t):
    C = ["-c", t.url(os.path.join(t.tmp, "none")), "--override-channels"]
    p = os.path.join(t.tmp, "new")
    f = os.path.join(t.tmp, "environment.yml")
    for text, line, col, needle in (
            ("name: x\ndependencies:\n  - dependency\n  -\n", 4, 4, "a dependency is empty"),
            ("name: x\ndependencies:\n  - ~\n  - dependency\n", 3, 5, "a dependency is empty"),
            ("name: x\ndependencies: [dependency, null]\n", 2, 28, "a dependency is empty"),
            ("name: x\nchannels:\n  - ~\ndependencies:\n  - dependency\n", 3, 5,
             "an item of 'channels' is empty"),
            ("name: x\ndependencies:\n  - pip\n  - pip:\n    - six\n    - null\n", 6, 7,
             "an item of 'pip' is empty")):
        write_text(f, text)
        for cmd in (("create", "-p", p, "-f", f, "--dry-run", *C),
                    ("create", "-p", p, "-f", f, *C), ("env", "create", "-p", p, "-f", f, *C),
                    ("lock", "-f", f, *C)):
            r = t.menv_run(*cmd)
            t.one_line_error(r, "%r: %s" % (text, " ".join(cmd[:2])),
                             ["%s:%d:%d: %s" % (f, line, col, needle)])
        t.no_prefix_left(p, repr(text))
    # a null key is still no items (BR-002)
    write_text(f, "name: x\nchannels:\ndependencies:\n")
    r = t.menv_run("create", "-p", p, "-f", f, "--dry-run", *C)
    t.check("is empty" not in r.err, "a null key is still read as no items", r)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)

#!/usr/bin/env python3
"""cli.attack11_<case>: what an eleventh outside attack (issue 22, "kinds, not instances")
found, one case each (python3 test_attack11.py MENV SHARED CASE):

- mirror_query: `menv mirror -f LOCK DIR` with a lock entry's URL carrying a query
  (".../aa-1.0-0.tar.bz2?token=CANARY7x9") named the staged file after the whole URL tail,
  exited 1 printing the token ("'/tmp/menv-mirror-N-X/pkgs/aa-1.0-0.tar.bz2?token=...' is
  not a regular file") and left an empty DIR/noarch behind. A file name comes from a URL in
  one place now (menv_url_basename: the path's last component, without query or fragment):
  the query is used for the download only. The mirror (to a folder and to a file:// URL),
  a create and an install from the lock, their export and list succeed; the canary is in no
  output line and in no byte or file name under DIR, the root prefix (environments, package
  cache), HOME or TMPDIR. A mirror that really fails (a wrong sha256) fails with one line
  without the query, and leaves DIR as it was (not made where it was not there; an existing
  folder's files as they were).
- yaml_null_path: an unquoted `~` in .condarc is YAML's null, but menv read it as the text "~",
  so HOME for a path key (`root_prefix: ~` made HOME the root prefix, `client_ssl_cert: ~`
  HOME the client certificate, `ssl_verify: ~` HOME the CA bundle), while `ssl_verify: null`
  was refused as the relative path 'null', `pkgs_dirs: ~` as "must be a list of strings" and
  `proxy_servers: {http: ~}` gave the proxy "~". A null is now what conda 26.7.1 makes of it
  by the key's kind (conda/common/configuration.py: Sequence/Map/ObjectParameter's
  get_all_matches drop a null; a PrimitiveParameter's None goes through auxlib's typify with
  its element type), for each spelling (~, null, NULL, nothing): a list or a map is not set
  by that file (the default or a lower file's value stays); client_ssl_cert(_key) and a
  proxy_servers entry ((str, NoneType)) are none, also over a lower file's value; a bool is
  false; every other key is refused with FILE:LINE:COL (conda refuses it too, or makes the
  text 'None' of it: root_prefix a relative folder, a list entry or a custom channel a
  location 'None'); ssl_verify, which conda reads as false, is refused rather than turning
  certificate checks off. A quoted '~' and `~/x` are text, expanded as before. Nothing is
  made or changed under HOME by any of them.
- revision_range: `menv install --revision 99999999999999999999` said "revision
  9223372036854775807 does not exist": strtol clamped the number, and the message named a
  revision the user never typed. Every number the front end reads from the user goes through
  one checked parser now (menv_cli_parse_count: digits only, at most its maximum; --revision
  and $COLUMNS were the two): a number too large, a sign, a space or other text is refused
  with exit 2 and one line quoting what was typed, the environment unchanged; the largest
  long is a revision that does not exist, said as typed. A $COLUMNS too large or not a
  number draws the table as having none.
- lock_credentials: a lock made by `menv lock` or `menv export` from a channel whose URL in
  .condarc holds a token (/t/TOKEN/) or user:password has URLs without them (secrets are
  never written), but `menv create -f LOCK` with the same .condarc then got 404 or 401: the
  credentials were not applied again. A package URL that, without credentials, lies under a
  configured channel (channels, default_channels, custom_channels, channel_alias, -c) is now
  downloaded with that channel's token or user:password, in memory. Each kind (a channels URL
  with a token, one with user:password, a custom channel, channel_alias, a -c channel) locks,
  exports, and creates from the lock and the export with the package cache cold; the token and
  the password are in no output line, no lock and no byte or file name menv wrote.
"""
import json
import os
import shutil
import sys

import menvtest
from menvtest import build_tar_bz2, read_json, tree_snapshot, walk_for, write_text

CANARY = "CANARY7x9"
HERE = os.path.dirname(os.path.abspath(__file__))


def conda_lock(entries):
    """A conda-lock v1 file of entries [(name, version, url, md5, sha256)] (linux-64)."""
    text = ("version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n"
            "  platforms: [linux-64]\n  sources: []\npackage:\n")
    for name, version, url, md5, sha in entries:
        text += ("- name: %s\n  version: '%s'\n  manager: conda\n  platform: linux-64\n"
                 "  dependencies: {}\n  url: %s\n  hash: {md5: %s, sha256: %s}\n"
                 "  category: main\n  optional: false\n" % (name, version, url, md5, sha))
    return text


def case_mirror_query(t):
    srv_dir = os.path.join(t.tmp, "srv")
    chan = os.path.join(srv_dir, "chan")
    build_tar_bz2(os.path.join(chan, "noarch", "aa-1.0-0.tar.bz2"),
                  {"name": "aa", "version": "1.0", "build": "0", "build_number": 0,
                   "subdir": "noarch", "depends": []}, files={"share/aa.txt": b"aa\n"})
    build_tar_bz2(os.path.join(chan, "linux-64", "bb-1.0-0.tar.bz2"),
                  {"name": "bb", "version": "1.0", "build": "0", "build_number": 0,
                   "subdir": "linux-64", "depends": []}, files={"share/bb.txt": b"bb\n"})
    fn2 = "versioned-2.0-0.conda"
    shutil.copy(os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch", fn2),
                os.path.join(chan, "noarch", fn2))
    t.index(chan)
    rd = read_json(os.path.join(chan, "noarch", "repodata.json"))
    aa = rd["packages"]["aa-1.0-0.tar.bz2"]
    vv = rd["packages.conda"][fn2]
    bb = read_json(os.path.join(chan, "linux-64", "repodata.json"))["packages"]["bb-1.0-0.tar.bz2"]
    tmpdir = os.path.join(t.tmp, "tmpdir")
    os.makedirs(tmpdir)
    env = {"TMPDIR": tmpdir}
    srv = t.http_server(srv_dir)
    outs = []

    def run(*args, rc=0):
        r = t.menv_run(*args, env=env)
        outs.append(r)
        if rc is not None:
            t.check(r.rc == rc, "menv %s: exit %d" % (" ".join(args), rc), r)
        return r

    try:
        base = srv.base + "/chan/noarch/"
        q = "?token=" + CANARY
        lock = os.path.join(t.tmp, "lock.yml")
        # one entry with a query, one with a query and a "#md5" fragment
        write_text(lock, conda_lock([
            ("aa", "1.0", base + "aa-1.0-0.tar.bz2" + q, aa["md5"], aa["sha256"]),
            ("versioned", "2.0", base + fn2 + q + "#" + vv["md5"], vv["md5"], vv["sha256"])]))
        dirs = [os.path.join(t.tmp, "DIR"), os.path.join(t.tmp, "DIR2")]
        before = len(srv.requests())
        run("mirror", "-f", lock, dirs[0])
        run("mirror", "-f", lock, "--platform", "linux-64", "file://" + dirs[1])
        t.check("/chan/noarch/aa-1.0-0.tar.bz2" + q in srv.requests()[before:],
                "the mirror downloaded with the query", srv.requests())
        for d in dirs:
            for sub, fn, rec in (("noarch", "aa-1.0-0.tar.bz2", aa), ("noarch", fn2, vv)):
                p = os.path.join(d, sub, fn)
                t.check(os.path.isfile(p) and menvtest.sha256_file(p) == rec["sha256"],
                        "%s: %s/%s mirrored under its own name" % (d, sub, fn),
                        sorted(os.listdir(os.path.join(d, sub)))
                        if os.path.isdir(os.path.join(d, sub)) else None)
            if os.path.isfile(os.path.join(d, "noarch", "repodata.json")):
                got = read_json(os.path.join(d, "noarch", "repodata.json"))
                t.eq((sorted(got["packages"]), sorted(got["packages.conda"])),
                     (["aa-1.0-0.tar.bz2"], [fn2]), "%s: the mirror's index" % d)
            run("index", d)
        # a create and an install from the same lock, the package cache cold
        shutil.rmtree(t.pkgs, ignore_errors=True)
        run("create", "-y", "-n", "e", "-f", lock)
        run("create", "-y", "-n", "e2")
        run("install", "-y", "-n", "e2", "-f", lock)
        for e in ("e", "e2"):
            for dist in ("aa-1.0-0", "versioned-2.0-0"):
                p = os.path.join(t.envs, e, "conda-meta", dist + ".json")
                if t.check(os.path.isfile(p), "%s: %s installed" % (e, dist)):
                    t.check(read_json(p)["url"].startswith(base),
                            "%s: %s's record url" % (e, dist), read_json(p)["url"])
            for args in (["export"], ["export", "--format", "explicit"], ["list"],
                         ["list", "--json"], ["list", "--explicit", "--md5"]):
                run(*args, "-n", e)
        # a mirror that really fails: the sha256 of aa is wrong
        bad = os.path.join(t.tmp, "bad.lock.yml")
        write_text(bad, conda_lock([
            ("versioned", "2.0", base + fn2 + q, vv["md5"], vv["sha256"]),
            ("aa", "1.0", base + "aa-1.0-0.tar.bz2" + q, aa["md5"], "0" * 64)]))
        fresh = os.path.join(t.tmp, "DIR3")
        r = run("mirror", "-f", bad, fresh, rc=None)
        t.one_line_error(r, "mirror with a wrong sha256", ["aa-1.0-0.tar.bz2"])
        t.check(not os.path.lexists(fresh), "the failed mirror made no DIR3",
                tree_snapshot(fresh))
        old = os.path.join(t.tmp, "DIR4")
        write_text(os.path.join(old, "keep.txt"), "mine\n")
        snap = tree_snapshot(old)
        r = run("mirror", "-f", bad, old, rc=None)
        t.one_line_error(r, "mirror into a folder with a wrong sha256", ["aa-1.0-0.tar.bz2"])
        t.eq(tree_snapshot(old), snap, "the failed mirror left DIR4 as it was")
        # one that fails once a package is copied: DIR4/linux-64 is a file, the noarch
        # package copied before it is taken away again, and the noarch folder made for it
        write_text(os.path.join(old, "linux-64"), "not a folder\n")
        snap = tree_snapshot(old)
        late = os.path.join(t.tmp, "late.lock.yml")
        write_text(late, conda_lock([
            ("versioned", "2.0", base + fn2 + q, vv["md5"], vv["sha256"]),
            ("bb", "1.0", srv.base + "/chan/linux-64/bb-1.0-0.tar.bz2" + q, bb["md5"],
             bb["sha256"])]))
        r = run("mirror", "-f", late, old, rc=None)
        t.one_line_error(r, "mirror into a folder whose linux-64 is a file", ["linux-64"])
        t.eq(tree_snapshot(old), snap, "the mirror that failed late left DIR4 as it was")
        # the canary: in no output line, no byte or name menv wrote
        leaked = [str(r) for r in outs if CANARY in r.out or CANARY in r.err]
        t.eq(leaked[:1], [], "the query is in no output line")
        t.eq(walk_for(dirs + [fresh, old, t.root, t.home, tmpdir], CANARY), [],
             "the query is in no byte or file name menv wrote")
        t.eq(os.listdir(tmpdir), [], "nothing left in TMPDIR")
    finally:
        srv.stop()


NULLS = ("~", "null", "NULL", "")


def case_yaml_null_path(t):
    chan = t.make_channel("chan", {"noarch": [os.path.join(
        t.corpus, "packages", "conda", "test-recipes", "noarch", "dependency-1.0-0.conda")]})
    low = os.path.join(t.home, ".condarc")
    lowtext = ("pkgs_dirs: [%s/lowpk]\nenvs_dirs: [%s/lowenvs]\nchannels: [lowchan]\n"
               "default_channels: ['http://low/d']\ncustom_channels: {lowc: 'http://low/c'}\n"
               "migrated_custom_channels: {lowm: 'http://low/m'}\n"
               "client_ssl_cert: %s/low.pem\nclient_ssl_cert_key: %s/low.key\n"
               "always_copy: true\noffline: true\nsmoke_check: true\n"
               "proxy_servers: {http: 'http://low:1', https: 'http://low:2'}\n"
               % (t.tmp, t.tmp, t.tmp, t.tmp))
    nulls = ("pkgs_dirs", "envs_dirs", "channels", "default_channels", "custom_channels",
             "migrated_custom_channels", "client_ssl_cert", "client_ssl_cert_key",
             "always_copy", "offline", "smoke_check")
    def home():  # HOME less the environment registry (~/.conda/environments.txt, conda's)
        return {k: v for k, v in tree_snapshot(t.home).items() if not k.startswith(".conda")}

    home_before = home()
    for null in NULLS:
        sp = " " if null else ""
        t.set_rc("".join("%s:%s%s\n" % (k, sp, null) for k in nulls) +
                 "proxy_servers:\n  http:%s%s\nmirrored_channels:\n  lowm:%s%s\n"
                 % (sp, null, sp, null))
        # alone: each key's default (bools false: conda's boolify(None))
        r = t.menv_run("config", "--show", "--json")
        if t.check(r.rc == 0, "null %r: config --show" % null, r):
            j = r.json()
            got = {k: j.get(k) for k in nulls + ("proxy_servers",)}
            t.eq(got, {"pkgs_dirs": [t.pkgs], "envs_dirs": [t.envs], "channels": [],
                       "default_channels": ["https://repo.anaconda.com/pkgs/main",
                                            "https://repo.anaconda.com/pkgs/r"],
                       "custom_channels": {"pkgs/pro": "https://repo.anaconda.com"},
                       "migrated_custom_channels": {}, "client_ssl_cert": None,
                       "client_ssl_cert_key": None, "always_copy": False, "offline": False,
                       "smoke_check": False, "proxy_servers": {}},
                 "null %r alone: the effective values" % null)
        r = t.menv_run("create", "-y", "-q", "-n", "e", "-c", t.url(chan),
                       "--override-channels", "dependency")
        t.check(r.rc == 0 and os.path.isdir(os.path.join(t.envs, "e", "conda-meta")),
                "null %r: a create goes to the default places" % null, r)
        shutil.rmtree(os.path.join(t.envs, "e"), ignore_errors=True)
        # over a lower file: lists and maps keep its values, the (str, None) keys and a
        # proxy entry are none, bools false
        write_text(low, lowtext)
        r = t.menv_run("config", "--show", "--json")
        if t.check(r.rc == 0, "null %r over ~/.condarc: config --show" % null, r):
            j = r.json()
            got = {k: j.get(k) for k in nulls + ("proxy_servers",)}
            t.eq(got, {"pkgs_dirs": [t.tmp + "/lowpk"], "envs_dirs": [t.tmp + "/lowenvs"],
                       "channels": ["lowchan"], "default_channels": ["http://low/d"],
                       "custom_channels": {"pkgs/pro": "https://repo.anaconda.com",
                                           "lowc": "http://low/c"},
                       "migrated_custom_channels": {"lowm": "http://low/m"},
                       "client_ssl_cert": None, "client_ssl_cert_key": None,
                       "always_copy": False, "offline": False, "smoke_check": False,
                       "proxy_servers": {"https": "http://low:2"}},
                 "null %r over ~/.condarc: the effective values" % null)
        os.unlink(low)
    t.eq(home(), home_before, "nothing made or changed under HOME")

    # refused: FILE:LINE:COL, the key, and no HOME; with the root prefix from .condarc
    refused = ("root_prefix", "ssl_verify", "channel_alias", "channel_priority",
               "update_modifier", "download_threads", "remote_max_retries",
               "remote_read_timeout_secs", "remote_connect_timeout_secs",
               "remote_backoff_factor", "repodata_max_bytes", "local_repodata_ttl")
    noroot = {"MENV_ROOT_PREFIX": ""}
    for key in refused:
        for null in NULLS:
            t.set_rc("# nulls\n%s:%s%s\n" % (key, " " if null else "", null))
            col = len(key) + (3 if null else 2)
            what = ("is null ('%s' is YAML's null" % null) if null else \
                "has no value (YAML's null)"
            needles = ["%s:2:%d: " % (t.rc, col), "%s %s" % (key, what)]
            if key == "ssl_verify":
                needles.append("conda reads it as false")
            for args in (("config", "--show", key), ("create", "-y", "-n", "e", "-c",
                                                      t.url(chan), "--override-channels",
                                                      "dependency")):
                r = t.menv_run(*args, env=noroot)
                t.one_line_error(r, "%s: %r: menv %s" % (key, null, args[0]), needles)
    # a null list entry or custom channel location: refused (conda's text 'None')
    for text, needle in (("pkgs_dirs: [~]\n", "pkgs_dirs must be a list of strings, not a "
                          "null '~'"),
                         ("envs_dirs:\n  - null\n", "envs_dirs must be a list of strings"),
                         ("channels: [x, ~]\n", "channels must be a list of strings"),
                         ("custom_channels: {a: ~}\n", "custom_channels.a must be a str, not "
                          "a null '~'"),
                         ("migrated_custom_channels:\n  a:\n", "migrated_custom_channels.a "
                          "must be a str")):
        t.set_rc(text)
        t.one_line_error(t.menv_run("config", "--show", env=noroot), repr(text),
                         [t.rc + ":", needle])
    t.eq(home(), home_before, "nothing made under HOME by a refused null")

    # text: a quoted '~' and ~/x are expanded as before (conda's expanduser)
    t.set_rc("root_prefix: '~'\npkgs_dirs: ['~/p', ~/q]\nclient_ssl_cert: ~/c.pem\n"
             "ssl_verify: '~/ca.pem'\n")
    r = t.menv_run("config", "--show", "--json", env=noroot)
    if t.check(r.rc == 0, "quoted '~': config --show", r):
        j = r.json()
        t.eq((j.get("root_prefix"), j.get("pkgs_dirs"), j.get("client_ssl_cert"),
              j.get("ssl_verify")),
             (t.home, [t.home + "/p", t.home + "/q"], t.home + "/c.pem", t.home + "/ca.pem"),
             "'~' and ~/x: text, expanded")


def case_revision_range(t):
    chan = t.make_channel("chan", {"noarch": [os.path.join(
        t.corpus, "packages", "conda", "test-recipes", "noarch", "dependency-1.0-0.conda")]})
    t.menv_ok("create", "-y", "-q", "-n", "e", "-c", t.url(chan), "--override-channels",
              "dependency")
    meta = os.path.join(t.envs, "e", "conda-meta")
    before = tree_snapshot(meta)
    for typed, why in (("99999999999999999999", "no revision is that large"),
                       ("9223372036854775808", "no revision is that large"),
                       ("18446744073709551616", "no revision is that large"),
                       ("-1", "a revision number"), ("+1", "a revision number"),
                       (" 1", "a revision number"), ("1x", "a revision number"),
                       ("0x10", "a revision number"), ("", "a revision number")):
        for cmd in ("install",):  # the one command with --revision
            r = t.menv_run(cmd, "-y", "-n", "e", "--revision", typed)
            t.eq(r.rc, 2, "%s --revision %r: exit 2" % (cmd, typed))
            t.one_line_error(r, "%s --revision %r" % (cmd, typed),
                             ["invalid revision '%s' (%s" % (typed, why)], nonzero_only=True)
            t.check("9223372036854775807" not in r.err or typed == "9223372036854775807",
                    "%s --revision %r: no clamped number" % (cmd, typed), r.err)
    r = t.menv_run("install", "-y", "-n", "e", "--revision", "9223372036854775807")
    t.one_line_error(r, "the largest long", ["revision 9223372036854775807 does not exist"])
    t.eq(tree_snapshot(meta), before, "the environment is as it was")
    # $COLUMNS: too large or not a number, the table has no width limit
    want = t.menv_ok("list", "-n", "e", env={"COLUMNS": ""}).out
    for cols in ("99999999999999999999", "4294967297", "-5", "80x"):
        r = t.menv_run("list", "-n", "e", env={"COLUMNS": cols})
        t.eq((r.rc, r.out), (0, want), "COLUMNS=%s: list as with no width" % cols)


TOK = "tk-Cr3dQ9"


def case_lock_credentials(t):
    sys.path.insert(0, HERE)
    from test_url_userinfo import AuthServer, USER, PW  # 401 without USER / PW
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    # a token server (the channel exists only under /t/TOK/) and a user:password one
    # (test_url_userinfo's: 401 without alice / PW)
    srv1, srv2 = os.path.join(t.tmp, "srv1"), os.path.join(t.tmp, "srv2")
    for sub in (os.path.join(srv1, "t", TOK, "chan2"), os.path.join(srv2, "chan"),
                os.path.join(srv2, "cust", "chanc")):
        os.makedirs(os.path.join(sub, "noarch"))
        for fn in ("dependency-1.0-0.conda", "dependent-1.0-0.conda"):
            shutil.copy(os.path.join(P, fn), os.path.join(sub, "noarch", fn))
        t.index(sub)
    h1 = t.http_server(srv1)
    h2 = AuthServer(srv2)
    # HOME/.condarc is where the user put the credentials; the rc below names it
    given = {os.path.join(t.home, ".condarc")}
    tmpdir = os.path.join(t.tmp, "tmpdir")
    os.makedirs(tmpdir)
    env = {"TMPDIR": tmpdir}
    outs = []
    try:
        tok_url = "%s/t/%s/chan2" % (h1.base, TOK)
        auth = "http://%s:%s@%s" % (USER, PW, h2.hostport)
        kinds = [
            ("channels token", "channels: ['%s']\n" % tok_url, []),
            ("channels user:password", "channels: ['%s/chan']\n" % auth, []),
            ("custom_channels", "custom_channels: {chanc: '%s/cust'}\nchannels: [chanc]\n"
             % auth, []),
            ("channel_alias", "channel_alias: '%s/'\nchannels: [chan]\n" % auth, []),
            ("-c", "", ["-c", tok_url, "--override-channels"]),
        ]
        for i, (what, rc, cargs) in enumerate(kinds):
            write_text(os.path.join(t.home, ".condarc"), rc)
            envyml = os.path.join(t.tmp, "env%d.yml" % i)
            write_text(envyml, "name: x\ndependencies:\n  - dependent\n")
            lock = os.path.join(t.tmp, "lock%d.yml" % i)
            r = t.menv_run("lock", "-f", envyml, "--platform", "linux-64", "--lockfile", lock,
                           *cargs, env=env)
            outs.append(r)
            if not t.check(r.rc == 0, "%s: menv lock" % what, r):
                continue
            r = t.menv_run("create", "-y", "-q", "-n", "made%d" % i, "dependent", *cargs,
                           env=env)
            outs.append(r)
            t.check(r.rc == 0, "%s: create from the channel" % what, r)
            r = t.menv_run("export", "-n", "made%d" % i, env=env)
            outs.append(r)
            export = os.path.join(t.tmp, "export%d.yml" % i)
            write_text(export, r.out)
            for src in (lock, export):
                text = open(src).read()
                t.check(TOK not in text and PW not in text,
                        "%s: %s holds no credential" % (what, os.path.basename(src)), text)
                t.check("/noarch/dependent-1.0-0.conda" in text,
                        "%s: %s names the package's URL" % (what, os.path.basename(src)), text)
                shutil.rmtree(t.pkgs, ignore_errors=True)  # the cache cold: downloaded
                name = "from-%s-%d" % (os.path.basename(src).split(".")[0], i)
                r = t.menv_run("create", "-y", "-n", name, "-f", src, *cargs, env=env)
                outs.append(r)
                if t.check(r.rc == 0, "%s: create -f %s" % (what, os.path.basename(src)), r):
                    t.check(os.path.isfile(os.path.join(t.envs, name, "conda-meta",
                                                        "dependent-1.0-0.json")),
                            "%s: %s: dependent installed" % (what, src))
            # a mirror of the lock: its packages downloaded with the same credentials (from
            # .condarc: mirror takes -f or -c, not both)
            if cargs:
                continue
            mirror = os.path.join(t.tmp, "mirror%d" % i)
            r = t.menv_run("mirror", "-f", lock, mirror, env=env)
            outs.append(r)
            if t.check(r.rc == 0, "%s: mirror -f %s" % (what, os.path.basename(lock)), r):
                t.check(os.path.isfile(os.path.join(mirror, "noarch",
                                                    "dependent-1.0-0.conda")),
                        "%s: the mirror holds dependent" % what)
        bad = [o.args for o in outs if any(x in o.out + o.err for x in (TOK, PW, PW[:4]))]
        t.eq(bad, [], "no output line holds the token or the password")
        wrote = [t.root, t.home, tmpdir] + [os.path.join(t.tmp, f) for f in os.listdir(t.tmp)
                                             if f.startswith(("export", "lock", "mirror"))]
        t.eq(walk_for(wrote, TOK, given) + walk_for(wrote, PW, given) +
             walk_for(wrote, PW.replace("@", "%40"), given), [],
             "no byte menv wrote holds the token or the password")
        # every request to the user:password server carried them
        t.eq(sorted(set(c for _, _, c in h2.log)), ["%s:%s" % (USER, PW)],
             "every request to the password server had alice's credentials")
    finally:
        h1.stop()
        h2.stop()


CASES = {"mirror_query": case_mirror_query, "yaml_null_path": case_yaml_null_path,
         "lock_credentials": case_lock_credentials,
         "revision_range": case_revision_range}


def body(t, case=None):
    if case not in CASES:
        raise menvtest.Fatal("unknown case %r (one of %s)" % (case, ", ".join(CASES)))
    CASES[case](t)


if __name__ == "__main__":
    menvtest.main(body, "attack11_" + (sys.argv[3] if len(sys.argv) > 3 else "?"))

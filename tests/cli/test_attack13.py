#!/usr/bin/env python3
"""cli.attack13_<case>: what a thirteenth outside attack (on fix11's credentials for lock URLs)
found, one case each (python3 test_attack13.py MENV SHARED CASE):

- lock_credentials_climb: a lock's (or an explicit file's) URL that lies under a configured
  channel gets that channel's /t/TOKEN/ or user:password for its download (fix11). The test
  was a text prefix at a '/', made before the URL reached libcurl, which removes dot segments
  ("/chan/../other" is "/other") and servers that decode '%2e%2e', '%2F' or '..;' then do the
  same: `http://H/chan/../other/noarch/x.conda` was fetched from H/other with chan's
  password, and with a token channel as H/t/TOKEN/other/... Credentials go with a URL only
  when its path past the channel's base has no dot segment (".", "..", literal or
  percent-encoded, also before a ';') and no encoded '/' or '\\': such a URL is fetched as
  written, without them. Each spelling is tried against a server that logs every request's
  path and Authorization header, for a user:password channel and a token one: no request
  outside the channel carries the password or the token, and a plain URL under the channel
  still gets them (the lock installs). A redirect from the channel's server to another port
  carries neither (libcurl's rule, kept), and no output line or byte menv wrote holds them.
- mirror_same_name: `menv mirror -f LOCK --platform linux-64 --platform osx-64 DEST` (and
  `mirror -c CHANNEL` with both platforms) of packages whose file name is the same in two
  subdirs (conda-forge's python_abi-3.12-5_cp312.conda is in linux-64 and osx-64, other
  bytes) failed "sha256 mismatch for '/tmp/menv-mirror-N/pkgs/aa-1.0-0.tar.bz2'": the
  staging package cache held one file per name (the URL's basename), so the second download
  overwrote the first. Each subdir is staged apart now: DEST holds both files, each with its
  own bytes and repodata. Two different files for one <subdir>/<fn> (two channels' noarch
  aa-1.0-0.tar.bz2) cannot both be in DEST: refused in one line naming both URLs, before
  any download, DEST not made; the same file listed twice is copied once.
- ssl_verify_empty: fix11 refuses `ssl_verify: ~` (YAML's null, which conda reads as false)
  rather than turn certificate checks off, but an empty text did just that: `ssl_verify: ''`,
  `ssl_verify: ""`, CONDA_SSL_VERIFY= or MENV_SSL_VERIFY= (a variable "unset" by emptying it)
  gave ssl_verify False, and `menv config --set ssl_verify ''` wrote it. An empty ssl_verify
  is no value, refused as the null is: one line naming FILE:LINE:COL or the variable, exit
  1; `config --set` leaves the file as it was. `ssl_verify: false` still turns checks off.
- url_folder_host: a lock's package URL at a server's root ("http://127.0.0.1:PORT/x.conda")
  had the host for its folder (menv_url_folder walked back past the "//"): `create -f` wrote
  subdir "127.0.0.1:PORT" into conda-meta, and `mirror -f` made a channel subdir named
  "127.0.0.1:PORT" holding the package, noarch's repodata without it. The authority is no
  folder of the path now: the record's subdir is the package's own (noarch), and the mirror
  puts it in noarch/, listed in noarch/repodata.json; a conda-lock and an explicit file alike.
"""
import base64
import http.server
import os
import shutil
import sys
import threading

import menvtest
from menvtest import build_tar_bz2, md5_file, read_json, sha256_file, walk_for, write_text

HERE = os.path.dirname(os.path.abspath(__file__))
TOK = "tk-At13Q7"
USER, PW = "alice", "pw-At13Zx9"


class LogServer:
    """Serves `directory` on 127.0.0.1; logs (method, path, Basic credentials or None);
    `redirects` maps a path prefix to a function of the path giving a Location (302)."""

    def __init__(self, directory, redirects=None):
        self.log = []
        self.redirects = redirects or {}
        srv = self

        class H(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=directory, **kw)

            def log_message(self, *a):
                pass

            def record(self):
                h = self.headers.get("Authorization") or ""
                cred = (base64.b64decode(h[6:]).decode("utf-8", "replace")
                        if h.startswith("Basic ") else (h or None))
                srv.log.append((self.command, self.path, cred))
                for pre, to in srv.redirects.items():
                    if self.path.startswith(pre):
                        self.send_response(302)
                        self.send_header("Location", to(self.path))
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return False
                return True

            def do_GET(self):
                if self.record():
                    super().do_GET()

            def do_HEAD(self):
                if self.record():
                    super().do_HEAD()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.port = self.httpd.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def case_lock_credentials_climb(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    fn = "dependency-1.0-0.conda"
    srv = os.path.join(t.tmp, "srv")
    for sub in ("chan", "other", "t/%s/chan" % TOK, "t/%s/other" % TOK):
        os.makedirs(os.path.join(srv, sub, "noarch"))
        shutil.copy(os.path.join(P, fn), os.path.join(srv, sub, "noarch", fn))
    md5 = md5_file(os.path.join(P, fn))
    other = LogServer(srv)
    chan = LogServer(srv, {"/chan/redir/": lambda p: "%s/other/%s" % (
        other.base, p.split("/redir/", 1)[1]), "/t/%s/chan/redir/" % TOK: lambda p: (
        "%s/other/%s" % (other.base, p.split("/redir/", 1)[1]))})
    given = {os.path.join(t.home, ".condarc")}
    tmpdir = os.path.join(t.tmp, "tmpdir")
    os.makedirs(tmpdir)
    env = {"TMPDIR": tmpdir}
    outs = []
    # spellings of a path that leaves /chan once a client or a server normalizes it
    climbs = ["chan/../other", "chan/./../other", "chan/%2e%2e/other", "chan/%2E%2e/other",
              "chan/.%2e/other", "chan/..;/other", "chan/%2F..%2Fother", "chan/%2f..%2fother",
              "chan/..%5Cother", "chan/x/../../other", "chan/noarch/..%2F..%2Fother",
              "chan/%2e%2e%2fother"]
    try:
        for kind, rc in (("user:password", "channels: ['http://%s:%s@127.0.0.1:%d/chan']\n"
                          % (USER, PW, chan.port)),
                         ("token", "channels: ['http://127.0.0.1:%d/t/%s/chan']\n"
                          % (chan.port, TOK))):
            write_text(os.path.join(t.home, ".condarc"), rc)
            for i, path in enumerate(climbs + ["chan/redir"]):
                chan.log.clear()
                other.log.clear()
                shutil.rmtree(t.pkgs, ignore_errors=True)
                ex = os.path.join(t.tmp, "climb-%s-%d.txt" % (kind[0], i))
                write_text(ex, "@EXPLICIT\n%s/%s/noarch/%s#%s\n" % (chan.base, path, fn, md5))
                r = t.menv_run("create", "-y", "-q", "-n", "c%s%d" % (kind[0], i), "--file",
                               ex, env=env)
                outs.append(r)
                # a redirect: the channel's server is asked with them, the other port not
                seen = other.log if path == "chan/redir" else chan.log + other.log
                sent = [(m, p, c) for m, p, c in seen if c is not None or TOK in p]
                t.eq(sent, [], "%s channel, %s: no request outside it carries the credential"
                     % (kind, path))
                if path == "chan/redir":
                    t.check(r.rc == 0 and other.log, "%s channel: redirected" % kind, r)
            # a plain URL under the channel still gets them
            chan.log.clear()
            shutil.rmtree(t.pkgs, ignore_errors=True)
            ex = os.path.join(t.tmp, "plain-%s.txt" % kind[0])
            write_text(ex, "@EXPLICIT\n%s/chan/noarch/%s#%s\n" % (chan.base, fn, md5))
            r = t.menv_run("create", "-y", "-q", "-n", "plain%s" % kind[0], "--file", ex,
                           env=env)
            outs.append(r)
            t.check(r.rc == 0, "%s channel: create from a plain URL under it" % kind, r)
            if kind == "token":
                t.eq(sorted(set(p for _, p, _ in chan.log)),
                     ["/t/%s/chan/noarch/%s" % (TOK, fn)], "token channel: asked with it")
            else:
                t.eq(sorted(set((c, p) for _, p, c in chan.log)),
                     [("%s:%s" % (USER, PW), "/chan/noarch/" + fn)],
                     "user:password channel: asked with them")
        bad = [o.args for o in outs if any(x in o.out + o.err for x in (TOK, PW))]
        t.eq(bad, [], "no output line holds the token or the password")
        wrote = [t.root, t.home, tmpdir]
        t.eq(walk_for(wrote, TOK, given) + walk_for(wrote, PW, given), [],
             "no byte menv wrote holds the token or the password")
    finally:
        chan.stop()
        other.stop()


def lock_text(entries, platforms):
    """A conda-lock v1 file of entries [(platform, name, url, path of the file)]."""
    text = ("version: 1\nmetadata:\n  content_hash: {}\n  channels: []\n  platforms: [%s]\n"
            "  sources: []\npackage:\n" % ", ".join(platforms))
    for plat, name, url, f in entries:
        text += ("- name: %s\n  version: '1.0'\n  manager: conda\n  platform: %s\n"
                 "  dependencies: {}\n  url: %s\n  hash: {md5: %s, sha256: %s}\n"
                 "  category: main\n  optional: false\n"
                 % (name, plat, url, md5_file(f), sha256_file(f)))
    return text


def case_mirror_same_name(t):
    srv = os.path.join(t.tmp, "srv")
    fn = "aa-1.0-0.tar.bz2"
    files = {}
    for sub, data in (("linux-64", b"one\n"), ("osx-64", b"two\n")):
        files[sub] = os.path.join(srv, "chan", sub, fn)
        build_tar_bz2(files[sub], {"name": "aa", "version": "1.0", "build": "0",
                                   "build_number": 0, "subdir": sub, "depends": []},
                      files={"share/aa.txt": data})
    for c, data in (("c1", b"one\n"), ("c2", b"two\n")):
        files[c] = os.path.join(srv, c, "noarch", fn)
        build_tar_bz2(files[c], {"name": "aa", "version": "1.0", "build": "0",
                                 "build_number": 0, "subdir": "noarch", "depends": []},
                      files={"share/aa.txt": data})
    t.index(os.path.join(srv, "chan"))
    h = t.http_server(srv)
    try:
        both = ["--platform", "linux-64", "--platform", "osx-64"]
        lock = os.path.join(t.tmp, "lock.yml")
        write_text(lock, lock_text([(p, "aa", "%s/chan/%s/%s" % (h.base, p, fn), files[p])
                                    for p in ("linux-64", "osx-64")] +
                                   [("linux-64", "aa", "%s/chan/linux-64/%s" % (h.base, fn),
                                     files["linux-64"])], ["linux-64", "osx-64"]))
        for what, args in (("mirror -f", ["-f", lock]), ("mirror -f, both platforms",
                                                         ["-f", lock] + both),
                           ("mirror -c", ["-c", "%s/chan" % h.base] + both)):
            dest = os.path.join(t.tmp, "dest-%d" % len(args))
            r = t.menv_run("mirror", *args, dest)
            if not t.check(r.rc == 0, "%s: the same name in two subdirs mirrors" % what, r):
                continue
            for sub in ("linux-64", "osx-64"):
                got = os.path.join(dest, sub, fn)
                t.eq(sha256_file(got) if os.path.isfile(got) else None,
                     sha256_file(files[sub]), "%s: %s/%s is %s's file" % (what, sub, fn, sub))
                rd = read_json(os.path.join(dest, sub, "repodata.json"))
                t.eq(rd["packages"].get(fn, {}).get("sha256"), sha256_file(files[sub]),
                     "%s: %s's repodata names its file" % (what, sub))
        # two files for one <subdir>/<fn>: refused before any download, DEST not made
        lock2 = os.path.join(t.tmp, "lock2.yml")
        write_text(lock2, lock_text([("linux-64", "aa", "%s/%s/noarch/%s" % (h.base, c, fn),
                                      files[c]) for c in ("c1", "c2")], ["linux-64"]))
        dest = os.path.join(t.tmp, "dest-two")
        before = len(h.requests(("GET",)))
        r = t.menv_run("mirror", "-f", lock2, dest)
        t.one_line_error(r, "two files for noarch/" + fn,
                         ["noarch/" + fn, "/c1/noarch/" + fn, "/c2/noarch/" + fn])
        t.eq(len(h.requests(("GET",))), before, "two files for one name: nothing downloaded")
        t.check(not os.path.exists(dest), "two files for one name: DEST not made")
    finally:
        h.stop()


def case_ssl_verify_empty(t):
    rc = os.path.join(t.home, ".condarc")
    for text in ("ssl_verify: ''\n", 'ssl_verify: ""\n', "channels: [a]\nssl_verify: ''\n"):
        write_text(rc, text)
        r = t.menv_run("config", "--show", "ssl_verify", "--json")
        line = text.count("\n")
        t.one_line_error(r, repr(text), ["%s:%d:" % (rc, line), "ssl_verify", "no value"])
    os.remove(rc)
    for var in ("CONDA_SSL_VERIFY", "MENV_SSL_VERIFY"):
        r = t.menv_run("config", "--show", "ssl_verify", "--json", env={var: ""})
        t.one_line_error(r, var + "=", ["$" + var, "ssl_verify", "no value"])
    write_text(rc, "channels: [a]\n")
    r = t.menv_run("config", "--file", rc, "--set", "ssl_verify", "")
    t.check(r.rc != 0, "config --set ssl_verify '': refused", r)
    t.eq(open(rc).read(), "channels: [a]\n", "config --set ssl_verify '': the file as it was")
    write_text(rc, "ssl_verify: false\n")
    r = t.menv_run("config", "--show", "ssl_verify", "--json")
    t.eq((r.rc, (r.try_json() or {}).get("ssl_verify")), (0, False), "ssl_verify: false")


def case_url_folder_host(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    fn = "dependency-1.0-0.conda"
    srv = os.path.join(t.tmp, "srv")
    os.makedirs(srv)
    shutil.copy(os.path.join(P, fn), os.path.join(srv, fn))
    h = t.http_server(srv)
    try:
        url = "%s/%s" % (h.base, fn)
        hostport = h.base.split("//", 1)[1]
        cl = os.path.join(t.tmp, "lock.yml")
        write_text(cl, lock_text([("linux-64", "dependency", url, os.path.join(srv, fn))],
                                 ["linux-64"]))
        ex = os.path.join(t.tmp, "explicit.txt")
        write_text(ex, "@EXPLICIT\n%s#%s\n" % (url, md5_file(os.path.join(srv, fn))))
        for what, lock in (("conda-lock", cl), ("explicit", ex)):
            name = "e-" + what
            r = t.menv_run("create", "-y", "-q", "-n", name, "-f", lock)
            if t.check(r.rc == 0, "%s: create -f" % what, r):
                rec = read_json(os.path.join(t.envs, name, "conda-meta",
                                             "dependency-1.0-0.json"))
                t.eq(rec.get("subdir"), "noarch", "%s: the record's subdir" % what)
        dest = os.path.join(t.tmp, "dest")
        r = t.menv_run("mirror", "-f", cl, dest)
        if t.check(r.rc == 0, "mirror -f", r):
            t.eq(sorted(os.listdir(dest)), ["noarch"], "mirror: no subdir named after the host")
            t.check(not os.path.exists(os.path.join(dest, hostport)), "mirror: no %s" % hostport)
            rd = read_json(os.path.join(dest, "noarch", "repodata.json"))
            t.eq(sorted(rd.get("packages.conda", {})), [fn], "mirror: noarch lists it")
    finally:
        h.stop()


CASES = {"lock_credentials_climb": case_lock_credentials_climb,
         "mirror_same_name": case_mirror_same_name, "ssl_verify_empty": case_ssl_verify_empty,
         "url_folder_host": case_url_folder_host}


def body(t, case=None):
    if case not in CASES:
        raise menvtest.Fatal("unknown case %r (one of %s)" % (case, ", ".join(CASES)))
    CASES[case](t)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    menvtest.main(body, "attack13_" + (sys.argv[3] if len(sys.argv) > 3 else "?"))

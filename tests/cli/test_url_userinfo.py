#!/usr/bin/env python3
"""cli.url_userinfo: a channel URL whose password holds a raw '@'
(`http://alice:s3cr@t-pw@127.0.0.1:PORT/chan`) works: the userinfo ends at the LAST '@' of the
authority, as Python's urlparse (conda's) and browsers take it; curl's own parser stopped at
the first one and said "bad URL". The loopback server (http.server, as the other HTTP tests,
here asking for Basic credentials) gets exactly `alice` / `s3cr@t-pw` on every request
(repodata and package), a %40-encoded '@' is the same password, a wrong password is a 401
error; and the password appears in no output line and no file menv wrote (the whole
password is hidden, not the part after its first '@').

A password holding a raw '/', '#', '?' or space (not %-encoded) is refused as an invalid
channel, on the command line and in an environment file, and no part of it appears in the
error, the --json message or any file: the error quotes the URL without its userinfo (the
userinfo ends at the LAST '@' whatever bytes come before it). Before, "S3c ret" came back
whole in "invalid channel '...'", "S3c/ret" in "cannot download '...'", and "S3c#ret" left
"usr:S3c" in the URL menv downloaded from.
"""
import base64
import http.server
import json
import os
import shutil
import threading

import menvtest

USER, PW = "alice", "s3cr@t-pw"
SECRETS = (PW, "s3cr", "t-pw", "s3cr%40t-pw")
# raw bytes a password should have %-encoded; each half of each password is a canary
BAD_PWS = ("Xq7k Zw9v", "Xq7k/Zw9v", "Xq7k#Zw9v", "Xq7k?Zw9v", "Xq7k/Zw9v#Yp3?Vb6 Rn2@x")
BAD = ("Xq7k", "Zw9v", "Yp3", "Vb6", "Rn2")


class AuthServer:
    """Serves `directory` to requests with Basic USER:PW only (401 otherwise); logs each
    request's path and decoded credentials."""

    def __init__(self, directory):
        self.log = []
        srv = self

        class H(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=directory, **kw)

            def log_message(self, *a):
                pass

            def check(self):
                h = self.headers.get("Authorization") or ""
                cred = None
                if h.startswith("Basic "):
                    cred = base64.b64decode(h[6:]).decode("utf-8", "replace")
                srv.log.append((self.command, self.path, cred))
                if cred != "%s:%s" % (USER, PW):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="chan"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return False
                return True

            def do_GET(self):
                if self.check():
                    super().do_GET()

            def do_HEAD(self):
                if self.check():
                    super().do_HEAD()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.hostport = "127.0.0.1:%d" % self.httpd.server_address[1]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def walk_for(top, needles):
    """Files under top whose name or bytes hold one of needles."""
    hits = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if any(n in name for n in needles):
                hits.append(p)
            if name in filenames and not os.path.islink(p):
                with open(p, "rb") as f:
                    data = f.read()
                if any(n.encode() in data for n in needles):
                    hits.append(p)
    return hits


def malformed(t, s):
    """Channels whose password holds a raw '/', '#', '?' or space: refused, nothing leaks."""
    for pw in BAD_PWS:
        url = "http://%s:%s@%s/chan" % (USER, pw, s.hostport)
        shown = "'http://%s/chan'" % s.hostport
        envfile = os.path.join(t.tmp, "bad-env.yml")
        with open(envfile, "w") as f:
            f.write("name: bad\nchannels:\n  - '%s'\ndependencies:\n  - dependency\n" % url)
        runs = [
            t.menv_run("create", "--dry-run", "-n", "x", "-c", url, "--override-channels",
                       "dependency"),
            t.menv_run("create", "-y", "-p", os.path.join(t.tmp, "bad-prefix"), "-c", url,
                       "--override-channels", "dependency"),
            t.menv_run("search", "-c", url, "--override-channels", "dependency"),
            t.menv_run("create", "-y", "-p", os.path.join(t.tmp, "bad-prefix"), "-f", envfile),
        ]
        for r in runs:
            t.one_line_error(r, "%r: menv %s" % (pw, " ".join(r.args[:2])),
                             ["invalid channel", shown])
        r = t.menv_run("create", "--dry-run", "--json", "-n", "x", "-c", url,
                       "--override-channels", "dependency")
        runs.append(r)
        t.eq(r.rc, 1, "%r: --json exits 1" % pw)
        try:
            msg = json.loads(r.out).get("message", "")
        except ValueError:
            msg = None
        t.check(msg and msg.startswith("invalid channel %s" % shown),
                "%r: the --json message quotes the URL without its userinfo" % pw, r)
        for r in runs:
            for n in BAD:
                t.check(n not in r.out and n not in r.err,
                        "%r: menv %s: %r in no output line" % (pw, " ".join(r.args[:2]), n), r)
        t.check(not os.path.exists(os.path.join(t.tmp, "bad-prefix")),
                "%r: no environment was made" % pw)


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    srv = os.path.join(t.tmp, "srv")
    os.makedirs(os.path.join(srv, "chan", "noarch"))
    shutil.copyfile(os.path.join(P, "dependency-1.0-0.conda"),
                    os.path.join(srv, "chan", "noarch", "dependency-1.0-0.conda"))
    t.index(os.path.join(srv, "chan"))
    s = AuthServer(srv)
    try:
        outputs = []
        for label, pw in (("raw '@'", PW), ("%40-encoded '@'", "s3cr%40t-pw")):
            url = "http://%s:%s@%s/chan" % (USER, pw, s.hostport)
            prefix = os.path.join(t.tmp, "env-%d" % len(outputs))
            del s.log[:]
            shutil.rmtree(t.pkgs, ignore_errors=True)  # downloaded again, with these credentials
            r = t.menv_run("create", "-p", prefix, "-c", url, "--override-channels", "-y",
                           "dependency")
            outputs.append(r)
            t.eq(r.rc, 0, "%s: create from the channel works" % label)
            t.check(os.path.isfile(os.path.join(prefix, "conda-meta",
                                                "dependency-1.0-0.json")),
                    "%s: the package is installed" % label, r)
            t.check(any(p.endswith(".conda") for _, p, _ in s.log),
                    "%s: the package was downloaded from the server" % label, s.log)
            t.eq(sorted(set(c for _, _, c in s.log)), ["%s:%s" % (USER, PW)],
                 "%s: every request carried alice / s3cr@t-pw" % label)
            r = t.menv_run("search", "-c", url, "--override-channels", "dependency")
            outputs.append(r)
            t.eq(r.rc, 0, "%s: search works" % label)
        # a wrong password: one line naming the 401, the password not in it
        url = "http://%s:wr@ng-pw@%s/chan2" % (USER, s.hostport)
        r = t.menv_run("search", "-c", url, "--override-channels", "dependency")
        t.one_line_error(r, "wrong password", ["401"])
        t.check("wr@ng" not in r.err and "ng-pw" not in r.err,
                "wrong password: no part of it in the error", r.err)
        t.check("'http://%s/chan2/" % s.hostport in r.err,
                "wrong password: the URL is shown without its user:password (conda's "
                "remove_auth)", r.err)
        for r in outputs:
            for n in SECRETS:
                t.check(n not in r.out and n not in r.err,
                        "menv %s: %r in no output line" % (" ".join(r.args[:2]), n), r)
        malformed(t, s)
        t.eq(walk_for(t.root, SECRETS + BAD) + walk_for(t.home, SECRETS + BAD) +
             [p for i in range(2) for p in walk_for(os.path.join(t.tmp, "env-%d" % (2 * i)),
                                                    SECRETS)],
             [], "no file menv wrote holds the password or a part of it")
    finally:
        s.stop()

    # an '@' in the path after a well-formed host is no userinfo (RFC 3986): a channel folder
    # named "sub@x" is recorded whole (the redaction once cut it to "file://x", so records,
    # `list --explicit` and exports named a channel that does not exist)
    at = t.make_channel("sub@x", {"noarch": [os.path.join(P, "dependency-1.0-0.conda")]})
    prefix = os.path.join(t.tmp, "env-at")
    t.menv_ok("create", "-p", prefix, "-c", "file://" + at, "--override-channels", "-y",
              "dependency")
    with open(os.path.join(prefix, "conda-meta", "dependency-1.0-0.json")) as f:
        rec = json.load(f)
    t.eq(rec["url"], "file://%s/noarch/dependency-1.0-0.conda" % at,
         "a channel under 'sub@x': the record's url names it whole")
    r = t.menv_run("list", "-p", prefix, "--explicit")
    t.check("file://%s/noarch/dependency-1.0-0.conda" % at in r.out,
            "a channel under 'sub@x': list --explicit names it whole", r)


if __name__ == "__main__":
    menvtest.main(body)

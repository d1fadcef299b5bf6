#!/usr/bin/env python3
"""cli.progress: download progress. On a terminal, bars redrawn in place: one per running
download (name, bytes) above an overall one (bytes, rate, packages done); piped, one plain
line per package; with --json, stdout holds only JSON and stderr no bar; with -q, nothing."""
import http.server
import json
import os
import pty
import shutil
import subprocess
import threading
import time

import menvtest


class SlowHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files at about 80 KB/s, so that downloads are seen running."""

    def copyfile(self, source, outputfile):
        while True:
            chunk = source.read(4096)
            if not chunk:
                break
            outputfile.write(chunk)
            outputfile.flush()
            time.sleep(0.05)

    def log_message(self, *args):
        pass


def on_tty(cmd, env):
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(master)
    return p.returncode, out.decode("utf-8", "replace")


def per_download_bars(t):
    """Two ~110 KB packages from a slow loopback server, from an explicit lock (no solve)."""
    srv_dir = os.path.join(t.tmp, "slow")
    os.makedirs(os.path.join(srv_dir, "chan", "linux-64"))
    files = [os.path.join(t.corpus, "packages", "conda", "conda_format_repo", "linux-64",
                          "zlib-1.2.11-h7b6447c_3.conda"),
             os.path.join(t.corpus, "packages", "conda-package-handling",
                          "mock-2.0.0-py37_1000.conda")]
    for f in files:
        shutil.copy(f, os.path.join(srv_dir, "chan", "linux-64"))
    handler = lambda *a, **kw: SlowHandler(*a, directory=srv_dir, **kw)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        lock = os.path.join(t.tmp, "slow.txt")
        menvtest.write_text(lock, "@EXPLICIT\n" + "".join(
            "http://127.0.0.1:%d/chan/linux-64/%s#%s\n" % (srv.server_address[1], os.path.basename(f),
                                             menvtest.sha256_file(f)) for f in files))
        rc, text = on_tty([t.menv, "create", "-n", "slow", "-f", lock], t.environ())
    finally:
        srv.shutdown()
    t.eq(rc, 0, "create from a slow server on a terminal succeeds")
    for name in ("zlib-1.2.11-h7b6447c_3.conda", "mock-2.0.0-py37_1000.conda"):
        t.check(any(l.lstrip("\r\x1b[J ").startswith(name) and "[" in l and " MB" in l
                    for l in text.splitlines()),
                "a bar of its own while %s downloads" % name, text[-1500:])
    t.check("/ 0.11 MB" in text, "a download's size from Content-Length (the lock has none)",
            text[-1500:])
    t.check("\x1b[1A" in text or "\x1b[2A" in text,
            "the bars are redrawn in place (cursor up)", repr(text[-800:]))
    t.check(text.rstrip().splitlines()[-1].count("downloading [") <= 1 and
            "2/2" in text.split("downloading [")[-1],
            "the overall bar ends at 2/2", repr(text[-800:]))


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, f) for f in (
        "dependency-2.0-0.conda", "dependent-2.0-0.conda")]})
    C = ["-c", t.url(chan), "--override-channels", "-y"]

    # a terminal on stderr
    rc, text = on_tty([t.menv, "create", "-n", "tty"] + C + ["dependent"], t.environ())
    t.eq(rc, 0, "create on a terminal succeeds")
    t.check("\r\x1b[J  downloading [" in text and "MB/s" in text and " 2/2 " in text,
            "a terminal gets the overall bar redrawn in place (bytes, rate, packages)",
            text[-500:])
    t.check("downloaded " not in text, "and no per-package lines under the bar", text[-500:])

    # piped
    r = t.menv_ok("create", "-n", "piped", *C, "dependent")
    t.check("downloading [" not in r.err and r.err.count("downloaded ") == 0 and
            "cached" in r.err, "piped: plain per-package lines, no bar", r.err)
    # --json and -q
    t.menv_ok("clean", "--all")
    r = t.menv_ok("create", "-n", "js", *C, "dependent", "--json")
    t.check(json.loads(r.out)["success"] is True, "--json: stdout is one JSON document", r.out)
    t.check("downloading [" not in r.err and "downloaded " not in r.err,
            "--json: no progress on stderr", r.err)
    t.menv_ok("clean", "--all")
    r = t.menv_ok("create", "-n", "q", *C, "dependent", "-q")
    t.check("downloading" not in r.err and "downloaded" not in r.err, "-q: no progress", r.err)
    per_download_bars(t)


menvtest.main(body)

#!/usr/bin/env python3
"""cli.progress: download progress. On a terminal, one bar redrawn in place with bytes, rate
and packages done; piped, one plain line per package; with --json, stdout holds only JSON
and stderr no bar; with -q, nothing."""
import json
import os
import pty
import subprocess

import menvtest


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, f) for f in (
        "dependency-2.0-0.conda", "dependent-2.0-0.conda")]})
    C = ["-c", t.url(chan), "--override-channels", "-y"]

    # a terminal on stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([t.menv, "create", "-n", "tty"] + C + ["dependent"], env=t.environ(),
                         stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
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
    text = out.decode("utf-8", "replace")
    t.eq(p.returncode, 0, "create on a terminal succeeds")
    t.check("\r  downloading [" in text and "MB/s" in text and " 2/2 " in text,
            "a terminal gets one bar redrawn in place (bytes, rate, packages)", text[-500:])
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


menvtest.main(body)

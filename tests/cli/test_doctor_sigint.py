#!/usr/bin/env python3
"""cli.doctor_sigint: Ctrl-C (SIGINT) at each crash point of `doctor --fix` of a corrupt
record.

Seen by a tester: Ctrl-C exited 130 (or 0, "0 problems left") but left the `.menv-doctor`
intent behind, so the next command said "rolled back (or finished) the interrupted doctor
--fix": the settling of the records ran through the cancellable reads. Now, at every crash
point (MENV_TEST_CRASH_SIGNAL=INT): exit 130 with the record as it was (still corrupt), or
130 saying the repair was finished with it repaired (0 past every point); no intent left; the next command has nothing to recover."""
import os
import shutil

import menvtest

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in ("dependency-2.0-0.conda",
                                                     "dependent-2.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files, "linux-64": []})
    C = ["-c", t.url(chan), "--override-channels"]
    fixed = 0
    for n in range(1, 16):
        shutil.rmtree(os.path.join(t.envs, "a"), ignore_errors=True)  # a corrupt record stops env remove
        t.menv_ok("create", "-q", "-y", "-n", "a", *C, "dependent")
        rec = os.path.join(t.envs, "a", "conda-meta", "dependent-2.0-0.json")
        menvtest.write_text(rec, "{bad\n")
        r = t.menv_run("doctor", "-n", "a", "--fix",
                       env={"MENV_TEST_CRASH_SIGNAL": "INT", "MENV_TEST_CRASH_AFTER": str(n)})
        t.check(r.rc in (0, 130), "crash point %d: exit 0 or 130" % n, r)
        t.check(not os.path.exists(os.path.join(t.envs, "a", "conda-meta", ".menv-doctor")),
                "crash point %d: no doctor intent left" % n)
        nxt = t.menv_run("list", "-n", "a")
        t.check("interrupted doctor" not in nxt.err,
                "crash point %d: the next command has nothing to recover" % n, nxt.err)
        with open(rec) as f:
            text = f.read()
        if r.rc == 130 and "was finished" not in r.err:
            t.eq(text, "{bad\n", "crash point %d, exit 130: the record as it was" % n)
        else:  # past the repair: finished, and 130 saying so (cli.kinds_late_sigint)
            fixed += r.rc == 130
            t.check(text.startswith("{") and '"dependent"' in text,
                    "crash point %d, exit %d: the record repaired" % (n, r.rc), text[:80])
            if r.rc == 0:
                break
    t.check(fixed > 0, "some crash points lie past the repair (130, 'was finished')")


if __name__ == "__main__":
    menvtest.main(body, "doctor_sigint")

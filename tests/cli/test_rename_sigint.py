#!/usr/bin/env python3
"""cli.rename_sigint: Ctrl-C (SIGINT) at each crash point of `rename --force SRC DST`.

Seen by a tester: Ctrl-C during the clone exited 130 but left the old destination set aside
(`.DST.menv-replaced-*`) for the next command to move back, and Ctrl-C after the commit point
exited 0 with the old destination left aside for ever (nothing ever removed it): the undo and
the removal read records and remove trees through the cancellable primitives, so the cancel
flag stopped them half-way. Now, at every crash point (MENV_TEST_CRASH_SIGNAL=INT sends
SIGINT there): exit 130 with both environments as they were, or, past the commit point, exit
130 saying the rename was finished, and done (exit 0 once past every crash point);
never a `.menv-replaced-*` folder; the next command has nothing to recover."""
import os
import shutil

import menvtest
from menvtest import write_text

R = os.path.join("packages", "conda", "test-recipes", "noarch")


def names(t, env):
    r = t.menv_run("list", "-n", env)
    return r, sorted(l.split()[0] for l in r.out.splitlines() if l and not l.startswith("#"))


def body(t):
    files = [os.path.join(t.corpus, R, n) for n in ("dependency-2.0-0.conda",
                                                     "dependent-2.0-0.conda")]
    chan = t.make_channel("chan", {"noarch": files, "linux-64": []})
    C = ["-c", t.url(chan), "--override-channels"]
    # both environments and conda's registry as the two creates leave them, made once; each
    # crash point starts from a copy (no env remove and create per point)
    t.menv_ok("create", "-q", "-y", "-n", "src", *C, "dependent")
    t.menv_ok("create", "-q", "-y", "-n", "dst", *C, "dependency")
    registry = os.path.join(t.home, ".conda", "environments.txt")
    reg = open(registry).read()
    snap = os.path.join(t.tmp, "snap")
    for e in ("src", "dst"):
        shutil.copytree(os.path.join(t.envs, e), os.path.join(snap, e), symlinks=True)
    whole = 0
    for n in range(1, 40):
        for e in ("src", "dst"):
            shutil.rmtree(os.path.join(t.envs, e), ignore_errors=True)
            shutil.copytree(os.path.join(snap, e), os.path.join(t.envs, e), symlinks=True)
        write_text(registry, reg)
        r = t.menv_run("rename", "-y", "--force", "-n", "src", "dst",
                       env={"MENV_TEST_CRASH_SIGNAL": "INT", "MENV_TEST_CRASH_AFTER": str(n)})
        left = [x for x in os.listdir(t.envs) if "menv-replaced" in x or "menv-tmp" in x]
        t.eq(left, [], "crash point %d: no folder set aside or half built is left" % n)
        t.check(r.rc in (0, 130), "crash point %d: exit 0 or 130" % n, r)
        ls, got = names(t, "src")
        ld, gotd = names(t, "dst")
        t.check("rolled back" not in ls.err + ld.err and "removed" not in ls.err + ld.err,
                "crash point %d: the next command has nothing to recover" % n, ls.err + ld.err)
        if r.rc == 130 and "was finished" not in r.err:
            t.eq((got, gotd), (["dependency", "dependent"], ["dependency"]),
                 "crash point %d, exit 130: both environments as they were" % n)
        else:  # past the commit point: finished, and 130 saying so (cli.kinds_late_sigint)
            t.eq((ls.rc, gotd), (1, ["dependency", "dependent"]),
                 "crash point %d, exit %d: src is now dst" % (n, r.rc))
            whole += r.rc == 130
            if r.rc == 0:
                break
    t.check(whole > 1, "some crash points lie past the commit point (130, 'was finished')")


if __name__ == "__main__":
    menvtest.main(body, "rename_sigint")

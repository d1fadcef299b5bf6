#!/usr/bin/env python3
"""Ctrl-C and SIGTERM during a large repodata load (menv issue 15).

The real conda-forge python-3.9 subchannel scaled x100 (291,402 records, 207 MB, made with
../shared/bench/scale_repodata.py under /tmp) is loaded cold by load_driver (fetch/ and
solver/ as menv's CLI uses them: libsolv's reader over the 193 MB linux-64 file, then the
.solv written); a real SIGINT, then a SIGTERM, arrives while libsolv reads. Each must end the
process with exit 130 and leave the cache without a .solv or a temporary one. How long the
exit took is printed, not asserted. Usage: test_interrupt.py LOAD_DRIVER SHARED
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time


def catches(pid, sig):
    """Whether process pid has a handler for sig (SigCgt of /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (int(sig) - 1) & 1)
    except OSError:
        pass
    return False


def main():
    driver, shared = sys.argv[1], sys.argv[2]
    demo = os.path.join(shared, "corpus", "repodata", "conda-subchannel-demo")
    scale = os.path.join(shared, "bench", "scale_repodata.py")
    fails = []
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        chan = os.path.join(tmp, "x100")
        for sd in ("linux-64", "noarch"):
            os.makedirs(os.path.join(chan, sd))
            subprocess.run([sys.executable, scale, os.path.join(demo, sd, "repodata.json"),
                            "100", os.path.join(chan, sd, "repodata.json")], check=True,
                           stdout=subprocess.DEVNULL)
        for sig in (signal.SIGINT, signal.SIGTERM):
            pkgs = os.path.join(tmp, "pkgs-%d" % sig)
            # the whole load (a solve's sparse load of this file takes a fraction of a second)
            p = subprocess.Popen([driver, "file://" + chan, pkgs, "linux-64", "python"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, MENV_SOLVER_LOAD="full"))
            # the handlers first (a slow start, under a sanitizer on a loaded machine, took
            # over 0.5 s: the signal then killed the process before it could catch it), then
            # half a second into the load: libsolv's reader takes seconds over 193 MB
            deadline = time.monotonic() + 60
            while not catches(p.pid, sig) and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.5)
            if p.poll() is not None:
                fails.append(f"{sig.name}: the load ended before the signal ({p.returncode})")
                continue
            t0 = time.monotonic()
            p.send_signal(sig)
            out, err = p.communicate(timeout=120)
            dt = time.monotonic() - t0
            left = sorted(os.path.basename(f) for f in glob.glob(os.path.join(pkgs, "cache", "*")))
            print(f"{sig.name}: exit {p.returncode} {dt:.2f} s after the signal; cache: {left}")
            if p.returncode != 130:
                fails.append(f"{sig.name}: exit {p.returncode}, stderr {err!r}")
            if "interrupted while loading" not in err:
                fails.append(f"{sig.name}: stderr {err!r}")
            if [f for f in left if ".solv" in f]:
                fails.append(f"{sig.name}: the cache holds {left}")
            if out:
                fails.append(f"{sig.name}: a result was printed: {out[:200]!r}")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

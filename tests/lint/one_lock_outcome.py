#!/usr/bin/env python3
"""lint.one_lock_outcome: the text that two readings of a lockfile are compared by is made in
one place, tests/common/lock_outcome.c, which the scanner's unit test
(tests/unit/specs/test_lock_scan.c) and the lockfile fuzzer (tests/fuzz/fuzz_lockfile.c) both
call: a field added to the comparison reaches both.

Fails (exit 1, one line per problem) when a C file under tests/ other than lock_outcome.c builds
that text itself (names "channels_raw" or "platforms_raw", the members the model adds to
menv_lockfile_to_json), or when either user does not include lock_outcome.h and call
menv_test_lock_outcome or menv_test_lock_differs.

    python3 one_lock_outcome.py SOURCE_DIR
"""
import os
import sys

SHARED = os.path.join("tests", "common", "lock_outcome.c")
USERS = (os.path.join("tests", "unit", "specs", "test_lock_scan.c"),
         os.path.join("tests", "fuzz", "fuzz_lockfile.c"))


def main(root):
    bad = []
    for d, _, files in os.walk(os.path.join(root, "tests")):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(d, f), root)
            if rel in (SHARED, SHARED[:-2] + ".h"):
                continue
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    if '"channels_raw"' in line or '"platforms_raw"' in line:
                        bad.append("%s:%d: builds a lockfile reading's model itself (use %s): %s"
                                   % (rel, n, SHARED, line.strip()))
    for rel in USERS:
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            text = fh.read()
        if '#include "lock_outcome.h"' not in text or not (
                "menv_test_lock_outcome(" in text or "menv_test_lock_differs(" in text):
            bad.append("%s: does not compare readings with %s" % (rel, SHARED))
    for b in bad:
        print(b)
    if not os.path.exists(os.path.join(root, SHARED)):
        print("%s: missing" % SHARED)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env python3
"""The sparse load (a repodata.json indexed by name, only the names a request reaches read)
and the pruned pool (solver/prune.c: builds no solution can hold left out of a first solve)
give the same answers as the whole load of every build on every solver case: each case of
shared/conformance/solver_cases and tests/solver/cases (run_case.py) and every step of conda's
own solver tests (run_conda_solve.py) runs three times, with MENV_SOLVER_LOAD=full and
MENV_SOLVER_PRUNE=0 (the reference), with =full pruned and with =sparse pruned, and menv's
answers (exit code, LINK and UNLINK records with their channel, first error line) must be
equal, as must each runner's verdict. Usage: test_sparse_same.py MENV SHARED TESTS_SOLVER
"""
import os
import subprocess
import sys
import tempfile


MODES = {"full": ("full", "0"), "pruned": ("full", "1"), "sparse": ("sparse", "1")}


def run(cmd, mode, log):
    load, prune = MODES[mode]
    env = dict(os.environ, MENV_SOLVER_LOAD=load, MENV_SOLVER_PRUNE=prune, MENV_SOLVE_LOG=log)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    menv, shared, here = sys.argv[1:4]
    cases = []
    for root in (os.path.join(shared, "conformance", "solver_cases"),
                 os.path.join(here, "cases")):
        cases += sorted(os.path.join(root, c) for c in os.listdir(root)
                        if os.path.isdir(os.path.join(root, c)))
    runs = [("case " + os.path.basename(c),
             [sys.executable, os.path.join(here, "run_case.py"), menv, c]) for c in cases]
    runs.append(("conda's test_solve.py",
                 [sys.executable, os.path.join(here, "run_conda_solve.py"), menv, shared,
                  os.path.join(here, "conda_solve_cases.json"),
                  os.path.join(here, "conda_solve_exceptions.txt"),
                  "--also", os.path.join(here, "conda_change_cases.json")]))
    fails, solves = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, cmd in runs:
            got = {}
            for mode in MODES:
                log = os.path.join(tmp, mode + ".log")
                open(log, "w").close()
                rc, _ = run(cmd, mode, log)
                with open(log, encoding="utf-8") as f:
                    got[mode] = (rc, f.read().splitlines())
            frc, flog = got["full"]
            solves += len(flog)
            if not flog:
                fails.append(f"{what}: no solve was logged")
            for mode in ("pruned", "sparse"):
                src, slog = got[mode]
                if frc != src:
                    fails.append(f"{what}: the runner exits {frc} (full) but {src} ({mode})")
                for i, (a, b) in enumerate(zip(flog, slog)):
                    if a != b:
                        fails.append(f"{what}: solve {i + 1} differs:\n  full:   {a}\n  "
                                     f"{mode}: {b}")
                        break
                if len(flog) != len(slog):
                    fails.append(f"{what}: {len(flog)} solves (full), {len(slog)} ({mode})")
    print(f"{len(runs)} runs, {solves} solves compared")
    for f in fails:
        print("FAIL", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

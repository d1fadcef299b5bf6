#!/usr/bin/env python3
"""The sparse load (a repodata.json indexed by name, only the names a request reaches read)
gives the same answers as the whole load on every solver case: each case of
shared/conformance/solver_cases and tests/solver/cases (run_case.py) and every step of conda's
own solver tests (run_conda_solve.py) runs twice, with MENV_SOLVER_LOAD=full and =sparse, and
menv's answers (exit code, LINK and UNLINK records with their channel, first error line) must
be equal, as must each runner's verdict. Usage:
    test_sparse_same.py MENV SHARED TESTS_SOLVER [--cases-only]
--cases-only leaves out conda's test_solve.py steps (the sanitizer build: there they take
two thirds of the run; the release build compares them, and the sanitizer build runs them
once in solver.conda_test_solve).
"""
import os
import subprocess
import sys
import tempfile


def run(cmd, mode, log):
    env = dict(os.environ, MENV_SOLVER_LOAD=mode, MENV_SOLVE_LOG=log)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    menv, shared, here = sys.argv[1:4]
    cases_only = sys.argv[4:] == ["--cases-only"]
    if len(sys.argv) > 4 and not cases_only:
        print(__doc__)
        return 2
    cases = []
    for root in (os.path.join(shared, "conformance", "solver_cases"),
                 os.path.join(here, "cases")):
        cases += sorted(os.path.join(root, c) for c in os.listdir(root)
                        if os.path.isdir(os.path.join(root, c)))
    runs = [("case " + os.path.basename(c),
             [sys.executable, os.path.join(here, "run_case.py"), menv, c]) for c in cases]
    if not cases_only:
        runs.append(("conda's test_solve.py",
                     [sys.executable, os.path.join(here, "run_conda_solve.py"), menv, shared,
                      os.path.join(here, "conda_solve_cases.json"),
                      os.path.join(here, "conda_solve_exceptions.txt"),
                      "--also", os.path.join(here, "conda_change_cases.json")]))
    fails, solves = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, cmd in runs:
            got = {}
            for mode in ("full", "sparse"):
                log = os.path.join(tmp, mode + ".log")
                open(log, "w").close()
                rc, _ = run(cmd, mode, log)
                with open(log, encoding="utf-8") as f:
                    got[mode] = (rc, f.read().splitlines())
            (frc, flog), (src, slog) = got["full"], got["sparse"]
            solves += len(flog)
            if not flog:
                fails.append(f"{what}: no solve was logged")
            if frc != src:
                fails.append(f"{what}: the runner exits {frc} (full) but {src} (sparse)")
            for i, (a, b) in enumerate(zip(flog, slog)):
                if a != b:
                    fails.append(f"{what}: solve {i + 1} differs:\n  full:   {a}\n  "
                                 f"sparse: {b}")
                    break
            if len(flog) != len(slog):
                fails.append(f"{what}: {len(flog)} solves (full), {len(slog)} (sparse)")
    print(f"{len(runs)} runs, {solves} solves compared")
    for f in fails:
        print("FAIL", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs one solver case of shared/conformance/solver_cases through `menv create --dry-run --json`.

A case folder holds channels/<name>/<subdir>/repodata.json, channels.txt (channel names in
priority order), request.txt (one MatchSpec a line) and expected.txt (`name=version=build` or
`name=version=build=build_number` lines of the whole resulting environment, or `UNSAT`: then
the first line of the error must contain the reason the case names in reason.txt or in
unsat-reasons.tsv), and
optionally flags.txt, virtual.txt, pins.txt, installed.json, update.txt.

Cases with installed.json, pins.txt or update.txt run against a prefix made for them (one
conda-meta record per installed.json entry, pins in conda-meta/pinned) through
`menv install` (or `menv update` with update.txt's specs) `--dry-run --json -p PREFIX`; the
resulting environment is what stays installed (minus UNLINK) plus LINK.

The channels are served through channel_alias = file://<case>/channels, so names resolve like
real conda channel names. Exit 0: pass, 1: fail.
"""
import json
import os
import subprocess
import sys
import tempfile

VIRTUALS = ("__unix", "__linux", "__glibc", "__archspec", "__cuda")



def log_solve(p, tmp):
    """With MENV_SOLVE_LOG set (test_sparse_same.py), appends what menv answered: exit code,
    the LINK and UNLINK records, the first error line (the temporary folder's name removed)."""
    path = os.environ.get("MENV_SOLVE_LOG")
    if not path:
        return
    acts = {}
    if p.returncode == 0:
        out = json.loads(p.stdout)
        for k in ("LINK", "UNLINK"):
            acts[k] = sorted("%s %s %s %s" % (r["name"], r["version"], r["build_string"],
                                              r.get("channel", "")) for r in
                             out["actions"].get(k, []))
    err = (p.stderr.strip().splitlines() or [""])[0] if p.returncode else ""
    line = json.dumps({"rc": p.returncode, "actions": acts, "error": err})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line.replace(tmp, "<tmp>") + "\n")

def lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip()]


def expected_reason(case, name):
    """The reason an UNSAT case must give: its reason.txt, else its row of unsat-reasons.tsv."""
    own = lines(os.path.join(case, "reason.txt"))
    if own:
        return own[0]
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unsat-reasons.tsv")
    for line in lines(table):
        if not line.startswith("#") and "\t" in line:
            k, v = line.split("\t", 1)
            if k == name:
                return v
    return None


def main():
    menv, case = sys.argv[1], sys.argv[2]
    name = os.path.basename(case.rstrip("/"))
    with tempfile.TemporaryDirectory() as tmp:
        rc = os.path.join(tmp, "condarc")
        alias = "file://" + os.path.abspath(os.path.join(case, "channels"))
        flags = dict(l.split("=", 1) for l in lines(os.path.join(case, "flags.txt")))
        with open(rc, "w") as f:
            f.write(f"channel_alias: {alias}\n")
            if "channel_priority" in flags:
                f.write(f"channel_priority: {flags['channel_priority']}\n")
            if "add_pip_as_python_dependency" in flags:
                f.write("add_pip_as_python_dependency: "
                        f"{flags['add_pip_as_python_dependency']}\n")
            # a case that states micromamba's answer (its install keeps what satisfies the
            # spec) runs in conda's matching mode; conda's default updates the package
            src = os.path.join(case, "source.txt")
            if os.path.exists(src) and "note: mamba behaviour" in open(src).read():
                f.write("update_modifier: specs_satisfied_skip_solve\n")
        env = dict(os.environ, HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
        virt = lines(os.path.join(case, "virtual.txt"))
        if virt:
            given = {v.split("=")[0]: v.split("=") for v in virt}
            for vp in VIRTUALS:
                var = "CONDA_OVERRIDE_" + vp[2:].upper()
                if vp == "__unix":
                    continue
                if vp in given:
                    g = given[vp]
                    env[var] = g[2] if vp == "__archspec" else g[1]
                else:
                    env[var] = ""
        else:
            env["CONDA_OVERRIDE_CUDA"] = ""  # no GPU assumptions unless the case says so
        specs = [s.replace("<CHANNEL_ALIAS>", alias) for s in lines(os.path.join(case, "request.txt"))]
        prefix = os.path.join(tmp, "env")
        installed = []
        if os.path.exists(os.path.join(case, "installed.json")):
            with open(os.path.join(case, "installed.json"), encoding="utf-8") as f:
                installed = json.load(f)
        pins = lines(os.path.join(case, "pins.txt"))
        updates = lines(os.path.join(case, "update.txt"))
        changing = bool(installed or pins or updates) or os.path.exists(
            os.path.join(case, "installed.json"))
        if changing:
            # an existing prefix: conda-meta/ records made from installed.json (and pins in
            # conda-meta/pinned); the request goes through `menv install` / `menv update`
            meta = os.path.join(prefix, "conda-meta")
            os.makedirs(meta)
            for r in installed:
                r = dict(r, files=[], paths_data={"paths": [], "paths_version": 1})
                r.setdefault("channel", "")
                with open(os.path.join(meta, "%s-%s-%s.json" % (r["name"], r["version"],
                                                                 r["build"])), "w") as f:
                    json.dump(r, f)
            if pins:
                with open(os.path.join(meta, "pinned"), "w") as f:
                    f.write("\n".join(pins) + "\n")
            verb = "update" if updates else "install"
            cmd = [menv, verb, "--dry-run", "--json", "-p", prefix, "--override-channels"]
            specs = updates if updates else specs
        else:
            cmd = [menv, "create", "--dry-run", "--json", "-p", prefix, "--override-channels"]
        for ch in lines(os.path.join(case, "channels.txt")):
            cmd += ["-c", ch]
        cmd += specs
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        log_solve(p, tmp)
        expected = lines(os.path.join(case, "expected.txt"))
        if expected == ["UNSAT"]:
            if p.returncode == 0:
                print(f"{name}: FAIL expected UNSAT, menv solved:\n{p.stdout}")
                return 1
            err = p.stderr.strip().splitlines()
            first = err[0] if err else ""
            reason = expected_reason(case, name)
            if reason is None:
                print(f"{name}: FAIL an UNSAT case must name its reason (reason.txt or "
                      f"tests/solver/unsat-reasons.tsv); menv said: {first}")
                return 1
            if reason not in first:
                print(f"{name}: FAIL expected the reason {reason!r}, got: {first}")
                return 1
            print(f"{name}: ok (unsatisfiable: {first})")
            return 0
        if p.returncode != 0:
            print(f"{name}: FAIL menv exited {p.returncode}: {p.stderr.strip()}")
            return 1
        out = json.loads(p.stdout)
        # the whole resulting environment: what stays installed, plus what is linked
        final = {}
        unlinked = {(r["name"], r["version"], r["build_string"])
                    for r in out["actions"].get("UNLINK", [])}
        for r in installed:
            if (r["name"], r["version"], r["build"]) not in unlinked:
                final[r["name"]] = (r["version"], r["build"], r.get("build_number", 0))
        for r in out["actions"]["LINK"]:
            final[r["name"]] = (r["version"], r["build_string"], r["build_number"])
        got = set()
        for n, (v, b, bn) in final.items():
            got.add(f"{n}={v}={b}")
            got.add(f"{n}={v}={b}={bn}")
        want = set(expected)
        missing = want - got
        extra = {g for g in got if g.count("=") == 2} - {"=".join(w.split("=")[:3]) for w in want}
        if missing or extra:
            print(f"{name}: FAIL\n  missing: {sorted(missing)}\n  unexpected: {sorted(extra)}")
            return 1
        print(f"{name}: ok ({len(want)} records)")
        return 0


if __name__ == "__main__":
    sys.exit(main())

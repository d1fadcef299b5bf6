#!/usr/bin/env python3
"""solver.problem_tree: an unsatisfiable request explains itself as a tree (the PubGrub
article's example from shared/conformance/solver_cases/pubgrub-unsat): the requested menu,
the menu versions that could satisfy it, the dropdown each needs, and the intl/icons
versions that conflict with the requested intl=5.* and icons=1.*. The text and the --json
structure say the same; the error itself stays one line."""
import json
import os
import subprocess
import sys
import tempfile

menv, shared = sys.argv[1], sys.argv[2]
case = os.path.join(shared, "conformance", "solver_cases", "pubgrub-unsat")
fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += 0 if ok else 1


def walk(node, out):
    out.add(node["package"].rsplit("-", 2)[0])
    for n in node.get("needs", []):
        for c in n.get("candidates", []):
            walk(c, out)
    return out


with tempfile.TemporaryDirectory() as tmp:
    rc = os.path.join(tmp, "rc")
    open(rc, "w").write("channel_alias: file://%s/channels\n" % case)
    env = dict(os.environ, HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
    cmd = [menv, "create", "--dry-run", "-p", os.path.join(tmp, "e"), "--override-channels",
           "-c", "repo", "menu", "icons=1.*", "intl=5.*"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    err = p.stderr.splitlines()
    check(p.returncode == 1 and err[-1].startswith("menv: error: could not solve"),
          "exit 1, the error line last")
    text = p.stderr
    check("requested menu" in text and "needs dropdown 1.*, but:" in text and
          "needs intl 3.*, but:" in text and "conflicts with intl-5.0.0-bld" in text and
          "conflicts with icons-1.0.0-bld" in text,
          "the text tree: menu -> dropdown 1.* -> intl 3.* conflicting with intl 5")
    q = subprocess.run(cmd + ["--json", "-q"], env=env, capture_output=True, text=True)
    d = json.loads(q.stdout)
    tree = d["problems"][0]["tree"]
    roots = {t["requested"]: t for t in tree}
    check("menu" in roots, "the JSON tree starts at the requested menu")
    names = set()
    for c in roots.get("menu", {}).get("candidates", []):
        walk(c, names)
    check({"menu", "dropdown", "intl", "icons"} <= names,
          "the JSON tree reaches dropdown, intl and icons (%s)" % sorted(names))
    check(len(q.stderr.strip().splitlines()) == 1, "with -q the error is one line")

print("%d failed" % fails)
sys.exit(1 if fails else 0)

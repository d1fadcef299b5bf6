#!/usr/bin/env python3
"""Runs conda's own solver tests (tests/solver/conda_solve_cases.json, made by
extract_conda_solve.py from conda's tests/core/test_solve.py) through menv's CLI.

    run_conda_solve.py MENV SHARED_DIR CASES_JSON EXCEPTIONS [--also CASES_JSON]... [-k NAME] [-v]

--also adds cases of the same schema: conda_change_cases.json holds conda's own answers
(conda_oracle.py, conda's classic solver) to changes of existing environments on the same
indexes, each test named for the conda command it stands for.

Channels are made as conda/testing/helpers.py makes them: each index file of
SHARED/corpus/repodata/conda/ becomes <channel>/<subdir>/repodata.json (records with
subdir or noarch "noarch" in noarch/, the rest in linux-64/), served as file:// channels
through channel_alias, with add_pip_as_python_dependency off and flexible channel priority.

A step that creates an environment runs `menv create --dry-run --json`; one that changes an
existing environment writes the installed state (conda's expected records of the step before,
as conda-meta/*.json) and the history specs (conda-meta/history, written as conda writes it),
then runs `menv install|remove --dry-run --json` (a remove with the channels in .condarc, where
conda's remove finds them: context.channels) with the flags that match conda's
update_modifier / deps_modifier arguments (solve_final_state's default, update_specs, is
`--update-specs`: a bare `conda install` first solves frozen, see conda_oracle.py's "cli"). A step that only conda's Python API can express
(an index this corpus lacks, a mocked solver, no request at all) is counted as not
expressible, with its reason.

Prints one line per test (steps passed / expressible steps), the totals for new environments
and for changes to existing ones, and exits 1 when a step fails that EXCEPTIONS does not list
(one `test_name:line reason` a line), or when a listed step passes (a stale exception).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

UPDATE_FLAGS = {
    "UPDATE_DEPS": "--update-deps",
    "FREEZE_INSTALLED": "--freeze-installed",
    "UPDATE_ALL": "--update-all",
    "UPDATE_SPECS": "--update-specs",
    "SPECS_SATISFIED_SKIP_SOLVE": "--satisfied-skip-solve",
}
DEPS_FLAGS = {"NO_DEPS": "--no-deps", "ONLY_DEPS": "--only-deps"}
VIRTUAL_VARS = ("CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_GLIBC")



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

def dist_key(d):
    """'channel-1/linux-64::numpy-1.7.1-py33_0' -> 'channel-1::numpy-1.7.1-py33_0'."""
    ch, _, rest = d.partition("::")
    return ch.split("/")[0] + "::" + rest


class Channels:
    def __init__(self, shared, tmp):
        self.shared, self.root = shared, os.path.join(tmp, "channels")
        self.made = {}  # channel name -> {fn: record}

    def index_path(self, index):
        return os.path.join(self.shared, "corpus", "repodata", "conda", index)

    def available(self, index):
        return os.path.exists(self.index_path(index))

    def make(self, name, index):
        if name in self.made:
            return self.made[name]
        with open(self.index_path(index), encoding="utf-8") as f:
            recs = json.load(f)
        split = {"linux-64": {}, "noarch": {}}
        for fn, r in recs.items():
            sub = "noarch" if r.get("subdir") == "noarch" or r.get("noarch") else "linux-64"
            # conda's PackageRecord has no `requires` (the pre-2013 name of depends, still
            # in these records): conda never reads it, and helpers.py's export of the
            # channel (PackageRecord.dump) leaves it out; libsolv's reader would add it
            split[sub][fn] = {k: v for k, v in dict(r, subdir=sub).items() if k != "requires"}
        for sub, pkgs in split.items():
            d = os.path.join(self.root, name, sub)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "repodata.json"), "w", encoding="utf-8") as f:
                json.dump({"info": {"subdir": sub}, "packages": pkgs}, f)
        self.made[name] = {fn: r for sub in split.values() for fn, r in sub.items()}
        return self.made[name]

    def url(self, name, sub):
        return "file://" + os.path.join(self.root, name, sub)


def py_list(specs):
    """A list of strings the way Python's str(list) writes it (conda's history)."""
    return "[" + ", ".join(repr(s) for s in specs) + "]"


def why_not(step, chans):
    if step.get("unexpressible"):
        return step["unexpressible"]
    for name, index in step["channels"]:
        if not chans.available(index):
            return f"{index} is not in the corpus"
    if not step["expect"]:
        return "the test asserts nothing the data expresses (" + "; ".join(
            step.get("also_asserts", ["no assertion"])) + ")"
    if step["add"] and step["remove"]:
        return "specs to add and to remove in one solve (no conda command does that)"
    if not step["add"] and not step["remove"]:
        return "a solve with no request (no conda command does that)"
    for k, v in step["kwargs"].items():
        if k == "update_modifier" and v in UPDATE_FLAGS:
            continue
        if k == "deps_modifier" and v in DEPS_FLAGS:
            continue
        if k in ("force_reinstall", "force_remove") and v is True:
            continue
        if k == "ignore_pinned" and v is False:
            continue
        return f"{k}={v} has no CLI form"
    env = step["env"]
    if env.get("CONDA_AUTO_UPDATE_CONDA") == "yes" and env.get("sys.prefix"):
        return "auto_update_conda in conda's own (base) environment"
    return None


def run_step(menv, step, chans, tmp, verbose):
    """Returns (ok, detail)."""
    recs = {}
    for name, index in step["channels"]:
        recs[name] = chans.make(name, index)
    prefix = tempfile.mkdtemp(dir=tmp, prefix="env-")
    os.rmdir(prefix)
    installed = step["installed"] or []
    changing = bool(installed) or bool(step["remove"]) or bool(step["kwargs"])
    if changing:
        meta = os.path.join(prefix, "conda-meta")
        os.makedirs(meta)
        for d in installed:
            ch, _, dist = dist_key(d).partition("::")
            r = recs[ch][dist + ".tar.bz2"]
            sub = r["subdir"]
            pr = dict(r, fn=dist + ".tar.bz2", channel=chans.url(ch, sub),
                      url=chans.url(ch, sub) + "/" + dist + ".tar.bz2", files=[],
                      paths_data={"paths": [], "paths_version": 1}, requested_spec="")
            with open(os.path.join(meta, dist + ".json"), "w", encoding="utf-8") as f:
                json.dump(pr, f)
        if step["history"]:
            # conda's History.write_changes + write_specs
            with open(os.path.join(meta, "history"), "w", encoding="utf-8") as f:
                f.write("==> 2024-01-01 00:00:00 <==\n")
                f.write("# cmd: conda install\n# conda version: 4.12.0\n")
                for d in sorted(installed):
                    ch, _, dist = dist_key(d).partition("::")
                    f.write(f"+{ch}/{recs[ch][dist + '.tar.bz2']['subdir']}::{dist}\n")
                f.write(f"# update specs: {py_list(step['history'])}\n")
    rc = os.path.join(tmp, "condarc")
    env = dict(os.environ, HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
    for k in list(env):
        if k.startswith("CONDA_") or (k.startswith("MENV_") and k != "MENV_ROOT_PREFIX"):
            del env[k]
    env["CONDA_OVERRIDE_CUDA"] = ""
    priority = "flexible"
    for k, v in step["env"].items():
        if k in VIRTUAL_VARS:
            env[k] = v
        elif k == "CONDA_CHANNEL_PRIORITY":
            priority = "flexible" if v == "True" else "disabled"
        elif k == "CONDA_PINNED_PACKAGES":
            env[k] = v
        elif k == "CONDA_SUBDIR":
            env[k] = v
    with open(rc, "w", encoding="utf-8") as f:
        f.write(f"channel_alias: file://{chans.root}\nchannel_priority: {priority}\n"
                "add_pip_as_python_dependency: false\n")
        if step["remove"]:  # conda remove solves against context.channels
            f.write("channels: [" + ", ".join(n for n, _ in step["channels"]) + "]\n")
    if step.get("cli") == "env_update":
        # `conda env update -f FILE`: the file's channels and dependencies (conda solves
        # frozen first, then as update_specs: conda_oracle.py)
        ef = os.path.join(tmp, "environment.yml")
        with open(ef, "w", encoding="utf-8") as f:
            f.write("channels: [" + ", ".join(n for n, _ in step["channels"]) +
                    ", nodefaults]\ndependencies:\n" +
                    "".join(f"  - {json.dumps(a)}\n" for a in step["add"]))
        cmd = [menv, "env", "update", "--dry-run", "--json", "-p", prefix, "-f", ef]
    elif step["remove"]:
        cmd = [menv, "remove", "--dry-run", "--json", "-p", prefix]
        if step["kwargs"].get("force_remove"):
            cmd.append("--force")
        cmd += step["remove"]
    else:
        cmd = [menv, "install" if changing else "create", "--dry-run", "--json", "-p", prefix,
               "--override-channels"]
        for name, _ in step["channels"]:
            cmd += ["-c", name]
        for k, v in step["kwargs"].items():
            if k == "update_modifier":
                cmd.append(UPDATE_FLAGS[v])
            elif k == "deps_modifier":
                cmd.append(DEPS_FLAGS[v])
            elif k == "force_reinstall":
                cmd.append("--force-reinstall")
        # solve_final_state's default update_modifier is update_specs: on the command line
        # `install --update-specs` (a bare `conda install` solves frozen first: a step
        # marked "cli": "install" holds that answer and runs a bare `menv install`)
        if installed and "update_modifier" not in step["kwargs"] and \
                step.get("cli") != "install":
            cmd.append("--update-specs")
        cmd += step["add"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    log_solve(p, tmp)
    if verbose:
        print("   $", " ".join(cmd[3:]), "->", p.returncode)
    exp = step["expect"]
    if "raises" in exp:
        if p.returncode == 0:
            return False, "expected " + exp["raises"] + ", menv solved"
        return True, "unsatisfiable: " + (p.stderr.strip().splitlines() or [""])[0][:100]
    if p.returncode != 0:
        return False, f"menv exited {p.returncode}: " + p.stderr.strip()[:300]
    out = json.loads(p.stdout)
    link = set()
    for r in out["actions"].get("LINK", []):
        link.add(f"{r['channel'].split('/')[0]}::{r['name']}-{r['version']}-{r['build_string']}")
    inst = {dist_key(d).partition("::")[2]: dist_key(d) for d in installed}
    unlink = set()
    for r in out["actions"].get("UNLINK", []):
        dist = f"{r['name']}-{r['version']}-{r['build_string']}"
        unlink.add(inst.get(dist, "?::" + dist))
    final = (set(inst.values()) - unlink) | link
    # a package unlinked and linked again unchanged is a reinstall (conda lists it in both)
    problems = []

    def compare(what, want, got):
        want = {dist_key(d) for d in want}
        if want != got:
            problems.append(f"{what}: missing {sorted(want - got)} unexpected "
                            f"{sorted(got - want)}")

    if "final" in exp:
        compare("final state", exp["final"], final)
    if "unlink" in exp:
        compare("unlink", exp["unlink"], unlink)
    if "link" in exp:
        compare("link", exp["link"], link)
    for part, got in (("unlink", unlink), ("link", link)):
        if part + "_count" in exp and len(got) != exp[part + "_count"]:
            problems.append(f"{part}: {len(got)} records, not {exp[part + '_count']}")
    if exp.get("same_record") and {d.partition("::")[2] for d in unlink} != \
            {d.partition("::")[2] for d in link}:
        problems.append(f"a reinstall links {sorted(link)} for {sorted(unlink)}")
    for d in exp.get("contains", []):
        if dist_key(d) not in final | unlink:
            problems.append(f"{dist_key(d)} not in the result")
    for s in exp.get("excludes", []):
        if any(s in d for d in final):
            problems.append(f"'{s}' is in the result")
    return (not problems), "; ".join(problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("menv")
    ap.add_argument("shared")
    ap.add_argument("cases")
    ap.add_argument("exceptions")
    ap.add_argument("--also", action="append", default=[],
                    help="more cases in the same schema (conda_change_cases.json: conda's "
                         "answers to changes on the same indexes, made by conda_oracle.py)")
    ap.add_argument("-k", default=None, help="only tests whose name contains this")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    exceptions = {}
    with open(a.exceptions, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, why = line.partition(" ")
                exceptions[key] = why.strip()
    unexpressible = 0
    bad, stale, libmamba = [], [], []
    seen = set()
    grand = {"new": [0, 0], "change": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        chans = Channels(a.shared, tmp)
        for path in [a.cases] + a.also:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            src = data["source"]
            print(f"conda {src['path']} @ {src['commit'][:12]} ({os.path.basename(path)})")
            totals = {"new": [0, 0], "change": [0, 0]}
            unexpressible += run_file(a, data, chans, tmp, exceptions, totals, bad, stale,
                                      libmamba, seen)
            for kind, (ok, n) in totals.items():
                label = "new environments" if kind == "new" else \
                    "changes to existing environments"
                print(f"{os.path.basename(path)}: {label}: {ok}/{n} pass")
                grand[kind][0] += ok
                grand[kind][1] += n
    totals = grand
    for kind, (ok, n) in totals.items():
        label = "new environments" if kind == "new" else "changes to existing environments"
        print(f"all: {label}: {ok}/{n} pass")
    print(f"not expressible: {unexpressible} steps")
    print("libmamba marked as expected to differ: " + ("; ".join(libmamba) if libmamba
                                                        else "no test of this source"))
    for k in exceptions:
        if not a.k and k not in seen:
            stale.append(k + " (no such expressible step)")
    if stale:
        print("stale exceptions (these pass now; remove them): " + ", ".join(stale))
    if bad:
        print("failing steps not in the exceptions file: " + ", ".join(bad))
    npass = sum(v[0] for v in totals.values())
    nall = sum(v[1] for v in totals.values())
    print(f"{npass} passed, {len(bad)} failed ({nall - npass - len(bad)} known differences, "
          "listed in the exceptions file)")
    return 1 if bad or stale else 0


def run_file(a, data, chans, tmp, exceptions, totals, bad, stale, libmamba, seen):
    """Runs one cases file's tests, printing a line per test; returns the steps not
    expressible."""
    unexpressible = 0
    for t in data["tests"]:
        if a.k and a.k not in t["name"]:
            continue
        skip = [m for m in t["marks"] if m["mark"] == "skip"]
        ok = n = 0
        lines = []
        for s in t["steps"]:
            key = f"{t['name']}:{s['line']}"
            kind = "change" if (s["installed"] or s["remove"]) else "new"
            why = why_not(s, chans)
            if skip:
                why = why or ("conda skips it: " + skip[0].get("reason", ""))
            if why:
                unexpressible += 1
                lines.append(f"   L{s['line']} not expressible: {why}")
                continue
            n += 1
            totals[kind][1] += 1
            passed, detail = run_step(a.menv, s, chans, tmp, a.v)
            seen.add(key)
            if passed:
                ok += 1
                totals[kind][0] += 1
                if key in exceptions:
                    stale.append(key)
                if a.v:
                    lines.append(f"   L{s['line']} ok {detail}")
            else:
                listed = key in exceptions
                lines.append(f"   L{s['line']} {'known' if listed else 'FAIL'} ({kind}): "
                             f"{detail}" + (f" [{exceptions[key]}]" if listed else ""))
                if not listed:
                    bad.append(key)
        if t["libmamba_differs"]:
            libmamba.append(f"{t['name']}: {t['libmamba_differs']}")
        if t["steps"]:
            print(f"{t['name']}: {ok}/{n} steps pass"
                  + (f" ({len(t['steps']) - n} not expressible)" if len(t['steps']) > n
                     else "") + (f" [{t['command']}]" if t.get("command") else ""))
            for l in lines:
                print(l)
        else:
            print(f"{t['name']}: no solver step the data expresses "
                  f"({'; '.join(t.get('notes', []))})")
    return unexpressible


if __name__ == "__main__":
    sys.exit(main())

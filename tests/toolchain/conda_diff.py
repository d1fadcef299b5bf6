#!/usr/bin/env python3
"""toolchain.conda_diff: menv against conda 26.7.1's recorded answers (issue 24). Called as

    python3 conda_diff.py check MENV CHANNEL DATADIR    the test
    python3 conda_diff.py snapshot PREFIX STEP.json  how DATADIR's answers were recorded
                                                     (after each of conda's steps), then
    python3 conda_diff.py pack DATADIR/answers.json create.json install.json remove.json update.json

The toolchain environment is made at the fixed root ROOT (the recorded answers name it in
records, text placeholders and binary padding; the test holds ROOT.lock): the channel copied
to ROOT/chan, the package cache ROOT/pkgs, the prefix ROOT/env. Steps (DATADIR/README.md):
create (the specs of ops/environment.yml), install ply, remove numpy, update ply. After each,
the prefix is compared with conda's snapshot of the same step:
- every file and link of the prefix: sha256 of its bytes (a link: its target) and the
  executable bit, conda-meta/*.json included byte for byte; grouped per package (the record's
  `files`) into one digest each, the files no record lists one by one;
- every conda-meta/*.json key by key (scalars as values, lists and objects as digests);
- conda-meta/history block by block, normalized only where menv must differ: the date, the
  `# cmd:` line, `# conda version:` (menv writes `# menv version:`) and the order of the
  `# update specs:` list (conda writes a frozenset: its order changes with the hash seed);
- conda-meta/created_at: present (its value is the time);
- the order packages are unlinked and linked in (`-v`'s lines) against link_order.json.
Prints every difference and a count of differing files and records; exit 0 when none, 1
otherwise, 77 when a prerequisite is missing.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = "/tmp/menv-conda-diff"
SPECS = ["python=3.9", "cudatoolkit=11.8", "gxx_linux-64=11", "numpy", "pybind11", "ninja", "pip"]
STEPS = [
    ("create", ["create", "-y", "-p", ROOT + "/env"] + SPECS),
    ("install", ["install", "-y", "-p", ROOT + "/env", "ply"]),
    ("remove", ["remove", "-y", "-p", ROOT + "/env", "numpy"]),
    ("update", ["update", "-y", "-p", ROOT + "/env", "ply"]),
]


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def canon(v):
    """A record value: scalars as they are, lists and objects as a digest of their JSON."""
    if isinstance(v, (list, dict)):
        return "sha256:" + digest(json.dumps(v, sort_keys=True).encode())
    return v


def file_entry(path):
    st = os.lstat(path)
    if os.path.islink(path):
        return "-> " + os.readlink(path)
    with open(path, "rb") as f:
        h = digest(f.read())
    return h + (" x" if st.st_mode & 0o111 else "")


def history_blocks(text):
    """conda-meta/history as a list of blocks, normalized where menv must differ."""
    blocks = []
    for line in text.splitlines():
        if line.startswith("==> ") and line.endswith(" <=="):
            blocks.append(["==> DATE <=="])
            continue
        if not blocks:
            blocks.append([])
        if line.startswith("# cmd:"):
            line = "# cmd: CMD"
        elif re.match(r"# (conda|menv) version: ", line):
            line = "# TOOL version: VERSION"
        else:
            m = re.match(r"# (\w+) specs: (\[.*\])$", line)
            if m:
                specs = re.findall(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", m.group(2))
                line = "# %s specs (sorted): %s" % (m.group(1), sorted(a or b for a, b in specs))
        blocks[-1].append(line)
    return blocks


# menv's own files in conda-meta/ (README: "Where menv differs from conda"): the prefix lock
# and what the environment was made from (for export --from-history and pip steps)
MENV_OWN = ("conda-meta/.menv.lock", "conda-meta/.menv-request")

# A .pyc's header and its code object with every frozenset constant sorted: Python marshals
# a frozenset in its hash order, which changes with the hash seed of the compiling process
# (conda's compileall runs unseeded: its own bytes differ from run to run)
PYC_CANON = r"""
import hashlib, marshal, sys, types
def canon(o):
    if isinstance(o, types.CodeType):
        return ("code",) + tuple(canon(getattr(o, a)) for a in sorted(dir(o)) if a.startswith("co_") and not callable(getattr(o, a)))
    if isinstance(o, frozenset):
        return ("frozenset",) + tuple(sorted(repr(canon(x)) for x in o))
    if isinstance(o, tuple):
        return tuple(canon(x) for x in o)
    return o
for path in sys.stdin.read().split("\0"):
    if path:
        data = open(path, "rb").read()
        print(hashlib.sha256(data[:16] + repr(canon(marshal.loads(data[16:]))).encode()).hexdigest()[:16])
"""


def pyc_digests(prefix, paths):
    """{path: digest} of the .pyc files (the prefix's python reads them)."""
    pys = [os.path.join(prefix, "bin", n) for n in sorted(os.listdir(os.path.join(prefix, "bin")))
           if re.match(r"python3\.\d+$", n)] if os.path.isdir(os.path.join(prefix, "bin")) else []
    if not paths or not pys:
        return {}
    r = subprocess.run([pys[0], "-c", PYC_CANON], input="\0".join(os.path.join(prefix, p) for p in paths),
                       stdout=subprocess.PIPE, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    return dict(zip(paths, ("pyc:" + h for h in r.stdout.split())))


def snapshot(prefix):
    """The prefix as the answers store it (see the module's comment)."""
    meta = os.path.join(prefix, "conda-meta")
    records, owner = {}, {}
    for fn in sorted(os.listdir(meta)):
        if fn.endswith(".json"):
            with open(os.path.join(meta, fn), "rb") as f:
                rec = json.loads(f.read())
            records[fn] = {k: canon(v) for k, v in rec.items()}
            records[fn]["(key order)"] = list(rec)
            for p in rec.get("files", []):
                owner[p] = fn
    packages, other, pycs, entries = {}, {}, [], {}
    for dirpath, dirnames, filenames in os.walk(prefix):
        dirnames.sort()
        for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, prefix)
            if rel in ("conda-meta/history", "conda-meta/created_at") or rel in MENV_OWN:
                continue
            entry = file_entry(full)
            if rel.endswith(".pyc") and not entry.startswith("->"):
                pycs.append(rel)
            entries[rel] = entry
    entries.update(pyc_digests(prefix, pycs))
    for rel, entry in entries.items():
        if rel in owner:
            packages.setdefault(owner[rel], []).append("%s %s" % (rel, entry))
        else:
            other[rel] = entry
    with open(os.path.join(meta, "history"), encoding="utf-8") as f:
        history = history_blocks(f.read())
    return {
        "records": records,
        "packages": {k: "%d files, sha256:%s" % (len(v), digest("\n".join(sorted(v)).encode()))
                     for k, v in packages.items()},
        "other": other,
        "history": history,
        "created_at": os.path.exists(os.path.join(meta, "created_at")),
    }


def compare(step, want, got):
    """Prints every difference; returns (differing files, differing records)."""
    nfiles = nrecs = 0
    for kind in ("packages", "other"):
        for k in sorted(set(want[kind]) | set(got[kind])):
            w, g = want[kind].get(k), got[kind].get(k)
            if w != g:
                nfiles += 1
                print("%s: %s %s: conda %s, menv %s" % (step, kind[:-1] if kind == "packages" else "file", k, w, g))
    for fn in sorted(set(want["records"]) | set(got["records"])):
        w, g = want["records"].get(fn), got["records"].get(fn)
        if w == g:
            continue
        nrecs += 1
        if w is None or g is None:
            print("%s: record %s only in %s" % (step, fn, "menv" if w is None else "conda"))
            continue
        for k in sorted(set(w) | set(g)):
            if w.get(k) != g.get(k):
                print("%s: record %s key %s: conda %s, menv %s" % (step, fn, k, json.dumps(w.get(k)), json.dumps(g.get(k))))
    if want["history"] != got["history"]:
        nfiles += 1
        print("%s: history differs:\n  conda %s\n  menv  %s" % (step, want["history"], got["history"]))
    if want["created_at"] != got["created_at"]:
        nfiles += 1
        print("%s: conda-meta/created_at: conda %s, menv %s" % (step, want["created_at"], got["created_at"]))
    return nfiles, nrecs


def pack(snapshots):
    """{step: snapshot} as DATADIR/answers.json stores it: each distinct record once."""
    records, steps = {}, {}
    for step, snap in snapshots.items():
        refs = {}
        for fn, rec in snap["records"].items():
            key = "%s %s" % (fn, digest(json.dumps(rec, sort_keys=True).encode()))
            records[key] = rec
            refs[fn] = key
        steps[step] = dict(snap, records=refs)
    return {"records": records, "steps": steps}


def unpack(answers, step):
    snap = dict(answers["steps"][step])
    snap["records"] = {fn: answers["records"][key] for fn, key in snap["records"].items()}
    return snap


def check(menv, channel, datadir):
    for need in (os.path.join(channel, "linux-64", "repodata.json"), datadir):
        if not os.path.exists(need):
            print("SKIP: %s is missing" % need)
            return 77
    os.makedirs(os.path.dirname(ROOT), exist_ok=True)
    lock = open(ROOT + ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    for d in ("env", "pkgs", "home", "chan"):
        shutil.rmtree(os.path.join(ROOT, d), ignore_errors=True)
    os.makedirs(ROOT + "/home")
    shutil.copytree(channel, ROOT + "/chan", ignore=shutil.ignore_patterns("*.tmp", ".cache"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "MENV", "MAMBA"))}
    env.update(HOME=ROOT + "/home", CONDA_PKGS_DIRS=ROOT + "/pkgs", TMPDIR=ROOT + "/home")
    with open(os.path.join(datadir, "answers.json")) as f:
        answers = json.load(f)
    with open(os.path.join(datadir, "link_order.json")) as f:
        orders = json.load(f)["steps"]
    total_files = total_recs = 0
    for step, args in STEPS:
        cmd = [menv] + args
        if step != "remove":
            cmd += ["--override-channels", "-c", "file://" + ROOT + "/chan"]
        if step in ("create", "install", "update"):
            cmd.append("--no-smoke-check")
        cmd.append("-v")  # the link and unlink order: "  linking DIST" lines on stderr
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            print("%s: %s failed (%d):\n%s%s" % (step, " ".join(cmd), r.returncode, r.stdout, r.stderr))
            return 1
        want = unpack(answers, step)
        nf, nr = compare(step, want, snapshot(ROOT + "/env"))
        print("%s: %d differing files, %d differing records" % (step, nf, nr))
        for what in ("unlink", "link"):
            got = re.findall(r"(?m)^  %sing (\S+)$" % what, r.stderr)
            if got != orders[step][what]:
                print("%s: %s order %s, conda %s" % (step, what, got, orders[step][what]))
                nr += 1
            else:
                print("%s: %d packages %sed in conda's order" % (step, len(got), what))
        total_files += nf
        total_recs += nr
    print("total: %d differing files, %d differing records against conda 26.7.1" % (total_files, total_recs))
    # menv doctor reads conda's records: a noarch python file is named `site-packages/...` in
    # paths_data and by its prefix path in `files` (paired by index)
    doctor = [menv, "doctor", "-p", ROOT + "/env", "--json"]

    def problems():
        r = subprocess.run(doctor, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        d = json.loads(r.stdout)
        return d["problems"], [(f["kind"], f["path"]) for f in d["findings"] if f["kind"] != "toolchain"]

    clean = problems()
    lex = "lib/python3.9/site-packages/ply/lex.py"
    with open(os.path.join(ROOT, "env", lex), "a") as f:
        f.write("# changed\n")
    changed = problems()
    if clean != (0, []) or changed != (1, [("changed-file", lex)]):
        print("doctor on the conda-shaped records: %s, then after changing %s: %s" % (clean, lex, changed))
        total_files += 1
    else:
        print("doctor: no problem, then exactly the changed %s" % lex)
    if not os.environ.get("MENV_CONDA_DIFF_KEEP"):
        shutil.rmtree(ROOT, ignore_errors=True)
    return 1 if total_files or total_recs else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        return check(*sys.argv[2:])
    if len(sys.argv) > 3 and sys.argv[1] == "pack":
        snaps = {}
        for path in sys.argv[3:]:
            with open(path) as f:
                snaps[os.path.basename(path)[:-5]] = json.load(f)
        with open(sys.argv[2], "w") as f:
            json.dump(pack(snaps), f, indent=0, sort_keys=True)
            f.write("\n")
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "snapshot":
        with open(sys.argv[3], "w") as f:
            json.dump(snapshot(sys.argv[2]), f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())

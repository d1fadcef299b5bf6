#!/usr/bin/env python3
"""solver.small_ones: two of issue 24's "small ones", where menv answered otherwise than
conda 26.7.1 (classic solver; its answers as the issue records them from conda run beside menv):
- `numpy[subdir=noarch]` on a channel whose numpy is a linux-64 record: conda matches nothing
  (MatchSpec's subdir is the record's subdir); menv linked the linux-64 record (the solver's
  "nothing provides" job was named by the spec less its subdir, i.e. plain `numpy`). Here:
  `create --dry-run --json` fails naming the spec, `search` finds nothing, and
  `numpy[subdir=linux-64]` still links numpy-1.0-0.
- a record whose "build" is the empty string: conda takes it (a build string, empty);
  menv skipped it as one without a build. Here: `create` links it (dist "eb-1.0-"), with no
  warning, and its files are there; `search` lists it; a record with no "build" key at all is
  still skipped with the warning naming the file and record.
Usage: test_small_ones.py MENV
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile


def tarball(path, index, files):
    """A .tar.bz2 conda package: info/index.json, info/paths.json, info/files and `files`."""
    paths = [{"_path": p, "path_type": "hardlink", "sha256": hashlib.sha256(b).hexdigest(),
              "size_in_bytes": len(b)} for p, b in sorted(files.items())]
    members = dict(files)
    members["info/index.json"] = json.dumps(index).encode()
    members["info/paths.json"] = json.dumps({"paths": paths, "paths_version": 1}).encode()
    members["info/files"] = "".join(p + "\n" for p in sorted(files)).encode()
    with tarfile.open(path, "w:bz2") as t:
        for name, data in sorted(members.items()):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))
    raw = open(path, "rb").read()
    return dict(index, md5=hashlib.md5(raw).hexdigest(), sha256=hashlib.sha256(raw).hexdigest(),
                size=len(raw))


def main():
    menv = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="menv-small-ones-")
    chan = os.path.join(tmp, "chan")
    lin = os.path.join(chan, "linux-64")
    os.makedirs(lin)
    os.makedirs(os.path.join(chan, "noarch"))
    base = {"build_number": 0, "depends": [], "subdir": "linux-64"}
    pkgs = {
        "numpy-1.0-0.tar.bz2": tarball(os.path.join(lin, "numpy-1.0-0.tar.bz2"),
                                       dict(base, name="numpy", version="1.0", build="0"),
                                       {"share/numpy.txt": b"numpy\n"}),
        "eb-1.0-.tar.bz2": tarball(os.path.join(lin, "eb-1.0-.tar.bz2"),
                                   dict(base, name="eb", version="1.0", build=""),
                                   {"share/eb.txt": b"eb\n"}),
    }
    # no "build" at all: conda's PackageRecord cannot be made, menv skips it with a warning
    nob = dict(base, name="nob", version="1.0", md5="0" * 32, size=1)
    pkgs["nob-1.0-0.tar.bz2"] = nob
    with open(os.path.join(lin, "repodata.json"), "w") as f:
        json.dump({"info": {"subdir": "linux-64"}, "packages": pkgs}, f)
    with open(os.path.join(chan, "noarch", "repodata.json"), "w") as f:
        json.dump({"info": {"subdir": "noarch"}, "packages": {}}, f)
    rc = os.path.join(tmp, "condarc")
    with open(rc, "w") as f:
        f.write("channels: []\npkgs_dirs: [%s]\n" % os.path.join(tmp, "pkgs"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CONDA") and not k.startswith("MENV_")}
    env.update(HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
    C = ["-c", "file://" + chan, "--override-channels"]
    fails = []

    def run(*args):
        return subprocess.run([menv, *args], capture_output=True, text=True, env=env,
                              timeout=120)

    def check(ok, what, p=None):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            fails.append(what)
            if p is not None:
                print("  rc=%d\n  stdout: %s\n  stderr: %s" % (p.returncode, p.stdout[-1500:],
                                                              p.stderr[-1500:]))

    def links(p):
        if p.returncode:
            return None
        return sorted(x["dist_name"] for x in json.loads(p.stdout)["actions"]["LINK"])

    # ---- numpy[subdir=noarch]: conda matches no linux-64 record
    p = run("create", "-p", os.path.join(tmp, "n1"), *C, "--dry-run", "--json",
            "numpy[subdir=noarch]")
    check(p.returncode == 1 and "numpy[subdir=noarch]" in p.stderr.strip().splitlines()[-1],
          "create 'numpy[subdir=noarch]': not found (conda: no record matches), the error "
          "names the spec", p)
    p = run("search", *C, "numpy[subdir=noarch]")
    check(p.returncode == 1 and not p.stdout, "search 'numpy[subdir=noarch]': no match", p)
    p = run("create", "-p", os.path.join(tmp, "n1"), *C, "--dry-run", "--json",
            "numpy[subdir=linux-64]")
    check(links(p) == ["numpy-1.0-0"], "create 'numpy[subdir=linux-64]': numpy-1.0-0", p)

    # ---- "build": "": a build string like any other
    prefix = os.path.join(tmp, "e")
    p = run("create", "-p", prefix, *C, "--dry-run", "--json", "eb")
    check(links(p) == ["eb-1.0-"] and "eb-1.0-" not in p.stderr,
          "create --dry-run eb: eb-1.0- (conda takes an empty build string), no warning", p)
    p = run("create", "-p", prefix, *C, "-y", "-q", "eb")
    meta = os.path.join(prefix, "conda-meta", "eb-1.0-.json")
    check(p.returncode == 0 and os.path.isfile(meta) and
          json.load(open(meta))["build"] == "" and
          open(os.path.join(prefix, "share", "eb.txt"), "rb").read() == b"eb\n",
          "create eb: linked, its record's build \"\" and its file", p)
    p = run("list", "-p", prefix, "--json")
    check(p.returncode == 0 and [(x["name"], x["build_string"]) for x in json.loads(p.stdout)]
          == [("eb", "")], "list --json: eb with build_string \"\"", p)
    p = run("search", *C, "--json", "eb")
    check(p.returncode == 0 and [(x["name"], x["build_string"]) for x in json.loads(p.stdout)]
          == [("eb", "")], "search eb: the record with build \"\"", p)
    p = run("create", "-p", os.path.join(tmp, "n2"), *C, "--dry-run", "nob")
    check(p.returncode == 1 and "skipped the record 'nob-1.0-0.tar.bz2': it has no 'build'"
          in p.stderr, "a record without a build key is still skipped, named", p)
    p = run("remove", "-p", prefix, "-y", "-q", "eb")
    check(p.returncode == 0 and not os.path.exists(meta)
          and not os.path.exists(os.path.join(prefix, "share", "eb.txt")),
          "remove eb: its record and file gone", p)
    if fails:
        print("%d check(s) failed" % len(fails))
        return 1
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

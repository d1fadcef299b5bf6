"""Every conda package entry of every lockfile in ../shared/corpus/lockfiles, read here with
Python (PyYAML, json, plain text; not menv's reader), must come out of menv's lockfile reader
with the same URL, the same md5 and sha256 and the same name (the entry's `name`, else the one
its file name gives).

    python3 corpus_hashes.py TEST_LOCKFILE_CORPUS CORPUS_LOCKFILES_DIR

TEST_LOCKFILE_CORPUS --digest prints what menv read ("FILE URL NAME MD5 SHA256" per entry). This
script reads each file its own way: explicit files line by line (URL#md5 or URL#sha256:HEX),
YAML and JSON files as trees in which every mapping with a `url` or `conda` key naming a
.conda/.tar.bz2 file is a package entry, its hashes in `md5`/`sha256` or conda-lock's
`hash: {md5, sha256}`. Exit 1 on any difference, 77 without the corpus or PyYAML."""

import json
import os
import re
import subprocess
import sys

HEX32, HEX64 = re.compile(r"^[0-9a-f]{32}$"), re.compile(r"^[0-9a-f]{64}$")


def conda_file(url):
    base = url.split("#", 1)[0].rsplit("/", 1)[-1]
    return base if base.endswith((".conda", ".tar.bz2")) else None


def name_of(fn):
    stem = fn[:-len(".conda")] if fn.endswith(".conda") else fn[:-len(".tar.bz2")]
    return stem.rsplit("-", 2)[0]


def read_explicit(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "@")) or "://" not in line:
            continue
        url, _, frag = line.partition("#")
        if not conda_file(url):
            continue
        md5 = frag if HEX32.match(frag) else None
        sha = frag[7:] if frag.startswith("sha256:") and HEX64.match(frag[7:]) else None
        out[url] = {"md5": md5, "sha256": sha, "name": None}
    return out


def read_tree(tree):
    out = {}

    def walk(x):
        if isinstance(x, dict):
            for key in ("url", "conda"):
                url = x.get(key)
                if isinstance(url, str) and conda_file(url):
                    h = x.get("hash") if isinstance(x.get("hash"), dict) else {}
                    e = out.setdefault(url, {"md5": None, "sha256": None, "name": None})
                    if isinstance(x.get("name"), str):
                        e["name"] = x["name"]
                    for k in ("md5", "sha256"):
                        v = x.get(k) or h.get(k)
                        if isinstance(v, str) and v:
                            e[k] = v.lower()
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(tree)
    return out


def read_independently(path):
    import yaml
    text = open(path, encoding="utf-8", errors="replace").read()
    if "@EXPLICIT" in text:
        return read_explicit(text)
    try:
        tree = json.loads(text)
    except ValueError:
        try:
            tree = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
    return read_tree(tree)


def main():
    binary, corpus = sys.argv[1], sys.argv[2]
    if not os.path.isdir(corpus):
        print("SKIP: no corpus at %s" % corpus)
        return 77
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("SKIP: PyYAML (Debian python3-yaml) is needed")
        return 77
    p = subprocess.run([binary, corpus, "/dev/null", "--digest"], capture_output=True, text=True)
    if p.returncode:
        print("FAIL: %s --digest exited %d\n%s" % (binary, p.returncode, p.stderr))
        return 1
    menv = {}
    for line in p.stdout.splitlines():
        rel, url, name, md5, sha = line.split("\t")
        menv.setdefault(rel, {})[url] = (name, None if md5 == "-" else md5,
                                         None if sha == "-" else sha)
    fails = checked = hashes = files = 0
    for dirpath, _, names in os.walk(corpus):
        for n in sorted(names):
            path = os.path.join(dirpath, n)
            rel = os.path.relpath(path, corpus)
            want = read_independently(path)
            if not want or rel not in menv:
                continue        # rejected by menv (lockfile.corpus checks why) or no entries
            files += 1
            got = menv[rel]
            for url, h in sorted(want.items()):
                checked += 1
                g = got.get(url)
                exp = (h["name"] or name_of(conda_file(url)), h["md5"], h["sha256"])
                hashes += (h["md5"] is not None) + (h["sha256"] is not None)
                if g is None:
                    print("FAIL %s: menv has no entry with url %s" % (rel, url))
                    fails += 1
                elif g != exp:
                    print("FAIL %s: %s\n     menv:   name=%s md5=%s sha256=%s\n"
                          "     python: name=%s md5=%s sha256=%s" % ((rel, url) + g + exp))
                    fails += 1
    print("%d files, %d conda entries (%d hashes) compared, %d differences"
          % (files, checked, hashes, fails))
    if checked < 1000 or hashes < 1000:
        print("FAIL: too few entries compared (the corpus holds thousands)")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

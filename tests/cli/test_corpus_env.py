#!/usr/bin/env python3
"""cli.corpus_env: a file:// channel made of real packages from the corpus.

index -> repodata.json checked against the files; create an environment of every
package whose dependencies the channel satisfies; every installed file checked
against the package itself; PrefixRecords against repodata; list / export; a
second environment from the export (cache hits, no re-extraction); zlib alone is
unsatisfiable (libgcc-ng is not in the channel)."""

import ast
import glob
import json
import os
import re

import menvtest
from menvtest import Package, md5_file, read_json, sha256_bytes, sha256_file

# What conda installs for SPECS from this channel (every name in the channel whose
# dependencies resolve; conda's answer: highest versions, `versioned` 2.0 forces
# buildstring's versioned_2 build; run_constrained's `dependency>=2.0` holds).
# Left out: clobber-b and post_link-b (same files as clobber-a / private-package),
# packages with post-link scripts (conda runs them), sample_noarch_python (needs a
# real python to compile), unsatisfiable, zlib/nano/xtensor-io/mock/flask (their
# dependencies are not in the channel).
SPECS = ["_r-mutex", "dependent", "symlink-test", "zip64-test", "sparse-test",
         "another_dependent", "other_dependent", "run_constrained", "versioned",
         "buildstring", "activate_deactivate_package", "small-executable",
         "private-package", "clobber-a", "pip", "python", "feature", "track_feature",
         "pre_link_messages_package"]
EXPECTED_DISTS = {
    "_r-mutex-1.0.1-anacondar_1", "dependent-2.0-0", "dependency-2.0-0",
    "symlink-test-1.0.0-0", "zip64-test-1.0.0-0", "sparse-test-1.0.0-0",
    "another_dependent-2.0-0", "other_dependent-1.0-0", "run_constrained-1.0-0",
    "versioned-2.0-0", "buildstring-1.0-versioned_2", "activate_deactivate_package-1.0-0",
    "small-executable-1.0-0", "private-package-1.0-0", "clobber-a-1.0-0",
    "pip-99.99.99-py399_0", "python-3.99.99-0", "feature-2.0-track_feature2_0",
    "track_feature-2.0-0", "pre_link_messages_package-1.0-0",
}


def build_channel(t):
    P = os.path.join(t.corpus, "packages")
    linux = (glob.glob(P + "/conda/conda_format_repo/linux-64/zlib-1.2.11-h7b6447c_3.*")
             + [P + "/conda-index/nano-2.4.1-0.tar.bz2"]
             + glob.glob(P + "/conda-package-handling/mock-2.0.0-py37_1000.*")
             + glob.glob(P + "/quetz/xtensor-io-*.tar.bz2"))
    noarch = ([P + "/mamba/_r-mutex-1.0.1-anacondar_1.tar.bz2"]
              + sorted(glob.glob(P + "/conda/test-recipes/noarch/*.conda"))
              + [glob.glob(P + "/rattler/sparse/%s-*.conda" % n)[0]
                 for n in ("symlink-test", "zip64-test", "sparse-test")]
              + [P + "/conda-index/flask-0.11.1-py_0.tar.bz2"])
    for f in linux + noarch:
        if not os.path.isfile(f):
            raise menvtest.Skip("corpus file missing: %s" % f)
    # the test-recipes noarch folder must really hold noarch packages
    for f in noarch:
        pkg = Package(f)
        sd = pkg.index.get("subdir")
        t.check(sd in (None, "noarch"), "%s: index.json subdir is noarch (got %r)" % (pkg.fn, sd))
    return t.make_channel("chan", {"linux-64": linux, "noarch": noarch})


def check_repodata(t, chan):
    """repodata.json against the package files and their info/index.json."""
    repo = {}
    n_records = 0
    for subdir in ("linux-64", "noarch"):
        rd = read_json(os.path.join(chan, subdir, "repodata.json"))
        t.eq(rd.get("info", {}).get("subdir"), subdir, "%s/repodata.json info.subdir" % subdir)
        files = sorted(f for f in os.listdir(os.path.join(chan, subdir))
                       if f.endswith((".conda", ".tar.bz2")))
        listed = sorted(list(rd.get("packages", {})) + list(rd.get("packages.conda", {})))
        t.eq(listed, files, "%s/repodata.json lists exactly the package files" % subdir)
        for key in ("packages", "packages.conda"):
            for fn, rec in rd.get(key, {}).items():
                n_records += 1
                t.eq(key == "packages.conda", fn.endswith(".conda"),
                     "%s is under the right key (%s)" % (fn, key))
                path = os.path.join(chan, subdir, fn)
                if not t.check(os.path.isfile(path), "%s/%s exists" % (subdir, fn)):
                    continue
                t.eq(rec.get("sha256"), sha256_file(path), "%s: repodata sha256 = sha256sum" % fn)
                t.eq(rec.get("md5"), md5_file(path), "%s: repodata md5 = md5sum" % fn)
                t.eq(rec.get("size"), os.stat(path).st_size, "%s: repodata size = file size" % fn)
                idx = Package(path).index
                for k in ("name", "version", "build", "build_number"):
                    t.eq(rec.get(k), idx.get(k), "%s: repodata %s = index.json" % (fn, k))
                t.eq(rec.get("depends", []), idx.get("depends", []),
                     "%s: repodata depends = index.json" % fn)
                if idx.get("constrains"):
                    t.eq(rec.get("constrains"), idx["constrains"],
                         "%s: repodata constrains = index.json" % fn)
                t.eq(rec.get("subdir"), idx.get("subdir") or subdir,
                     "%s: repodata subdir" % fn)
                repo[fn] = (subdir, rec)
    lin = read_json(os.path.join(chan, "linux-64", "repodata.json"))
    zl = [fn for fn in lin.get("packages", {}) if fn.startswith("zlib-")]
    zc = [fn for fn in lin.get("packages.conda", {}) if fn.startswith("zlib-")]
    t.eq(zl, ["zlib-1.2.11-h7b6447c_3.tar.bz2"], "zlib once in packages")
    t.eq(zc, ["zlib-1.2.11-h7b6447c_3.conda"], "zlib once in packages.conda")
    t.note("repodata: %d records checked against their files" % n_records)
    return repo


def verify_prefix(t, prefix, chan, repo):
    """Every PrefixRecord against repodata and the package; every file against the package."""
    meta = os.path.join(prefix, "conda-meta")
    records = {}
    n_sha = n_bytes = n_links = 0
    for jf in sorted(glob.glob(os.path.join(meta, "*.json"))):
        dist = os.path.basename(jf)[:-5]
        rec = read_json(jf)
        records[dist] = rec
        fn = rec.get("fn") or os.path.basename(rec.get("url", ""))
        if not t.check(fn in repo, "%s: PrefixRecord's fn %r is a channel file" % (dist, fn)):
            continue
        subdir, rrec = repo[fn]
        t.eq("%s-%s-%s" % (rec.get("name"), rec.get("version"), rec.get("build")), dist,
             "%s: conda-meta file name is name-version-build" % dist)
        for k in ("name", "version", "build", "build_number", "md5", "sha256", "size"):
            t.eq(rec.get(k), rrec.get(k), "%s: PrefixRecord %s = repodata" % (dist, k))
        # conda's index adds pip to python's depends (add_pip_as_python_dependency)
        want_deps = rrec.get("depends", []) + (["pip"] if rec.get("name") == "python" and
                                               "pip" not in rrec.get("depends", []) else [])
        t.eq(rec.get("depends"), want_deps, "%s: PrefixRecord depends = repodata" % dist)
        if rrec.get("constrains"):
            t.eq(rec.get("constrains"), rrec["constrains"], "%s: PrefixRecord constrains" % dist)
        url = t.url(chan) + "/" + subdir + "/" + fn
        t.eq(rec.get("url"), url, "%s: PrefixRecord url" % dist)
        t.eq(rec.get("channel"), t.url(chan) + "/" + subdir, "%s: PrefixRecord channel" % dist)
        t.eq(rec.get("subdir"), subdir, "%s: PrefixRecord subdir" % dist)
        # conda 26: requested_spec and requested_specs on a requested record,
        # `_requested_specs: []` on the others
        if rec.get("requested_spec") is not None:
            t.eq(rec.get("requested_specs"), [rec["requested_spec"]], "%s: requested_specs" % dist)
        else:
            t.eq(rec.get("_requested_specs"), [], "%s: _requested_specs of a dependency" % dist)
        t.eq(rec.get("extracted_package_dir"), os.path.join(t.pkgs, dist),
             "%s: extracted_package_dir" % dist)
        t.eq(rec.get("package_tarball_full_path"), os.path.join(t.pkgs, fn),
             "%s: package_tarball_full_path" % dist)
        t.eq(rec.get("link", {}).get("source"), os.path.join(t.pkgs, dist), "%s: link.source" % dist)

        pkg = Package(os.path.join(chan, subdir, fn))
        # conda's read_paths_json: neither info/paths.json nor info/files (rattler's sparse
        # symlink-test and zip64-test) is an empty file list: nothing is linked
        listed = pkg.paths_json is not None or "info/files" in pkg.members
        payload = pkg.payload() if listed else {}
        pd = rec.get("paths_data", {})
        t.eq(pd.get("paths_version"), 1, "%s: paths_data.paths_version" % dist)
        entries = pd.get("paths", [])
        t.eq(sorted(e.get("_path") for e in entries), sorted(payload),
             "%s: paths_data lists exactly the package's files" % dist)
        t.eq(sorted(rec.get("files", [])), sorted(payload), "%s: files = package's files" % dist)
        want_sha = pkg.paths_json_sha256()
        if pkg.paths_json:
            pj_types = {p["_path"]: p.get("path_type") for p in pkg.paths_json["paths"]}
        else:
            pj_types = {}
        for e in entries:
            rel = e.get("_path")
            dst = os.path.join(prefix, rel)
            m = payload.get(rel)
            if m is None:
                continue
            if rel in pj_types:
                t.eq(e.get("path_type"), pj_types[rel], "%s: %s path_type = paths.json" % (dist, rel))
            if m.kind == "softlink":
                t.eq(e.get("path_type"), "softlink", "%s: %s is a softlink entry" % (dist, rel))
                if t.check(os.path.islink(dst), "%s: %s is a symlink in the prefix" % (dist, rel)):
                    t.eq(os.readlink(dst), m.linkname, "%s: %s symlink target" % (dist, rel))
                    n_links += 1
                continue
            t.eq(e.get("path_type"), "hardlink", "%s: %s is a hardlink entry" % (dist, rel))
            if not t.check(os.path.isfile(dst) and not os.path.islink(dst),
                           "%s: %s exists as a regular file" % (dist, rel)):
                continue
            with open(dst, "rb") as f:
                data = f.read()
            got = sha256_bytes(data)
            if rel in want_sha:
                t.eq(got, want_sha[rel], "%s: sha256 of %s = info/paths.json" % (dist, rel))
                n_sha += 1
            if e.get("sha256"):
                t.eq(e["sha256"], got, "%s: paths_data sha256 of %s = file" % (dist, rel))
            if e.get("size_in_bytes") is not None:
                t.eq(e["size_in_bytes"], len(data), "%s: paths_data size of %s" % (dist, rel))
            if m.data is not None:   # no prefix placeholders in these packages: bytes are copied
                t.eq(got, sha256_bytes(m.data), "%s: %s bytes = archive member" % (dist, rel))
                n_bytes += 1
            if m.mode & 0o100:
                t.check(os.access(dst, os.X_OK), "%s: %s keeps its executable bit" % (dist, rel))
    t.note("%s: %d files verified against info/paths.json sha256, %d files byte-compared "
           "with the archive, %d symlinks verified" % (os.path.basename(prefix), n_sha, n_bytes, n_links))
    return records, n_sha


def check_history(t, prefix, chan, dists_by_subdir, specs):
    with open(os.path.join(prefix, "conda-meta", "history")) as f:
        text = f.read()
    lines = text.splitlines()
    t.check(bool(lines) and re.match(r"^==> \d{4}-\d\d-\d\d \d\d:\d\d:\d\d <==$", lines[0]),
            "history starts with '==> DATE <=='", lines[:1])
    t.check(any(l.startswith("# cmd: ") for l in lines), "history has '# cmd:'")
    plus = sorted(l for l in lines if l.startswith("+"))
    want = sorted("+%s/%s::%s" % (t.url(chan), sd, d) for d, sd in dists_by_subdir.items())
    t.eq(plus, want, "history '+channel/subdir::dist' lines")
    upd = [l for l in lines if l.startswith("# update specs: ")]
    if t.check(len(upd) == 1, "history has one '# update specs:' line", lines):
        # a Python list, as conda's History.write_specs writes it
        t.eq(sorted(ast.literal_eval(upd[0][len("# update specs: "):])), sorted(specs),
             "history update specs")


def body(t):
    chan = build_channel(t)
    repo = check_repodata(t, chan)
    curl = t.url(chan)

    # the real create
    r = t.menv_ok("create", "-n", "corpus", "--override-channels", "-c", curl, *SPECS)
    prefix = os.path.join(t.envs, "corpus")
    meta = os.path.join(prefix, "conda-meta")
    dists = {os.path.basename(p)[:-5] for p in glob.glob(meta + "/*.json")}
    t.eq(dists, EXPECTED_DISTS, "installed set = conda's solution")
    records, n_sha = verify_prefix(t, prefix, chan, repo)
    t.check(n_sha >= 10, "at least 10 files verified by paths.json sha256 (got %d)" % n_sha)
    # a hard link inside the archive (symlink-test lib/libhard.so -> lib/libreal.so.1) must
    # give the same bytes in the extracted package (the package has no file list: conda links
    # none of its files into the prefix, checked above)
    hard = os.path.join(t.pkgs, "symlink-test-1.0.0-0", "lib", "libhard.so")
    real = os.path.join(t.pkgs, "symlink-test-1.0.0-0", "lib", "libreal.so.1")
    t.check(not os.path.exists(os.path.join(prefix, "lib", "libreal.so.1")),
            "symlink-test: nothing linked into the prefix (no paths.json, no info/files)")
    if t.check(os.path.isfile(hard) and os.path.isfile(real), "symlink-test: libhard.so and libreal.so.1"):
        t.eq(open(hard, "rb").read(), open(real, "rb").read(), "libhard.so has libreal.so.1's bytes")
    subdir_of = {d: repo[rec["fn"]][0] for d, rec in records.items() if rec.get("fn") in repo}
    check_history(t, prefix, chan, subdir_of, SPECS)
    t.check("warning" not in r.err.lower() or "more than one package" not in r.err,
            "no clobber warning for a clobber-free set", r.err)

    # package cache layout
    urls_txt = os.path.join(t.pkgs, "urls.txt")
    urls = open(urls_txt).read().split() if os.path.isfile(urls_txt) else []
    t.eq(sorted(u for u in urls if u.startswith(curl)), sorted(rec.get("url") for rec in records.values()),
         "pkgs/urls.txt lists each downloaded package's url once")
    for d, rec in records.items():
        fn = rec.get("fn", "")
        t.check(os.path.isfile(os.path.join(t.pkgs, fn)), "cache has %s" % fn)
        rr = os.path.join(t.pkgs, d, "info", "repodata_record.json")
        if t.check(os.path.isfile(rr), "cache has %s/info/repodata_record.json" % d):
            rj = read_json(rr)
            for k in ("name", "version", "build", "sha256", "md5", "size", "url"):
                t.eq(rj.get(k), rec.get(k), "%s repodata_record.json %s" % (d, k))

    # menv list
    r = t.menv_ok("list", "-n", "corpus")
    rows = {tuple(l.split()[:3]) for l in r.out.splitlines() if l and not l.startswith("#")}
    for d, rec in records.items():
        t.check((rec["name"], rec["version"], rec["build"]) in rows,
                "menv list shows %s %s %s" % (rec["name"], rec["version"], rec["build"]), r.out)
    t.eq(len(rows), len(records), "menv list has one row per package")
    r = t.menv_ok("list", "-n", "corpus", "--json")
    try:
        lj = r.json()
        t.eq(sorted((p.get("name"), p.get("version"), p.get("build_string")) for p in lj),
             sorted((rec["name"], rec["version"], rec["build"]) for rec in records.values()),
             "menv list --json = installed set")
    except ValueError as e:
        t.check(False, "menv list --json parses (%s)" % e, r.out)

    # menv export -> name=version=build lines for exactly the installed set
    r = t.menv_ok("export", "-n", "corpus", "--format", "environment")
    exported = os.path.join(t.tmp, "exported.yml")
    menvtest.write_text(exported, r.out)
    dep_lines = [l.strip()[2:].strip().strip('"') for l in r.out.splitlines()
                 if re.match(r"^\s+- ", l) and "=" in l]
    t.eq(sorted(dep_lines),
         sorted("%s=%s=%s" % (rec["name"], rec["version"], rec["build"]) for rec in records.values()),
         "menv export lists name=version=build of exactly the installed set")

    # re-create from the export: same set, cache hits, no re-extraction
    before = {}
    for d in records:
        st = os.stat(os.path.join(t.pkgs, d))
        rst = os.stat(os.path.join(t.pkgs, d, "info", "repodata_record.json"))
        before[d] = (st.st_ino, st.st_mtime_ns, rst.st_ino, rst.st_mtime_ns)
    tar_before = {rec["fn"]: os.stat(os.path.join(t.pkgs, rec["fn"])).st_mtime_ns
                  for rec in records.values()}
    r = t.menv_run("create", "-f", exported, "-n", "other")
    if t.check(r.rc == 0, "menv create -f exported.yml -n other succeeds", r):
        other = {os.path.basename(p)[:-5]
                 for p in glob.glob(os.path.join(t.envs, "other", "conda-meta", "*.json"))}
        t.eq(other, set(records), "env from the export has the same conda-meta set")
        after = {}
        for d in records:
            st = os.stat(os.path.join(t.pkgs, d))
            rst = os.stat(os.path.join(t.pkgs, d, "info", "repodata_record.json"))
            after[d] = (st.st_ino, st.st_mtime_ns, rst.st_ino, rst.st_mtime_ns)
        t.eq(after, before, "extracted cache dirs unchanged (inode, mtime): no re-extraction")
        t.eq({fn: os.stat(os.path.join(t.pkgs, fn)).st_mtime_ns for fn in tar_before}, tar_before,
             "cached package files not downloaded again")
        for d in records:
            t.check(re.search(r"\bcached\s+%s\b" % re.escape(d), r.err + r.out) is not None,
                    "second create reports a cache hit for %s" % d, r.err)
        t.check(not re.search(r"\b(downloaded|extracted)\b", r.err + r.out),
                "second create downloads and extracts nothing", r.err)
        verify_prefix(t, os.path.join(t.envs, "other"), chan, repo)

    # a noarch-only channel, indexed by menv: conda treats a missing <platform>/repodata.json
    # as empty (only a missing noarch/repodata.json makes a channel invalid)
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    noarch_only = t.make_channel("noarch-only", {"noarch": [os.path.join(P, "dependency-1.0-0.conda"),
                                                            os.path.join(P, "dependent-1.0-0.conda")]})
    r = t.menv_run("create", "-n", "na", "--dry-run", "--json", "--override-channels",
                   "-c", t.url(noarch_only), "dependent")
    j = r.try_json() or {}
    t.check(r.rc == 0, "noarch-only channel (menv index output): dry-run of dependent succeeds", r)
    t.eq(sorted(p.get("dist_name", p.get("name")) for p in j.get("actions", {}).get("LINK", [])),
         ["dependency-1.0-0", "dependent-1.0-0"], "noarch-only channel: dependent + dependency")

    # zlib alone: libgcc-ng is not in the channel
    r = t.menv_run("create", "-n", "zl", "--dry-run", "--json", "--override-channels", "-c", curl, "zlib")
    t.one_line_error(r, "zlib without libgcc-ng", ["libgcc-ng"])
    try:
        t.eq(r.json().get("success"), False, "zlib dry-run --json: success false")
    except ValueError:
        t.check(False, "zlib dry-run --json: stdout is JSON", r.out)
    t.no_prefix_left(os.path.join(t.envs, "zl"), "zlib dry-run")


if __name__ == "__main__":
    menvtest.main(body, "corpus_env")

#!/usr/bin/env python3
"""cli.regressions: inputs of bugs found by trying menv as a new user, each with the right
outcome as its assertion.

1. a metapackage (only info/index.json, no paths.json, no info/files) installs with 0 files
   (it crashed: an empty buffer was NULL);
2. specs that match everything ('' and '*') are refused instead of installing an arbitrary
   package; an invalid bracket value (build_number=x) is a MatchSpec error;
3. `-n base` is refused (base names the root environment);
4. a prefix holding a quote is refused before anything is fetched;
5. an environment file with a key given twice or a second YAML document is refused;
6. `install X` and `remove Y` racing on one prefix never leave a record whose dependency
   is gone (the waiting command plans again under the lock);
7. a prefix whose last part is 250 characters long is created (the staging name is cut);
8. `menv list` keeps its columns in line when a build string is longer than 25 characters
   (pytorch's are: py3.9_cuda11.8_cudnn8.7.0_0); it filters by conda's REGEX argument (which
   it ignored) and sorts pip's rows among conda's;
9. a repodata patch (a record's depends changed in repodata.json, the package file not) reaches
   the PrefixRecord of a package already in the cache, as in conda, whose conda-meta comes from
   the solver's record and not from the cache's repodata_record.json;
10. a `PATH` (or CONDA_PREFIX, CONDA_SHLVL, ...) among an environment's variables is ignored
   with a warning, as conda protects PATH: it used to replace PATH on activation and in
   `menv run` (so no command was found) and to leave PATH empty after deactivation;
11. environment names with '/', ' ', ':' or '#' (conda's rule) or a leading '-', and prefixes
   with ':' (which splits PATH) are refused before anything is made;
12. unknown top-level keys of an environment file (a typo such as `dependncies`) are named in
   a warning with their line, as conda warns, instead of silently making an empty
   environment;
13. the transaction's "Total download" counts only what the package cache lacks;
14. `-f /dev/stdin` (a pipe) works for create and env update: the file was read twice (to
   tell a lockfile from an environment file, then to load it), the second time empty;
15. `remove --all` of the root prefix (which holds envs/ and pkgs/) is refused: it deleted
   every other environment and the package cache (tryout finding, data loss);
16. an environment inside another environment is refused, as conda refuses it (the root
   prefix's envs/ excepted): `remove --all` of the outer one deleted the inner one;
17. `export --from-history` lists what later commands asked for too (conda's requested specs
   map), not only the specs the environment was created with (tryout finding);
18. `install --revision N -c CHANNEL` finds the revision's packages in the channels once the
   package cache lost them (`clean --all`), instead of failing (tryout finding);
19. a package with files but neither info/paths.json nor info/files links none of them and
   records `files: []`, as conda 26.7.1 does (its answer: no_file_list_conda.json); menv
   linked every file outside info/.
"""
import json
import os
import shutil
import subprocess

import tarfile

import menvtest
from menvtest import build_tar_bz2, write_text

HERE = os.path.dirname(os.path.abspath(__file__))


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, f) for f in (
        "dependency-2.0-0.conda", "dependent-2.0-0.conda")]}, index=False)
    build_tar_bz2(os.path.join(chan, "noarch", "metaonly-1.0-0.tar.bz2"),
                  {"name": "metaonly", "version": "1.0", "build": "0", "build_number": 0,
                   "depends": ["dependency"], "subdir": "noarch"})
    long_build = "py3.9_cuda11.8_cudnn8.7.0_0"
    build_tar_bz2(os.path.join(chan, "noarch", "longbuild-2.0.1-%s.tar.bz2" % long_build),
                  {"name": "longbuild", "version": "2.0.1", "build": long_build,
                   "build_number": 0, "depends": [], "subdir": "noarch"})
    t.index(chan)
    C = ["-c", t.url(chan), "--override-channels", "-q"]

    # 1. metapackage
    r = t.menv_run("create", "-n", "meta", *C, "metaonly")
    t.eq(r.rc, 0, "a metapackage without file lists installs (exit 0)")
    rec = os.path.join(t.envs, "meta", "conda-meta", "metaonly-1.0-0.json")
    t.check(os.path.isfile(rec), "its PrefixRecord is written", r)
    if os.path.isfile(rec):
        t.eq(json.load(open(rec))["files"], [], "it has no files")

    # 8. menv list columns
    t.menv_ok("install", "-n", "meta", *C, "longbuild")
    r = t.menv_ok("list", "-n", "meta")
    head = [l for l in r.out.splitlines() if l.startswith("# Name")]
    rows = [l for l in r.out.splitlines() if l and not l.startswith("#")]
    t.eq(sorted(l.split()[0] for l in rows), ["dependency", "longbuild", "metaonly"],
         "menv list rows")
    if head:
        cols = [head[0].index(w) for w in ("Version", "Build", "Channel")]
        for l in rows:
            name, ver, build, chan_ = l.split()[:4]
            t.eq([l.index(" " + ver + " ") + 1, l.index(" " + build + " ") + 1,
                  l.rindex(" " + chan_) + 1], cols, "menv list columns line up: %r" % l)
    else:
        t.check(False, "menv list has a '# Name' header", r.out)
    # conda list's REGEX (searched in the name, any case) and --full-name; rows sorted by
    # name, pip's among conda's
    di = os.path.join(t.envs, "meta", "lib", "python3.9", "site-packages", "Aaa_pip-1.0.dist-info")
    os.makedirs(di)
    write_text(os.path.join(di, "METADATA"), "Metadata-Version: 2.1\nName: Aaa_pip\nVersion: 1.0\n")

    def names(*args):
        r = t.menv_ok("list", "-n", "meta", *args)
        return [l.split()[0] for l in r.out.splitlines() if l and not l.startswith("#")]
    t.eq(names(), ["aaa-pip", "dependency", "longbuild", "metaonly"], "list: sorted by name")
    t.eq(names("dep"), ["dependency"], "list dep")
    t.eq(names("^(meta|long)"), ["longbuild", "metaonly"], "list ^(meta|long)")
    t.eq(names("META"), ["metaonly"], "list META: any case")
    t.eq(names("--full-name", "depend"), [], "list --full-name depend")
    t.eq(names("--full-name", "dependency"), ["dependency"], "list --full-name dependency")
    t.eq([p["name"] for p in t.menv_ok("list", "-n", "meta", "--json", "pip").json()],
         ["aaa-pip"], "list --json pip")
    r = t.menv_run("list", "-n", "meta", "(")
    t.one_line_error(r, "list with a bad regex", ["invalid regular expression '('"],
                     nonzero_only=True)
    shutil.rmtree(os.path.join(t.envs, "meta", "lib"))

    # 2. specs matching everything, bad bracket values
    for spec in ("", "*"):
        r = t.menv_run("create", "-n", "any", *C, spec)
        t.one_line_error(r, "spec %r" % spec, ["would match every package"])
        t.no_prefix_left(os.path.join(t.envs, "any"), "spec %r" % spec)
    r = t.menv_run("create", "-n", "bn", *C, "dependent[build_number=x]")
    t.one_line_error(r, "build_number=x", ["build_number", "not a number"], nonzero_only=True)

    # 3. base
    r = t.menv_run("create", "-n", "base", *C, "dependent")
    t.one_line_error(r, "-n base", ["root environment"], nonzero_only=True)
    t.check(not os.path.exists(os.path.join(t.envs, "base")), "no envs/base is made")

    # 4. a quote in the prefix: refused before downloading anything
    q = os.path.join(t.tmp, "it's")
    r = t.menv_run("create", "-p", q, *C, "dependent")
    t.one_line_error(r, "prefix with a quote", ["quote"], nonzero_only=True)
    t.check(not os.path.exists(q), "no prefix with a quote is made")
    t.check(not os.path.isdir(os.path.join(t.pkgs, "dependent-2.0-0")),
            "nothing was fetched for it")

    # 5. YAML that would silently drop what the user wrote
    for text, needle in (("name: a\nchannels: [x]\nname: b\ndependencies: []\n", "given twice"),
                         ("name: a\ndependencies: []\n---\nname: b\n", "second YAML document")):
        f = os.path.join(t.tmp, "env.yml")
        write_text(f, text)
        r = t.menv_run("create", "-f", f, "-q")
        t.one_line_error(r, needle, [needle, "env.yml:"])

    # 6. install and remove racing on one prefix
    t.menv_ok("create", "-n", "race", *C, "dependency")
    for i in range(4):
        inst = subprocess.Popen([t.menv, "install", "-n", "race", "-y"] + C + ["dependent"],
                                env=t.environ(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        rem = t.menv_run("remove", "-n", "race", "-y", "-q", "dependency")
        inst.wait()
        names = {f.rsplit("-", 2)[0] for f in os.listdir(os.path.join(t.envs, "race",
                                                                     "conda-meta"))
                 if f.endswith(".json")}
        t.check("dependent" not in names or "dependency" in names,
                "race %d: dependent is never left without dependency (%s; remove exit %d)"
                % (i, sorted(names), rem.rc))
        t.menv_run("install", "-n", "race", "-y", *C, "dependency")

    # 7. a long last path component
    long_prefix = os.path.join(t.tmp, "p" * 250)
    r = t.menv_run("create", "-p", long_prefix, *C, "dependency")
    t.eq(r.rc, 0, "a prefix named with 250 characters is created")

    # 9. repodata patches: metaonly is in the cache with depends [dependency]; the channel's
    # repodata now says [dependency, dependent]
    rd_path = os.path.join(chan, "noarch", "repodata.json")
    rd = json.load(open(rd_path))
    rd["packages"]["metaonly-1.0-0.tar.bz2"]["depends"] = ["dependency", "dependent"]
    write_text(rd_path, json.dumps(rd, indent=1))
    t.menv_ok("create", "-n", "patched", *C, "metaonly")
    got = json.load(open(os.path.join(t.envs, "patched", "conda-meta", "metaonly-1.0-0.json")))
    t.eq(got["depends"], ["dependency", "dependent"], "the patched depends in conda-meta")
    t.check(os.path.isfile(os.path.join(t.envs, "patched", "conda-meta", "dependent-2.0-0.json")),
            "the patched dependency is installed")


    # 10. reserved variables
    ef = os.path.join(t.tmp, "pathy.yml")
    write_text(ef, "name: pathy\nchannels: [%s, nodefaults]\ndependencies: [dependency]\n"
               "variables:\n  PATH: /opt/tools/bin\n  CONDA_SHLVL: '7'\n  KEEP: 'a b'\n"
               % t.url(chan))
    r = t.menv_run("create", "-q", "-f", ef)
    t.check(r.rc == 0 and "warning: %s: 'PATH' is set by activation itself" % ef in r.err
            and "'CONDA_SHLVL'" in r.err, "create warns about PATH and CONDA_SHLVL", r)
    r = t.menv_ok("env", "config", "vars", "list", "-n", "pathy")
    t.eq(r.out, "KEEP = a b\n", "only KEEP is stored")
    r = t.menv_run("env", "config", "vars", "set", "-n", "pathy", "PATH=/bogus", "MORE=1")
    t.check(r.rc == 0 and "'PATH' is set by activation itself" in r.err,
            "config vars set warns about PATH", r)
    state = os.path.join(t.envs, "pathy", "conda-meta", "state")
    with open(state) as f:
        st = json.load(f)
    st["env_vars"]["PATH"] = "/bogus"  # written by an older menv: ignored when loaded
    write_text(state, json.dumps(st))
    r = t.menv_ok("run", "-n", "pathy", "sh", "-c", 'echo "$KEEP|$MORE"; command -v ls')
    t.check(r.out.splitlines()[:1] == ["a b|1"] and "/ls" in r.out,
            "menv run: the variables, and a PATH that still finds ls", r)


    # 11. names and prefixes that break PATH or activation
    for name in ("a:b", "a b", "a#b", "-foo"):
        r = t.menv_run("create", "-n", name, *C, "dependency")
        t.one_line_error(r, "create -n %r" % name, ["invalid environment name"],
                         nonzero_only=True)
        t.check(not os.path.exists(os.path.join(t.envs, name)), "no env %r is made" % name)
    colon = os.path.join(t.tmp, "with:colon")
    r = t.menv_run("create", "-p", colon, *C, "dependency")
    t.one_line_error(r, "create -p with a colon", ["contains ':'"], nonzero_only=True)
    t.check(not os.path.exists(colon), "no prefix with a colon is made")


    # 12. unknown keys
    ef = os.path.join(t.tmp, "typo.yml")
    write_text(ef, "name: typo\nchannels: [%s]\nfoo: bar\ndependncies: [dependency]\n"
               "platforms: [linux-64]\n" % t.url(chan))
    r = t.menv_run("create", "-f", ef, "--dry-run")
    t.check("warning: %s:3: unknown key 'foo' is ignored" % ef in r.err and
            "warning: %s:4: unknown key 'dependncies' is ignored" % ef in r.err and
            "platforms" not in r.err, "create warns about foo and dependncies, by line", r)


    # 13. Total download
    r = t.menv_ok("create", "-n", "dl", *C, "dependency", "--dry-run")
    t.check("Total download: nothing (every package is in %s)" % t.pkgs in r.out,
            "dry run of cached packages: nothing to download", r.out)
    build_tar_bz2(os.path.join(chan, "noarch", "fresh-1.0-0.tar.bz2"),
                  {"name": "fresh", "version": "1.0", "build": "0", "build_number": 0,
                   "depends": ["dependency"], "subdir": "noarch"})
    t.index(chan)
    size = os.path.getsize(os.path.join(chan, "noarch", "fresh-1.0-0.tar.bz2"))
    r = t.menv_ok("create", "-n", "dl", *C, "fresh", "--dry-run")
    t.check("Total download: %d B (the others are in the package cache)" % size in r.out,
            "dry run: only fresh's %d bytes are downloaded" % size, r.out)


    # 14. an environment file from a pipe
    text = "name: piped\nchannels: [%s, nodefaults]\ndependencies: [dependency]\n" % t.url(chan)
    for cmd in (["create", "-n", "piped"], ["env", "update", "-n", "piped"]):
        p = subprocess.run([t.menv, *cmd, "-q", "-f", "/dev/stdin"], input=text.encode(),
                           capture_output=True, env=t.environ())
        t.check(p.returncode == 0, "%s -f /dev/stdin" % " ".join(cmd[:-2]), p.stderr.decode())
    t.check(os.path.isfile(os.path.join(t.envs, "piped", "conda-meta", "dependency-2.0-0.json")),
            "the piped environment file was used")

    # 15. the root prefix (envs/, pkgs/ inside it) is never removed
    os.makedirs(os.path.join(t.root, "conda-meta"), exist_ok=True)
    before = sorted(os.listdir(t.envs))
    for args in (["-n", "base"], ["-p", t.root]):
        r = t.menv_run("remove", *args, "--all", "-y")
        t.check(r.rc == 2 and "is the root environment" in r.err, "remove %s --all is refused"
                % args[0], r)
    t.eq(sorted(os.listdir(t.envs)), before, "every environment is still there")
    t.check(os.path.isdir(os.path.join(t.pkgs, "dependency-2.0-0")), "the package cache too")

    # 16. no environment inside another one
    nested = os.path.join(t.envs, "piped", "inner")
    r = t.menv_run("create", "-p", nested, *C, "dependency")
    t.check(r.rc == 2 and "is inside the environment" in r.err and not os.path.exists(nested),
            "create inside an environment is refused", r)
    t.menv_ok("create", "-n", "beside", *C, "dependency")

    # 17. --from-history after an install
    ef = os.path.join(t.tmp, "hist.yml")
    write_text(ef, "name: hist\nchannels: [%s, nodefaults]\ndependencies: [dependency=2.0]\n"
               % t.url(chan))
    t.menv_ok("create", "-f", ef)
    t.menv_ok("install", "-n", "hist", *C, "fresh")
    r = t.menv_ok("export", "-n", "hist", "--from-history", "--json")
    t.eq(r.json().get("dependencies"), ["dependency=2.0", "fresh"],
         "--from-history: the file's spec as written, then the later install")

    # 18. a revision's packages from the channels
    t.menv_ok("remove", "-n", "hist", "fresh", "-y", "-q")
    t.menv_ok("clean", "--all", "--json")
    r = t.menv_run("install", "-n", "hist", *C, "--revision", "1")
    t.check(r.rc == 0 and os.path.isfile(os.path.join(t.envs, "hist", "conda-meta",
                                                      "fresh-1.0-0.json")),
            "--revision 1 after clean --all: fresh linked again from the channel", r)

    # 19. no file list: conda's answer on the same package
    with open(os.path.join(HERE, "no_file_list_conda.json"), encoding="utf-8") as f:
        conda = json.load(f)
    src = os.path.join(t.corpus, "packages", "rattler", "clobber",
                       "clobber-1-0.1.0-h4616a5c_0.tar.bz2")
    bare = t.make_channel("bare", {"noarch": []}, index=False)
    with tarfile.open(src) as tin, tarfile.open(os.path.join(
            bare, "noarch", os.path.basename(src)), "w:bz2") as tout:
        payload = 0
        for m in tin.getmembers():
            if m.name in ("info/paths.json", "info/files"):
                continue
            payload += m.isfile() and not m.name.startswith("info/")
            tout.addfile(m, tin.extractfile(m) if m.isfile() else None)
    t.check(payload > 0, "the package keeps its payload files", payload)
    t.index(bare)
    t.menv_ok("create", "-n", "bare", "-c", t.url(bare), "--override-channels", "-q",
              "clobber-1")
    env = os.path.join(t.envs, "bare")
    linked = sorted(os.path.relpath(os.path.join(d, f), env) for d, _, fs in os.walk(env)
                    for f in fs)
    want = [f for f in conda["prefix_files"] if not f.startswith("conda-meta/")]
    t.eq([f for f in linked if not f.startswith("conda-meta/")], want,
         "no file list: nothing linked (conda's answer)")
    rec = os.path.join(env, "conda-meta", "clobber-1-0.1.0-h4616a5c_0.json")
    t.check(os.path.relpath(rec, env) in linked, "its PrefixRecord is written", linked)
    if os.path.isfile(rec):
        got = json.load(open(rec, encoding="utf-8"))
        t.eq({k: got.get(k) for k in conda["record"]}, conda["record"],
             "no file list: files and paths_data as conda records them")


menvtest.main(body)

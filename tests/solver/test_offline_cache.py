#!/usr/bin/env python3
"""Where conda 26.7.1's offline answers read the package cache's records, and where they do
not: menv's answers on the same prefixes, channels and package caches.

conda's classic solver builds its index as ReducedIndex(..., use_cache=False, ...)
(conda/core/solve.py, Solver._prepare): the package cache's records never enter a solve,
offline or not. So `conda remove --offline` (legacy features, a package whose dependents
leave with it), `conda install --offline`, `conda update --offline` and `conda create
--offline` answer as if the cache were empty: a package only the cache holds is not found, a
build only the cache holds is not relinked. Only `conda install --revision N` builds an
Index(use_cache=None), which --offline turns on (Index.__init__: use_cache = context.offline):
there a revision's package that no channel has is linked from the cache offline, and not
found online; the history line's channel must be the cached record's (revert_actions matches
MatchSpec.from_dist_str(line): a copy cached from another channel is not found; a channel
named under channel_alias matches by its URL). Each case's conda answer was taken with the
oracle (see --oracle below: conda's CLI with --dry-run --json, CONDA_PKGS_DIRS the case's
cache, the case's .condarc) and is committed in conda_offline_cache.json; this test builds
the same case and compares menv's answer: the LINK and UNLINK dist names, or that both fail
with an error naming the package (menv's as one line).

Every case: .condarc lists an unreachable HTTP channel (offline, conda reads it as empty, no
repodata cached), unless the case gives -c FILE-CHANNEL --override-channels (a file:// channel
is read offline too); the package cache holds extracted records only (info/index.json and
info/repodata_record.json, the form conda's PackageCacheData reads and menv extracts).
Case "featured" is test_remove_channels.py's prefix (conda's test_prune_1 state) with the
plain numpy build that channel-1 would relink in the cache; the others use small records:
a-1.0-0 depends on b, a-1.0-1 depends on nothing, c-1.0-0 and b-2.0-0 are only in the cache.

menv differs in the cases listed in KNOWN, each with its reason; a listed case that answers
as conda fails the test (the list is kept true; it is empty now). every_command() then runs
create, install, update, remove and search --offline (--dry-run, --json) over the unreachable
channel: each answers as over an empty channel, as conda's install_cache_only_http does.

Usage: test_offline_cache.py MENV SHARED_DIR
       test_offline_cache.py --oracle CONDA SHARED_DIR OUT.json   (conda's answers; not CTest)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_conda_solve as R  # noqa: E402
import test_remove_channels as T  # noqa: E402

UNREACHABLE = "http://127.0.0.1:9/chan"
SMALL = {"a-1.0-0": ["b"]}  # depends of the small records
# name -> (setup, command arguments after `--dry-run --json -p PREFIX`); FILECHAN is replaced
# by the case's file:// channel
CASES = {
    "featured": ({"corpus": ["numpy-1.6.2-py27_4"]}, ["remove", "--offline", "numbapro"]),
    "featured_filechan": ({"corpus": ["numpy-1.6.2-py27_4"], "corpus_chan": True},
                          ["remove", "--offline", "numbapro"]),
    "dependent": ({"chan": ["a-1.0-0", "b-1.0-0", "a-1.0-1"], "installed": ["a-1.0-0", "b-1.0-0"],
                   "history": ["a"], "cache": ["a-1.0-1"]}, ["remove", "--offline", "b"]),
    "dependent_filechan": ({"chan": ["a-1.0-0", "b-1.0-0"], "installed": ["a-1.0-0", "b-1.0-0"],
                            "history": ["a"], "cache": ["a-1.0-1"]},
                           ["remove", "--offline", "-c", "FILECHAN", "--override-channels", "b"]),
    "install_cache_only": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"], "history": ["b"],
                            "cache": ["c-1.0-0", "b-2.0-0"]},
                           ["install", "--offline", "-c", "FILECHAN", "--override-channels",
                            "c"]),
    "install_newer_in_cache": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"], "history": ["b"],
                                "cache": ["b-2.0-0"]},
                               ["install", "--offline", "-c", "FILECHAN",
                                "--override-channels", "b>=2"]),
    "update_newer_in_cache": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"], "history": ["b"],
                               "cache": ["b-2.0-0"]},
                              ["update", "--offline", "-c", "FILECHAN", "--override-channels",
                               "b"]),
    "create_cache_only": ({"chan": ["b-1.0-0"], "cache": ["c-1.0-0"], "new": True},
                          ["create", "--offline", "-c", "FILECHAN", "--override-channels", "c"]),
    "revision_offline": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"], "history": ["b", "c"],
                          "rev0_extra": ["c-1.0-0"], "removed": ["c-1.0-0"],
                          "cache": ["c-1.0-0"]},
                         ["install", "--offline", "-c", "FILECHAN", "--override-channels",
                          "--revision", "0"]),
    "install_cache_only_http": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"],
                                 "history": ["b"], "cache": ["c-1.0-0"]},
                                ["install", "--offline", "c"]),
    "revision_offline_http": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"],
                               "history": ["b", "c"], "rev0_extra": ["c-1.0-0"],
                               "removed": ["c-1.0-0"], "cache": ["c-1.0-0"]},
                              ["install", "--offline", "--revision", "0"]),
    "revision_offline_other_channel": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"],
                                        "history": ["b", "c"], "rev0_extra": ["c-1.0-0"],
                                        "removed": ["c-1.0-0"], "cache": ["c-1.0-0"],
                                        "cache_from": "other"},
                                       ["install", "--offline", "-c", "FILECHAN",
                                        "--override-channels", "--revision", "0"]),
    "revision_offline_named": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"],
                                "history": ["b", "c"], "rev0_extra": ["c-1.0-0"],
                                "removed": ["c-1.0-0"], "cache": ["c-1.0-0"], "named": True},
                               ["install", "--offline", "--revision", "0"]),
    "revision_online": ({"chan": ["b-1.0-0"], "installed": ["b-1.0-0"], "history": ["b", "c"],
                         "rev0_extra": ["c-1.0-0"], "removed": ["c-1.0-0"],
                         "cache": ["c-1.0-0"]},
                        ["install", "-c", "FILECHAN", "--override-channels", "--revision",
                         "0"]),
}
KNOWN = {}


def small(s):
    n, v, b = s.rsplit("-", 2)
    return {"name": n, "version": v, "build": b, "build_number": int(b), "depends":
            SMALL.get(s, []), "subdir": "linux-64", "md5": "0" * 32,
            "size": 1}


def build(case, tmp, shared):
    """The case's channel(s), prefix, package cache and .condarc under tmp; returns
    (prefix, file channel URL)."""
    setup = CASES[case][0]
    prefix, pkgs = os.path.join(tmp, "env"), os.path.join(tmp, "pkgs")
    os.makedirs(pkgs)
    cached = []  # (record, channel URL of its subdir)
    if "corpus" in setup:
        chans = R.Channels(shared, tmp)
        cases = json.load(open(os.path.join(HERE, "conda_solve_cases.json"),
                               encoding="utf-8"))["tests"]
        step = [s for c in cases if c["name"] == "test_prune_1" for s in c["steps"]
                if s["line"] == 350][0]
        T.make_prefix(chans, prefix, step["installed"], step["history"])
        recs = chans.make("channel-1", "index.json")
        filechan = "file://" + os.path.join(chans.root, "channel-1")
        for d in setup["corpus"]:
            r = recs[d + ".tar.bz2"]
            cached.append((d, r, chans.url("channel-1", r["subdir"])))
    else:
        chan = os.path.join(tmp, "chan")
        filechan = "file://" + chan
        url = filechan + "/linux-64"
        for sub, names in (("linux-64", setup["chan"]), ("noarch", [])):
            os.makedirs(os.path.join(chan, sub))
            with open(os.path.join(chan, sub, "repodata.json"), "w", encoding="utf-8") as f:
                json.dump({"info": {"subdir": sub},
                           "packages": {s + ".tar.bz2": small(s) for s in names}}, f)
        if not setup.get("new"):
            meta = os.path.join(prefix, "conda-meta")
            os.makedirs(meta)
            for s in setup["installed"]:
                with open(os.path.join(meta, s + ".json"), "w", encoding="utf-8") as f:
                    json.dump(dict(small(s), fn=s + ".tar.bz2", channel=url,
                                   url=url + "/" + s + ".tar.bz2", files=[],
                                   paths_data={"paths": [], "paths_version": 1},
                                   requested_spec=""), f)
            # conda's history names a channel under channel_alias by its name
            label = "chan/linux-64" if setup.get("named") else url
            with open(os.path.join(meta, "history"), "w", encoding="utf-8") as f:
                f.write("==> 2024-01-01 00:00:00 <==\n# cmd: conda install\n")
                for s in sorted(setup["installed"] + setup.get("rev0_extra", [])):
                    f.write("+%s::%s\n" % (label, s))
                f.write("# update specs: %s\n" % R.py_list(setup["history"]))
                if setup.get("removed"):
                    f.write("==> 2024-01-02 00:00:00 <==\n# cmd: conda remove\n")
                    for s in setup["removed"]:
                        f.write("-%s::%s\n" % (label, s))
                    f.write("# remove specs: %s\n" % R.py_list(
                        [s.rsplit("-", 2)[0] for s in setup["removed"]]))
        if setup.get("cache_from"):  # a copy from another channel (its url and channel)
            url = "file://%s/linux-64" % os.path.join(tmp, setup["cache_from"])
        cached = [(s, small(s), url) for s in setup.get("cache", [])]
    for d, r, url in cached:
        info = os.path.join(pkgs, d, "info")
        os.makedirs(info)
        with open(os.path.join(info, "index.json"), "w", encoding="utf-8") as f:
            json.dump(r, f)
        with open(os.path.join(info, "repodata_record.json"), "w", encoding="utf-8") as f:
            json.dump(dict(r, fn=d + ".tar.bz2", channel=url, url=url + "/" + d + ".tar.bz2"),
                      f)
    rcchan = filechan if setup.get("corpus_chan") else UNREACHABLE
    with open(os.path.join(tmp, "condarc"), "w", encoding="utf-8") as f:
        f.write("channels: [%s]\nchannel_priority: flexible\n"
                "add_pip_as_python_dependency: false\npkgs_dirs: [%s]\n" % (rcchan, pkgs))
        if setup.get("named"):
            f.write("channel_alias: file://%s\n" % tmp)
    return prefix, filechan


def answer(p, name):
    """{"rc": 0, "link", "unlink"} of a --json dry run, or {"rc": 1, "exception", "names"}:
    conda's exception name (its JSON; none for menv) and whether the error names the package
    `name` as a word (conda's JSON message, menv's one line on stderr)."""
    if p.returncode == 0:
        a = json.loads(p.stdout).get("actions", {})
        return {"rc": 0, "link": sorted(x["dist_name"] for x in a.get("LINK", [])),
                "unlink": sorted(x["dist_name"] for x in a.get("UNLINK", []))}
    try:
        j = json.loads(p.stdout)
        text, exc = j.get("message", ""), j.get("exception_name")
    except ValueError:
        lines = p.stderr.strip().splitlines()
        text, exc = lines[0] if len(lines) == 1 else "", None
    return {"rc": 1, "exception": exc,
            "names": bool(re.search(r"(^|[^\w.-])%s([^\w.]|$)" % re.escape(name), text))}


def run(tool, case, shared, oracle):
    setup, args = CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        prefix, filechan = build(case, tmp, shared)
        if setup.get("new"):
            prefix = os.path.join(tmp, "new")
        args = [filechan if a == "FILECHAN" else a for a in args]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CONDA") and not k.startswith("MENV_")}
        env.update(HOME=tmp, CONDA_OVERRIDE_CUDA="")
        if oracle:
            env.update(CONDARC=os.path.join(tmp, "condarc"),
                       CONDA_PKGS_DIRS=os.path.join(tmp, "pkgs"))
        else:
            env.update(MENVRC=os.path.join(tmp, "condarc"),
                       MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
        p = subprocess.run([*tool, args[0], "--dry-run", "--json", "-p", prefix, *args[1:]],
                           capture_output=True, text=True, env=env, timeout=300)
        return answer(p, "b" if "b>=2" in args else "c")


def every_command(menv, shared):
    """Offline, every command that reads channels reads the unreachable .condarc channel (no
    repodata cached) as empty, as conda's RepodataFetch.fetch_latest does for all of them
    (install_cache_only_http is conda's recorded answer for install): each answers as over an
    empty channel, and says once on stderr which channel it read as empty. Returns failures."""
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        prefix, _ = build("install_cache_only_http", tmp, shared)
        new = os.path.join(tmp, "new")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CONDA") and not k.startswith("MENV_")}
        env.update(HOME=tmp, CONDA_OVERRIDE_CUDA="", MENVRC=os.path.join(tmp, "condarc"),
                   MENV_ROOT_PREFIX=os.path.join(tmp, "root"))
        warned = "'%s' has no cached repodata: read as empty" % UNREACHABLE
        # (arguments, exit status, LINK and UNLINK of a --json dry run or None, warns)
        want = [
            (["create", "--offline", "--dry-run", "--json", "-p", new, "c"], 1, None, True),
            (["create", "--offline", "-y", "-p", new, "c"], 1, None, True),
            (["install", "--offline", "-y", "-p", prefix, "c"], 1, None, True),
            (["install", "--offline", "--json", "-y", "-p", prefix, "c"], 1, None, True),
            (["update", "--offline", "--dry-run", "--json", "-p", prefix, "b"], 0, ([], []),
             True),
            (["update", "--offline", "--dry-run", "--json", "-p", prefix, "--all"], 0,
             ([], []), True),
            # remove of a prefix without features reads no channel (conda's answer is the same)
            (["remove", "--offline", "--dry-run", "--json", "-p", prefix, "b"], 0,
             ([], ["b-1.0-0"]), False),
            (["search", "--offline", "c"], 1, None, False),
            (["search", "--offline", "--json", "c"], 1, None, False),
        ]
        for args, rc, acts, warns in want:
            p = subprocess.run([menv, *args], capture_output=True, text=True, env=env,
                               timeout=300)
            what = "menv " + " ".join(a for a in args if a not in (prefix, new))
            got = None
            if p.returncode == 0 and acts is not None:
                a = json.loads(p.stdout)["actions"]
                got = (sorted(x["dist_name"] for x in a.get("LINK", [])),
                       sorted(x["dist_name"] for x in a.get("UNLINK", [])))
            err = p.stderr.strip().splitlines()
            ok = (p.returncode == rc and got == acts and (warned in p.stderr) == warns and
                  (rc == 0 or re.search(r"'c'", err[-1] if err else "")) and
                  (rc == 0 or "offline: no cached repodata for" not in p.stderr) and
                  not os.path.exists(new))
            print("%-24s %s" % ("every_command", ("as over an empty channel: " if ok else
                                                  "DIFFERS: ") + what))
            if not ok:
                bad.append("%s: exit %d, actions %r, stderr %r" % (what, p.returncode, got,
                                                                    p.stderr[-600:]))
    return bad


def main():
    if sys.argv[1] == "--oracle":
        conda, shared, out = sys.argv[2:5]
        ans = {c: run([conda], c, shared, True) for c in CASES}
        with open(out, "w", encoding="utf-8") as f:
            json.dump(ans, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    menv, shared = sys.argv[1], sys.argv[2]
    with open(os.path.join(HERE, "conda_offline_cache.json"), encoding="utf-8") as f:
        want = json.load(f)
    bad = []
    for c in CASES:
        got = run([menv], c, shared, False)
        w = want[c]
        # an error: conda's names the package, so must menv's one line
        same = got == w if w["rc"] == 0 else got == dict(w, exception=None)
        if c in KNOWN:
            if same:
                bad.append("%s: listed as a known difference but answers as conda" % c)
        elif not same:
            bad.append("%s: got %r, conda %r" % (c, got, w))
        print("%-24s %s" % (c, "known difference" if c in KNOWN else "as conda" if same
                            else "DIFFERS"))
    bad += every_command(menv, shared)
    for b in bad:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""cli.repodata_snapshots: dry-run solves against real channel snapshots.

Each snapshot is copied to <tmp>/<chan>/<subdir>/repodata.json. The expected
record is computed here from the same file by conda's rules, and only where the
answer is certain: packages without dependencies, plain numeric versions
(N.N.N...), and a unique best (version, build_number) whose record has no
track_features. Cases per snapshot: the newest of a name; an exact pin
name=version=build of an older record; a range name>=A,<B that excludes the newest;
a version that does not exist (error naming the package)."""

import os
import re
import shutil

import menvtest
from menvtest import read_json

NUMERIC = re.compile(r"^\d+(\.\d+)*$")

# (channel name, {subdir: snapshot path relative to corpus/repodata}, names to try first)
SNAPSHOTS = [
    ("pytorch", {"linux-64": "rattler/channels/pytorch/linux-64/repodata.json"},
     ["magma-cuda113", "magma-cuda102", "cuda100"]),
    ("r", {"linux-64": "conda/repodata/r_linux-64.json"}, ["_r-mutex"]),
    ("cf-numpy", {"linux-64": "mamba/conda-forge-numpy-linux-64.json"},
     ["tzdata", "ca-certificates", "_libgcc_mutex"]),
    ("subchannel", {"linux-64": "conda-subchannel-demo/linux-64/repodata.json",
                    "noarch": "conda-subchannel-demo/noarch/repodata.json"},
     ["tzdata", "ca-certificates", "libstdcxx-ng"]),
]


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def vcmp_key(v, width=8):
    k = vkey(v)
    return k + (0,) * (width - len(k))   # conda pads missing parts with 0


def records_by_name(repodatas):
    out = {}
    for subdir, rd in repodatas.items():
        for key in ("packages", "packages.conda"):
            for fn, r in rd.get(key, {}).items():
                out.setdefault(r["name"], []).append((subdir, fn, r))
    return out


def usable(recs):
    """All records without dependencies and numeric versions; None otherwise."""
    if not recs:
        return False
    return all(not r.get("depends") and NUMERIC.match(r["version"]) for _, _, r in recs)


def best(recs):
    """The unique best record by (version, build_number) with no track_features, or None."""
    if not recs:
        return None
    key = lambda x: (vcmp_key(x[2]["version"]), x[2].get("build_number", 0))
    top = max(key(x) for x in recs)
    tops = [x for x in recs if key(x) == top]
    # .conda and .tar.bz2 of the same dist count as one record
    dists = {(x[2]["name"], x[2]["version"], x[2]["build"]) for x in tops}
    if len(dists) != 1 or any(x[2].get("track_features") for x in tops):
        return None
    # conda prefers the .conda file when both formats of a dist are listed
    return sorted(tops, key=lambda x: not x[1].endswith(".conda"))[0]


def dry_run(t, chan, spec):
    r = t.menv_run("create", "-n", "snap", "--dry-run", "--json", "--override-channels",
                   "-c", t.url(chan), spec)
    if not t.check(r.rc == 0, "dry-run %s succeeds" % spec, r):
        return None
    try:
        link = r.json()["actions"]["LINK"]
    except (ValueError, KeyError) as e:
        t.check(False, "dry-run %s: JSON with actions.LINK (%s)" % (spec, e), r.out)
        return None
    return link


def expect_one(t, chan_name, chan, spec, want):
    subdir, fn, rec = want
    link = dry_run(t, chan, spec)
    if link is None:
        return
    t.eq([(p.get("name"), p.get("version"), p.get("build_string"), p.get("build_number"))
          for p in link],
         [(rec["name"], rec["version"], rec["build"], rec.get("build_number", 0))],
         "%s: %r selects %s-%s-%s" % (chan_name, spec, rec["name"], rec["version"], rec["build"]))
    if link:
        t.eq(link[0].get("subdir"), subdir, "%s: %r record's subdir" % (chan_name, spec))
        t.eq(link[0].get("channel"), t.url(chan), "%s: %r record's channel" % (chan_name, spec))
        t.eq(link[0].get("fn"), fn, "%s: %r file name (.conda preferred)" % (chan_name, spec))
    t.note("%s: %-40s -> %s-%s-%s" % (chan_name, spec, rec["name"], rec["version"], rec["build"]))


def body(t):
    n_cases = 0
    for chan_name, files, preferred in SNAPSHOTS:
        chan = os.path.join(t.tmp, chan_name)
        repodatas = {}
        for subdir, rel in files.items():
            src = os.path.join(t.corpus, "repodata", rel)
            if not os.path.isfile(src):
                raise menvtest.Skip("snapshot missing: %s" % src)
            os.makedirs(os.path.join(chan, subdir))
            shutil.copyfile(src, os.path.join(chan, subdir, "repodata.json"))
            repodatas[subdir] = read_json(src)
        if "noarch" not in files:
            menvtest.write_text(os.path.join(chan, "noarch", "repodata.json"), "{}")
        by_name = records_by_name(repodatas)

        names = [n for n in preferred if usable(by_name.get(n)) and best(by_name[n])]
        t.check(bool(names), "%s: a name with a certain answer exists" % chan_name, preferred)
        for name in names[:2]:
            recs = by_name[name]
            top = best(recs)
            # 1. the newest of a name
            expect_one(t, chan_name, chan, name, top)
            n_cases += 1
            # 2. exact pin of an older record (unique dist)
            older = [x for x in recs if (x[2]["version"], x[2]["build"]) !=
                     (top[2]["version"], top[2]["build"])]
            if older:
                pick = min(older, key=lambda x: (vcmp_key(x[2]["version"]), x[2].get("build_number", 0),
                                                 x[2]["build"]))
                r = pick[2]
                expect_one(t, chan_name, chan, "%s=%s=%s" % (name, r["version"], r["build"]),
                           pick)
                n_cases += 1
            # 3. a range that excludes the newest version
            versions = sorted({x[2]["version"] for x in recs}, key=vcmp_key)
            if len(versions) >= 3:
                lo, hi = versions[1], versions[-1]
                inside = [x for x in recs if vcmp_key(lo) <= vcmp_key(x[2]["version"]) < vcmp_key(hi)]
                want = best(inside)
                if want:
                    expect_one(t, chan_name, chan, "%s>=%s,<%s" % (name, lo, hi), want)
                    n_cases += 1
            # 4. a version newer than any: not available, one-line error naming the package
            newer = ".".join(str(x) for x in (vkey(versions[-1])[0] + 1, 0, 0))
            r = t.menv_run("create", "-n", "snap", "--dry-run", "-q", "--override-channels",
                           "-c", t.url(chan), "%s>=%s" % (name, newer))
            # (the one-line rule for solver errors is checked in cli.corpus_env / cli.bad_input)
            t.one_line_error(r, "%s: %s>=%s" % (chan_name, name, newer), [name], one_line=False)
            n_cases += 1
    t.no_prefix_left(os.path.join(t.envs, "snap"), "dry runs")
    t.note("%d snapshot cases checked" % n_cases)


if __name__ == "__main__":
    menvtest.main(body, "repodata_snapshots")

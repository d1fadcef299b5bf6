#!/usr/bin/env python3
"""cli.relock: locks that re-create anywhere (issue 23).

A channel named by a path through a link in a temporary folder (what ops/onboard.sh did:
`./menv-toolchain-torch` in a mktemp folder of links) is recorded as the folder the link leads
to: the PrefixRecords' channel and url, the exported lock's channels and URLs name the real
folder and never the temporary one, so once that folder is deleted the lock still re-creates
the environment with an empty package cache, with the same records. A channel named by a
file:// URL is kept as the user wrote it.
"""
import glob
import json
import os
import shutil

import menvtest
from menvtest import read_json, write_text

# fields of a PrefixRecord that name where it was installed (the prefix or the cache)
PLACE_FIELDS = {"paths_data", "files", "link", "extracted_package_dir",
                "package_tarball_full_path", "requested_spec", "requested_specs",
                "_requested_specs"}


def records(prefix):
    out = {}
    for p in sorted(glob.glob(os.path.join(prefix, "conda-meta", "*.json"))):
        j = read_json(p)
        out[os.path.basename(p)] = {k: v for k, v in j.items() if k not in PLACE_FIELDS}
    return out


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    chan = t.make_channel("stable-chan", {"noarch": [os.path.join(P, f) for f in (
        "dependency-2.0-0.conda", "dependent-2.0-0.conda")]})
    real = os.path.realpath(chan)
    # the temporary folder of links, as onboard.sh made it
    links = os.path.join(t.tmp, "tmp.onboard")
    os.makedirs(links)
    os.symlink(chan, os.path.join(links, "menv-toolchain"))
    prefix = os.path.join(t.tmp, "env-a")
    envfile = os.path.join(links, "environment.yml")
    write_text(envfile, "name: a\nchannels:\n  - ./menv-toolchain\n  - nodefaults\n"
               "dependencies:\n  - dependent\n")
    t.menv_ok("create", "-q", "-y", "-p", prefix, "-f", envfile, cwd=links)
    recs = records(prefix)
    t.eq(sorted(recs), ["dependency-2.0-0.json", "dependent-2.0-0.json"],
         "the environment holds dependent and dependency")
    t.eq(sorted({r["channel"] for r in recs.values()}), ["file://%s/noarch" % real],
         "records name the folder the link leads to as their channel")
    t.eq(sorted(r["url"] for r in recs.values()),
         ["file://%s/noarch/%s" % (real, f) for f in ("dependency-2.0-0.conda",
                                                      "dependent-2.0-0.conda")],
         "records' urls are in the real folder")
    # -c ./link on the command line: the same
    prefix_c = os.path.join(t.tmp, "env-c")
    t.menv_ok("create", "-q", "-y", "-p", prefix_c, "-c", "./menv-toolchain",
              "--override-channels", "dependency", cwd=links)
    t.eq([r["url"] for r in records(prefix_c).values()],
         ["file://%s/noarch/dependency-2.0-0.conda" % real], "-c ./LINK: the real folder")
    lock = t.menv_ok("export", "-p", prefix).out
    t.eq([l for l in lock.splitlines() if "url:" in l and "tmp.onboard" in l], [],
         "no channel or package URL of the exported lock names the temporary folder")
    t.check("    - url: file://%s\n" % real in lock,
            "the lock's metadata.channels names the real folder", lock)
    lockp = os.path.join(t.tmp, "a.lock.yml")
    write_text(lockp, lock)
    # the temporary folder is gone; another machine: a fresh HOME and root, empty cache
    shutil.rmtree(links)
    home2, root2 = os.path.join(t.tmp, "home2"), os.path.join(t.tmp, "root2")
    os.makedirs(home2)
    prefix2 = os.path.join(t.tmp, "env-b")
    r = t.menv_run("create", "-q", "-y", "-p", prefix2, "-f", lockp,
                   env={"HOME": home2, "MENV_ROOT_PREFIX": root2})
    if t.check(r.rc == 0, "the lock re-creates the environment once the temporary folder is "
               "gone, with an empty package cache", r):
        t.eq(records(prefix2), recs, "the re-created environment has the same records")
        t.check(os.path.isfile(os.path.join(root2, "pkgs", "dependent-2.0-0.conda")),
                "the packages were fetched into the new, empty cache")
    # a file:// URL is kept as written, even through a link
    os.makedirs(links)
    os.symlink(chan, os.path.join(links, "viaurl"))
    prefix_u = os.path.join(t.tmp, "env-u")
    t.menv_ok("create", "-q", "-y", "-p", prefix_u, "-c", "file://%s/viaurl" % links,
              "--override-channels", "dependency")
    t.eq([r["url"] for r in records(prefix_u).values()],
         ["file://%s/viaurl/noarch/dependency-2.0-0.conda" % links],
         "a file:// URL channel is recorded as the user wrote it")


if __name__ == "__main__":
    menvtest.main(body)

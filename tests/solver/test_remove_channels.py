#!/usr/bin/env python3
"""menv remove reads the channels where conda's would change the answer (envs/txn.c
remove_solver), and only there. The prefix is conda's test_prune_1 state (numpy=1.6,
python=2.7.3, accelerate from conda's channel-1: numpy's mkl build py27_p4 and mkl, the
tracker of its feature) in SHARED/corpus/repodata/conda/index.json.

conda 26.7.1's own answers, its CLI on the same records and history (`conda remove --dry-run
--json -p PREFIX numbapro`, channels in .condarc):
  - channel-1 in .condarc: 15 unlinks (numbapro, accelerate, mkl and what only they needed)
    and numpy relinked as the plain py27_4 (conda's fewest tracked features);
  - an unreachable channel: an HTTP error, nothing planned;
  - the same unreachable channel with --offline: no channel data, the records-only solve
    (conda's solve reads the prefix's records, never the package cache: test_offline_cache):
    CONDA_OFFLINE_UNLINK, numpy's installed build kept and with it mkl, the tracker its
    `features: mkl` asks for (ms_depends), and what mkl needs (mkl-service, numexpr, scipy,
    scikit-learn);
  - conda's HTTP error names no --offline (CondaHTTPError: "HTTP 000 CONNECTION FAILED for
    url <.../linux-64/repodata.json>"; "HTTP errors are often intermittent ...").
menv: the first and third match exactly; the second fails with one line naming the URL and
--offline (the user asked remove for no download). A prefix no record of which carries features never reads
the channels: removing tk (and python, which needs it) answers with an unreachable channel.
`remove -c CHANNEL --override-channels` and `remove --offline` (conda remove takes both) give
the same answers as the settings.
Usage: test_remove_channels.py MENV SHARED_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_conda_solve as R  # noqa: E402

UNREACHABLE = "http://127.0.0.1:9/chan"
CONDA_UNLINK = [
    "accelerate-1.1.0-np16py27_p0", "bitarray-0.8.1-py27_0", "libnvvm-1.0-p0", "llvm-3.2-0",
    "llvmpy-0.11.2-py27_0", "meta-0.4.2.dev-py27_0", "mkl-11.0-np16py27_p0", "mkl-rt-11.0-p0",
    "mkl-service-1.0.0-py27_p0", "numba-0.8.1-np16py27_0", "numbapro-0.11.0-np16py27_p0",
    "numexpr-2.1-np16py27_p0", "numpy-1.6.2-py27_p4", "scikit-learn-0.13.1-np16py27_p0",
    "scipy-0.12.0-np16py27_p0"]
# conda 26.7.1 (classic solver), `CONDA_PKGS_DIRS=EMPTY conda remove --dry-run --json -p PREFIX
# --offline numbapro` with the unreachable channel in .condarc
CONDA_OFFLINE_UNLINK = [
    "accelerate-1.1.0-np16py27_p0", "bitarray-0.8.1-py27_0", "libnvvm-1.0-p0", "llvm-3.2-0",
    "llvmpy-0.11.2-py27_0", "meta-0.4.2.dev-py27_0", "numba-0.8.1-np16py27_0",
    "numbapro-0.11.0-np16py27_p0"]


def make_prefix(chans, prefix, installed, history):
    recs = chans.make("channel-1", "index.json")
    meta = os.path.join(prefix, "conda-meta")
    os.makedirs(meta)
    for d in installed:
        dist = R.dist_key(d).partition("::")[2]
        r = recs[dist + ".tar.bz2"]
        url = chans.url("channel-1", r["subdir"])
        with open(os.path.join(meta, dist + ".json"), "w", encoding="utf-8") as f:
            json.dump(dict(r, fn=dist + ".tar.bz2", channel=url, url=url + "/" + dist +
                           ".tar.bz2", files=[], paths_data={"paths": [], "paths_version": 1},
                           requested_spec=""), f)
    with open(os.path.join(meta, "history"), "w", encoding="utf-8") as f:
        f.write("==> 2024-01-01 00:00:00 <==\n# cmd: conda install\n")
        for d in sorted(installed):
            f.write("+channel-1/linux-64::%s\n" % R.dist_key(d).partition("::")[2])
        f.write("# update specs: %s\n" % R.py_list(history))


def remove(menv, tmp, prefix, rc_lines, name, *opts):
    rc = os.path.join(tmp, "condarc")
    with open(rc, "w", encoding="utf-8") as f:
        f.write("channel_alias: file://%s\nchannel_priority: flexible\n"
                "add_pip_as_python_dependency: false\n%s" % (os.path.join(tmp, "channels"),
                                                              rc_lines))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CONDA_") and not k.startswith("MENV_")}
    env.update(HOME=tmp, MENVRC=rc, MENV_ROOT_PREFIX=os.path.join(tmp, "root"),
               CONDA_OVERRIDE_CUDA="")
    p = subprocess.run([menv, "remove", "--dry-run", "--json", "-p", prefix, *opts, name],
                       capture_output=True, text=True, env=env, timeout=120)
    if p.returncode:
        return p.returncode, p.stderr.strip().splitlines(), None
    a = json.loads(p.stdout)["actions"]
    return 0, [], (sorted(x["dist_name"] for x in a.get("LINK", [])),
                   sorted(x["dist_name"] for x in a.get("UNLINK", [])))


def main():
    menv, shared = sys.argv[1], sys.argv[2]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "conda_solve_cases.json"), encoding="utf-8") as f:
        cases = json.load(f)["tests"]
    step = [s for c in cases if c["name"] == "test_prune_1" for s in c["steps"]
            if s["line"] == 350][0]
    bad = []

    def check(what, got, want):
        if got != want:
            bad.append("%s: got %r, want %r" % (what, got, want))

    with tempfile.TemporaryDirectory() as tmp:
        chans = R.Channels(shared, tmp)
        prefix = os.path.join(tmp, "env")
        make_prefix(chans, prefix, step["installed"], step["history"])
        rc, err, acts = remove(menv, tmp, prefix, "channels: [channel-1]\n", "numbapro")
        check("channel-1", (rc, acts), (0, (["numpy-1.6.2-py27_4"], CONDA_UNLINK)))
        rc, err, acts = remove(menv, tmp, prefix, "channels: [%s]\n" % UNREACHABLE,
                               "numbapro")
        check("unreachable", (rc, len(err), UNREACHABLE in "".join(err),
                              "--offline solves over its records" in "".join(err)),
              (1, 1, True, True))
        rc, err, acts = remove(menv, tmp, prefix,
                               "channels: [%s]\noffline: true\n" % UNREACHABLE, "numbapro")
        check("offline", (rc, acts), (0, ([], CONDA_OFFLINE_UNLINK)))
        # the same from the command line, as conda remove takes them: -c with
        # --override-channels replaces .condarc's channels; --offline as offline: true
        rc, err, acts = remove(menv, tmp, prefix, "channels: [%s]\n" % UNREACHABLE,
                               "numbapro", "-c", "channel-1", "--override-channels")
        check("-c channel-1 --override-channels", (rc, acts),
              (0, (["numpy-1.6.2-py27_4"], CONDA_UNLINK)))
        rc, err, acts = remove(menv, tmp, prefix, "channels: [%s]\n" % UNREACHABLE,
                               "numbapro", "--offline")
        check("--offline", (rc, acts), (0, ([], CONDA_OFFLINE_UNLINK)))
        plain = os.path.join(tmp, "plain")
        make_prefix(chans, plain, ["channel-1::%s" % d for d in (
            "openssl-1.0.1c-0", "readline-6.2-0", "sqlite-3.7.13-0", "system-5.8-1",
            "tk-8.5.13-0", "zlib-1.2.7-0", "python-2.7.3-7")], ["python=2.7.3"])
        rc, err, acts = remove(menv, tmp, plain, "channels: [%s]\n" % UNREACHABLE, "tk")
        check("no features, unreachable", (rc, acts and acts[0], acts and
                                           {"python-2.7.3-7", "tk-8.5.13-0"} <= set(acts[1])),
              (0, [], True))
    for b in bad:
        print("FAIL " + b)
    print("remove_channels: %d checks failed" % len(bad) if bad else "remove_channels: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

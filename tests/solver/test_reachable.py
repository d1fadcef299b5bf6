#!/usr/bin/env python3
"""Variant ranking and full records only for the names a request can reach (menv issue 15).

`python pip curl` on the real conda-forge python-3.9 subchannel (linux-64 + noarch) must give
rattler's answer (@conda-org/rattler 0.3.5 simpleSolve, the same 34 records), and the same
answer on the subchannel scaled x10 with ../shared/bench/scale_repodata.py (nine renamed
copies the request cannot reach, but whose names share every dependency shape); a request for
one renamed copy gives those records renamed. Usage: test_reachable.py MENV SHARED
"""
import json
import os
import subprocess
import sys
import tempfile

# rattler's simpleSolve(["python", "pip", "curl"]) on the subchannel, linux-64 + noarch
RATTLER = """_libgcc_mutex=0.1=conda_forge _openmp_mutex=4.5=2_gnu bzip2=1.0.8=hd590300_5
c-ares=1.28.1=hd590300_0 ca-certificates=2024.2.2=hbcca054_0 curl=8.7.1=hca28451_0
keyutils=1.6.1=h166bdaf_0 krb5=1.21.2=h659d440_0 ld_impl_linux-64=2.40=h55db66e_0
libcurl=8.7.1=hca28451_0 libedit=3.1.20191231=he28a2e2_2 libev=4.33=hd590300_2
libffi=3.4.2=h7f98852_5 libgcc-ng=13.2.0=h77fa898_7 libgomp=13.2.0=h77fa898_7
libnghttp2=1.58.0=h47da74e_1 libnsl=2.0.1=hd590300_0 libsqlite=3.45.3=h2797004_0
libssh2=1.11.0=h0841786_0 libstdcxx-ng=13.2.0=hc0a3c3a_7 libuuid=2.38.1=h0b41bf4_0
libxcrypt=4.4.36=hd590300_1 libzlib=1.2.13=hd590300_5 ncurses=6.5=h59595ed_0
openssl=3.3.0=hd590300_0 pip=24.0=pyhd8ed1ab_0 python=3.9.19=h0755675_0_cpython
readline=8.2=h8228510_1 setuptools=69.5.1=pyhd8ed1ab_0 tk=8.6.13=noxft_h4845f30_101
tzdata=2024a=h0c530f3_0 wheel=0.43.0=pyhd8ed1ab_1 xz=5.2.6=h166bdaf_0
zstd=1.5.6=ha6fb4c9_0""".split()


def solve(menv, chan, specs, tmp):
    env = dict(os.environ, HOME=tmp, MENVRC="/dev/null", CONDARC="/dev/null",
               MENV_ROOT_PREFIX=os.path.join(tmp, "root"), CONDA_OVERRIDE_CUDA="",
               CONDA_OVERRIDE_GLIBC="2.36")
    cmd = [menv, "create", "--dry-run", "--json", "-p", os.path.join(tmp, "env"),
           "--override-channels", "-c", "file://" + chan] + specs
    got = []
    for run in ("first (libsolv's reader)", "second (.solv)"):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"FAIL: {' '.join(specs)} on {chan}, {run}: exit {p.returncode}: "
                     f"{p.stderr.strip()}")
        got.append(sorted("%s=%s=%s" % (r["name"], r["version"], r["build_string"])
                          for r in json.loads(p.stdout)["actions"]["LINK"]))
    if got[0] != got[1]:
        sys.exit(f"FAIL: the .solv run differs from the first: {got[0]} / {got[1]}")
    return got[0]


def main():
    menv, shared = sys.argv[1], sys.argv[2]
    demo = os.path.join(shared, "corpus", "repodata", "conda-subchannel-demo")
    scale = os.path.join(shared, "bench", "scale_repodata.py")
    want = sorted(RATTLER)
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        x10 = os.path.join(tmp, "x10")
        for sd in ("linux-64", "noarch"):
            os.makedirs(os.path.join(x10, sd))
            subprocess.run([sys.executable, scale, os.path.join(demo, sd, "repodata.json"), "10",
                            os.path.join(x10, sd, "repodata.json")], check=True,
                           stdout=subprocess.DEVNULL)
        cases = [(demo, ["python", "pip", "curl"], want),
                 (x10, ["python", "pip", "curl"], want),
                 (x10, ["python-x3", "pip-x3", "curl-x3"],
                  sorted(r.split("=")[0] + "-x3=" + r.split("=", 1)[1] for r in want))]
        for i, (chan, specs, exp) in enumerate(cases):
            got = solve(menv, chan, specs, os.path.join(tmp, "t%d" % i))
            if got != exp:
                print(f"FAIL: {' '.join(specs)} on {chan}:\n  missing {sorted(set(exp) - set(got))}"
                      f"\n  unexpected {sorted(set(got) - set(exp))}")
                fails += 1
            else:
                print(f"ok: {' '.join(specs)} on {os.path.basename(chan)}: {len(got)} records")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

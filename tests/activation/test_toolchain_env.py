#!/usr/bin/env python3
"""activation.toolchain_<shell>: the toolchain environment (ops/environment.yml's packages
from the channel the toolchain.channel fixture builds) activated in a real shell: nvcc and
python come from the prefix, $CXX is the environment's g++ 11 (set by gxx_linux-64's
activate.d script), CUDA_HOME and CUDA_PATH are the prefix (cudatoolkit's activate.d script,
over the machine's CUDA_HOME=/usr/local/cuda), python --version says 3.9.2; after deactivate
every variable (`env -0`, sorted) is what it was. MENV_TOOLCHAIN_CHANNEL names the channel."""
import os
import subprocess

import acttest


def body(t):
    shell = t.arg
    acttest.need_shell(shell)
    chan = os.environ.get("MENV_TOOLCHAIN_CHANNEL", "")
    if not os.path.isfile(os.path.join(chan, "linux-64", "repodata.json")):
        raise acttest.Skip("no toolchain channel (MENV_TOOLCHAIN_CHANNEL)")
    prefix = os.path.join(t.root, "envs", "tc env")  # a blank in the path too
    rc, out, err = t.run("create", "-q", "-y", "-p", prefix, "-c", "file://" + chan,
                         "--override-channels", "--no-smoke-check", "python=3.9",
                         "cudatoolkit=11.8", "gxx_linux-64=11", timeout=600)
    if rc:
        raise acttest.Fatal("menv create failed: " + err)
    s = t.script(shell).hook().dump("before")
    s.menv("activate", prefix, rc="act").dump("active")
    s.which("nvcc", "nvcc").which("python", "python")
    pv = os.path.join(s.dir, "pyver")
    s.raw(f"python --version > {acttest.q(shell, pv)} 2>&1")
    s.menv("deactivate", rc="deact").dump("after")
    # the machine's CUDA 13 (as the base image sets it): the environment's toolkit wins while
    # active (cudatoolkit's activate.d), and deactivation puts it back
    s.run(env=dict(t.env, CUDA_HOME="/usr/local/cuda"), timeout=120)
    a = s.env("active")
    t.eq((a.get("CUDA_HOME"), a.get("CUDA_PATH")), (prefix, prefix),
         f"{shell}: CUDA_HOME and CUDA_PATH name the environment while active")
    t.eq((s.env("after").get("CUDA_HOME"), "CUDA_PATH" in s.env("after")),
         ("/usr/local/cuda", False), f"{shell}: deactivate restores CUDA_HOME, unsets CUDA_PATH")
    t.eq(s.rc_of("act"), 0, f"{shell}: activate exits 0")
    t.eq(s.which_of("nvcc"), os.path.join(prefix, "bin", "nvcc"), f"{shell}: nvcc is the env's")
    t.eq(s.which_of("python"), os.path.join(prefix, "bin", "python"),
         f"{shell}: python is the env's")
    t.eq(open(pv).read().strip(), "Python 3.9.2", f"{shell}: python --version")
    cxx = s.env("active").get("CXX", "")
    t.check(cxx.startswith(prefix + "/bin/") and cxx.endswith("c++"),
            f"{shell}: $CXX is the environment's compiler ({cxx})")
    v = subprocess.run([cxx, "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    t.eq(v, "11.3.0", f"{shell}: $CXX is g++ 11.3")
    t.eq(s.rc_of("deact"), 0, f"{shell}: deactivate exits 0")
    t.check(s.env("after") == s.env("before"),
            f"{shell}: after deactivate every variable is as before (env -0, sorted)")


acttest.main(body)

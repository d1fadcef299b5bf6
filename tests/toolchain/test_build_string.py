#!/usr/bin/env python3
"""toolchain.build_string: the toolchain channel builder names a package by its content.

cudatoolkit once gained its CUDA_HOME activate.d scripts under the same file name
(cudatoolkit-11.8.89-<same build>.conda), so two different artifacts shared one name and a lock
naming it could not tell them apart. The build string's hash is now of every file's path and
sha256 (or link target) and of the metadata: this test packs a small recipe three times with
build.py's own make_conda and checks that the same content gives the same file name and the
same bytes, and that one changed byte of a file, a new file, a changed link or a changed
dependency each give another name.

The cache key of built packages (build.cache_key, of the cached channel and of
toolchain.torch_reproducible's rebuild) holds the versions of the tools that write the
packages (python, dpkg-deb, tar, patchelf, zstd): a machine with another zstd, patchelf or
python took packages built by the first machine's; another version of any of them now gives
another key."""

import hashlib
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "channels", "toolchain"))
import build  # noqa: E402
import recipes  # noqa: E402


def main():
    if not shutil.which("zstd"):
        print("zstd is needed (.ci/setup installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="menv-build-string-")
    failed = []
    n = [0]

    def pack(files, links=(), depends=("libgcc-ng >=12",)):
        n[0] += 1
        r = recipes.P("demo-toolkit", "1.0", [], depends=list(depends), license="MIT",
                      summary="content-named package")
        root = os.path.join(tmp, "stage%d" % n[0])
        for path, text in files.items():
            p = os.path.join(root, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        for path, target in links:
            p = os.path.join(root, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink(target, p)
        st = build.Staged(r, root)
        work = os.path.join(tmp, "work%d" % n[0])
        out = os.path.join(tmp, "out%d" % n[0])
        os.makedirs(work)
        fn, _ = build.make_conda(st, {}, out, work, 3)
        with open(fn, "rb") as f:
            return os.path.basename(fn), hashlib.sha256(f.read()).hexdigest()

    def check(ok, what, got):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            print("    got: %r" % (got,))
            failed.append(what)

    base = {"bin/nvcc": "#!/bin/sh\necho nvcc\n"}
    act = dict(base)
    act["etc/conda/activate.d/activate-demo.sh"] = 'export CUDA_HOME="$CONDA_PREFIX"\n'
    try:
        a1 = pack(base)
        a2 = pack(base)
        check(a1 == a2, "the same content: the same file name and the same bytes", (a1, a2))
        check(a1[0].startswith("demo-toolkit-1.0-h") and a1[0].endswith("_0.conda"),
              "the name is NAME-VERSION-h<hash>_0.conda", a1[0])
        b = pack({"bin/nvcc": "#!/bin/sh\necho nvcc!\n"})
        check(b[0] != a1[0], "one changed byte of a file: another file name", (a1[0], b[0]))
        c = pack(act)
        check(c[0] != a1[0], "a new file (an activate.d script): another file name",
              (a1[0], c[0]))
        d1 = pack(base, links=[("lib/libx.so", "libx.so.1")])
        d2 = pack(base, links=[("lib/libx.so", "libx.so.2")])
        check(d1[0] != d2[0], "a changed link target: another file name", (d1[0], d2[0]))
        e = pack(base, depends=("libgcc-ng >=13",))
        check(e[0] != a1[0], "a changed dependency: another file name", (a1[0], e[0]))

        resolved = {"python3.11": "3.11.2-6+deb12u6"}
        tools = build.tool_versions()
        check(set(tools) == {"python"} | set(build.KEYED_TOOLS) and all(tools.values()),
              "tool_versions names python, dpkg-deb, tar, patchelf and zstd", tools)
        k = build.cache_key("torch", resolved, 3)
        check(k == build.cache_key("torch", resolved, 3), "the same inputs: the same key", k)
        real = build.tool_versions
        try:
            for tool in ("python",) + build.KEYED_TOOLS:
                other = dict(tools, **{tool: tools[tool] + " (another build)"})
                build.tool_versions = lambda other=other: other
                k2 = build.cache_key("torch", resolved, 3)
                check(k2 != k, "another %s version: another cache key" % tool, (k, k2))
        finally:
            build.tool_versions = real
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s" % ("%d checks failed" % len(failed) if failed else "all checks passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Recipes of the toolchain channel: which Debian packages, which of their files, and the
conda records they become (names and splits as conda-forge has them).

DEBS pins every Debian package by suite and upstream version; the exact Debian revision is
whatever that suite carries (point releases change revisions, not upstream versions).
PACKAGES lists the conda packages. Paths in `take`/`drop` are Debian paths without the
leading slash, fnmatch patterns ('*' also crosses '/'); build.py maps them into the prefix
(see MAP_RULES) and rewrites rpaths and symlinks to stay inside it.
"""

PLACEHOLDER = "/opt/anaconda1anaconda2anaconda3"

# (Debian package, suite, upstream version prefix)
DEBS = [
    # CUDA 11.8 (bookworm non-free)
    ("nvidia-cuda-toolkit", "bookworm", "11.8.89"),
    ("nvidia-cuda-dev", "bookworm", "11.8.89"),
    ("libcudart11.0", "bookworm", "11.8.89"),
    # GCC 11.3 and binutils 2.40 (bookworm)
    ("gcc-11", "bookworm", "11.3.0"),
    ("g++-11", "bookworm", "11.3.0"),
    ("cpp-11", "bookworm", "11.3.0"),
    ("libgcc-11-dev", "bookworm", "11.3.0"),
    ("libstdc++-11-dev", "bookworm", "11.3.0"),
    ("libasan6", "bookworm", "11.3.0"),
    ("libtsan0", "bookworm", "11.3.0"),
    ("libubsan1", "bookworm", "12.2.0"),
    ("liblsan0", "bookworm", "12.2.0"),
    ("libitm1", "bookworm", "12.2.0"),
    ("libatomic1", "bookworm", "12.2.0"),
    ("libquadmath0", "bookworm", "12.2.0"),
    ("libgomp1", "bookworm", "12.2.0"),
    ("libgcc-s1", "bookworm", "12.2.0"),
    ("libstdc++6", "bookworm", "12.2.0"),
    ("libgfortran5", "bookworm", "12.2.0"),
    ("libisl23", "bookworm", "0.25"),
    ("libmpc3", "bookworm", "1.3.1"),
    ("libmpfr6", "bookworm", "4.2.0"),
    ("libgmp10", "bookworm", "6.2.1"),
    ("libzstd1", "bookworm", "1.5.4"),
    ("zlib1g", "bookworm", "1.2.13"),
    ("libjansson4", "bookworm", "2.14"),
    ("binutils-x86-64-linux-gnu", "bookworm", "2.40"),
    ("libbinutils", "bookworm", "2.40"),
    ("libctf0", "bookworm", "2.40"),
    ("libctf-nobfd0", "bookworm", "2.40"),
    # Python 3.9.2 and its set (bullseye, whose default Python is 3.9)
    ("python3.9", "bullseye", "3.9.2"),
    ("python3.9-minimal", "bullseye", "3.9.2"),
    ("libpython3.9", "bullseye", "3.9.2"),
    ("libpython3.9-minimal", "bullseye", "3.9.2"),
    ("libpython3.9-stdlib", "bullseye", "3.9.2"),
    ("libpython3.9-dev", "bullseye", "3.9.2"),
    ("python3-distutils", "bullseye", "3.9.2"),
    ("python3-lib2to3", "bullseye", "3.9.2"),
    ("libssl1.1", "bullseye", "1.1.1"),
    ("libffi7", "bullseye", "3.3"),
    ("libmpdec3", "bullseye", "2.5.1"),
    ("libsqlite3-0", "bullseye", "3.34.1"),
    ("libexpat1", "bullseye", "2.2.10"),
    ("libbz2-1.0", "bullseye", "1.0.8"),
    ("liblzma5", "bullseye", "5.2.5"),
    ("libreadline8", "bullseye", "8.1"),
    ("libtinfo6", "bullseye", "6.2"),
    ("libncursesw6", "bullseye", "6.2"),
    ("libuuid1", "bullseye", "2.36.1"),
    ("python3-numpy", "bullseye", "1.19.5"),
    ("libblas3", "bullseye", "3.9.0"),
    ("liblapack3", "bullseye", "3.9.0"),
    ("python3-pybind11", "bullseye", "2.6.2"),
    ("pybind11-dev", "bullseye", "2.6.2"),
    ("python3-pip", "bullseye", "20.3.4"),
    ("python-pip-whl", "bullseye", "20.3.4"),
    ("python3-setuptools", "bullseye", "52.0.0"),
    ("python3-pkg-resources", "bullseye", "52.0.0"),
    ("python3-wheel", "bullseye", "0.34.2"),
    ("ninja-build", "bullseye", "1.10.1"),
]

# Only these members of nvidia-cuda-dev (774 MB) are extracted (about 16 MB).
PARTIAL = {
    "nvidia-cuda-dev": [
        "./usr/include/*",
        "./usr/lib/x86_64-linux-gnu/libcudart_static.a",
        "./usr/lib/x86_64-linux-gnu/libcudadevrt.a",
        "./usr/lib/x86_64-linux-gnu/libculibos.a",
        "./usr/lib/x86_64-linux-gnu/libcudart.so",
        "./usr/lib/x86_64-linux-gnu/stubs/libcuda.so",
    ],
}

# Debian path prefix -> prefix path, first match wins. Multiarch library directories are
# flattened into lib/; Debian's Python 3 dist-packages become lib/python3.9/site-packages.
MAP_RULES = [
    ("usr/lib/x86_64-linux-gnu/blas/", "lib/"),
    ("usr/lib/x86_64-linux-gnu/lapack/", "lib/"),
    ("usr/lib/x86_64-linux-gnu/", "lib/"),
    ("lib/x86_64-linux-gnu/", "lib/"),
    ("usr/lib/python3/dist-packages/", "lib/python3.9/site-packages/"),
    ("usr/lib/nvidia-cuda-toolkit/bin/cicc", "nvvm/bin/cicc"),
    ("usr/lib/nvidia-cuda-toolkit/libdevice/", "nvvm/libdevice/"),
    ("usr/lib/nvidia-cuda-toolkit/bin/", "bin/"),
    ("usr/include/x86_64-linux-gnu/python3.9/", "include/python3.9/"),
    ("usr/", ""),
]

# Dropped from every package.
DROP_ALWAYS = ["usr/share/doc/*", "usr/share/man/*", "usr/share/info/*", "usr/share/lintian/*",
               "usr/share/locale/*", "usr/share/bug/*", "usr/share/gdb/*", "etc/*"]

GLIBC_BOOKWORM = "__glibc >=2.36"   # built against bookworm's glibc
GLIBC_BULLSEYE = "__glibc >=2.31"

# sysconfig data and the config Makefile of Python: Debian's /usr paths -> the placeholder,
# Debian's cross-named compilers -> the environment's gcc/g++ (else extensions build with the
# machine's gcc 12).
PY_FIXES = [
    ("/usr/include/x86_64-linux-gnu/python3.9", PLACEHOLDER + "/include/python3.9"),
    ("/usr/lib/x86_64-linux-gnu", PLACEHOLDER + "/lib"),
    ("/usr/lib/python3.9", PLACEHOLDER + "/lib/python3.9"),
    ("/usr/include", PLACEHOLDER + "/include"),
    ("/usr/share/man", PLACEHOLDER + "/share/man"),
    ("'/usr/bin'", "'" + PLACEHOLDER + "/bin'"),
    ("'/usr/lib'", "'" + PLACEHOLDER + "/lib'"),
    ("'/usr'", "'" + PLACEHOLDER + "'"),
    ("=/usr ", "=" + PLACEHOLDER + " "),
    ("x86_64-linux-gnu-gcc-ar", "gcc-ar"),
    ("x86_64-linux-gnu-gcc", "gcc"),
    ("x86_64-linux-gnu-g++", "g++"),
]

SYSCONFIG = "lib/python3.9/_sysconfigdata__x86_64-linux-gnu.py"
PYCONFIG_DIR = "lib/python3.9/config-3.9-x86_64-linux-gnu"

# Debian's site.py looks in dist-packages under /usr and /usr/local; a conda prefix has
# lib/python3.9/site-packages only.
SITE_PY_OLD = '''            if 'VIRTUAL_ENV' in os.environ or sys.base_prefix != sys.prefix:
                sitepackages.append(os.path.join(prefix, "lib",
                                                 "python" + sys.version[:3],
                                                 "site-packages"))
            sitepackages.append(os.path.join(prefix, "local/lib",
                                             "python" + sys.version[:3],
                                             "dist-packages"))
            sitepackages.append(os.path.join(prefix, "lib",
                                             "python3",
                                             "dist-packages"))
            # this one is deprecated for Debian
            for libdir in libdirs:
                path = os.path.join(prefix, libdir,
                                    "python" + sys.version[:3],
                                    "dist-packages")
                sitepackages.append(path)
'''
SITE_PY_NEW = '''            # conda layout (repackaged by menv's toolchain channel)
            for libdir in libdirs:
                path = os.path.join(prefix, libdir,
                                    "python%d.%d" % sys.version_info[:2],
                                    "site-packages")
                sitepackages.append(path)
'''

NVCC_PROFILE = """\
# nvcc.profile of menv's toolchain channel: every path relative to nvcc's own directory.
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib/stubs" "-L$(TOP)/lib"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""

# conda-forge's activation for gcc_linux-64 / gxx_linux-64 (ctng-compiler-activation):
# each variable's previous value is kept in CONDA_BACKUP_<NAME> and restored on deactivation.
_SET_FN = '''_menv_tc_set() {
    # $1: variable, $2: value; the previous value (if set) is kept in CONDA_BACKUP_$1
    eval "if [ -n \\"\\${$1+x}\\" ]; then export CONDA_BACKUP_$1=\\"\\${$1}\\"; fi"
    eval "export $1=\\"\\$2\\""
}
'''
_RESTORE_FN = '''_menv_tc_restore() {
    # $1: variable; back to CONDA_BACKUP_$1 if activation saved one, else unset
    eval "if [ -n \\"\\${CONDA_BACKUP_$1+x}\\" ]; then export $1=\\"\\${CONDA_BACKUP_$1}\\"; unset CONDA_BACKUP_$1; else unset $1; fi"
}
'''
_P = "${CONDA_PREFIX}"
GCC_VARS = [
    ("CC", _P + "/bin/x86_64-conda-linux-gnu-cc"),
    ("CPP", _P + "/bin/x86_64-conda-linux-gnu-cpp"),
    ("GCC", _P + "/bin/x86_64-conda-linux-gnu-gcc"),
    ("GCC_AR", _P + "/bin/x86_64-conda-linux-gnu-gcc-ar"),
    ("GCC_NM", _P + "/bin/x86_64-conda-linux-gnu-gcc-nm"),
    ("GCC_RANLIB", _P + "/bin/x86_64-conda-linux-gnu-gcc-ranlib"),
    ("AR", _P + "/bin/x86_64-linux-gnu-ar"),
    ("AS", _P + "/bin/x86_64-linux-gnu-as"),
    ("LD", _P + "/bin/x86_64-linux-gnu-ld"),
    ("NM", _P + "/bin/x86_64-linux-gnu-nm"),
    ("OBJCOPY", _P + "/bin/x86_64-linux-gnu-objcopy"),
    ("OBJDUMP", _P + "/bin/x86_64-linux-gnu-objdump"),
    ("RANLIB", _P + "/bin/x86_64-linux-gnu-ranlib"),
    ("READELF", _P + "/bin/x86_64-linux-gnu-readelf"),
    ("STRIP", _P + "/bin/x86_64-linux-gnu-strip"),
    ("CFLAGS", "-march=nocona -mtune=haswell -ftree-vectorize -fPIC -fstack-protector-strong "
               "-fno-plt -O2 -ffunction-sections -pipe -isystem " + _P + "/include"),
    ("CPPFLAGS", "-DNDEBUG -D_FORTIFY_SOURCE=2 -O2 -isystem " + _P + "/include"),
    ("LDFLAGS", "-Wl,-O2 -Wl,--sort-common -Wl,--as-needed -Wl,-z,relro -Wl,-z,now "
                "-Wl,--disable-new-dtags -Wl,--gc-sections -Wl,-rpath," + _P + "/lib "
                "-Wl,-rpath-link," + _P + "/lib -L" + _P + "/lib"),
    ("DEBUG_CFLAGS", "-march=nocona -mtune=haswell -ftree-vectorize -fPIC "
                     "-fstack-protector-all -fno-plt -Og -g -Wall -Wextra -fvar-tracking-assignments "
                     "-ffunction-sections -pipe -isystem " + _P + "/include"),
    ("HOST", "x86_64-conda-linux-gnu"),
    ("CONDA_TOOLCHAIN_HOST", "x86_64-conda-linux-gnu"),
    ("CONDA_TOOLCHAIN_BUILD", "x86_64-conda-linux-gnu"),
    ("CMAKE_ARGS", "-DCMAKE_AR=" + _P + "/bin/x86_64-linux-gnu-ar "
                   "-DCMAKE_RANLIB=" + _P + "/bin/x86_64-linux-gnu-ranlib "
                   "-DCMAKE_LINKER=" + _P + "/bin/x86_64-linux-gnu-ld "
                   "-DCMAKE_STRIP=" + _P + "/bin/x86_64-linux-gnu-strip "
                   "-DCMAKE_BUILD_TYPE=Release"),
]
GXX_VARS = [
    ("CXX", _P + "/bin/x86_64-conda-linux-gnu-c++"),
    ("GXX", _P + "/bin/x86_64-conda-linux-gnu-g++"),
    ("CXXFLAGS", "-fvisibility-inlines-hidden -std=c++17 -fmessage-length=0 -march=nocona "
                 "-mtune=haswell -ftree-vectorize -fPIC -fstack-protector-strong -fno-plt -O2 "
                 "-ffunction-sections -pipe -isystem " + _P + "/include"),
    ("DEBUG_CXXFLAGS", "-fvisibility-inlines-hidden -std=c++17 -fmessage-length=0 "
                       "-march=nocona -mtune=haswell -ftree-vectorize -fPIC "
                       "-fstack-protector-all -fno-plt -Og -g -Wall -Wextra "
                       "-fvar-tracking-assignments -ffunction-sections -pipe -isystem "
                       + _P + "/include"),
]


def activate_script(pkg, variables):
    lines = ["# Activation of %s (as conda-forge's): the environment's compiler and flags.\n"
             % pkg,
             "# The prefix is $CONDA_PREFIX, or else found from this script's own path.\n",
             '_menv_tc_p="${CONDA_PREFIX:-}"\n',
             'if [ -z "$_menv_tc_p" ]; then\n',
             '    _menv_tc_p=$(cd "$(dirname "${BASH_SOURCE:-$0}")/../../.." 2>/dev/null && pwd)\n'
             'fi\n', _SET_FN]
    for k, v in variables:
        lines.append('_menv_tc_set %s "%s"\n' % (k, v.replace("${CONDA_PREFIX}", "${_menv_tc_p}")))
    lines.append("unset -f _menv_tc_set\nunset _menv_tc_p\n")
    return "".join(lines)


def deactivate_script(pkg, variables):
    lines = ["# Deactivation of %s: restores what activation replaced.\n" % pkg, _RESTORE_FN]
    for k, _ in variables:
        lines.append("_menv_tc_restore %s\n" % k)
    lines.append("unset -f _menv_tc_restore\n")
    return "".join(lines)


def _fish_quote(v):
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def activate_script_fish(pkg, variables):
    """The same activation for fish (conda runs only *.fish scripts there)."""
    lines = ["# Activation of %s for fish: the environment's compiler and flags.\n" % pkg,
             "set -l _menv_tc_p $CONDA_PREFIX\n",
             "if test -z \"$_menv_tc_p\"\n",
             "    set _menv_tc_p (realpath (dirname (status filename))/../../..)\n",
             "end\n"]
    for k, v in variables:
        parts = v.split("${CONDA_PREFIX}")
        value = " \"$_menv_tc_p\" ".join(_fish_quote(x) for x in parts) if len(parts) > 1 \
            else _fish_quote(v)
        value = "(string join '' %s)" % value if len(parts) > 1 else value
        lines.append("set -q %s; and set -gx CONDA_BACKUP_%s $%s\n" % (k, k, k))
        lines.append("set -gx %s %s\n" % (k, value))
    return "".join(lines)


def deactivate_script_fish(pkg, variables):
    lines = ["# Deactivation of %s for fish: restores what activation replaced.\n" % pkg]
    for k, _ in variables:
        lines.append("if set -q CONDA_BACKUP_%s\n    set -gx %s $CONDA_BACKUP_%s\n"
                     "    set -e CONDA_BACKUP_%s\nelse\n    set -e %s\nend\n" % (k, k, k, k, k))
    return "".join(lines)


def _links(pairs):
    return [("link", name, target) for name, target in pairs]


GCC_TOOLS = ["gcc", "cpp", "gcc-ar", "gcc-nm", "gcc-ranlib", "gcov", "gcov-dump", "gcov-tool",
             "lto-dump"]
BINUTILS = ["addr2line", "ar", "as", "c++filt", "dwp", "elfedit", "gprof", "ld", "ld.bfd",
            "ld.gold", "nm", "objcopy", "objdump", "ranlib", "readelf", "size", "strings",
            "strip"]

PY_DEP = ["python >=3.9,<3.10.0a0", "python_abi 3.9.* *_cp39"]


def P(name, version, debs=(), take=("*",), drop=(), depends=(), constrains=(), license="",
      summary="", home="", build_prefix="h", build_suffix="", noarch=None, extra=(),
      text_fixes=None, entry_points=(), python=False, build=None):
    """One conda package. `extra` items: ("link", path, target) | ("file", path, text, mode)
    | ("patch", path, old, new) | ("rm", pattern)."""
    return dict(name=name, version=version, debs=list(debs), take=list(take),
                drop=list(drop), depends=list(depends), constrains=list(constrains),
                license=license, summary=summary, home=home, build_prefix=build_prefix,
                build_suffix=build_suffix, noarch=noarch, extra=list(extra),
                text_fixes=text_fixes or {}, entry_points=list(entry_points), python=python,
                build=build)


PACKAGES = [
    # ---- GCC runtime (gcc 12.2's, which g++ 11's output links against, as on conda-forge)
    P("libgcc-ng", "12.2.0", ["libgcc-s1", "libatomic1", "libitm1"],
      take=["lib/x86_64-linux-gnu/libgcc_s.so.1", "usr/lib/x86_64-linux-gnu/libatomic.so*",
            "usr/lib/x86_64-linux-gnu/libitm.so*"],
      depends=[GLIBC_BOOKWORM, "_libgcc_mutex 0.1 conda_forge"], license="GPL-3.0-only WITH GCC-exception-3.1",
      summary="The GCC low-level runtime library"),
    P("_libgcc_mutex", "0.1", build="conda_forge", license="None",
      summary="A mutex package to ensure environment exclusivity between Anaconda and conda-forge packages"),
    P("libgomp", "12.2.0", ["libgomp1"], take=["usr/lib/x86_64-linux-gnu/libgomp.so*"],
      depends=["_libgcc_mutex 0.1 conda_forge"],
      license="GPL-3.0-only WITH GCC-exception-3.1", summary="The GCC OpenMP implementation"),
    P("libstdcxx-ng", "12.2.0", ["libstdc++6"], take=["usr/lib/x86_64-linux-gnu/libstdc++.so.6*"],
      drop=["usr/lib/x86_64-linux-gnu/libstdc++.so.6.*-gdb.py"],
      depends=["libgcc-ng >=12.2.0"], license="GPL-3.0-only WITH GCC-exception-3.1",
      summary="The GNU C++ Runtime Library"),
    P("libgfortran5", "12.2.0", ["libgfortran5", "libquadmath0"],
      take=["usr/lib/x86_64-linux-gnu/libgfortran.so.5*", "usr/lib/x86_64-linux-gnu/libquadmath.so.0*"],
      depends=["libgcc-ng >=12.2.0"], license="GPL-3.0-only WITH GCC-exception-3.1",
      summary="Fortran compiler and libraries from the GNU Compiler Collection"),
    P("libsanitizer", "11.3.0", ["libasan6", "libtsan0", "libubsan1", "liblsan0"],
      take=["usr/lib/x86_64-linux-gnu/lib*san.so*"],
      depends=["libgcc-ng >=12.2.0", "libstdcxx-ng >=12.2.0"],
      license="GPL-3.0-only WITH GCC-exception-3.1",
      summary="The GCC runtime libraries for sanitizers (asan, tsan: 11.3; ubsan, lsan: 12.2)"),
    # ---- compiler dependencies
    P("gmp", "6.2.1", ["libgmp10"], take=["usr/lib/x86_64-linux-gnu/libgmp.so*"],
      depends=["libgcc-ng >=12"], license="GPL-2.0-or-later OR LGPL-3.0-or-later",
      summary="The GNU multiprecision library"),
    P("mpfr", "4.2.0", ["libmpfr6"], take=["usr/lib/x86_64-linux-gnu/libmpfr.so*"],
      depends=["gmp >=6.2.1,<7.0a0"], license="LGPL-3.0-only",
      summary="The GNU multiple-precision floating-point library"),
    P("mpc", "1.3.1", ["libmpc3"], take=["usr/lib/x86_64-linux-gnu/libmpc.so*"],
      depends=["gmp >=6.2.1,<7.0a0", "mpfr >=4.1.0,<5.0a0"], license="LGPL-3.0-or-later",
      summary="A C library for the arithmetic of complex numbers"),
    P("isl", "0.25", ["libisl23"], take=["usr/lib/x86_64-linux-gnu/libisl.so*"],
      depends=["gmp >=6.2.1,<7.0a0", "libgcc-ng >=12"], license="MIT",
      summary="Integer set library"),
    P("zstd", "1.5.4", ["libzstd1"], take=["usr/lib/x86_64-linux-gnu/libzstd.so*"],
      depends=["libgcc-ng >=12"], license="BSD-3-Clause", summary="Zstandard compression library"),
    P("zlib", "1.2.13", ["zlib1g"], take=["lib/x86_64-linux-gnu/libz.so*", "usr/lib/x86_64-linux-gnu/libz.so*"],
      depends=["libgcc-ng >=12"], license="Zlib", summary="Massively spiffy yet delicately unobtrusive compression library"),
    P("jansson", "2.14", ["libjansson4"], take=["usr/lib/x86_64-linux-gnu/libjansson.so*"],
      depends=["libgcc-ng >=12"], license="MIT", summary="C library for working with JSON data"),
    # ---- binutils 2.40
    P("binutils_impl_linux-64", "2.40",
      ["binutils-x86-64-linux-gnu", "libbinutils", "libctf0", "libctf-nobfd0"],
      take=["usr/bin/x86_64-linux-gnu-" + t for t in BINUTILS]
      + ["usr/lib/x86_64-linux-gnu/libbfd-*", "usr/lib/x86_64-linux-gnu/libopcodes-*",
         "usr/lib/x86_64-linux-gnu/libsframe.so*", "usr/lib/x86_64-linux-gnu/libctf*.so*",
         "usr/lib/x86_64-linux-gnu/bfd-plugins/*"],
      extra=_links([("x86_64-linux-gnu/bin/" + t, "../../bin/x86_64-linux-gnu-" + t)
                    for t in BINUTILS]),
      depends=["jansson >=2.14,<3.0a0", "libgcc-ng >=12", "libstdcxx-ng >=12",
               "zlib >=1.2.13,<1.3.0a0", "zstd >=1.5.4,<1.6.0a0"],
      license="GPL-3.0-only", summary="A set of programming tools for creating and managing binary programs"),
    # ---- GCC 11.3
    P("gcc_impl_linux-64", "11.3.0", ["gcc-11", "cpp-11", "libgcc-11-dev"],
      take=["usr/bin/*-11", "usr/lib/gcc/x86_64-linux-gnu/11/*"],
      drop=["usr/lib/gcc/x86_64-linux-gnu/11/libcc1.so", "usr/lib/gcc/x86_64-linux-gnu/11/plugin/*"],
      extra=(_links([("bin/" + t, t + "-11") for t in GCC_TOOLS]
                    + [("bin/x86_64-conda-linux-gnu-" + t, t + "-11") for t in GCC_TOOLS]
                    + [("bin/cc", "gcc-11"), ("bin/x86_64-conda-linux-gnu-cc", "gcc-11")]
                    + [("lib/gcc/x86_64-linux-gnu/11/" + t, "../../../../x86_64-linux-gnu/bin/" + t)
                       for t in ("as", "ld")])),
      depends=["binutils_impl_linux-64 >=2.40", "libgcc-ng >=11.3.0", "libgomp >=11.3.0",
               "libsanitizer 11.3.0", "libstdcxx-ng >=11.3.0", "gmp >=6.2.1,<7.0a0",
               "mpfr >=4.2.0,<5.0a0", "mpc >=1.3.1,<2.0a0", "isl >=0.25,<0.26.0a0",
               "zlib >=1.2.13,<1.3.0a0", "zstd >=1.5.4,<1.6.0a0", GLIBC_BOOKWORM],
      license="GPL-3.0-only WITH GCC-exception-3.1", summary="GNU C Compiler (gcc 11.3, Debian's build)"),
    P("gxx_impl_linux-64", "11.3.0", ["g++-11", "libstdc++-11-dev"],
      take=["usr/bin/*-11", "usr/lib/gcc/x86_64-linux-gnu/11/*", "usr/include/*"],
      extra=_links([("bin/g++", "g++-11"), ("bin/c++", "g++-11"),
                    ("bin/x86_64-conda-linux-gnu-g++", "g++-11"),
                    ("bin/x86_64-conda-linux-gnu-c++", "g++-11")]),
      depends=["gcc_impl_linux-64 11.3.0.*", "libstdcxx-ng >=11.3.0", "gmp >=6.2.1,<7.0a0",
               "mpfr >=4.2.0,<5.0a0", "mpc >=1.3.1,<2.0a0", "isl >=0.25,<0.26.0a0",
               "zlib >=1.2.13,<1.3.0a0", "zstd >=1.5.4,<1.6.0a0"],
      license="GPL-3.0-only WITH GCC-exception-3.1", summary="GNU C++ Compiler (g++ 11.3, Debian's build)"),
    P("gcc_linux-64", "11.3.0", [],
      extra=[("file", "etc/conda/activate.d/activate-gcc_linux-64.sh",
              activate_script("gcc_linux-64", GCC_VARS), 0o644),
             ("file", "etc/conda/deactivate.d/deactivate-gcc_linux-64.sh",
              deactivate_script("gcc_linux-64", GCC_VARS), 0o644),
             ("file", "etc/conda/activate.d/activate-gcc_linux-64.fish",
              activate_script_fish("gcc_linux-64", GCC_VARS), 0o644),
             ("file", "etc/conda/deactivate.d/deactivate-gcc_linux-64.fish",
              deactivate_script_fish("gcc_linux-64", GCC_VARS), 0o644)],
      depends=["binutils_impl_linux-64 >=2.40", "gcc_impl_linux-64 11.3.0.*"],
      license="BSD-3-Clause", summary="Activation of gcc 11.3 (CC, CFLAGS, ... like conda-forge)"),
    P("gxx_linux-64", "11.3.0", [],
      extra=[("file", "etc/conda/activate.d/activate-gxx_linux-64.sh",
              activate_script("gxx_linux-64", GXX_VARS), 0o644),
             ("file", "etc/conda/deactivate.d/deactivate-gxx_linux-64.sh",
              deactivate_script("gxx_linux-64", GXX_VARS), 0o644),
             ("file", "etc/conda/activate.d/activate-gxx_linux-64.fish",
              activate_script_fish("gxx_linux-64", GXX_VARS), 0o644),
             ("file", "etc/conda/deactivate.d/deactivate-gxx_linux-64.fish",
              deactivate_script_fish("gxx_linux-64", GXX_VARS), 0o644)],
      depends=["gcc_linux-64 11.3.0.*", "gxx_impl_linux-64 11.3.0.*",
               "binutils_impl_linux-64 >=2.40"],
      license="BSD-3-Clause", summary="Activation of g++ 11.3 (CXX, CXXFLAGS like conda-forge)"),
    # ---- CUDA 11.8
    P("cudatoolkit", "11.8.89", ["nvidia-cuda-toolkit", "nvidia-cuda-dev", "libcudart11.0"],
      take=["usr/lib/nvidia-cuda-toolkit/bin/nvcc", "usr/lib/nvidia-cuda-toolkit/bin/cicc",
            "usr/lib/nvidia-cuda-toolkit/bin/crt/*", "usr/lib/nvidia-cuda-toolkit/libdevice/*",
            "usr/bin/ptxas", "usr/bin/fatbinary", "usr/bin/nvlink", "usr/bin/cudafe++",
            "usr/bin/bin2c", "usr/bin/cuobjdump", "usr/bin/nvprune", "usr/bin/cu++filt",
            "usr/bin/nvdisasm", "usr/include/*", "usr/lib/x86_64-linux-gnu/*"],
      drop=["usr/include/nvvm.h", "usr/lib/x86_64-linux-gnu/pkgconfig/*",
            "usr/lib/x86_64-linux-gnu/cuda-gdb/*", "usr/include/cuda-gdb/*"],
      extra=[("file", "bin/nvcc.profile", NVCC_PROFILE, 0o644)],
      depends=["libgcc-ng >=12", "libstdcxx-ng >=12", "__glibc >=2.17"],
      license="LicenseRef-NVIDIA-End-User-License-Agreement",
      summary="CUDA 11.8 toolkit: nvcc, ptxas, headers, static cudart (Debian's nvidia-cuda-toolkit)"),
    # ---- Python 3.9.2 and its libraries
    P("openssl", "1.1.1w", ["libssl1.1"], take=["usr/lib/x86_64-linux-gnu/*"],
      depends=["libgcc-ng >=12", GLIBC_BULLSEYE], license="OpenSSL",
      summary="OpenSSL 1.1.1 libraries (libssl, libcrypto)"),
    P("libffi", "3.3", ["libffi7"], take=["usr/lib/x86_64-linux-gnu/libffi.so*"],
      depends=["libgcc-ng >=12"], license="MIT", summary="A portable foreign-function interface library"),
    P("libmpdec", "2.5.1", ["libmpdec3"], take=["usr/lib/x86_64-linux-gnu/libmpdec.so*"],
      depends=["libgcc-ng >=12"], license="BSD-2-Clause",
      summary="A library for arbitrary precision decimal arithmetic (used by _decimal)"),
    P("sqlite", "3.34.1", ["libsqlite3-0"], take=["usr/lib/x86_64-linux-gnu/libsqlite3.so*"],
      depends=["libgcc-ng >=12", "zlib >=1.2.13,<1.3.0a0"], license="Unlicense",
      summary="Implements a self-contained, zero-configuration, SQL database engine"),
    P("expat", "2.2.10", ["libexpat1"], take=["lib/x86_64-linux-gnu/libexpat*.so*", "usr/lib/x86_64-linux-gnu/libexpat*.so*"],
      depends=["libgcc-ng >=12"], license="MIT", summary="Expat XML parser library in C"),
    P("bzip2", "1.0.8", ["libbz2-1.0"], take=["lib/x86_64-linux-gnu/libbz2.so*"],
      depends=["libgcc-ng >=12"], license="bzip2-1.0.6", summary="high-quality data compressor"),
    P("xz", "5.2.5", ["liblzma5"], take=["lib/x86_64-linux-gnu/liblzma.so*"],
      depends=["libgcc-ng >=12"], license="LGPL-2.1 and GPL-2.0", summary="Data compression library (liblzma)"),
    P("ncurses", "6.2", ["libtinfo6", "libncursesw6"],
      take=["lib/x86_64-linux-gnu/*", "usr/lib/x86_64-linux-gnu/*"],
      depends=["libgcc-ng >=12"], license="X11 AND BSD-3-Clause", summary="Library for text-based user interfaces"),
    P("readline", "8.1", ["libreadline8"], take=["lib/x86_64-linux-gnu/*"],
      depends=["libgcc-ng >=12", "ncurses >=6.2,<7.0a0"], license="GPL-3.0-only",
      summary="library for editing command lines as they are typed in"),
    P("libuuid", "2.36.1", ["libuuid1"], take=["usr/lib/x86_64-linux-gnu/libuuid.so*", "lib/x86_64-linux-gnu/libuuid.so*"],
      depends=["libgcc-ng >=12"], license="BSD-3-Clause", summary="Portable uuid C library"),
    P("python", "3.9.2",
      ["python3.9", "python3.9-minimal", "libpython3.9", "libpython3.9-minimal",
       "libpython3.9-stdlib", "libpython3.9-dev", "python3-distutils", "python3-lib2to3"],
      take=["usr/bin/*", "usr/lib/python3.9/*", "usr/lib/x86_64-linux-gnu/libpython3.9*",
            "usr/include/python3.9/*", "usr/include/x86_64-linux-gnu/python3.9/*"],
      drop=["usr/include/python3.9/pyconfig.h", "usr/lib/python3.9/sitecustomize.py",
            "usr/lib/x86_64-linux-gnu/libpython3.9*.a", "usr/lib/python3.9/config-3.9-x86_64-linux-gnu/*.a",
            "usr/lib/python3.9/lib-dynload/_dbm.*", "usr/lib/python3.9/lib-dynload/nis.*",
            "usr/bin/x86_64-linux-gnu-python3.9-config", "usr/bin/python3.9-config",
            "usr/lib/x86_64-linux-gnu/pkgconfig/*", "*/__pycache__/*"],
      extra=_links([("bin/python3", "python3.9"), ("bin/python", "python3.9"),
                    ("bin/pydoc3", "pydoc3.9"), ("bin/pydoc", "pydoc3.9")])
      + [("patch", "lib/python3.9/site.py", SITE_PY_OLD, SITE_PY_NEW)],
      text_fixes={SYSCONFIG: PY_FIXES, PYCONFIG_DIR + "/Makefile": PY_FIXES,
                  PYCONFIG_DIR + "/python-config.py": PY_FIXES},
      depends=["bzip2 >=1.0.8,<2.0a0", "expat >=2.2.10,<3.0a0", "libffi >=3.3,<3.4.0a0",
               "libgcc-ng >=12", "libmpdec >=2.5.1,<3.0a0", "libuuid >=2.32.1,<3.0a0",
               "ncurses >=6.2,<7.0a0", "openssl >=1.1.1w,<1.1.2a", "readline >=8.0,<9.0a0",
               "sqlite >=3.34.1,<4.0a0", "xz >=5.2.5,<6.0a0", "zlib >=1.2.13,<1.3.0a0",
               GLIBC_BULLSEYE],
      constrains=["python_abi 3.9.* *_cp39"],
      build_suffix="_cpython", license="Python-2.0",
      summary="General purpose programming language (Debian's CPython 3.9.2)"),
    P("python_abi", "3.9", [], build="2_cp39", constrains=["python 3.9.* *_cpython"],
      license="BSD-3-Clause", summary="Metapackage to select python implementation"),
    # ---- numpy and its BLAS/LAPACK (reference netlib, like conda-forge's *_netlib builds)
    P("libblas", "3.9.0", ["libblas3"], take=["usr/lib/x86_64-linux-gnu/blas/libblas.so*"],
      depends=["libgcc-ng >=12", "libgfortran5 >=12"], license="BSD-3-Clause",
      build_suffix="_netlib", summary="Reference BLAS (netlib)"),
    P("liblapack", "3.9.0", ["liblapack3"], take=["usr/lib/x86_64-linux-gnu/lapack/liblapack.so*"],
      depends=["libblas 3.9.0.*", "libgcc-ng >=12", "libgfortran5 >=12"], license="BSD-3-Clause",
      build_suffix="_netlib", summary="Reference LAPACK (netlib)"),
    P("numpy", "1.19.5", ["python3-numpy"],
      take=["usr/lib/python3/dist-packages/*", "usr/bin/f2py*"],
      drop=["*/__pycache__/*"],
      depends=PY_DEP + ["libblas >=3.9.0,<4.0a0", "liblapack >=3.9.0,<4.0a0", "libgcc-ng >=12"],
      build_prefix="py39h", python=True, license="BSD-3-Clause",
      summary="Array processing for numbers, strings, records, and objects"),
    P("pybind11", "2.6.2", ["python3-pybind11", "pybind11-dev"],
      take=["usr/lib/python3/dist-packages/*", "usr/include/pybind11/*", "usr/lib/cmake/*",
            "usr/bin/pybind11-config"],
      drop=["*/__pycache__/*"],
      depends=PY_DEP, build_prefix="py39h", python=True, license="BSD-3-Clause",
      summary="Seamless operability between C++11 and Python"),
    P("ninja", "1.10.1", ["ninja-build"], take=["usr/bin/ninja"],
      depends=["libgcc-ng >=12", "libstdcxx-ng >=12"], license="Apache-2.0",
      summary="A small build system with a focus on speed"),
    # ---- noarch: python
    P("pip", "20.3.4", ["python3-pip", "python-pip-whl"],
      take=["usr/lib/python3/dist-packages/*", "usr/share/python-wheels/*"],
      drop=["usr/share/python-wheels/pip-*", "usr/share/python-wheels/wheel-*", "*/__pycache__/*"],
      noarch="python", entry_points=["pip = pip._internal.cli.main:main",
                                     "pip3 = pip._internal.cli.main:main"],
      depends=["python >=3.6", "setuptools", "wheel"], license="MIT",
      summary="PyPA recommended tool for installing Python packages (Debian's, debundled)"),
    P("setuptools", "52.0.0", ["python3-setuptools", "python3-pkg-resources"],
      take=["usr/lib/python3/dist-packages/*"], drop=["*/__pycache__/*"],
      noarch="python", depends=["python >=3.6"], license="MIT",
      summary="Download, build, install, upgrade, and uninstall Python packages"),
    P("wheel", "0.34.2", ["python3-wheel"], take=["usr/lib/python3/dist-packages/*"],
      drop=["*/__pycache__/*"], noarch="python", entry_points=["wheel = wheel.cli:main"],
      depends=["python >=3.6"], license="MIT", summary="A built-package format for Python"),
]

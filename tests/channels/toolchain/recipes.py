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
    # Jupyter and its Python and C dependencies (bullseye, for Python 3.9)
    ("python3-notebook", "bullseye", "6.2.0"),
    ("python3-jupyter-core", "bullseye", "4.7.1"),
    ("python3-jupyter-client", "bullseye", "6.1.11"),
    ("python3-ipykernel", "bullseye", "5.4.3"),
    ("python3-ipython", "bullseye", "7.20.0"),
    ("python3-ipython-genutils", "bullseye", "0.2.0"),
    ("python3-nbconvert", "bullseye", "5.6.1"),
    ("python3-nbformat", "bullseye", "5.1.2"),
    ("python3-traitlets", "bullseye", "5.0.5"),
    ("python3-tornado", "bullseye", "6.1.0"),
    ("python3-zmq", "bullseye", "20.0.0"),
    ("python3-jupyter-console", "bullseye", "6.2.0"),
    ("python3-ipywidgets", "bullseye", "6.0.0"),
    ("python3-widgetsnbextension", "bullseye", "6.0.0"),
    ("jupyter-nbextension-jupyter-js-widgets", "bullseye", "6.0.0"),
    ("libzmq5", "bullseye", "4.3.4"),
    ("libsodium23", "bullseye", "1.0.18"),
    ("libpgm-5.3-0", "bullseye", "5.3.128"),
    ("libnorm1", "bullseye", "1.5.9"),
    ("libbsd0", "bullseye", "0.11.3"),
    ("libmd0", "bullseye", "1.0.3"),
    ("libgssapi-krb5-2", "bullseye", "1.18.3"),
    ("libkrb5-3", "bullseye", "1.18.3"),
    ("libk5crypto3", "bullseye", "1.18.3"),
    ("libkrb5support0", "bullseye", "1.18.3"),
    ("libcom-err2", "bullseye", "1.46.2"),
    ("libkeyutils1", "bullseye", "1.6.1"),
    ("python3-jinja2", "bullseye", "2.11.3"),
    ("python3-markupsafe", "bullseye", "1.1.1"),
    ("python3-pygments", "bullseye", "2.7.1"),
    ("python3-jedi", "bullseye", "0.18.0"),
    ("python3-parso", "bullseye", "0.8.1"),
    ("python3-prompt-toolkit", "bullseye", "3.0.14"),
    ("python3-wcwidth", "bullseye", "0.1.9"),
    ("python3-pexpect", "bullseye", "4.8.0"),
    ("python3-ptyprocess", "bullseye", "0.7.0"),
    ("python3-pickleshare", "bullseye", "0.7.5"),
    ("python3-backcall", "bullseye", "0.2.0"),
    ("python3-decorator", "bullseye", "4.4.2"),
    ("python3-dateutil", "bullseye", "2.8.1"),
    ("python3-six", "bullseye", "1.16.0"),
    ("python3-jsonschema", "bullseye", "3.2.0"),
    ("python3-pyrsistent", "bullseye", "0.15.5"),
    ("python3-attr", "bullseye", "20.3.0"),
    ("python3-importlib-metadata", "bullseye", "1.6.0"),
    ("python3-zipp", "bullseye", "1.0.0"),
    ("python3-more-itertools", "bullseye", "4.2.0"),
    ("python3-bleach", "bullseye", "3.2.1"),
    ("python3-html5lib", "bullseye", "1.1"),
    ("python3-webencodings", "bullseye", "0.5.1"),
    ("python3-packaging", "bullseye", "20.9"),
    ("python3-pyparsing", "bullseye", "2.4.7"),
    ("python3-defusedxml", "bullseye", "0.6.0"),
    ("python3-mistune", "bullseye", "0.8.4"),
    ("python3-pandocfilters", "bullseye", "1.4.3"),
    ("python3-testpath", "bullseye", "0.4.4"),
    ("python3-entrypoints", "bullseye", "0.3"),
    ("python3-prometheus-client", "bullseye", "0.9.0"),
    ("python3-send2trash", "bullseye", "1.6.0"),
    ("python3-terminado", "bullseye", "0.9.2"),
    ("python3-argon2", "bullseye", "18.3.0"),
    ("libargon2-1", "bullseye", "0~20171227"),
    ("python3-cffi-backend", "bullseye", "1.14.5"),
    ("python3-cffi", "bullseye", "1.14.5"),
    ("python3-pycparser", "bullseye", "2.20"),
    ("python3-ply", "bullseye", "3.11"),
    # the notebook's JavaScript and fonts (Debian links them into notebook/static)
    ("libjs-mathjax", "bullseye", "2.7.9"),
    ("fonts-mathjax", "bullseye", "2.7.9"),
    ("libjs-codemirror", "bullseye", "5.59.2"),
    ("fonts-font-awesome", "bullseye", "5.0.10"),
    ("libjs-jquery", "bullseye", "3.5.1"),
    ("libjs-jquery-ui", "bullseye", "1.12.1"),
    ("libjs-requirejs", "bullseye", "2.3.6"),
    ("libjs-requirejs-text", "bullseye", "2.0.12"),
    ("libjs-backbone", "bullseye", "1.4.0"),
    ("libjs-bootstrap", "bullseye", "3.4.1"),
    ("fonts-glyphicons-halflings", "bullseye", "1.009"),
    ("libjs-moment", "bullseye", "2.29.1"),
    ("libjs-text-encoding", "bullseye", "0.7.0"),
    ("libjs-underscore", "bullseye", "1.9.1"),
    ("libjs-jquery-typeahead", "bullseye", "2.11.0"),
    ("libjs-marked", "bullseye", "0.8.0"),
    ("libjs-bootstrap-tour", "bullseye", "0.12.0"),
    ("libjs-es6-promise", "bullseye", "4.2.8"),
    ("node-jed", "bullseye", "1.1.1"),
    ("libjs-jed", "bullseye", "1.1.1"),
    ("libjs-xterm", "bullseye", "3.8.1"),
]

# Debian packages whose files notebook/static/components links to (shipped inside `notebook`,
# whose wheel bundles them too)
NOTEBOOK_JS = ["libjs-mathjax", "fonts-mathjax", "libjs-codemirror", "fonts-font-awesome",
               "libjs-jquery", "libjs-jquery-ui", "libjs-requirejs", "libjs-requirejs-text",
               "libjs-backbone", "libjs-bootstrap", "fonts-glyphicons-halflings", "libjs-moment",
               "libjs-text-encoding", "libjs-underscore", "libjs-jquery-typeahead",
               "libjs-marked", "libjs-bootstrap-tour", "libjs-es6-promise", "node-jed",
               "libjs-jed", "libjs-xterm"]

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
      text_fixes=None, entry_points=(), python=False, build=None, vendor=()):
    """One conda package. `extra` items: ("link", path, target) | ("file", path, text, mode)
    | ("patch", path, old, new) | ("rm", pattern). `vendor`: prefix folders that only serve
    links from site-packages; a noarch package gets copies instead and drops them."""
    return dict(name=name, version=version, debs=list(debs), take=list(take),
                drop=list(drop), depends=list(depends), constrains=list(constrains),
                license=license, summary=summary, home=home, build_prefix=build_prefix,
                build_suffix=build_suffix, noarch=noarch, extra=list(extra),
                text_fixes=text_fixes or {}, entry_points=list(entry_points), python=python,
                build=build, vendor=list(vendor))


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

# ---- Jupyter (bullseye's Python 3.9 packages), named and split as conda-forge's
SITE = ["usr/lib/python3/dist-packages/*"]
NO_PYC = ["*/__pycache__/*"]


def PYN(name, version, debs, depends=(), entry_points=(), extra=(), summary="", license="",
        take=None, vendor=()):
    """A pure-Python package, noarch: python as conda-forge builds them."""
    return P(name, version, debs, take=take or SITE, drop=NO_PYC, noarch="python",
             depends=list(depends), entry_points=list(entry_points), extra=list(extra),
             summary=summary, license=license, vendor=vendor)


def PYA(name, version, debs, depends=(), summary="", license="", take=()):
    """A Python package with extension modules, built for CPython 3.9."""
    return P(name, version, debs, take=SITE + list(take), drop=NO_PYC, build_prefix="py39h", python=True,
             depends=PY_DEP + list(depends), summary=summary, license=license)


KERNEL_JSON = """{
 "argv": [
  "python",
  "-m",
  "ipykernel_launcher",
  "-f",
  "{connection_file}"
 ],
 "display_name": "Python 3",
 "language": "python"
}
"""
WIDGETS_NBCONFIG = """{
  "load_extensions": {
    "jupyter-js-widgets/extension": true
  }
}
"""
PROMPT_TK = "prompt-toolkit >=2.0.0,!=3.0.0,!=3.0.1,<3.1.0"

JUPYTER_PACKAGES = [
    P("jupyter", "1.0.0", [], noarch="python",
      depends=["ipykernel", "ipywidgets", "jupyter_console", "nbconvert", "notebook",
               "python >=3.6"],
      license="BSD-3-Clause",
      summary="Jupyter metapackage: notebook, console, nbconvert, ipykernel, ipywidgets "
              "(qtconsole left out: it needs Qt)"),
    PYN("notebook", "6.2.0", ["python3-notebook"] + NOTEBOOK_JS,
        take=SITE + ["usr/share/javascript/*", "usr/share/nodejs/*", "usr/share/fonts/*",
                     "usr/share/fonts-font-awesome/*", "usr/share/fonts-glyphicons/*"],
        vendor=["share/javascript", "share/nodejs", "share/fonts", "share/fonts-font-awesome",
                "share/fonts-glyphicons"],
        depends=["argon2-cffi", "ipykernel", "ipython_genutils", "jinja2", "jupyter_client >=5.3.4",
                 "jupyter_core >=4.6.1", "nbconvert", "nbformat", "prometheus_client",
                 "python >=3.6", "pyzmq >=17", "send2trash >=1.5.0", "terminado >=0.8.3",
                 "tornado >=6.1", "traitlets >=4.2.1"],
        entry_points=["jupyter-notebook = notebook.notebookapp:main",
                      "jupyter-nbextension = notebook.nbextensions:main",
                      "jupyter-serverextension = notebook.serverextensions:main",
                      "jupyter-bundlerextension = notebook.bundler.bundlerextensions:main"],
        license="BSD-3-Clause", summary="Jupyter Notebook: the web-based notebook server"),
    PYN("jupyter_core", "4.7.1", ["python3-jupyter-core"],
        depends=["python >=3.6", "traitlets"],
        entry_points=["jupyter = jupyter_core.command:main",
                      "jupyter-migrate = jupyter_core.migrate:main",
                      "jupyter-troubleshoot = jupyter_core.troubleshoot:main"],
        license="BSD-3-Clause", summary="Core common functionality of Jupyter projects"),
    PYN("jupyter_client", "6.1.11", ["python3-jupyter-client"],
        depends=["jupyter_core >=4.6.0", "python >=3.6", "python-dateutil >=2.1", "pyzmq >=13",
                 "tornado >=4.1", "traitlets"],
        entry_points=["jupyter-kernelspec = jupyter_client.kernelspecapp:KernelSpecApp.launch_instance",
                      "jupyter-run = jupyter_client.runapp:RunApp.launch_instance",
                      "jupyter-kernel = jupyter_client.kernelapp:main"],
        license="BSD-3-Clause", summary="Jupyter protocol implementation and client libraries"),
    PYN("ipykernel", "5.4.3", ["python3-ipykernel"],
        depends=["ipython >=5.0.0", "jupyter_client", "python >=3.6", "tornado >=4.2",
                 "traitlets >=4.1.0"],
        extra=[("file", "share/jupyter/kernels/python3/kernel.json", KERNEL_JSON, 0o644)],
        license="BSD-3-Clause", summary="IPython Kernel for Jupyter"),
    PYN("ipython", "7.20.0", ["python3-ipython"],
        depends=["backcall", "decorator", "jedi >=0.16", "pexpect >4.3", "pickleshare",
                 PROMPT_TK, "pygments", "python >=3.7", "setuptools >=18.5", "traitlets >=4.2"],
        entry_points=["ipython = IPython:start_ipython", "ipython3 = IPython:start_ipython"],
        license="BSD-3-Clause", summary="IPython: Productive Interactive Computing"),
    PYN("ipython_genutils", "0.2.0", ["python3-ipython-genutils"], depends=["python"],
        license="BSD-3-Clause", summary="Vestigial utilities from IPython"),
    PYN("nbconvert", "5.6.1", ["python3-nbconvert"],
        depends=["bleach", "defusedxml", "entrypoints >=0.2.2", "jinja2 >=2.4", "jupyter_core",
                 "mistune >=0.8.1,<2", "nbformat >=4.4", "pandocfilters >=1.4.1", "pygments",
                 "python >=3.6", "testpath", "traitlets >=4.2"],
        entry_points=["jupyter-nbconvert = nbconvert.nbconvertapp:main"],
        license="BSD-3-Clause", summary="Converting Jupyter Notebooks"),
    PYN("nbformat", "5.1.2", ["python3-nbformat"],
        depends=["ipython_genutils", "jsonschema >=2.4,!=2.5.0", "jupyter_core",
                 "python >=3.6", "traitlets >=4.1"],
        entry_points=["jupyter-trust = nbformat.sign:TrustNotebookApp.launch_instance"],
        license="BSD-3-Clause", summary="The Jupyter Notebook format"),
    PYN("traitlets", "5.0.5", ["python3-traitlets"], depends=["ipython_genutils", "python >=3.7"],
        license="BSD-3-Clause", summary="Configuration system for Python applications"),
    PYN("jupyter_console", "6.2.0", ["python3-jupyter-console"],
        depends=["ipykernel", "ipython", "jupyter_client", PROMPT_TK, "pygments", "python >=3.6"],
        entry_points=["jupyter-console = jupyter_console.app:main"],
        license="BSD-3-Clause", summary="Jupyter terminal console"),
    PYN("ipywidgets", "6.0.0", ["python3-ipywidgets"],
        depends=["ipykernel >=4.5.1", "ipython >=4.0.0", "nbformat >=4.2.0", "python >=3.6",
                 "traitlets >=4.3.1", "widgetsnbextension >=2.0.0,<3"],
        license="BSD-3-Clause", summary="Jupyter Interactive Notebook widgets"),
    PYN("widgetsnbextension", "2.0.0", ["python3-widgetsnbextension",
                                        "jupyter-nbextension-jupyter-js-widgets"],
        take=SITE + ["usr/share/jupyter/*"],
        extra=[("file", "etc/jupyter/nbconfig/notebook.d/widgetsnbextension.json",
                WIDGETS_NBCONFIG, 0o644)],
        depends=["notebook >=4.4.1", "python >=3.6"], license="BSD-3-Clause",
        summary="Interactive HTML widgets for Jupyter notebooks (the notebook extension)"),
    PYA("tornado", "6.1", ["python3-tornado"], depends=["libgcc-ng >=12"],
        license="Apache-2.0", summary="A Python web framework and asynchronous networking library"),
    PYA("pyzmq", "20.0.0", ["python3-zmq"],
        depends=["libgcc-ng >=12", "libsodium >=1.0.18,<1.0.19.0a0", "zeromq >=4.3.4,<4.4.0a0"],
        license="BSD-3-Clause AND LGPL-3.0-or-later", summary="Python bindings for zeromq"),
    P("zeromq", "4.3.4", ["libzmq5", "libpgm-5.3-0", "libnorm1", "libbsd0", "libmd0"],
      take=["usr/lib/x86_64-linux-gnu/libzmq.so.5*", "usr/lib/x86_64-linux-gnu/libpgm-5.3.so*",
            "usr/lib/x86_64-linux-gnu/libnorm.so*", "usr/lib/x86_64-linux-gnu/libbsd.so*",
            "usr/lib/x86_64-linux-gnu/libmd.so*", "lib/x86_64-linux-gnu/libbsd.so*",
            "lib/x86_64-linux-gnu/libmd.so*"],
      depends=["krb5 >=1.18.3,<1.19.0a0", "libgcc-ng >=12", "libsodium >=1.0.18,<1.0.19.0a0",
               "libstdcxx-ng >=12", GLIBC_BULLSEYE],
      license="MPL-2.0",
      summary="A high-performance asynchronous messaging library (with its OpenPGM, NORM, libbsd)"),
    P("libsodium", "1.0.18", ["libsodium23"], take=["usr/lib/x86_64-linux-gnu/libsodium.so*"],
      depends=["libgcc-ng >=12"], license="ISC", summary="A modern, easy-to-use crypto library"),
    P("krb5", "1.18.3",
      ["libgssapi-krb5-2", "libkrb5-3", "libk5crypto3", "libkrb5support0", "libcom-err2",
       "libkeyutils1"],
      take=["usr/lib/x86_64-linux-gnu/*.so*", "lib/x86_64-linux-gnu/*.so*"],
      drop=["usr/lib/x86_64-linux-gnu/krb5/*"],
      depends=["libgcc-ng >=12", "openssl >=1.1.1w,<1.1.2a", GLIBC_BULLSEYE], license="MIT",
      summary="A network authentication protocol (GSSAPI and Kerberos 5 libraries)"),
    PYN("jinja2", "2.11.3", ["python3-jinja2"], depends=["markupsafe >=0.23", "python >=3.6"],
        license="BSD-3-Clause", summary="A very fast and expressive template engine"),
    PYA("markupsafe", "1.1.1", ["python3-markupsafe"], depends=["libgcc-ng >=12"],
        license="BSD-3-Clause", summary="Safely add untrusted strings to HTML/XML markup"),
    PYN("pygments", "2.7.1", ["python3-pygments"], depends=["python >=3.5", "setuptools"],
        entry_points=["pygmentize = pygments.cmdline:main"], license="BSD-2-Clause",
        summary="Pygments is a generic syntax highlighter"),
    PYN("jedi", "0.18.0", ["python3-jedi"], depends=["parso >=0.8.0,<0.9.0", "python >=3.6"],
        license="MIT", summary="An autocompletion tool for Python"),
    PYN("parso", "0.8.1", ["python3-parso"], depends=["python >=3.6"], license="MIT",
        summary="A Python Parser"),
    PYN("prompt-toolkit", "3.0.14", ["python3-prompt-toolkit"],
        depends=["python >=3.6.1", "wcwidth"], license="BSD-3-Clause",
        summary="Library for building powerful interactive command lines in Python"),
    PYN("wcwidth", "0.1.9", ["python3-wcwidth"], depends=["python"], license="MIT",
        summary="Measures number of Terminal column cells of wide-character codes"),
    PYN("pexpect", "4.8.0", ["python3-pexpect"], depends=["ptyprocess >=0.5", "python"],
        license="ISC", summary="Pexpect makes Python a better tool for controlling other applications"),
    PYN("ptyprocess", "0.7.0", ["python3-ptyprocess"], depends=["python"], license="ISC",
        summary="Run a subprocess in a pseudo terminal"),
    PYN("pickleshare", "0.7.5", ["python3-pickleshare"], depends=["python"], license="MIT",
        summary="Tiny 'shelve'-like database with concurrency support"),
    PYN("backcall", "0.2.0", ["python3-backcall"], depends=["python"], license="BSD-3-Clause",
        summary="Specifications for callback functions passed in to an API"),
    PYN("decorator", "4.4.2", ["python3-decorator"], depends=["python >=2.6"],
        license="BSD-2-Clause", summary="Better living through Python with decorators"),
    PYN("python-dateutil", "2.8.1", ["python3-dateutil"], depends=["python", "six >=1.5"],
        license="Apache-2.0", summary="Extensions to the standard Python datetime module"),
    PYN("six", "1.16.0", ["python3-six"], depends=["python"], license="MIT",
        summary="Python 2 and 3 compatibility utilities"),
    PYN("jsonschema", "3.2.0", ["python3-jsonschema"],
        depends=["attrs >=17.4.0", "importlib-metadata", "pyrsistent >=0.14.0", "python >=3.5",
                 "setuptools", "six >=1.11.0"],
        entry_points=["jsonschema = jsonschema.cli:main"], license="MIT",
        summary="An implementation of JSON Schema validation for Python"),
    PYA("pyrsistent", "0.15.5", ["python3-pyrsistent"], depends=["libgcc-ng >=12", "six"],
        license="MIT", summary="Persistent/Functional/Immutable data structures"),
    PYN("attrs", "20.3.0", ["python3-attr"], depends=["python >=3.5"], license="MIT",
        summary="attrs is the Python package that will bring back the joy of writing classes"),
    PYN("importlib-metadata", "1.6.0", ["python3-importlib-metadata"],
        depends=["python >=3.6", "zipp >=0.5"], license="Apache-2.0",
        summary="A library to access the metadata for a Python package"),
    PYN("zipp", "1.0.0", ["python3-zipp"], depends=["more-itertools", "python >=3.6"],
        license="MIT", summary="A pathlib-compatible Zipfile object wrapper"),
    PYN("more-itertools", "4.2.0", ["python3-more-itertools"], depends=["python", "six"],
        license="MIT", summary="More routines for operating on iterables, beyond itertools"),
    PYN("bleach", "3.2.1", ["python3-bleach"],
        depends=["html5lib >=1.0.1", "packaging", "python >=3.6", "six >=1.9.0", "webencodings"],
        license="Apache-2.0", summary="Easy, whitelist-based HTML-sanitizing tool"),
    PYN("html5lib", "1.1", ["python3-html5lib"], depends=["python", "six >=1.9", "webencodings"],
        license="MIT", summary="HTML parser based on the WHATWG HTML specification"),
    PYN("webencodings", "0.5.1", ["python3-webencodings"], depends=["python"],
        license="BSD-3-Clause", summary="Character encoding aliases for legacy web content"),
    PYN("packaging", "20.9", ["python3-packaging"], depends=["pyparsing >=2.0.2", "python >=3.6"],
        license="Apache-2.0", summary="Core utilities for Python packages"),
    PYN("pyparsing", "2.4.7", ["python3-pyparsing"], depends=["python"], license="MIT",
        summary="Create and execute simple grammars"),
    PYN("defusedxml", "0.6.0", ["python3-defusedxml"], depends=["python"], license="PSF-2.0",
        summary="XML bomb protection for Python stdlib modules"),
    PYN("mistune", "0.8.4", ["python3-mistune"], depends=["python"], license="BSD-3-Clause",
        summary="The fastest markdown parser in pure Python"),
    PYN("pandocfilters", "1.4.3", ["python3-pandocfilters"], depends=["python"],
        license="BSD-3-Clause", summary="A python module for writing pandoc filters"),
    PYN("testpath", "0.4.4", ["python3-testpath"], depends=["python"], license="MIT",
        summary="Testpath is a collection of utilities for Python code working with files and commands"),
    PYN("entrypoints", "0.3", ["python3-entrypoints"], depends=["python"], license="MIT",
        summary="Discover and load entry points from installed packages"),
    PYN("prometheus_client", "0.9.0", ["python3-prometheus-client"], depends=["python"],
        license="Apache-2.0", summary="Python client for the Prometheus monitoring system"),
    PYN("send2trash", "1.6.0b1", ["python3-send2trash"], depends=["python"],
        license="BSD-3-Clause", summary="Send file to trash natively under Mac OS X, Windows and Linux"),
    PYN("terminado", "0.9.2", ["python3-terminado"],
        depends=["ptyprocess", "python >=3.6", "tornado >=4"], license="BSD-2-Clause",
        summary="Terminals served by tornado websockets"),
    PYA("argon2-cffi", "18.3.0", ["python3-argon2", "libargon2-1"],
        take=["usr/lib/x86_64-linux-gnu/libargon2.so*"], depends=["cffi >=1.0.0", "libgcc-ng >=12", "six"], license="MIT",
        summary="The secure Argon2 password hashing algorithm (with libargon2)"),
    PYA("cffi", "1.14.5", ["python3-cffi-backend", "python3-cffi"],
        depends=["libffi >=3.3,<3.4.0a0", "libgcc-ng >=12", "pycparser"], license="MIT",
        summary="Foreign Function Interface for Python calling C code"),
    PYN("pycparser", "2.20", ["python3-pycparser"], depends=["ply", "python >=2.7"],
        license="BSD-3-Clause", summary="Complete C99 parser in pure Python (with Debian's ply)"),
    PYN("ply", "3.11", ["python3-ply"], depends=["python"], license="BSD-3-Clause",
        summary="Python Lex & Yacc"),
]
PACKAGES += JUPYTER_PACKAGES

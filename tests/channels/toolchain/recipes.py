"""Recipes of the toolchain channel: which Debian packages, which of their files, and the
conda records they become (names and splits as conda-forge has them).

DEBS pins every Debian package by suite and upstream version; the exact Debian revision is
whatever that suite carries (point releases change revisions, not upstream versions).
PACKAGES lists the conda packages. Paths in `take`/`drop` are Debian paths without the
leading slash, fnmatch patterns ('*' also crosses '/'); build.py maps them into the prefix
(see MAP_RULES) and rewrites rpaths and symlinks to stay inside it.

SETS names the two channels the builder makes: `toolchain` (DEBS, PACKAGES: CUDA 11.8, g++ 11,
bullseye's Python 3.9 with numpy, pybind11, pip and Jupyter) and `torch` (TORCH_DEBS,
TORCH_PACKAGES: bookworm's Python 3.11 with PyTorch 1.13.1 CPU, torchvision, torchaudio and
Jupyter: notebook 6.4.12, ipykernel 6.17, nbconvert 6.5, ...).
"""

import re

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
    ("usr/include/x86_64-linux-gnu/python3.11/", "include/python3.11/"),
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

# The environment's CUDA toolkit is the one builds see: torch.utils.cpp_extension, CMake's
# FindCUDAToolkit and most build scripts read CUDA_HOME (CUDA_PATH) before PATH, so the
# cudatoolkit package sets both to the prefix on activation and puts back the old values
# (or unsets them) on deactivation, as conda-forge's nvcc_linux-64 / cuda-nvcc activation does.
CUDA_VARS = [("CUDA_HOME", _P), ("CUDA_PATH", _P)]


def activation_files(pkg, variables, what):
    """The activate.d/deactivate.d pair (sh and fish) of `pkg` for `variables`."""
    return [("file", "etc/conda/activate.d/activate-%s.sh" % pkg,
             activate_script(pkg, variables, what), 0o644),
            ("file", "etc/conda/deactivate.d/deactivate-%s.sh" % pkg,
             deactivate_script(pkg, variables), 0o644),
            ("file", "etc/conda/activate.d/activate-%s.fish" % pkg,
             activate_script_fish(pkg, variables, what), 0o644),
            ("file", "etc/conda/deactivate.d/deactivate-%s.fish" % pkg,
             deactivate_script_fish(pkg, variables), 0o644)]


def activate_script(pkg, variables, what="the environment's compiler and flags"):
    lines = ["# Activation of %s (as conda-forge's): %s.\n" % (pkg, what),
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


def activate_script_fish(pkg, variables, what="the environment's compiler and flags"):
    """The same activation for fish (conda runs only *.fish scripts there)."""
    lines = ["# Activation of %s for fish: %s.\n" % (pkg, what),
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
      text_fixes=None, entry_points=(), python=False, build=None, vendor=(), py="3.9",
      auto_depends=False, generic=False):
    """One conda package. `extra` items: ("link", path, target) | ("file", path, text, mode)
    | ("patch", path, old, new) | ("rm", pattern). `vendor`: prefix folders that only serve
    links from site-packages; a noarch package gets copies instead and drops them. `py`: the
    Python version whose site-packages dist-packages becomes. `auto_depends`: add the conda
    names of what the Debian packages depend on. `generic`: a Debian library as it is (its
    version made a conda version; it may hold no files)."""
    return dict(name=name, version=version, debs=list(debs), take=list(take),
                drop=list(drop), depends=list(depends), constrains=list(constrains),
                license=license, summary=summary, home=home, build_prefix=build_prefix,
                build_suffix=build_suffix, noarch=noarch, extra=list(extra),
                text_fixes=text_fixes or {}, entry_points=list(entry_points), python=python,
                build=build, vendor=list(vendor), py=py, auto_depends=auto_depends,
                generic=generic)


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
      extra=[("file", "bin/nvcc.profile", NVCC_PROFILE, 0o644)]
      + activation_files("cudatoolkit", CUDA_VARS,
                         "CUDA_HOME and CUDA_PATH name the environment's toolkit"),
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


# =============================================================================================
# The `torch` set (build-toolchain --torch): bookworm's Python 3.11 and PyTorch 1.13.1 (CPU),
# torchvision 0.14.1, torchaudio 0.13.1, numpy, pybind11, ninja, pip. cudatoolkit and
# gxx_linux-64 come from the toolchain channel (the environment file lists both channels);
# so do the GCC runtime, zlib, zstd and gmp, which are bookworm's there too.

# Debian packages of the shared libraries (and their data) that libtorch1.13,
# python3-torchvision/-torchaudio and python3-pil need at run time: OpenCV, FFmpeg, Qt 5, GDAL
# and their own dependencies (libtorch links OpenCV's and FFmpeg's libraries). Each becomes a
# conda package of the same name (there is no conda-forge split of Debian's libraries),
# depending on what its Debian package depends on.
TORCH_NATIVE = [
    ("fontconfig", "2.14.1"),
    ("fontconfig-config", "2.14.1"),
    ("fonts-dejavu-core", "2.37"),
    ("gdal-data", "3.6.2+dfsg"),
    ("gdal-plugins", "3.6.2+dfsg"),
    ("iso-codes", "4.15.0"),
    ("libabsl20220623", "20220623.1"),
    ("libacl1", "2.3.1"),
    ("libaec0", "1.0.6"),
    ("libaom3", "3.6.0"),
    ("libarchive13", "3.6.2"),
    ("libarmadillo11", "11.4.2+dfsg"),
    ("libarpack2", "3.8.0"),
    ("libasound2", "1.2.8"),
    ("libasound2-data", "1.2.8"),
    ("libass9", "0.17.1"),
    ("libasyncns0", "0.8"),
    ("libavc1394-0", "0.5.4"),
    ("libavcodec59", "5.1.9"),
    ("libavdevice59", "5.1.9"),
    ("libavfilter8", "5.1.9"),
    ("libavformat59", "5.1.9"),
    ("libavif15", "0.11.1"),
    ("libavutil57", "5.1.9"),
    ("libblkid1", "2.38.1"),
    ("libblosc1", "1.21.3+ds"),
    ("libbluray2", "1.3.4"),
    ("libbrotli1", "1.0.9"),
    ("libbs2b0", "3.1.0+dfsg"),
    ("libbsd0", "0.11.7"),
    ("libcaca0", "0.99.beta20"),
    ("libcairo-gobject2", "1.16.0"),
    ("libcairo2", "1.16.0"),
    ("libcap2", "2.66"),
    ("libcap2-bin", "2.66"),
    ("libcdio-cdda2", "10.2+2.0.1"),
    ("libcdio-paranoia2", "10.2+2.0.1"),
    ("libcdio19", "2.1.0"),
    ("libcfitsio10", "4.2.0"),
    ("libcharls2", "2.4.1"),
    ("libchromaprint1", "1.5.1"),
    ("libcjson1", "1.7.15"),
    ("libcodec2-1.0", "1.0.5"),
    ("libcom-err2", "1.47.0"),
    ("libcpuinfo0", "0.0~git20220617.082deff"),
    ("libcrypt1", "4.4.33"),
    ("libcurl3-gnutls", "7.88.1"),
    ("libcurl4", "7.88.1"),
    ("libdatrie1", "0.2.13"),
    ("libdav1d6", "1.0.0"),
    ("libdb5.3", "5.3.28+dfsg2"),
    ("libdbus-1-3", "1.14.10"),
    ("libdc1394-25", "2.2.6"),
    ("libde265-0", "1.0.11"),
    ("libdecor-0-0", "0.1.1"),
    ("libdeflate0", "1.14"),
    ("libdnnl2", "2.6.3"),
    ("libdouble-conversion3", "3.2.1"),
    ("libdrm-amdgpu1", "2.4.114"),
    ("libdrm-common", "2.4.114"),
    ("libdrm-intel1", "2.4.114"),
    ("libdrm-nouveau2", "2.4.114"),
    ("libdrm-radeon1", "2.4.114"),
    ("libdrm2", "2.4.114"),
    ("libdw1", "0.188"),
    ("libedit2", "3.1-20221030"),
    ("libegl-mesa0", "22.3.6"),
    ("libegl1", "1.6.0"),
    ("libelf1", "0.188"),
    ("libepoxy0", "1.5.10"),
    ("libevdev2", "1.13.0+dfsg"),
    ("libexif12", "0.6.24"),
    ("libexpat1-dev", "2.5.0"),
    ("libflac12", "1.4.2+ds"),
    ("libflite1", "2.2"),
    ("libfmt9", "9.1.0+ds1"),
    ("libfontconfig1", "2.14.1"),
    ("libfreetype6", "2.12.1+dfsg"),
    ("libfreexl1", "1.0.6"),
    ("libfribidi0", "1.0.8"),
    ("libfyba0", "4.1.1"),
    ("libgav1-1", "0.18.0"),
    ("libgbm1", "22.3.6"),
    ("libgcrypt20", "1.10.1"),
    ("libgd3", "2.3.3"),
    ("libgdal32", "3.6.2+dfsg"),
    ("libgdbm-compat4", "1.23"),
    ("libgdbm6", "1.23"),
    ("libgdcm3.0", "3.0.21"),
    ("libgdk-pixbuf-2.0-0", "2.42.10+dfsg"),
    ("libgdk-pixbuf2.0-common", "2.42.10+dfsg"),
    ("libgeos-c1v5", "3.11.1"),
    ("libgeos3.11.1", "3.11.1"),
    ("libgeotiff5", "1.7.1"),
    ("libgflags-dev", "2.2.2"),
    ("libgflags2.2", "2.2.2"),
    ("libgif7", "5.2.1"),
    ("libgl1", "1.6.0"),
    ("libgl1-mesa-dri", "22.3.6"),
    ("libglapi-mesa", "22.3.6"),
    ("libglib2.0-0", "2.74.6"),
    ("libgloo0", "0.0~git20220518.5b14351"),
    ("libglvnd0", "1.6.0"),
    ("libglx-mesa0", "22.3.6"),
    ("libglx0", "1.6.0"),
    ("libgme0", "0.6.3"),
    ("libgnutls30", "3.7.9"),
    ("libgoogle-glog-dev", "0.6.0"),
    ("libgoogle-glog0v6", "0.6.0"),
    ("libgpg-error0", "1.46"),
    ("libgphoto2-6", "2.5.30"),
    ("libgphoto2-port12", "2.5.30"),
    ("libgraphite2-3", "1.3.14"),
    ("libgsm1", "1.0.22"),
    ("libgssapi-krb5-2", "1.20.1"),
    ("libgstreamer-plugins-base1.0-0", "1.22.0"),
    ("libgstreamer1.0-0", "1.22.0"),
    ("libgudev-1.0-0", "237"),
    ("libharfbuzz0b", "6.0.0+dfsg"),
    ("libhdf4-0-alt", "4.2.15"),
    ("libhdf5-103-1", "1.10.8+repack1"),
    ("libhdf5-hl-100", "1.10.8+repack1"),
    ("libheif1", "1.15.1"),
    ("libhiredis0.14", "0.14.1"),
    ("libhogweed6", "3.8.1"),
    ("libhwloc15", "2.9.0"),
    ("libhwy1", "1.0.3"),
    ("libibverbs1", "44.0"),
    ("libice6", "1.0.10"),
    ("libicu72", "72.1"),
    ("libidn2-0", "2.3.3"),
    ("libiec61883-0", "1.2.0"),
    ("libimagequant0", "2.17.0"),
    ("libimath-3-1-29", "3.1.6"),
    ("libinput-bin", "1.22.1"),
    ("libinput10", "1.22.1"),
    ("libjack-jackd2-0", "1.9.21~dfsg"),
    ("libjbig0", "2.1"),
    ("libjpeg62-turbo", "2.1.5"),
    ("libjson-c5", "0.16"),
    ("libjxl0.7", "0.7.0"),
    ("libk5crypto3", "1.20.1"),
    ("libkeyutils1", "1.6.3"),
    ("libkmlbase1", "1.3.0"),
    ("libkmldom1", "1.3.0"),
    ("libkmlengine1", "1.3.0"),
    ("libkrb5-3", "1.20.1"),
    ("libkrb5support0", "1.20.1"),
    ("liblcms2-2", "2.14"),
    ("libldap-2.5-0", "2.5.13+dfsg"),
    ("liblept5", "1.82.0"),
    ("liblerc4", "4.0.0+ds"),
    ("libleveldb1d", "1.23"),
    ("liblilv-0-0", "0.24.14"),
    ("libllvm15", "15.0.6"),
    ("liblmdb0", "0.9.24"),
    ("libltdl7", "2.4.7"),
    ("liblz4-1", "1.9.4"),
    ("liblzma-dev", "5.4.1"),
    ("libmagic-mgc", "5.44"),
    ("libmagic1", "5.44"),
    ("libmariadb3", "10.11.18"),
    ("libmbedcrypto7", "2.28.3"),
    ("libmd0", "1.0.4"),
    ("libmd4c0", "0.4.8"),
    ("libmfx1", "22.5.4"),
    ("libminizip1", "1.1"),
    ("libmount1", "2.38.1"),
    ("libmp3lame0", "3.100"),
    ("libmpg123-0", "1.31.2"),
    ("libmtdev1", "1.1.6"),
    ("libmysofa1", "1.3.1~dfsg0"),
    ("libnetcdf19", "4.9.0"),
    ("libnettle8", "3.8.1"),
    ("libnghttp2-14", "1.52.0"),
    ("libnl-3-200", "3.7.0"),
    ("libnl-route-3-200", "3.7.0"),
    ("libnorm1", "1.5.9+dfsg"),
    ("libnsl2", "1.3.0"),
    ("libnspr4", "4.35"),
    ("libnss3", "3.87.1"),
    ("libnuma1", "2.0.16"),
    ("libodbc2", "2.3.11"),
    ("libodbcinst2", "2.3.11"),
    ("libogdi4.1", "4.1.0+ds"),
    ("libogg0", "1.3.5"),
    ("libonnx1", "1.12.0"),
    ("libopenal-data", "1.19.1"),
    ("libopenal1", "1.19.1"),
    ("libopencv-calib3d406", "4.6.0+dfsg"),
    ("libopencv-contrib406", "4.6.0+dfsg"),
    ("libopencv-core406", "4.6.0+dfsg"),
    ("libopencv-dnn406", "4.6.0+dfsg"),
    ("libopencv-features2d406", "4.6.0+dfsg"),
    ("libopencv-flann406", "4.6.0+dfsg"),
    ("libopencv-highgui406", "4.6.0+dfsg"),
    ("libopencv-imgcodecs406", "4.6.0+dfsg"),
    ("libopencv-imgproc406", "4.6.0+dfsg"),
    ("libopencv-ml406", "4.6.0+dfsg"),
    ("libopencv-objdetect406", "4.6.0+dfsg"),
    ("libopencv-video406", "4.6.0+dfsg"),
    ("libopencv-videoio406", "4.6.0+dfsg"),
    ("libopenexr-3-1-30", "3.1.5"),
    ("libopengl0", "1.6.0"),
    ("libopenjp2-7", "2.5.0"),
    ("libopenmpt0", "0.6.9"),
    ("libopus0", "1.3.1"),
    ("liborc-0.4-0", "0.4.33"),
    ("libp11-kit0", "0.24.1"),
    ("libpango-1.0-0", "1.50.12+ds"),
    ("libpangocairo-1.0-0", "1.50.12+ds"),
    ("libpangoft2-1.0-0", "1.50.12+ds"),
    ("libpciaccess0", "0.17"),
    ("libpcre2-16-0", "10.42"),
    ("libpcre2-8-0", "10.42"),
    ("libperl5.36", "5.36.0"),
    ("libpgm-5.3-0", "5.3.128~dfsg"),
    ("libpixman-1-0", "0.42.2"),
    ("libplacebo208", "4.208.0"),
    ("libpng16-16", "1.6.39"),
    ("libpocketsphinx3", "0.8+5prealpha+1"),
    ("libpoppler126", "22.12.0"),
    ("libpostproc56", "5.1.9"),
    ("libpq5", "15.18"),
    ("libproj25", "9.1.1"),
    ("libprotobuf-dev", "3.21.12"),
    ("libprotobuf-lite32", "3.21.12"),
    ("libprotobuf32", "3.21.12"),
    ("libpsl5", "0.21.2"),
    ("libpthreadpool0", "0.0~git20210507.1787867"),
    ("libpulse0", "16.1+dfsg1"),
    ("libqhull-r8.0", "2020.2"),
    ("libqt5core5a", "5.15.8+dfsg"),
    ("libqt5dbus5", "5.15.8+dfsg"),
    ("libqt5gui5", "5.15.8+dfsg"),
    ("libqt5network5", "5.15.8+dfsg"),
    ("libqt5opengl5", "5.15.8+dfsg"),
    ("libqt5test5", "5.15.8+dfsg"),
    ("libqt5widgets5", "5.15.8+dfsg"),
    ("librabbitmq4", "0.11.0"),
    ("libraqm0", "0.7.0"),
    ("librav1e0", "0.5.1"),
    ("libraw1394-11", "2.1.2"),
    ("librist4", "0.2.7+dfsg"),
    ("librsvg2-2", "2.54.7+dfsg"),
    ("librtmp1", "2.4+20151223.gitfa8646d.1"),
    ("librttopo1", "1.1.0"),
    ("librubberband2", "3.1.2+dfsg0"),
    ("libsamplerate0", "0.2.2"),
    ("libsasl2-2", "2.1.28+dfsg"),
    ("libsasl2-modules-db", "2.1.28+dfsg"),
    ("libsdl2-2.0-0", "2.26.5+dfsg"),
    ("libselinux1", "3.4"),
    ("libsensors-config", "3.6.0"),
    ("libsensors5", "3.6.0"),
    ("libserd-0-0", "0.30.16"),
    ("libshine3", "3.1.1"),
    ("libslang2", "2.3.3"),
    ("libsleef3", "3.5.1"),
    ("libsm6", "1.2.3"),
    ("libsnappy1v5", "1.1.9"),
    ("libsndfile1", "1.2.0"),
    ("libsndio7.0", "1.9.0"),
    ("libsocket++1", "1.12.13+git20131030.5d039ba"),
    ("libsodium23", "1.0.18"),
    ("libsord-0-0", "0.16.14+git221008"),
    ("libsox3", "14.4.2+git20190427"),
    ("libsoxr0", "0.1.3"),
    ("libspatialite7", "5.0.1"),
    ("libspeex1", "1.2.1"),
    ("libsphinxbase3", "0.8+5prealpha+1"),
    ("libsratom-0-0", "0.6.14"),
    ("libsrt1.5-gnutls", "1.5.1"),
    ("libssh-gcrypt-4", "0.10.6"),
    ("libssh2-1", "1.10.0"),
    ("libsuperlu5", "5.3.0+dfsg1"),
    ("libsvtav1enc1", "1.4.1+dfsg"),
    ("libswresample4", "5.1.9"),
    ("libswscale6", "5.1.9"),
    ("libsystemd0", "252.39"),
    ("libsz2", "1.0.6"),
    ("libtasn1-6", "4.19.0"),
    ("libtbb12", "2021.8.0"),
    ("libtbbbind-2-5", "2021.8.0"),
    ("libtbbmalloc2", "2021.8.0"),
    ("libtensorpipe0", "0.0~git20220513.bb1473a"),
    ("libtesseract5", "5.3.0"),
    ("libthai-data", "0.1.29"),
    ("libthai0", "0.1.29"),
    ("libtheora0", "1.1.1+dfsg.1"),
    ("libtiff6", "4.5.0"),
    ("libtirpc-common", "1.3.3+ds"),
    ("libtirpc3", "1.3.3+ds"),
    ("libtwolame0", "0.4.0"),
    ("libudev1", "252.39"),
    ("libudfread0", "1.1.2"),
    ("libunistring2", "1.0"),
    ("libunwind-dev", "1.6.2"),
    ("libunwind8", "1.6.2"),
    ("liburiparser1", "0.9.7+dfsg"),
    ("libusb-1.0-0", "1.0.26"),
    ("libuv1", "1.44.2"),
    ("libva-drm2", "2.17.0"),
    ("libva-x11-2", "2.17.0"),
    ("libva2", "2.17.0"),
    ("libvdpau1", "1.5"),
    ("libvidstab1.1", "1.1.0"),
    ("libvorbis0a", "1.3.7"),
    ("libvorbisenc2", "1.3.7"),
    ("libvorbisfile3", "1.3.7"),
    ("libvpx7", "1.12.0"),
    ("libvulkan1", "1.3.239.0"),
    ("libwacom-common", "2.6.0"),
    ("libwacom9", "2.6.0"),
    ("libwayland-client0", "1.21.0"),
    ("libwayland-cursor0", "1.21.0"),
    ("libwayland-egl1", "1.21.0"),
    ("libwayland-server0", "1.21.0"),
    ("libwebp7", "1.2.4"),
    ("libwebpdemux2", "1.2.4"),
    ("libwebpmux3", "1.2.4"),
    ("libx11-6", "1.8.4"),
    ("libx11-data", "1.8.4"),
    ("libx11-xcb1", "1.8.4"),
    ("libx264-164", "0.164.3095+gitbaee400"),
    ("libx265-199", "3.5"),
    ("libxau6", "1.0.9"),
    ("libxcb-dri2-0", "1.15"),
    ("libxcb-dri3-0", "1.15"),
    ("libxcb-glx0", "1.15"),
    ("libxcb-icccm4", "0.4.1"),
    ("libxcb-image0", "0.4.0"),
    ("libxcb-keysyms1", "0.4.0"),
    ("libxcb-present0", "1.15"),
    ("libxcb-randr0", "1.15"),
    ("libxcb-render-util0", "0.3.9"),
    ("libxcb-render0", "1.15"),
    ("libxcb-shape0", "1.15"),
    ("libxcb-shm0", "1.15"),
    ("libxcb-sync1", "1.15"),
    ("libxcb-util1", "0.4.0"),
    ("libxcb-xfixes0", "1.15"),
    ("libxcb-xinerama0", "1.15"),
    ("libxcb-xinput0", "1.15"),
    ("libxcb-xkb1", "1.15"),
    ("libxcb1", "1.15"),
    ("libxcursor1", "1.2.1"),
    ("libxdmcp6", "1.1.2"),
    ("libxerces-c3.2", "3.2.4+debian"),
    ("libxext6", "1.3.4"),
    ("libxfixes3", "6.0.0"),
    ("libxi6", "1.8"),
    ("libxkbcommon-x11-0", "1.5.0"),
    ("libxkbcommon0", "1.5.0"),
    ("libxml2", "2.9.14+dfsg"),
    ("libxslt1.1", "1.1.35"),
    ("libxnnpack0", "0.0~git20220216.ae108ef"),
    ("libxpm4", "3.5.12"),
    ("libxrandr2", "1.5.2"),
    ("libxrender1", "0.9.10"),
    ("libxshmfence1", "1.3"),
    ("libxss1", "1.2.3"),
    ("libxv1", "1.0.11"),
    ("libxvidcore4", "1.3.7"),
    ("libxxf86vm1", "1.1.4"),
    ("libyuv0", "0.0~git20230123.b2528b0"),
    ("libz3-4", "4.8.12"),
    ("libzimg2", "3.0.4+ds1"),
    ("libzmq5", "4.3.4"),
    ("libzvbi-common", "0.2.41"),
    ("libzvbi0", "0.2.41"),
    ("mailcap", "3.70+nmu1"),
    ("mariadb-common", "10.11.18"),
    ("mime-support", "3.66"),
    ("mysql-common", "5.8+1.1.0"),
    ("ocl-icd-libopencl1", "2.3.1"),
    ("perl", "5.36.0"),
    ("perl-modules-5.36", "5.36.0"),
    ("proj-data", "9.1.1"),
    ("readline-common", "8.2"),
    ("shared-mime-info", "2.2"),
    ("unixodbc-common", "2.3.11"),
    ("x11-common", "7.7+23"),
    ("xkb-data", "2.35.1"),
    ("zlib1g-dev", "1.2.13.dfsg"),
]

TORCH_PY_DEBS = [
    ("python3.11", "3.11.2"), ("python3.11-minimal", "3.11.2"), ("libpython3.11", "3.11.2"),
    ("libpython3.11-minimal", "3.11.2"), ("libpython3.11-stdlib", "3.11.2"),
    ("libpython3.11-dev", "3.11.2"), ("python3-distutils", "3.11.2"),
    ("python3-lib2to3", "3.11.2"),
    ("libssl3", "3.0"), ("libffi8", "3.4.4"), ("libsqlite3-0", "3.40.1"),
    ("libexpat1", "2.5.0"), ("libbz2-1.0", "1.0.8"), ("liblzma5", "5.4.1"), ("libtinfo6", "6.4"),
    ("libncursesw6", "6.4"), ("libreadline8", "8.2"), ("libuuid1", "2.38.1"),
    ("python3-numpy", "1.24.2"), ("libblas3", "3.11.0"), ("liblapack3", "3.11.0"),
    ("python3-pybind11", "2.10.3"), ("pybind11-dev", "2.10.3"), ("ninja-build", "1.11.1"),
    ("python3-pip", "23.0.1"), ("python3-setuptools", "66.1.1"),
    ("python3-pkg-resources", "66.1.1"), ("python3-wheel", "0.38.4"),
    ("python3-typing-extensions", "4.4.0"), ("python3-torch", "1.13.1"),
    ("libtorch1.13", "1.13.1"), ("libtorch-dev", "1.13.1"), ("python3-torchvision", "0.14.1"),
    ("python3-torchaudio", "0.13.1"), ("python3-pil", "9.4.0"), ("python3-requests", "2.28.1"),
    ("python3-urllib3", "1.26.12"), ("python3-idna", "3.3"), ("python3-certifi", "2022.9.24"),
    ("python3-chardet", "5.1.0"), ("python3-charset-normalizer", "3.0.1"),
    ("python3-six", "1.16.0"),
]
TORCH_DEBS = [(d, "bookworm", v) for d, v in TORCH_PY_DEBS + TORCH_NATIVE]

# Debian packages that the toolchain channel holds as conda packages (and the torch set
# does not build again), for the depends computed from Debian's: libc6 is __glibc.
DEB_ELSEWHERE = {
    "libgcc-s1": "libgcc-ng", "libatomic1": "libgcc-ng", "libstdc++6": "libstdcxx-ng",
    "libgomp1": "libgomp", "libgfortran5": "libgfortran5", "libquadmath0": "libgfortran5",
    "zlib1g": "zlib", "libzstd1": "zstd", "libgmp10": "gmp", "libjansson4": "jansson",
    "libc6": None, "libc6-dev": None, "gcc-12-base": None, "python3": "python",
    "python3-minimal": "python", "python3-dev": "python", "python3.11-dev": "python",
    "libpython3-dev": "python", "debconf": None, "dpkg": None, "perl-base": None,
    "tzdata": None, "init-system-helpers": None, "ca-certificates": None, "adduser": None,
    "lsb-base": None, "libtorch-test": None, "media-types": None, "sensible-utils": None,
    "python3-numpy-abi9": "numpy",
}

PY311_DEP = ["python >=3.11,<3.12.0a0", "python_abi 3.11.* *_cp311"]
GLIBC_BOOKWORM_PY = GLIBC_BOOKWORM

SYSCONFIG_311 = "lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py"
SYSCONFIG_311B = "lib/python3.11/_sysconfigdata__linux_x86_64-linux-gnu.py"
PYCONFIG_DIR_311 = "lib/python3.11/config-3.11-x86_64-linux-gnu"
PY_FIXES_311 = [(a.replace("python3.9", "python3.11"), b.replace("python3.9", "python3.11"))
                for a, b in PY_FIXES]

SITE_PY_OLD_311 = """            if is_virtual_environment:
                sitepackages.append(os.path.join(prefix, "lib",
                                                 "python%d.%d" % sys.version_info[:2],
                                                 "site-packages"))
            sitepackages.append(os.path.join(prefix, "local/lib",
                                             "python%d.%d" % sys.version_info[:2],
                                             "dist-packages"))
            sitepackages.append(os.path.join(prefix, "lib",
                                             "python3",
                                             "dist-packages"))
            # this one is deprecated for Debian
            for libdir in libdirs:
                path = os.path.join(prefix, libdir,
                                    "python%d.%d" % sys.version_info[:2],
                                    "dist-packages")
                sitepackages.append(path)
"""
# Debian's sysconfig installs into /usr/local/lib/python3.11/dist-packages ('posix_local')
# unless told it builds a Debian package; a conda prefix uses 'posix_prefix'.
SYSCONFIG_PY_OLD_311 = """        deb_build = os.environ.get('DEB_PYTHON_INSTALL_LAYOUT', 'posix_local')
        if deb_build in ('deb', 'deb_system'):
            prefix_scheme = 'deb_system'
        else:
            prefix_scheme = 'posix_local'
"""
SYSCONFIG_PY_NEW_311 = """        # conda layout (repackaged by menv's toolchain channel)
        prefix_scheme = 'posix_prefix'
"""
# Python 3.11 runs a frozen copy of Debian's site.py (built into the interpreter), which
# looks in dist-packages only: sitecustomize adds the prefix's site-packages (the patched
# site.py is what `-X frozen_modules=off` runs).
SITECUSTOMIZE_311 = """# sitecustomize of menv's toolchain channel: the conda prefix's site-packages on sys.path
import os
import site
import sys

site.addsitedir(os.path.join(sys.prefix, "lib", "python%d.%d" % sys.version_info[:2],
                             "site-packages"))
"""


def conda_version(debian):
    """A Debian upstream version as a version conda's VersionOrder accepts (conda refuses to
    load a repodata.json holding one it does not, and `menv index` refuses to write it): the
    Debian epoch's ':', '~' and '-' become '_' (as before: the versions this gave stay as
    they were), any other character conda does not allow becomes '_', and every '+' after the
    first becomes '.' (conda allows one local-version separator: Debian's pocketsphinx
    `0.8+5prealpha+1` becomes `0.8+5prealpha.1`). Empty components are not made here: the
    torch set has none, and `menv index` names any."""
    v = re.sub(r"[~:-]", "_", debian)
    v = re.sub(r"[^0-9A-Za-z.+!_*]", "_", v)
    head, plus, local = v.partition("+")
    return head + plus + local.replace("+", ".")


def T(name, version, debs, depends=(), **kw):
    """A package of the torch set: Python 3.11 paths, depends also computed from Debian's."""
    kw.setdefault("drop", NO_PYC)
    return P(name, version, debs, depends=list(depends), py="3.11", auto_depends=True, **kw)


def TPYN(name, version, debs, depends=(), **kw):
    kw.setdefault("take", SITE)
    return T(name, version, debs, depends, noarch="python", **kw)


def TPYA(name, version, debs, depends=(), take=(), **kw):
    kw.setdefault("build_prefix", "py311h")
    return T(name, version, debs, PY311_DEP + list(depends), take=SITE + list(take), **kw)


LIBDIRS = ["usr/lib/x86_64-linux-gnu/%s*", "lib/x86_64-linux-gnu/%s*"]


def _lib(name, version, debs, patterns, depends=(), **kw):
    take = [d % p for p in patterns for d in LIBDIRS]
    return T(name, version, debs, depends, take=take, **kw)


TORCH_PACKAGES = [
    _lib("openssl", "3.0.20", ["libssl3"], ["libssl.so.3", "libcrypto.so.3", "engines-3/",
                                            "ossl-modules/"],
         depends=[GLIBC_BOOKWORM], license="Apache-2.0", summary="OpenSSL 3.0 libraries"),
    _lib("libffi", "3.4.4", ["libffi8"], ["libffi.so.8"], license="MIT",
         summary="A portable foreign-function interface library"),
    _lib("sqlite", "3.40.1", ["libsqlite3-0"], ["libsqlite3.so"], license="Unlicense",
         summary="Implements a self-contained, zero-configuration, SQL database engine"),
    _lib("expat", "2.5.0", ["libexpat1"], ["libexpat"], license="MIT",
         summary="Expat XML parser library in C"),
    _lib("bzip2", "1.0.8", ["libbz2-1.0"], ["libbz2.so"], license="bzip2-1.0.6",
         summary="high-quality data compressor"),
    _lib("xz", "5.4.1", ["liblzma5"], ["liblzma.so"], license="0BSD AND LGPL-2.1-or-later",
         summary="Data compression library (liblzma)"),
    _lib("ncurses", "6.4", ["libtinfo6", "libncursesw6"], ["libtinfo.so", "libncursesw.so",
                                                           "libtic.so"],
         license="X11 AND BSD-3-Clause", summary="Library for text-based user interfaces"),
    _lib("readline", "8.2", ["libreadline8"], ["libreadline.so", "libhistory.so"],
         license="GPL-3.0-only", summary="library for editing command lines as they are typed in"),
    _lib("libuuid", "2.38.1", ["libuuid1"], ["libuuid.so"], license="BSD-3-Clause",
         summary="Portable uuid C library"),
    T("python", "3.11.2",
      ["python3.11", "python3.11-minimal", "libpython3.11", "libpython3.11-minimal",
       "libpython3.11-stdlib", "libpython3.11-dev", "python3-distutils", "python3-lib2to3"],
      take=["usr/bin/*", "usr/lib/python3.11/*", "usr/lib/x86_64-linux-gnu/libpython3.11*",
            "usr/include/python3.11/*", "usr/include/x86_64-linux-gnu/python3.11/*"],
      drop=["usr/include/python3.11/pyconfig.h", "usr/lib/python3.11/sitecustomize.py",
            "usr/lib/python3.11/EXTERNALLY-MANAGED",
            "usr/lib/x86_64-linux-gnu/libpython3.11*.a",
            "usr/lib/python3.11/config-3.11-x86_64-linux-gnu/*.a",
            "usr/lib/python3.11/lib-dynload/_dbm.*", "usr/lib/python3.11/lib-dynload/nis.*",
            "usr/lib/python3.11/lib-dynload/_gdbm.*",
            "usr/bin/x86_64-linux-gnu-python3.11-config", "usr/bin/python3.11-config",
            "usr/lib/x86_64-linux-gnu/pkgconfig/*", "*/__pycache__/*"],
      extra=_links([("bin/python3", "python3.11"), ("bin/python", "python3.11"),
                    ("bin/pydoc3", "pydoc3.11"), ("bin/pydoc", "pydoc3.11")])
      + [("patch", "lib/python3.11/site.py", SITE_PY_OLD_311, SITE_PY_NEW),
         ("patch", "lib/python3.11/sysconfig.py", SYSCONFIG_PY_OLD_311, SYSCONFIG_PY_NEW_311),
         ("file", "lib/python3.11/sitecustomize.py", SITECUSTOMIZE_311, 0o644)],
      text_fixes={SYSCONFIG_311: PY_FIXES_311, SYSCONFIG_311B: PY_FIXES_311,
                  PYCONFIG_DIR_311 + "/Makefile": PY_FIXES_311,
                  PYCONFIG_DIR_311 + "/python-config.py": PY_FIXES_311},
      depends=[GLIBC_BOOKWORM], constrains=["python_abi 3.11.* *_cp311"],
      build_suffix="_cpython", license="Python-2.0",
      summary="General purpose programming language (Debian's CPython 3.11.2)"),
    P("python_abi", "3.11", [], build="3_cp311", constrains=["python 3.11.* *_cpython"],
      license="BSD-3-Clause", summary="Metapackage to select python implementation"),
    T("libblas", "3.11.0", ["libblas3"], take=["usr/lib/x86_64-linux-gnu/blas/libblas.so*"],
      build_suffix="_netlib", license="BSD-3-Clause", summary="Reference BLAS (netlib)"),
    T("liblapack", "3.11.0", ["liblapack3"],
      take=["usr/lib/x86_64-linux-gnu/lapack/liblapack.so*"], depends=["libblas 3.11.0.*"],
      build_suffix="_netlib", license="BSD-3-Clause", summary="Reference LAPACK (netlib)"),
    TPYA("numpy", "1.24.2", ["python3-numpy"], take=["usr/bin/f2py*"],
         license="BSD-3-Clause", summary="Array processing for numbers, strings, records, and objects"),
    TPYA("pybind11", "2.10.3", ["python3-pybind11", "pybind11-dev"],
         take=["usr/include/pybind11/*", "usr/lib/cmake/*", "usr/share/cmake/*",
               "usr/bin/pybind11-config"],
         license="BSD-3-Clause", summary="Seamless operability between C++11 and Python"),
    T("ninja", "1.11.1", ["ninja-build"], take=["usr/bin/ninja"], license="Apache-2.0",
      summary="A small build system with a focus on speed"),
    TPYN("pip", "23.0.1", ["python3-pip"], depends=["python >=3.7"],
         entry_points=["pip = pip._internal.cli.main:main", "pip3 = pip._internal.cli.main:main"],
         license="MIT", summary="PyPA recommended tool for installing Python packages"),
    TPYN("setuptools", "66.1.1", ["python3-setuptools", "python3-pkg-resources"],
         depends=["python >=3.7"], license="MIT",
         summary="Download, build, install, upgrade, and uninstall Python packages"),
    TPYN("wheel", "0.38.4", ["python3-wheel"], depends=["python >=3.7"],
         entry_points=["wheel = wheel.cli:main"], license="MIT",
         summary="A built-package format for Python"),
    TPYN("typing_extensions", "4.4.0", ["python3-typing-extensions"], depends=["python >=3.7"],
         license="PSF-2.0", summary="Backported and Experimental Type Hints for Python"),
    TPYN("six", "1.16.0", ["python3-six"], license="MIT",
         summary="Python 2 and 3 compatibility utilities"),
    TPYN("requests", "2.28.1", ["python3-requests"], license="Apache-2.0",
         summary="Python HTTP for Humans"),
    TPYN("urllib3", "1.26.12", ["python3-urllib3"], license="MIT",
         summary="HTTP library with thread-safe connection pooling, file post, and more"),
    TPYN("idna", "3.3", ["python3-idna"], license="BSD-3-Clause",
         summary="Internationalized Domain Names in Applications (IDNA)"),
    TPYN("certifi", "2022.9.24", ["python3-certifi"], license="ISC",
         summary="Python package for providing Mozilla's CA Bundle (Debian's: the system's)"),
    TPYN("chardet", "5.1.0", ["python3-chardet"], license="LGPL-2.1-only",
         entry_points=["chardetect = chardet.cli.chardetect:main"],
         summary="Universal character encoding detector"),
    TPYN("charset-normalizer", "3.0.1", ["python3-charset-normalizer"], license="MIT",
         summary="The Real First Universal Charset Detector"),
    TPYA("pillow", "9.4.0", ["python3-pil"], license="HPND",
         summary="Python Imaging Library (Fork)"),
    # conda-forge's pytorch 1.13 is one package: the Python module and libtorch
    TPYA("pytorch", "1.13.1", ["python3-torch", "libtorch1.13", "libtorch-dev"],
         take=["usr/lib/x86_64-linux-gnu/lib*", "usr/include/*", "usr/share/cmake/*",
               "usr/lib/x86_64-linux-gnu/cmake/*"],
         drop=NO_PYC + ["usr/lib/python3/dist-packages/torch/bin/*Test",
                        "usr/lib/python3/dist-packages/torch/bin/test_*"],
         # torch/include links to Debian's /usr/include/{ATen,c10,torch,...}; what those
         # headers include from beside them (glog, gflags, pybind11) is linked there too, as
         # cpp_extension passes only torch/include and the prefix's include/ is no default
         extra=_links([("lib/python3.11/site-packages/torch/include/" + d,
                        "../../../../../include/" + d) for d in ("glog", "gflags", "pybind11")]),
         # torch/lib/*.so are Debian's links to lib/: loaded through them, $ORIGIN would be
         # torch/lib and libgomp & co. would come from the machine; load the real file
         text_fixes={"lib/python3.11/site-packages/torch/__init__.py": [
             ("    lib_path = os.path.join(os.path.dirname(here), 'lib', lib_name)\n",
              "    lib_path = os.path.realpath(os.path.join(os.path.dirname(here), 'lib', "
              "lib_name))\n")]},
         build_prefix="cpu_py311h", depends=["numpy >=1.21", "typing_extensions", "pybind11"],
         license="BSD-3-Clause",
         summary="PyTorch 1.13.1 (Debian's CPU build): tensors and dynamic neural networks"),
    TPYA("torchvision", "0.14.1", ["python3-torchvision"], depends=["pytorch 1.13.1.*"],
         build_prefix="cpu_py311h", license="BSD-3-Clause",
         summary="Image and video datasets and models for torch deep learning"),
    TPYA("torchaudio", "0.13.1", ["python3-torchaudio"], depends=["pytorch 1.13.1.*"],
         build_prefix="cpu_py311h", license="BSD-2-Clause",
         summary="Audio and signal processing with PyTorch"),
] + [T(name.replace("+", "x"), conda_version(version), [name], take=["*"],
       license="see the Debian package", generic=True,
       summary="Debian's %s %s (a run-time dependency of PyTorch)" % (name, version))
     for name, version in TORCH_NATIVE]

# ---- Jupyter for Python 3.11 (bookworm), named and split as conda-forge's; depends from
# Debian's (what is not packaged, gdb for pydevd's attach-to-process, is left out)
TORCH_JUPYTER_DEBS = [
    ("python3-notebook", "6.4.12"), ("python3-jupyter-core", "4.12.0"),
    ("python3-jupyter-client", "7.4.9"), ("python3-ipykernel", "6.17.0"),
    ("python3-ipython", "8.5.0"), ("python3-ipython-genutils", "0.2.0"),
    ("python3-nbconvert", "6.5.3"), ("python3-nbformat", "5.5.0"), ("python3-nbclient", "0.7.2"),
    ("python3-traitlets", "5.5.0"), ("python3-tornado", "6.2.0"), ("python3-zmq", "24.0.1"),
    ("python3-jupyter-console", "6.4.4"), ("python3-ipywidgets", "6.0.0"),
    ("python3-widgetsnbextension", "6.0.0"), ("jupyter-nbextension-jupyter-js-widgets", "6.0.0"),
    ("python3-argon2", "21.1.0"), ("libargon2-1", "0~20171227"),
    ("python3-cffi-backend", "1.15.1"), ("python3-asttokens", "2.2.1"), ("python3-attr", "22.2.0"),
    ("python3-backcall", "0.2.0"), ("python3-bleach", "5.0.1"), ("python3-bs4", "4.11.2"),
    ("python3-bytecode", "0.14.0"), ("python3-coverage", "6.5.0"), ("python3-dateutil", "2.8.2"),
    ("python3-debugpy", "1.6.6"), ("python3-pydevd", "2.9.5"), ("python3-decorator", "5.1.1"),
    ("python3-defusedxml", "0.7.1"), ("python3-entrypoints", "0.4"),
    ("python3-executing", "1.2.0"), ("python3-fastjsonschema", "2.16.3"),
    ("python3-html5lib", "1.1"), ("python3-importlib-metadata", "4.12.0"),
    ("python3-importlib-resources", "5.1.2"), ("python3-jedi", "0.18.2"),
    ("python3-jinja2", "3.1.2"), ("python3-jsonschema", "4.10.3"),
    ("python3-jupyterlab-pygments", "0.2.2"), ("python3-lxml", "4.9.2"),
    ("python3-markupsafe", "2.1.2"), ("python3-matplotlib-inline", "0.1.6"),
    ("python3-more-itertools", "8.10.0"), ("python3-nest-asyncio", "1.5.4"),
    ("python3-packaging", "23.0"), ("python3-pandocfilters", "1.5.0"), ("python3-parso", "0.8.3"),
    ("python3-pexpect", "4.8.0"), ("python3-pickleshare", "0.7.5"),
    ("python3-prometheus-client", "0.16.0"), ("python3-prompt-toolkit", "3.0.36"),
    ("python3-psutil", "5.9.4"), ("python3-ptyprocess", "0.7.0"), ("python3-pure-eval", "0.2.2"),
    ("python3-py", "1.11.0"), ("python3-pygments", "2.14.0"), ("python3-pyrsistent", "0.18.1"),
    ("python3-send2trash", "1.8.1"), ("python3-soupsieve", "2.3.2"),
    ("python3-stack-data", "0.6.2"), ("python3-terminado", "0.17.0"),
    ("python3-tinycss2", "1.2.1"), ("python-tinycss2-common", "1.2.1"),
    ("python3-wcwidth", "0.2.5"), ("python3-webencodings", "0.5.1"), ("python3-zipp", "1.0.0"),
    # the notebook's JavaScript and fonts (Debian links them into notebook/static)
    ("libjs-mathjax", "2.7.9"), ("fonts-mathjax", "2.7.9"), ("libjs-codemirror", "5.65.0"),
    ("fonts-font-awesome", "5.0.10"), ("libjs-jquery", "3.6.1"), ("libjs-jquery-ui", "1.13.2"),
    ("libjs-requirejs", "2.3.6"), ("libjs-requirejs-text", "2.0.12"), ("libjs-backbone", "1.4.1"),
    ("libjs-bootstrap", "3.4.1"), ("fonts-glyphicons-halflings", "1.009"),
    ("libjs-moment", "2.29.4"), ("libjs-text-encoding", "0.7.0"), ("libjs-underscore", "1.13.4"),
    ("libjs-jquery-typeahead", "2.11.0"), ("libjs-marked", "4.2.3"),
    ("libjs-bootstrap-tour", "0.12.0"), ("libjs-es6-promise", "4.2.8"), ("node-jed", "1.1.1"),
    ("libjs-jed", "1.1.1"), ("libjs-xterm", "3.8.1"),
]
TORCH_DEBS += [(d, "bookworm", v) for d, v in TORCH_JUPYTER_DEBS]
# python3-zmq depends on the virtual API packages that python3-cffi-backend provides
DEB_ELSEWHERE.update({"python3-cffi-backend-api-min": "cffi",
                      "python3-cffi-backend-api-max": "cffi"})

KERNEL_JSON_311 = """{
 "argv": [
  "python",
  "-m",
  "ipykernel_launcher",
  "-f",
  "{connection_file}"
 ],
 "display_name": "Python 3 (ipykernel)",
 "language": "python",
 "metadata": {
  "debugger": true
 }
}
"""

TORCH_JUPYTER_PACKAGES = [
    P("jupyter", "1.0.0", [], noarch="python", py="3.11",
      depends=["ipykernel", "ipywidgets", "jupyter_console", "nbconvert", "notebook",
               "python >=3.7"],
      license="BSD-3-Clause",
      summary="Jupyter metapackage: notebook, console, nbconvert, ipykernel, ipywidgets "
              "(qtconsole left out: it needs Qt)"),
    TPYN("notebook", "6.4.12", ["python3-notebook"] + NOTEBOOK_JS,
         take=SITE + ["usr/share/javascript/*", "usr/share/nodejs/*", "usr/share/fonts/*",
                      "usr/share/fonts-font-awesome/*", "usr/share/fonts-glyphicons/*"],
         vendor=["share/javascript", "share/nodejs", "share/fonts", "share/fonts-font-awesome",
                 "share/fonts-glyphicons"],
         entry_points=["jupyter-notebook = notebook.notebookapp:main",
                       "jupyter-nbextension = notebook.nbextensions:main",
                       "jupyter-serverextension = notebook.serverextensions:main",
                       "jupyter-bundlerextension = notebook.bundler.bundlerextensions:main"],
         license="BSD-3-Clause", summary="Jupyter Notebook: the web-based notebook server"),
    TPYN("jupyter_core", "4.12.0", ["python3-jupyter-core"],
         entry_points=["jupyter = jupyter_core.command:main",
                       "jupyter-migrate = jupyter_core.migrate:main",
                       "jupyter-troubleshoot = jupyter_core.troubleshoot:main"],
         license="BSD-3-Clause", summary="Core common functionality of Jupyter projects"),
    TPYN("jupyter_client", "7.4.9", ["python3-jupyter-client"],
         entry_points=["jupyter-kernelspec = jupyter_client.kernelspecapp:KernelSpecApp.launch_instance",
                       "jupyter-run = jupyter_client.runapp:RunApp.launch_instance",
                       "jupyter-kernel = jupyter_client.kernelapp:main"],
         license="BSD-3-Clause", summary="Jupyter protocol implementation and client libraries"),
    TPYN("ipykernel", "6.17.0", ["python3-ipykernel"],
         extra=[("file", "share/jupyter/kernels/python3/kernel.json", KERNEL_JSON_311, 0o644)],
         license="BSD-3-Clause", summary="IPython Kernel for Jupyter"),
    TPYN("ipython", "8.5.0", ["python3-ipython"],
         entry_points=["ipython = IPython:start_ipython", "ipython3 = IPython:start_ipython"],
         license="BSD-3-Clause", summary="IPython: Productive Interactive Computing"),
    TPYN("ipython_genutils", "0.2.0", ["python3-ipython-genutils"], license="BSD-3-Clause",
         summary="Vestigial utilities from IPython"),
    TPYN("nbconvert", "6.5.3", ["python3-nbconvert"],
         entry_points=["jupyter-nbconvert = nbconvert.nbconvertapp:main",
                       "jupyter-dejavu = nbconvert.nbconvertapp:dejavu_main"],
         license="BSD-3-Clause", summary="Converting Jupyter Notebooks"),
    TPYN("nbformat", "5.5.0", ["python3-nbformat"],
         entry_points=["jupyter-trust = nbformat.sign:TrustNotebookApp.launch_instance"],
         license="BSD-3-Clause", summary="The Jupyter Notebook format"),
    TPYN("nbclient", "0.7.2", ["python3-nbclient"],
         entry_points=["jupyter-execute = nbclient.cli:main"], license="BSD-3-Clause",
         summary="A client library for executing notebooks"),
    TPYN("traitlets", "5.5.0", ["python3-traitlets"], license="BSD-3-Clause",
         summary="Configuration system for Python applications"),
    TPYN("jupyter_console", "6.4.4", ["python3-jupyter-console"],
         entry_points=["jupyter-console = jupyter_console.app:main"], license="BSD-3-Clause",
         summary="Jupyter terminal console"),
    TPYN("ipywidgets", "6.0.0", ["python3-ipywidgets"], license="BSD-3-Clause",
         summary="Jupyter Interactive Notebook widgets"),
    TPYN("widgetsnbextension", "2.0.0", ["python3-widgetsnbextension",
                                         "jupyter-nbextension-jupyter-js-widgets"],
         take=SITE + ["usr/share/jupyter/*"],
         extra=[("file", "etc/jupyter/nbconfig/notebook.d/widgetsnbextension.json",
                 WIDGETS_NBCONFIG, 0o644)],
         license="BSD-3-Clause",
         summary="Interactive HTML widgets for Jupyter notebooks (the notebook extension)"),
    TPYA("tornado", "6.2", ["python3-tornado"], license="Apache-2.0",
         summary="A Python web framework and asynchronous networking library"),
    TPYA("pyzmq", "24.0.1", ["python3-zmq"], license="BSD-3-Clause AND LGPL-3.0-or-later",
         summary="Python bindings for zeromq (with Debian's libzmq5)"),
    TPYA("argon2-cffi", "21.1.0", ["python3-argon2", "libargon2-1"],
         take=["usr/lib/x86_64-linux-gnu/libargon2.so*"], license="MIT",
         summary="The secure Argon2 password hashing algorithm (with libargon2)"),
    TPYA("cffi", "1.15.1", ["python3-cffi-backend"], license="MIT",
         summary="Foreign Function Interface for Python calling C code (the backend)"),
    TPYA("debugpy", "1.6.6", ["python3-debugpy", "python3-pydevd"], license="MIT",
         summary="An implementation of the Debug Adapter Protocol for Python (with pydevd "
                 "2.9.5)"),
    TPYA("coverage", "6.5.0", ["python3-coverage"], take=["usr/share/python3-coverage/*"],
         license="Apache-2.0",
         entry_points=["coverage = coverage.cmdline:main"],
         summary="Code coverage measurement for Python"),
    TPYA("lxml", "4.9.2", ["python3-lxml"], license="BSD-3-Clause",
         summary="Pythonic binding for the C libraries libxml2 and libxslt"),
    TPYA("markupsafe", "2.1.2", ["python3-markupsafe"], license="BSD-3-Clause",
         summary="Safely add untrusted strings to HTML/XML markup"),
    TPYA("psutil", "5.9.4", ["python3-psutil"], license="BSD-3-Clause",
         summary="A cross-platform process and system utilities module for Python"),
    TPYA("pyrsistent", "0.18.1", ["python3-pyrsistent"], license="MIT",
         summary="Persistent/Functional/Immutable data structures"),
] + [TPYN(name, version, debs, license=lic, summary=summary, entry_points=eps)
     for name, version, debs, lic, summary, eps in [
         ("asttokens", "2.2.1", ["python3-asttokens"], "Apache-2.0",
          "Annotate Python AST trees with source text and token information", []),
         ("attrs", "22.2.0", ["python3-attr"], "MIT", "Classes without boilerplate", []),
         ("backcall", "0.2.0", ["python3-backcall"], "BSD-3-Clause",
          "Specifications for callback functions passed in to an API", []),
         ("bleach", "5.0.1", ["python3-bleach"], "Apache-2.0",
          "Easy, whitelist-based HTML-sanitizing tool", []),
         ("beautifulsoup4", "4.11.2", ["python3-bs4"], "MIT",
          "Python library designed for screen-scraping", []),
         ("bytecode", "0.14.0", ["python3-bytecode"], "MIT",
          "Python module to generate and modify bytecode", []),
         ("python-dateutil", "2.8.2", ["python3-dateutil"], "Apache-2.0",
          "Extensions to the standard Python datetime module", []),
         ("decorator", "5.1.1", ["python3-decorator"], "BSD-2-Clause",
          "Better living through Python with decorators", []),
         ("defusedxml", "0.7.1", ["python3-defusedxml"], "PSF-2.0",
          "XML bomb protection for Python stdlib modules", []),
         ("entrypoints", "0.4", ["python3-entrypoints"], "MIT",
          "Discover and load entry points from installed packages", []),
         ("executing", "1.2.0", ["python3-executing"], "MIT",
          "Get the currently executing AST node of a frame", []),
         ("python-fastjsonschema", "2.16.3", ["python3-fastjsonschema"], "BSD-3-Clause",
          "Fastest Python implementation of JSON schema", []),
         ("html5lib", "1.1", ["python3-html5lib"], "MIT",
          "HTML parser based on the WHATWG HTML specification", []),
         ("importlib-metadata", "4.12.0", ["python3-importlib-metadata"], "Apache-2.0",
          "A library to access the metadata for a Python package", []),
         ("importlib_resources", "5.1.2", ["python3-importlib-resources"], "Apache-2.0",
          "Read resources from Python packages", []),
         ("jedi", "0.18.2", ["python3-jedi"], "MIT", "An autocompletion tool for Python", []),
         ("jinja2", "3.1.2", ["python3-jinja2"], "BSD-3-Clause",
          "A very fast and expressive template engine", []),
         ("jsonschema", "4.10.3", ["python3-jsonschema"], "MIT",
          "An implementation of JSON Schema validation for Python",
          ["jsonschema = jsonschema.cli:main"]),
         ("jupyterlab_pygments", "0.2.2", ["python3-jupyterlab-pygments"], "BSD-3-Clause",
          "Pygments theme using JupyterLab CSS variables", []),
         ("matplotlib-inline", "0.1.6", ["python3-matplotlib-inline"], "BSD-3-Clause",
          "Inline Matplotlib backend for Jupyter", []),
         ("more-itertools", "8.10.0", ["python3-more-itertools"], "MIT",
          "More routines for operating on iterables, beyond itertools", []),
         ("nest-asyncio", "1.5.4", ["python3-nest-asyncio"], "BSD-2-Clause",
          "Patch asyncio to allow nested event loops", []),
         ("packaging", "23.0", ["python3-packaging"], "Apache-2.0",
          "Core utilities for Python packages", []),
         ("pandocfilters", "1.5.0", ["python3-pandocfilters"], "BSD-3-Clause",
          "A python module for writing pandoc filters", []),
         ("parso", "0.8.3", ["python3-parso"], "MIT", "A Python Parser", []),
         ("pexpect", "4.8.0", ["python3-pexpect"], "ISC",
          "Pexpect makes Python a better tool for controlling other applications", []),
         ("pickleshare", "0.7.5", ["python3-pickleshare"], "MIT",
          "Tiny 'shelve'-like database with concurrency support", []),
         ("prometheus_client", "0.16.0", ["python3-prometheus-client"], "Apache-2.0",
          "Python client for the Prometheus monitoring system", []),
         ("prompt-toolkit", "3.0.36", ["python3-prompt-toolkit"], "BSD-3-Clause",
          "Library for building powerful interactive command lines in Python", []),
         ("ptyprocess", "0.7.0", ["python3-ptyprocess"], "ISC",
          "Run a subprocess in a pseudo terminal", []),
         ("pure_eval", "0.2.2", ["python3-pure-eval"], "MIT",
          "Safely evaluate AST nodes without side effects", []),
         ("py", "1.11.0", ["python3-py"], "MIT",
          "Library with cross-python path, ini-parsing, io, code, log facilities", []),
         ("pygments", "2.14.0", ["python3-pygments"], "BSD-2-Clause",
          "Pygments is a generic syntax highlighter", ["pygmentize = pygments.cmdline:main"]),
         ("send2trash", "1.8.1b0", ["python3-send2trash"], "BSD-3-Clause",
          "Send file to trash natively under Mac OS X, Windows and Linux", []),
         ("soupsieve", "2.3.2", ["python3-soupsieve"], "MIT",
          "A modern CSS selector implementation for BeautifulSoup", []),
         ("stack_data", "0.6.2", ["python3-stack-data"], "MIT",
          "Extract data from python stack frames and tracebacks for informative displays", []),
         ("terminado", "0.17.0", ["python3-terminado"], "BSD-2-Clause",
          "Terminals served by tornado websockets", []),
         ("tinycss2", "1.2.1", ["python3-tinycss2", "python-tinycss2-common"], "BSD-3-Clause",
          "Low-level CSS parser for Python", []),
         ("wcwidth", "0.2.5", ["python3-wcwidth"], "MIT",
          "Measures number of Terminal column cells of wide-character codes", []),
         ("webencodings", "0.5.1", ["python3-webencodings"], "BSD-3-Clause",
          "Character encoding aliases for legacy web content", []),
         ("zipp", "1.0.0", ["python3-zipp"], "MIT",
          "A pathlib-compatible Zipfile object wrapper", []),
     ]]
TORCH_PACKAGES += TORCH_JUPYTER_PACKAGES

# ---- wheels beside the torch channel (OUTDIR/pypi/simple, a PEP 503 index of static files)
# for the `pip:` entries of the users' file (ninja, pybind11), made from the same Debian
# binaries: `files` maps Debian paths (a trailing '/' maps a folder) into the wheel; the
# dist-info's RECORD is written by the builder.
NINJA_INIT = """\"\"\"ninja (Debian's ninja-build 1.11.1 as a wheel, by menv's build-toolchain): the
binary is installed as a script (bin/ninja).\"\"\"
import os
import sys

__version__ = "1.11.1"
BIN_DIR = os.path.join(sys.prefix, "bin")
"""
WHEELS = {"torch": [
    dict(name="ninja", version="1.11.1", tag="py3-none-linux_x86_64", debs=["ninja-build"],
         files=[("usr/bin/ninja", "ninja-1.11.1.data/scripts/ninja")],
         text={"ninja/__init__.py": NINJA_INIT,
               "ninja-1.11.1.dist-info/METADATA":
                   "Metadata-Version: 2.1\nName: ninja\nVersion: 1.11.1\n"
                   "Summary: Ninja is a small build system with a focus on speed (Debian's "
                   "ninja-build)\nLicense: Apache-2.0\n",
               "ninja-1.11.1.dist-info/top_level.txt": "ninja\n"}),
    dict(name="pybind11", version="2.10.3", tag="py3-none-any", debs=["python3-pybind11"],
         files=[("usr/lib/python3/dist-packages/pybind11/", "pybind11/"),
                ("usr/lib/python3/dist-packages/pybind11-2.10.3.dist-info/",
                 "pybind11-2.10.3.dist-info/")],
         text={}),
]}

SETS = {"toolchain": (DEBS, PACKAGES), "torch": (TORCH_DEBS, TORCH_PACKAGES)}

#!/bin/sh
# ops-test.sh CASE - tests of ops/ and `menv smoke` (run by CTest; see CMakeLists.txt).
#   host, gpu            ops/ built with the machine's nvcc (e.g. CUDA 13 + gcc 12, a compile
#                        check) in a scrubbed environment; its host or GPU tests
#   smoke_system         `menv smoke` on a hand-made prefix whose bin/nvcc runs the machine's
#                        nvcc and whose activate.d script sets CXX=g++: passes, GPU skipped
#   smoke_no_nvcc        a prefix without nvcc: fails with the "add cudatoolkit" hint
#   smoke_gcc_too_new    a g++ in the prefix that claims GCC 16 to nvcc: fails with the
#                        "host compiler" hint naming it
#   smoke_missing_headers  bin/nvcc a copy of the machine's nvcc, which then looks for its
#                        headers beside the copy: fails with the "missing header" hint
#   smoke_toolchain      needs MENV_TOOLCHAIN_CHANNEL (the channel of build-toolchain): an
#                        environment of python, cudatoolkit 11.8, gxx_linux-64 11, numpy,
#                        pybind11, ninja passes (GPU skipped without a GPU); one without
#                        gxx_linux-64 gets nvcc 11.8 + the system's g++ 12: the hint
# Exit 77 when the case cannot run here (no nvcc, no channel).
set -u
case=${1:?usage: ops-test.sh CASE}
: "${MENV_OPS_DIR:?}" "${OPS_TEST_TMP:?}"
tmp=$OPS_TEST_TMP/$case
rm -rf "$tmp"
mkdir -p "$tmp/home" # menv create runs with HOME here: it registers in ~/.conda/environments.txt

sys_nvcc=$(PATH="$PATH:/usr/local/cuda/bin" command -v nvcc || true)
need_nvcc() { [ -n "$sys_nvcc" ] || { echo "no nvcc on this machine: skipped"; exit 77; }; }
fail() { echo "FAIL: $*"; exit 1; }
# whether this machine has a usable GPU, asked of the driver's own tool (not of menv or the op):
# nvidia-smi lists at least one GPU
has_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

# a prefix: conda-meta/, bin/nvcc running the machine's nvcc (a new file, never a write
# through a link), and an activation script choosing the host compiler
mkprefix() {
	p=$1
	mkdir -p "$p/conda-meta" "$p/bin" "$p/etc/conda/activate.d"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$sys_nvcc" >"$p/bin/nvcc.new"
	chmod +x "$p/bin/nvcc.new"
	mv "$p/bin/nvcc.new" "$p/bin/nvcc"
	printf 'export CXX=g++ CC=gcc\n' >"$p/etc/conda/activate.d/zz-cxx.sh"
}

smoke() { # PREFIX: runs menv smoke, output in $tmp/out, status in $st
	env MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null CONDA_OVERRIDE_CUDA= TMPDIR="$tmp" \
		"${MENV:?}" smoke -p "$1" >"$tmp/out" 2>&1
	st=$?
	cat "$tmp/out"
}

case $case in
host | gpu)
	need_nvcc
	d=$(dirname "$sys_nvcc")
	env -i PATH="$d:/usr/bin:/bin" HOME="${HOME:-/}" LC_ALL=C \
		sh -c '"$1/configure" "$2" && ninja -C "$2" 2>/dev/null || make -C "$2"' sh \
		"$MENV_OPS_DIR" "$tmp/build" || fail "configure or build"
	env -i PATH="$d:/usr/bin:/bin" HOME="${HOME:-/}" LC_ALL=C \
		"$MENV_OPS_DIR/run-tests" "$tmp/build" "$case"
	exit $? ;;
smoke_system)
	need_nvcc
	mkprefix "$tmp/env"
	smoke "$tmp/env"
	[ "$st" = 0 ] || fail "menv smoke exited $st"
	grep -q "host tests  pass" "$tmp/out" || fail "host tests did not pass"
	# the GPU line either way: skipped without a GPU, passed with one (and the record agrees)
	if has_gpu; then
		grep -q "GPU tests   pass" "$tmp/out" || fail "a GPU is here but the GPU tests did not pass"
		grep -q '"gpu": true' "$tmp/env/conda-meta/menv-smoke-check" || fail "gpu not true"
	else
		grep -q "GPU tests   skip  GPU run skipped: no CUDA driver found" "$tmp/out" ||
			fail "no 'GPU run skipped' report"
		grep -q '"gpu": false' "$tmp/env/conda-meta/menv-smoke-check" || fail "gpu not false"
	fi
	grep -q '"status": "passed"' "$tmp/env/conda-meta/menv-smoke-check" || fail "menv-smoke-check"
	[ -s "$tmp/env/conda-meta/smoke-check.log" ] || fail "no log"
	echo ok ;;
smoke_no_nvcc)
	mkdir -p "$tmp/env/conda-meta"
	smoke "$tmp/env"
	[ "$st" = 1 ] || fail "menv smoke exited $st, expected 1"
	grep -q "hint: nvcc not found in the environment: add cudatoolkit" "$tmp/out" || fail "no hint"
	grep -q '"status": "failed"' "$tmp/env/conda-meta/menv-smoke-check" || fail "menv-smoke-check"
	echo ok ;;
smoke_gcc_too_new)
	need_nvcc
	mkprefix "$tmp/env"
	# a g++ that answers 16.1.0 and defines __GNUC__ 16, as a GCC 16 would
	cat >"$tmp/env/bin/g++" <<'G'
#!/bin/sh
case "$*" in *-dumpfullversion* | *-dumpversion*) echo 16.1.0; exit 0 ;; esac
exec /usr/bin/g++ -U__GNUC__ -D__GNUC__=16 "$@"
G
	chmod +x "$tmp/env/bin/g++"
	printf 'export CXX="$CONDA_PREFIX/bin/g++" CC=gcc\n' >"$tmp/env/etc/conda/activate.d/zz-cxx.sh"
	smoke "$tmp/env"
	[ "$st" = 1 ] || fail "menv smoke exited $st, expected 1"
	grep -q "does not support the host compiler g++ 16.1.0 ('$tmp/env/bin/g++', from the environment)" "$tmp/out" ||
		fail "no host compiler hint"
	grep -q "gxx_linux-64=" "$tmp/out" || fail "no gxx_linux-64 suggestion"
	echo ok ;;
smoke_missing_headers)
	need_nvcc
	mkprefix "$tmp/env"
	# a copy of the machine's nvcc (and its nvcc.profile) in the prefix, as a package of nvcc
	# without the CUDA headers would install it: nvcc looks for them under its own directory,
	# whether it finds itself by argv[0] or by /proc/self/exe. A copy, not a link: a link may
	# resolve to the machine's toolkit, and nothing here may ever write through one.
	real=$(readlink -f "$sys_nvcc")
	rm -f "$tmp/env/bin/nvcc"
	cp "$real" "$tmp/env/bin/nvcc"
	[ -f "$(dirname "$real")/nvcc.profile" ] && cp "$(dirname "$real")/nvcc.profile" "$tmp/env/bin/"
	# the machine must not hand the headers over by other ways (include variables, /usr/include)
	unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH
	printf '#include <cuda_runtime.h>\n' >"$tmp/probe.cu"
	if (cd "$tmp" && "$tmp/env/bin/nvcc" -E probe.cu -o probe.i) >/dev/null 2>&1; then
		echo "this machine's nvcc finds cuda_runtime.h from any directory: skipped"
		exit 77
	fi
	smoke "$tmp/env"
	[ "$st" = 1 ] || fail "menv smoke exited $st, expected 1"
	grep -q "hint: missing header 'cuda_runtime.h'" "$tmp/out" || fail "no missing header hint"
	echo ok ;;
smoke_toolchain)
	ch=${MENV_TOOLCHAIN_CHANNEL:-}
	[ -n "$ch" ] && [ -e "$ch/linux-64/repodata.json" ] ||
		{ echo "MENV_TOOLCHAIN_CHANNEL (an indexed toolchain channel) not set: skipped"; exit 77; }
	env HOME="$tmp/home" MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null "$MENV" create -p "$tmp/ok" \
		-c "file://$ch" --override-channels python=3.9 cudatoolkit=11.8 gxx_linux-64=11 \
		numpy pybind11 ninja --no-smoke-check >/dev/null || fail "menv create ok"
	smoke "$tmp/ok"
	[ "$st" = 0 ] || fail "menv smoke exited $st"
	grep -q "toolchain   pass  nvcc 11.8" "$tmp/out" || fail "nvcc 11.8 not used"
	grep -q "python      pass" "$tmp/out" || fail "python module not tested"
	# create runs the smoke check itself: without g++ 11 it fails, and keeps the environment
	env HOME="$tmp/home" MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null "$MENV" create -p "$tmp/gxx12" \
		-c "file://$ch" --override-channels python=3.9 cudatoolkit=11.8 ninja \
		>"$tmp/create.out" 2>&1 && fail "menv create gxx12 passed its smoke check"
	grep -q "smoke check failed (the environment is kept)" "$tmp/create.out" ||
		fail "create did not report the failed smoke check"
	[ -d "$tmp/gxx12/conda-meta" ] || fail "the environment was not kept"
	smoke "$tmp/gxx12"
	[ "$st" = 1 ] || fail "menv smoke exited $st, expected 1"
	grep -q "nvcc 11.8.89 does not support the host compiler g++ 12" "$tmp/out" || fail "no hint"
	grep -q "gxx_linux-64=11" "$tmp/out" || fail "no gxx_linux-64=11 suggestion"
	echo ok ;;
*) echo "unknown case $case"; exit 2 ;;
esac

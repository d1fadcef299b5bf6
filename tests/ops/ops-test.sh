#!/bin/sh
# ops-test.sh CASE - tests of ops/ and `menv smoke` (run by CTest; see CMakeLists.txt).
#   build                ops/ configured and built with the machine's nvcc (e.g. CUDA 13 +
#                        gcc 12, a compile check) in a scrubbed environment, into
#                        $OPS_TEST_TMP/build (the fixture of host and gpu)
#   host, gpu            the host or GPU tests of that build, then host: 200 seeded runs
#                        (MENV_OPS_RUNS) and a bad MENV_OPS_RUNS; gpu: the regression seeds
#                        (test_gpu --regression) and 3 seeded runs
#   smoke_system         `menv smoke` on a hand-made prefix whose bin/nvcc runs the machine's
#                        nvcc and whose activate.d script sets CXX=g++: passes, GPU skipped
#   smoke_no_nvcc        a prefix without nvcc: fails with the "add cudatoolkit" hint
#   smoke_gcc_too_new    a g++ in the prefix that claims GCC 16 to nvcc: fails with the
#                        "host compiler" hint naming it
#   smoke_missing_headers  bin/nvcc a copy of the machine's nvcc, which then looks for its
#                        headers beside the copy: fails with the "missing header" hint
#   smoke_fingerprint    needs MENV_TOOLCHAIN_CHANNEL; a stand-in ops/ (MENV_OPS_DIR): create
#                        runs the check, installing one pure package does not ("unchanged
#                        since"), --smoke-check forces it, an ops/ byte, a new cudatoolkit,
#                        gxx_impl or python record, another $CXX or its version, the driver
#                        and a failed check run it again
#   smoke_toolchain      needs MENV_TOOLCHAIN_CHANNEL (the channel of build-toolchain): an
#                        environment of python, cudatoolkit 11.8, gxx_linux-64 11, numpy,
#                        pybind11, ninja passes (GPU skipped without a GPU); one without
#                        gxx_linux-64 gets nvcc 11.8 + the system's g++ 12: create fails
#                        its check, at the toolchain step, with the one-line hint "add
#                        gxx_linux-64=11", and `menv doctor` reports that same line
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
build)
	need_nvcc
	d=$(dirname "$sys_nvcc")
	env -i PATH="$d:/usr/bin:/bin" HOME="${HOME:-/}" LC_ALL=C \
		sh -c '"$1/configure" "$2" && ninja -C "$2" 2>/dev/null || make -C "$2"' sh \
		"$MENV_OPS_DIR" "$tmp" || fail "configure or build"
	echo ok
	exit 0 ;;
host | gpu)
	need_nvcc
	d=$(dirname "$sys_nvcc")
	build=$OPS_TEST_TMP/build # the ops.build fixture's
	[ -x "$build/test_host" ] && [ -x "$build/test_gpu" ] ||
		fail "no build in $build (the ops.build fixture builds it)"
	env -i PATH="$d:/usr/bin:/bin" HOME="${HOME:-/}" LC_ALL=C \
		"$MENV_OPS_DIR/run-tests" "$build" "$case"
	rc=$?
	[ "$rc" = 0 ] || exit $rc
	if [ "$case" = host ]; then
		# 200 runs with distinct seeds (the f32 kernel arithmetic emulated, a direction
		# orthogonal to the gradient among them): all within their derived limits
		MENV_OPS_RUNS=200 MENV_OPS_SEED=1000 "$build/test_host" >"$tmp/runs" 2>&1 ||
			{ cat "$tmp/runs"; fail "test_host runs"; }
		[ "$(tail -n 1 "$tmp/runs")" = "[ops] PASS host runs=200 failures=0 failing_seeds=" ] ||
			{ cat "$tmp/runs"; fail "no summary line"; }
		MENV_OPS_RUNS=x "$build/test_host" >"$tmp/bad" 2>&1
		rc=$?
		[ "$rc" = 2 ] || fail "MENV_OPS_RUNS=x: exit $rc"
		grep -qx "\[ops\] FAIL host: MENV_OPS_RUNS must be a positive count, not 'x'" "$tmp/bad" ||
			fail "MENV_OPS_RUNS=x: $(cat "$tmp/bad")"
		MENV_OPS_SEED=7 "$build/test_host" >"$tmp/one" 2>&1
		grep -q "^\[ops\] PASS host f32 emulated kernels, direction orthogonal to the gradient: .* exceeds the old limit 1e-3" "$tmp/one" ||
			fail "the old limit was not shown failing on a cancelling direction"
	else
		# the seeds that failed a correct kernel on an H200, replayed; then 3 seeds
		"$build/test_gpu" --regression >"$tmp/reg" 2>&1
		rc=$?
		cat "$tmp/reg"
		[ "$rc" = 0 ] || exit $rc
		grep -qx "\[ops\] PASS gpu runs=2 failures=0 failing_seeds=" "$tmp/reg" || fail "regression"
		MENV_OPS_RUNS=3 MENV_OPS_SEED=1 "$build/test_gpu" >"$tmp/runs" 2>&1 ||
			{ cat "$tmp/runs"; fail "test_gpu runs"; }
		[ "$(tail -n 1 "$tmp/runs")" = "[ops] PASS gpu runs=3 failures=0 failing_seeds=" ] ||
			fail "no summary line"
	fi
	echo ok
	exit 0 ;;
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
	unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH
	# A machine may still hand cuda_runtime.h over by other ways: a copy in /usr/include or
	# /usr/local/include, NVCC_PREPEND_FLAGS, an include directory in nvcc.profile. So the
	# prefix's host compiler (CXX, which nvcc runs with -ccbin for every step) searches no
	# directory that holds it: each such directory, among its defaults or in -I/-isystem
	# arguments, is replaced by a shadow of links to everything in it but cuda_runtime.h.
	std=$(/usr/bin/g++ -x c++ -E -v /dev/null 2>&1 >/dev/null |
		sed -n '/^#include <...> search starts here:/,/^End of search list/{/^ /s/^ //p}')
	[ -n "$std" ] || fail "no include search list from /usr/bin/g++ -v"
	{
		printf '#!/bin/sh\n# g++ that finds no cuda_runtime.h (ops-test.sh smoke_missing_headers)\n'
		printf 'shadows=%s\n' "'$tmp/shadow'"
		cat <<'G'
shadow() { # DIR: prints DIR, or a shadow of it when it holds cuda_runtime.h
	[ -e "$1/cuda_runtime.h" ] || { printf '%s' "$1"; return; }
	s=$shadows/$(printf '%s' "$1" | tr / _)
	if [ ! -d "$s" ]; then
		mkdir -p "$s.$$"
		for e in "$1"/*; do [ "${e##*/}" = cuda_runtime.h ] || ln -s "$e" "$s.$$/"; done
		mv "$s.$$" "$s" 2>/dev/null || rm -rf "$s.$$"
	fi
	printf '%s' "$s"
}
n=$#
while [ "$n" -gt 0 ]; do
	a=$1; shift; n=$((n - 1))
	case $a in
	-I | -isystem | -idirafter) d=$1; shift; n=$((n - 1)); set -- "$@" "$a" "$(shadow "$d")" ;;
	-I*) set -- "$@" "-I$(shadow "${a#-I}")" ;;
	-isystem*) set -- "$@" "-isystem$(shadow "${a#-isystem}")" ;;
	*) set -- "$@" "$a" ;;
	esac
done
G
		printf 'exec /usr/bin/g++ "$@" -nostdinc'
		printf '%s\n' "$std" | while IFS= read -r d; do printf ' -isystem "$(shadow %s)"' "'$d'"; done
		printf '\n'
	} >"$tmp/env/bin/g++"
	chmod +x "$tmp/env/bin/g++"
	printf 'export CXX="$CONDA_PREFIX/bin/g++" CC=gcc\n' >"$tmp/env/etc/conda/activate.d/zz-cxx.sh"
	# the wrapper itself compiles C++ (the machine's <vector> through its shadows) and hides the
	# header: a wrapper that broke the standard library would fail the check for another reason
	printf '#include <vector>\nint main() { return std::vector<int>(1).size() - 1; }\n' >"$tmp/v.cpp"
	"$tmp/env/bin/g++" -o "$tmp/v" "$tmp/v.cpp" || fail "the wrapper g++ does not compile C++"
	printf '#include <cuda_runtime.h>\n' >"$tmp/probe.cu"
	(cd "$tmp" && "$tmp/env/bin/nvcc" -ccbin "$tmp/env/bin/g++" -E probe.cu -o probe.i) \
		>/dev/null 2>&1 && fail "the prefix's nvcc and g++ still find cuda_runtime.h"
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
	# one line saying what to change, and doctor's verdict is the same line (not "0 problems")
	gxx=$(PATH=/usr/bin:/bin command -v g++)
	line="nvcc 11.8.89 does not support the host compiler g++ $($gxx -dumpfullversion) ('$gxx', from the system, not the environment): nvcc 11.8 accepts GCC up to 11; add gxx_linux-64=11 to the environment"
	grep -qxF "  hint: $line" "$tmp/out" || fail "smoke: not the line '$line'"
	grep -q "^  configure" "$tmp/out" && fail "smoke went on to configure"
	doctor() {
		env HOME="$tmp/home" MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null CONDA_OVERRIDE_CUDA= \
			"$MENV" doctor -p "$1" >"$tmp/doctor" 2>&1
		st=$?
	}
	doctor "$tmp/gxx12"
	[ "$st" = 1 ] || { cat "$tmp/doctor"; fail "doctor exited $st, expected 1"; }
	grep -qxF "problem: $line" "$tmp/doctor" || { cat "$tmp/doctor"; fail "doctor: not the line"; }
	grep -q "1 problem left$" "$tmp/doctor" || { cat "$tmp/doctor"; fail "doctor: not 1 problem"; }
	doctor "$tmp/ok"
	[ "$st" = 0 ] || { cat "$tmp/doctor"; fail "doctor on the good environment exited $st"; }
	grep -q "0 problems left$" "$tmp/doctor" || fail "doctor on the good environment"
	echo ok ;;
smoke_fingerprint)
	ch=${MENV_TOOLCHAIN_CHANNEL:-}
	[ -n "$ch" ] && [ -e "$ch/linux-64/repodata.json" ] ||
		{ echo "MENV_TOOLCHAIN_CHANNEL (an indexed toolchain channel) not set: skipped"; exit 77; }
	# a stand-in ops/ (configure, an empty build, tests that pass): each check takes a
	# second, and what is checked is only whether it runs
	mkdir -p "$tmp/ops"
	cat >"$tmp/ops/configure" <<'C'
#!/bin/sh
mkdir -p "$1" && printf 'build all: phony\ndefault all\n' >"$1/build.ninja"
echo "configure: targets sm_90 compute_90 (stand-in)"
C
	printf '#!/bin/sh\necho "[ops] PASS stand-in $2: 0 (limit 0)"\nexit 0\n' >"$tmp/ops/run-tests"
	chmod +x "$tmp/ops/configure" "$tmp/ops/run-tests"
	e=$tmp/e
	m() { # menv ARGS...: output in $tmp/out, status in $st
		env HOME="$tmp/home" MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null CONDA_OVERRIDE_CUDA= \
			MENV_OPS_DIR="$tmp/ops" TMPDIR="$tmp" "$MENV" "$@" >"$tmp/out" 2>&1
		st=$?
	}
	ran() { grep -q "^Smoke check of $e " "$tmp/out" && grep -q "^Smoke check passed" "$tmp/out"; }
	unchanged_line() {
		since=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["date"])' \
			"$e/conda-meta/menv-smoke-fingerprint")
		echo "Smoke check: toolchain, ops/ sources and driver unchanged since $since, when it passed (--smoke-check runs it again)"
	}
	inst() { m install -p "$e" -c "file://$ch" --override-channels -y "$@"; }
	m create -p "$e" -c "file://$ch" --override-channels -y python=3.9 cudatoolkit=11.8 \
		gxx_linux-64=11 ninja
	[ "$st" = 0 ] && ran || { cat "$tmp/out"; fail "create did not run the smoke check"; }
	grep -q '"status": "passed"' "$e/conda-meta/menv-smoke-fingerprint" || fail "no fingerprint"
	grep -q '"pkg cudatoolkit 11.8' "$e/conda-meta/menv-smoke-fingerprint" || fail "no nvcc input"
	grep -q '"ops run-tests [0-9a-f]\{64\} x"' "$e/conda-meta/menv-smoke-fingerprint" ||
		fail "no ops input"
	# one pure package: not run, and the exact line
	inst ply
	[ "$st" = 0 ] || { cat "$tmp/out"; fail "install ply: exit $st"; }
	grep -q "Smoke check of" "$tmp/out" && fail "install ply ran the smoke check"
	grep -qxF "$(unchanged_line)" "$tmp/out" || { cat "$tmp/out"; fail "no 'unchanged since' line"; }
	# --smoke-check forces it; --no-smoke-check says nothing of it; both: one-line error, exit 2
	inst six --smoke-check
	ran || { cat "$tmp/out"; fail "--smoke-check did not run it"; }
	inst decorator --no-smoke-check
	grep -q "Smoke check" "$tmp/out" && fail "--no-smoke-check: $(cat "$tmp/out")"
	inst wcwidth --smoke-check --no-smoke-check
	[ "$st" = 2 ] || fail "both flags: exit $st"
	[ "$(cat "$tmp/out")" = "menv: error: --smoke-check and --no-smoke-check contradict each other" ] ||
		fail "both flags: $(cat "$tmp/out")"
	[ -e "$e/conda-meta/history" ] && grep -q wcwidth "$e/conda-meta/history" && fail "both flags changed the env"
	# remove takes the same toggles: --smoke-check runs it after the remove, --no-smoke-check
	# says nothing of it
	m remove -p "$e" -y decorator --smoke-check
	[ "$st" = 0 ] && ran || { cat "$tmp/out"; fail "remove --smoke-check did not run it"; }
	m remove -p "$e" -y six --no-smoke-check
	[ "$st" = 0 ] || { cat "$tmp/out"; fail "remove --no-smoke-check: exit $st"; }
	grep -q "Smoke check" "$tmp/out" && fail "remove --no-smoke-check: $(cat "$tmp/out")"
	# an ops/ source byte: runs again, then unchanged again
	echo "# one more byte" >>"$tmp/ops/run-tests"
	inst zipp
	ran || { cat "$tmp/out"; fail "an ops/ change did not run it"; }
	inst pickleshare
	grep -qxF "$(unchanged_line)" "$tmp/out" || { cat "$tmp/out"; fail "not unchanged after the rerun"; }
	# nvcc's and g++'s package records (another build of the same version): runs again
	for pkg in cudatoolkit gxx_impl_linux-64 python; do
		python3 - "$e"/conda-meta/$pkg-[0-9]*.json <<'P'
import json, sys
r = json.load(open(sys.argv[1]))
r["sha256"] = "0" * 64
json.dump(r, open(sys.argv[1], "w"), indent=2)
P
		m remove -p "$e" -y pickleshare 2>/dev/null
		inst pickleshare
		ran || { cat "$tmp/out"; fail "a new $pkg record did not run it"; }
	done
	# a host compiler from outside the records ($CXX of an activation script): its path, then
	# its version, run it again; then nothing changed
	printf '#!/bin/sh\necho 11.3.0\n' >"$tmp/cxx"
	chmod +x "$tmp/cxx"
	printf 'export CXX="%s"\n' "$tmp/cxx" >"$e/etc/conda/activate.d/zz-cxx.sh"
	m remove -p "$e" -y pickleshare
	inst pickleshare
	ran || { cat "$tmp/out"; fail "another \$CXX did not run it"; }
	grep -q "c++ $tmp/cxx 11.3.0" "$e/conda-meta/menv-smoke-fingerprint" || fail "probe input"
	printf '#!/bin/sh\necho 11.4.0\n' >"$tmp/cxx"
	m remove -p "$e" -y pickleshare
	inst pickleshare
	ran || { cat "$tmp/out"; fail "a new \$CXX version did not run it"; }
	m remove -p "$e" -y pickleshare
	inst pickleshare
	grep -qxF "$(unchanged_line)" "$tmp/out" || { cat "$tmp/out"; fail "not unchanged"; }
	rm "$e/etc/conda/activate.d/zz-cxx.sh"
	# the driver (__cuda): runs again
	m remove -p "$e" -y zipp
	env CONDA_OVERRIDE_CUDA=12.0 HOME="$tmp/home" MENV_ROOT_PREFIX="$tmp/root" MENVRC=/dev/null \
		MENV_OPS_DIR="$tmp/ops" TMPDIR="$tmp" "$MENV" install -p "$e" -c "file://$ch" \
		--override-channels -y zipp >"$tmp/out" 2>&1
	ran || { cat "$tmp/out"; fail "a driver change did not run it"; }
	grep -q '"driver cuda 12.0"' "$e/conda-meta/menv-smoke-fingerprint" || fail "driver input"
	# a failed check is not "unchanged": the next change runs it again
	printf '#!/bin/sh\necho "[ops] FAIL stand-in $2: 1 (limit 0)"\nexit 1\n' >"$tmp/ops/run-tests"
	inst testpath
	[ "$st" = 1 ] || { cat "$tmp/out"; fail "failing check: exit $st"; }
	inst pandocfilters
	grep -q "^Smoke check of $e " "$tmp/out" || fail "a failed check was taken as unchanged"
	echo ok ;;
*) echo "unknown case $case"; exit 2 ;;
esac

#!/usr/bin/env bash
# Runs the libFuzzer harnesses built with -DMENV_FUZZ=ON:
#
#   bash tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]   # default: all of them
#
# First each harness replays its regression inputs (tests/fuzz/regressions/<harness>/: every
# crash found became one), then fuzzes for SECONDS from the seeds: tests/fuzz/seeds/<harness>/
# (menv's own) and the small files of ../shared (corpus and conformance rows, read where they
# lie, never copied into the tree). New inputs go to BUILD_DIR/fuzz/<harness>/corpus, crashes
# to BUILD_DIR/fuzz/<harness>/crash-*. Exits non-zero when any harness crashed or leaked.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
secs=$2
shift 2
shared=${MENV_SHARED:-$root/../shared}
all=(matchspec envfile condarc repodata lockfile archive shell_quote)
[ $# -gt 0 ] && all=("$@")

# Small files of the shared corpus for a harness, listed one per line (under 256 KiB: big
# repodata slows every iteration and teaches the fuzzer nothing more)
small() { [ -d "$shared/corpus/$1" ] && find "$shared/corpus/$1" -type f -size -256k "${@:2}" || true; }
seed_files() {
	case $1 in
	envfile) small envfiles \( -name '*.yml' -o -name '*.yaml' \) ;;
	repodata) small repodata -name '*.json' ;;
	lockfile) small lockfiles; small envfiles -name '*lock*' ;;
	archive) small packages \( -name '*.conda' -o -name '*.tar.bz2' \) ;;
	esac
}

# One harness: replay, then fuzz. Its report goes to stdout/stderr as before; the caller runs
# two at a time (libFuzzer uses one core each) and prints each harness's report in order.
fuzz_one() {
	local h=$1 bin work i f t l dirs len
	bin=$build/tests/fuzz/fuzz_$h
	work=$build/fuzz/$h
	mkdir -p "$work/corpus" "$work/seeds"
	rm -f "$work/seeds"/*
	# seeds: links to the shared files, and the conformance rows as one input each
	i=0
	while IFS= read -r f; do
		[ -n "$f" ] && ln -sf "$f" "$work/seeds/s$((i++))"
	done < <(seed_files "$h")
	if [ "$h" = matchspec ] && [ -d "$shared/conformance" ]; then
		for t in match_spec version_spec version_parse; do
			tail -n +2 "$shared/conformance/$t.tsv" | cut -f1 | while IFS= read -r l; do
				printf '%s' "$l" >"$work/seeds/$t-$((i++))"
			done
		done
	fi
	dirs=("$work/corpus" "$work/seeds")
	[ -d "$here/seeds/$h" ] && dirs+=("$here/seeds/$h")
	export TMPDIR=$work
	if [ -d "$here/regressions/$h" ] && ls "$here/regressions/$h"/* >/dev/null 2>&1; then
		echo "fuzz: $h: replaying $(ls "$here/regressions/$h" | wc -l) regression inputs"
		if ! "$bin" -rss_limit_mb=2048 "$here/regressions/$h"/* >"$work/replay.log" 2>&1; then
			echo "fuzz: $h: a regression input fails again:" >&2
			tail -40 "$work/replay.log" >&2
			return 1
		fi
	fi
	# inputs past max_len are cut: big ones only slow the fuzzer down
	len=16384
	[ "$h" = archive ] && len=262144
	echo "fuzz: $h: ${secs}s"
	if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$len \
		-print_final_stats=1 -artifact_prefix="$work/" "${dirs[@]}" >"$work/run.log" 2>&1; then
		echo "fuzz: $h: crashed (artifact in $work/):" >&2
		tail -60 "$work/run.log" >&2
		return 1
	fi
	grep -h '^stat::number_of_executed_units' "$work/run.log" | sed "s/^/fuzz: $h: /"
}

# two harnesses at a time, each for the full SECONDS; reports printed in the harnesses' order
fail=0
for ((k = 0; k < ${#all[@]}; k += 2)); do
	pair=("${all[@]:k:2}")
	pids=()
	for h in "${pair[@]}"; do
		mkdir -p "$build/fuzz/$h"
		fuzz_one "$h" >"$build/fuzz/$h/report.out" 2>"$build/fuzz/$h/report.err" &
		pids+=($!)
	done
	for j in "${!pair[@]}"; do
		h=${pair[j]}
		rc=0
		wait "${pids[j]}" || rc=$?
		cat "$build/fuzz/$h/report.out"
		cat "$build/fuzz/$h/report.err" >&2
		[ "$rc" = 0 ] || fail=1
	done
done
exit $fail

#!/usr/bin/env bash
# The long fuzzing run the closing notes report (STYLE.md), on a machine with many cores:
#
#   bash tests/fuzz/long.sh BUILD_DIR SECONDS FORKS [HARNESS...]   # default: all of them
#
# Runs every harness at once, each in libFuzzer's fork mode with FORKS child processes, for
# SECONDS, from the same seeds as run.sh (it first calls run.sh for 1 s, which replays the
# regression inputs and lays out BUILD_DIR/fuzz/<harness>/). Prints one line per harness:
# executions, coverage, crashes. Crash inputs are kept in BUILD_DIR/fuzz/<harness>/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$1" && pwd)
secs=$2
forks=$3
shift 3
all=(matchspec envfile condarc repodata lockfile archive shell_quote)
[ $# -gt 0 ] && all=("$@")
bash "$here/run.sh" "$build" 1 "${all[@]}"
for h in "${all[@]}"; do
	work=$build/fuzz/$h
	len=16384
	[ "$h" = archive ] && len=262144
	dirs=("$work/corpus" "$work/seeds")
	[ -d "$here/seeds/$h" ] && dirs+=("$here/seeds/$h")
	TMPDIR=$work "$build/tests/fuzz/fuzz_$h" -fork="$forks" -ignore_crashes=1 \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$len \
		-artifact_prefix="$work/" "${dirs[@]}" >"$work/long.log" 2>&1 &
done
wait
rc=0
for h in "${all[@]}"; do
	work=$build/fuzz/$h
	# fork mode's status lines: "#EXECS: cov: N ft: N corp: N exec/s: N oom/timeout/crash: a/b/c"
	last=$(grep -E '^#[0-9]+: cov:' "$work/long.log" | tail -1)
	crashes=$(ls "$work" | grep -c -E '^(crash|leak|timeout|oom)-' || true)
	echo "fuzz-long: $h: ${last:-no status line} artifacts: $crashes"
	[ "$crashes" = 0 ] || rc=1
done
exit $rc

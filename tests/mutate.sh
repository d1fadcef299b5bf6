#!/usr/bin/env bash
# tests/mutate.sh - plants small bugs (mutants) one at a time and checks that the tests notice.
#
#   bash tests/mutate.sh [BUILD_DIR] [MUTANTS_TSV] [ID_REGEX]
#       (defaults: build, tests/mutants.tsv, every mutant)
#
# Each row of MUTANTS_TSV (tab-separated; '#' lines are comments):
#   ID  FILE  PATTERN  REPLACEMENT  TESTS  [TARGETS]
# FILE is relative to the checkout; PATTERN is a fixed string that must occur exactly once in
# FILE (a line or part of one, so rows survive code moving around); REPLACEMENT replaces it
# (in both, \t and \n are tab and newline); TESTS is a ctest -R regex naming the tests that
# must kill it; TARGETS (space-separated, default: all) are the build targets those tests run.
# For each mutant: apply, rebuild BUILD_DIR, run TESTS (-j1), restore the file. A mutant is
# killed when the tests fail, survives when they pass, and is "stillborn" when it does not
# build or its pattern is not found once. The source is restored on every exit, Ctrl-C
# included. Prints a summary and exits 1 if any mutant survived or was stillborn.
# Not run in CI (minutes per mutant); the log of each run is in BUILD_DIR/mutants/ID.log.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
build=${1:-build}
list=${2:-tests/mutants.tsv}
only=${3:-}
logs=$build/mutants
mkdir -p "$logs"

saved="" # the file now mutated, and its backup
restore() {
	if [ -n "$saved" ] && [ -f "$saved.menv-mutant-orig" ]; then
		# cp (not mv -p): the file gets a new mtime, newer than the mutant's object file, so
		# the next build recompiles it
		cp "$saved.menv-mutant-orig" "$saved" && rm -f "$saved.menv-mutant-orig"
	fi
	saved=""
}
trap 'restore' EXIT
trap 'restore; echo "mutate.sh: interrupted, source restored"; exit 130' INT TERM

# the list is read once, before any mutant: editing it during a run changes nothing
mapfile -t rows < <(grep -v -e '^#' -e '^$' "$list")
killed=() survived=() stillborn=()
for row in "${rows[@]}"; do
	IFS=$'\t' read -r id file pattern repl tests targets <<<"$row"
	[ -n "$only" ] && ! [[ $id =~ $only ]] && continue
	if [ -z "$tests" ] || [ ! -f "$file" ]; then
		echo "STILLBORN $id: a row needs ID, an existing FILE, PATTERN, REPLACEMENT and TESTS"
		stillborn+=("$id")
		continue
	fi
	log=$logs/$id.log
	cp "$file" "$file.menv-mutant-orig"
	saved=$file
	if ! python3 - "$file" "$pattern" "$repl" <<'PY'; then
import sys
path, pat, rep = sys.argv[1], sys.argv[2], sys.argv[3]
pat, rep = [x.replace("\\t", "\t").replace("\\n", "\n") for x in (pat, rep)]
s = open(path).read()
n = s.count(pat)
if n != 1:
    print("pattern occurs %d times" % n)
    sys.exit(1)
open(path, "w").write(s.replace(pat, rep))
PY
		echo "STILLBORN $id: pattern not found exactly once in $file"
		stillborn+=("$id")
		restore
		continue
	fi
	# shellcheck disable=SC2086 # TARGETS is a list
	if ! cmake --build "$build" -j2 --target ${targets:-all} >"$log" 2>&1; then
		echo "STILLBORN $id: does not build (see $log)"
		stillborn+=("$id")
		restore
		continue
	fi
	if ctest --test-dir "$build" -R "$tests" -j1 --output-on-failure >>"$log" 2>&1; then
		n=$(grep -c ' Test *#' "$log")
		echo "SURVIVED  $id ($file): $n tests passed: $tests"
		survived+=("$id")
	else
		first=$(grep -m1 -E '\*\*\*(Failed|Timeout|Exception)|Not Run' "$log" | sed 's/^ *//')
		why=$(grep -m1 -E '^(FAIL|FATAL|not ok)|\[  FAILED  \]|FAIL ' "$log" | cut -c1-160)
		echo "killed    $id by $first"
		[ -n "$why" ] && echo "            $why"
		killed+=("$id")
	fi
	restore
done
cmake --build "$build" -j2 >"$logs/restore.log" 2>&1 || echo "mutate.sh: the restored tree does not build"
echo
echo "mutants: ${#killed[@]} killed, ${#survived[@]} survived, ${#stillborn[@]} stillborn"
[ ${#survived[@]} = 0 ] || echo "survivors: ${survived[*]}"
[ ${#stillborn[@]} = 0 ] || echo "stillborn: ${stillborn[*]}"
[ ${#survived[@]} = 0 ] && [ ${#stillborn[@]} = 0 ]

#!/usr/bin/env bash
# onboard.sh - what a new colleague runs on a fresh machine (Debian 12) to get the team's
# CUDA custom-op environment, byte for byte as the team locked it:
#
#   ops/onboard.sh            # build what is missing, create `ops` from ops/lock.yml, check it
#   ops/onboard.sh ops/environment-torch.yml
#                             # the PyTorch environment `ops-torch`: both channels built (the
#                             # torch one by build-toolchain --torch, with its pip index), the
#                             # environment created from its committed lock ops/lock-torch.yml
#                             # (conda packages and pip's wheels, each checked by sha256), checked
#
# The locks name the channel folders they were made from (and the torch channel's pypi/simple
# for pip's wheels); those are mapped to this machine's channels: the folders below, or, with
# OPS_CHANNEL_URL set, the team's channel server that serves them as OPS_CHANNEL_URL/menv-toolchain
# and OPS_CHANNEL_URL/menv-toolchain-torch (what the environment then records, so that its
# `menv export` re-creates on any machine that reaches the server).
#
# With no argument (or ops/environment.yml) it is the Python 3.9 job described below;
# ops/environment-torch.yml is the same from ops/lock-torch.yml; another file (one with no
# lock) is solved from the channels it names (`./menv-toolchain`, `./menv-toolchain-torch`,
# resolved in a folder where they link to the built channels), as `name:` says (or $OPS_ENV).
#  1. menv: built with .ci/setup (installs Debian's build dependencies) unless $MENV or
#     build/menv already runs;
#  2. the toolchain channel (tests/channels/build-toolchain, Debian's real binaries as conda
#     packages) in $MENV_TOOLCHAIN_DIR (default build/menv-toolchain) unless it is there;
#  3. the environment `ops` (or $OPS_ENV) from the committed lockfile ops/lock.yml - no solve;
#     every package is verified against the lock's sha256. The lock names the channel folder
#     it was made from; that location is mapped to this machine's channel folder (the bytes
#     are the same: the hashes say so);
#  4. the smoke check (`menv create` runs it on the new environment; an existing one is
#     checked with `menv smoke`), and python/numpy/nvcc/g++ as the environment has them;
#  5. prints the two lines that activate the environment.
#
# Idempotent: a second run builds nothing; it checks that the existing environment still
# holds exactly the locked packages and says so (exit 1 if it drifted).
# Regenerate the lock (team lead):  menv lock -f ops/environment.yml --lockfile ops/lock.yml
# from a folder whose ./menv-toolchain links to the channel's stable location
# (/srv/menv-channels/menv-toolchain: menv records where the link leads, never a temporary
# folder); `menv lock --check` tells whether it is stale. The torch lock is the export of an
# environment made from ops/environment-torch.yml the same way (its pip wheels need an
# installed environment; PIP_INDEX_URL=file:///srv/menv-channels/menv-toolchain-torch/pypi/simple):
# `menv export -n ops-torch > ops/lock-torch.yml`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'onboard: %s\n' "$*" >&2; }
envfile=${1:-$here/ops/environment.yml}
[ -f "$envfile" ] || { say "error: no environment file $envfile"; exit 2; }
envfile=$(cd "$(dirname "$envfile")" && pwd)/$(basename "$envfile")
chan=${MENV_TOOLCHAIN_DIR:-$here/build/menv-toolchain}
torchchan=${MENV_TOOLCHAIN_TORCH_DIR:-$here/build/menv-toolchain-torch}
lock=
if [ "$envfile" = "$here/ops/environment.yml" ]; then
	lock=$here/ops/lock.yml
elif [ "$envfile" = "$here/ops/environment-torch.yml" ] && [ -f "$here/ops/lock-torch.yml" ]; then
	lock=$here/ops/lock-torch.yml
fi
if [ "$envfile" = "$here/ops/environment.yml" ]; then
	envname=${OPS_ENV:-ops}
else
	envname=${OPS_ENV:-$(sed -n 's/^name: *//p' "$envfile" | head -n 1)}
	[ -n "$envname" ] || { say "error: $envfile names no environment (name:); set OPS_ENV"; exit 2; }
fi

# 1. menv
menv=${MENV:-$here/build/menv}
if ! "$menv" --version >/dev/null 2>&1; then
	say "building menv (.ci/setup: build dependencies, libsolv, menv)"
	bash "$here/.ci/setup"
	menv=$here/build/menv
else
	say "menv is built: $("$menv" --version)"
fi

# 2. the toolchain channel
if [ -f "$chan/linux-64/repodata.json" ] && [ -f "$chan/noarch/repodata.json" ]; then
	say "toolchain channel present: $chan"
else
	say "building the toolchain channel into $chan (cached in ~/.cache/menv-toolchain)"
	"$here/tests/channels/build-toolchain" "$chan" "$menv"
fi

# 2b. the torch channel, with its pip index, for a file that names `./menv-toolchain-torch`
if grep -q 'menv-toolchain-torch' "$envfile"; then
	if [ -f "$torchchan/linux-64/repodata.json" ] && [ -f "$torchchan/pypi/simple/index.html" ]; then
		say "torch channel present: $torchchan"
	else
		say "building the torch channel into $torchchan (cached in ~/.cache/menv-toolchain)"
		"$here/tests/channels/build-toolchain" --torch "$torchchan" "$menv"
	fi
fi

# 3b. an environment file with no lock: solved from the channels it names (menv records the
# folders the links below lead to, never this temporary folder), with the torch channel's pip
# index; then the same checks
if [ -z "$lock" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	ln -s "$chan" "$tmp/menv-toolchain"
	if grep -q 'menv-toolchain-torch' "$envfile"; then
		ln -s "$torchchan" "$tmp/menv-toolchain-torch"
		export PIP_INDEX_URL=${PIP_INDEX_URL:-file://$torchchan/pypi/simple}
	fi
	prefix=$("$menv" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["envs_dirs"][0])')/$envname
	if [ -d "$prefix/conda-meta" ]; then
		say "environment '$envname' exists: its smoke check again"
		"$menv" smoke -n "$envname"
	else
		say "creating '$envname' from $envfile (the smoke check follows)"
		(cd "$tmp" && "$menv" create -n "$envname" -f "$envfile")
	fi
	"$menv" run --clean-env -n "$envname" python -c \
		'import sys; print("python", sys.version.split()[0])'
	"$menv" run --clean-env -n "$envname" sh -c 'nvcc --version | tail -n 1; g++ --version | head -n 1'
	cat <<EOF

The environment '$envname' is ready. Activate it with:

  eval "\$($menv shell hook --shell bash)"
  menv activate $envname
EOF
	exit 0
fi

# 3. the environment from the lock: each channel folder the lock names (menv-toolchain,
# menv-toolchain-torch, by its last component) mapped to ours, or to the channel server
sedargs=()
while read -r locked; do
	base=${locked##*/}
	case $base in
	menv-toolchain) dir=$chan ;;
	menv-toolchain-torch) dir=$torchchan ;;
	*) continue ;;
	esac
	target=file://$dir
	[ -z "${OPS_CHANNEL_URL:-}" ] || target=${OPS_CHANNEL_URL%/}/$base
	sedargs+=(-e "s|$locked/|$target/|g" -e "s|url: $locked\$|url: $target|")
done < <(sed -n '/^  channels:/,/^  [a-z]/{s/^ *- url: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p}' "$lock")
[ ${#sedargs[@]} -gt 0 ] || { say "error: no menv-toolchain channel in $lock"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "${sedargs[@]}" "$lock" >"$tmp/lock.yml"

prefix=$("$menv" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["envs_dirs"][0])')/$envname
if [ -d "$prefix/conda-meta" ]; then
	say "environment '$envname' exists: checking it against the lock"
	want=$(grep -E '^ *url: .*\.(conda|tar\.bz2)"?$' "$tmp/lock.yml" |
		sed 's/^ *url: *//; s/"//g' | sort)
	have=$("$menv" export -n "$envname" --format explicit | grep -v '^[#@]' |
		sed 's/#.*//' | sort)
	if [ "$want" = "$have" ]; then
		say "environment '$envname' holds exactly the locked packages"
	else
		say "error: environment '$envname' differs from $lock:"
		diff <(echo "$want") <(echo "$have") >&2 || true
		say "remove it (rm -rf '$prefix') and run this script again"
		exit 1
	fi
else
	say "creating '$envname' from $lock (no solve; the smoke check follows)"
	"$menv" create -n "$envname" -f "$tmp/lock.yml"
	created=1
fi

# 4. the smoke check (ops/ built and tested with the environment's nvcc and g++), then the
# toolchain as a scrubbed environment sees it
if [ -z "${created:-}" ]; then
	"$menv" smoke -n "$envname"
fi
"$menv" run --clean-env -n "$envname" python -c \
	'import numpy, sys; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
"$menv" run --clean-env -n "$envname" sh -c 'nvcc --version | tail -n 1; g++ --version | head -n 1'

# 5. how to use it
cat <<EOF

The environment '$envname' is ready. Activate it with:

  eval "\$($menv shell hook --shell bash)"
  menv activate $envname
EOF

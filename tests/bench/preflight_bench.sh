#!/usr/bin/env bash
# make bench: 'aisan preflight --quiet', the whole check including its live
# probe jail, on a host where everything is present. Target: a median of
# 1000 ms or less (issue #7), so that it fits in a shell rc or a CI step.
#
#   AISAN_BIN=bin/aisan bash tests/bench/preflight_bench.sh
#
# HOME is a fresh directory with the shell integration loaded, so the
# user's own setup (hooks, rc files) neither adds problems nor work.
set -euo pipefail
: "${AISAN_BIN:?set AISAN_BIN to the aisan binary to measure}"
runs=${AISAN_BENCH_PREFLIGHT_RUNS:-15}
target=1000
if [ "$runs" -lt 10 ]; then
	echo "preflight_bench: AISAN_BENCH_PREFLIGHT_RUNS=$runs, want at least 10" >&2
	exit 2
fi

tmp=$(mktemp -d /tmp/aisan-preflightbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp/home AISAN_HOME=$tmp/home/.aisan SHELL=/bin/bash
mkdir -p "$HOME" "$tmp/proj"
echo 'eval "$(aisan shell-init bash)"' >"$HOME/.bashrc"
cd "$tmp/proj"

# One run first: say what this host lacks (the timing still counts, but
# is then not the "everything present" figure).
status=0
out=$("$AISAN_BIN" preflight --quiet) || status=$?
case $status in
0) ;;
1) printf 'preflight_bench: this host has problems; timing anyway:\n%s\n' "$out" >&2 ;;
*) printf 'preflight_bench: aisan preflight failed (exit %d):\n%s\n' "$status" "$out" >&2; exit 1 ;;
esac

times=()
for _ in $(seq 1 "$runs"); do
	start=$(date +%s%N)
	"$AISAN_BIN" preflight --quiet >/dev/null || true
	end=$(date +%s%N)
	times+=($((end - start)))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f", m / 1e6}')
echo "preflight: median $median ms over $runs runs (target <= $target ms)"

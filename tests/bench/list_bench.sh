#!/usr/bin/env bash
# make bench: 'aisan list' over a registry of 1,000 slots, the size a busy
# machine reaches after months without pruning. Target: a median of 30 ms
# or less, so that a status line or prompt can call it.
#
#   AISAN_BIN=bin/aisan bash tests/bench/list_bench.sh
#
# The registry is synthetic but complete: every slot has its record, its
# lock file and a transcript. Most ended normally; a tenth lost their
# wrapper before it could record the end and name a (dead) jail init, so
# list must test their lock and their PID namespace, as in real use.
set -euo pipefail
: "${AISAN_BIN:?set AISAN_BIN to the aisan binary to measure}"
n=1000
runs=${AISAN_BENCH_LIST_RUNS:-25}
target=30

tmp=$(mktemp -d /tmp/aisan-listbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp AISAN_HOME=$tmp/state
mkdir -p "$AISAN_HOME/slots" "$AISAN_HOME/transcripts"

for i in $(seq 1 "$n"); do
	slot=$(printf 'repo%04d-%08x-claude' "$i" "$((i * 2654435761 % 4294967296))")
	transcript=$AISAN_HOME/transcripts/$slot/20250101T000000Z.log
	mkdir -p "${transcript%/*}"
	printf 'some output\n' >"$transcript"
	: >"$AISAN_HOME/slots/$slot.lock"
	# PID 4194303 is the kernel's maximum and in practice never in use.
	end='"end": "2025-01-01T01:00:00Z", "exit_status": 0,'
	if [ $((i % 10)) = 0 ]; then
		end=''
	fi
	printf '{"slot": "%s", "kind": "claude", "worktree": "/home/u/src/repo%04d", "wrapper_pid": %d, "init_pid": 4194303, "pidns_inode": 4026532999, "start": "2025-01-01T00:00:00Z", %s "transcript": "%s"}\n' \
		"$slot" "$i" "$((1000 + i))" "$end" "$transcript" >"$AISAN_HOME/slots/$slot.json"
done

# The registry was just written: let the kernel write it back now rather
# than while list is timed.
sync
lines=$("$AISAN_BIN" list | wc -l)
if [ "$lines" != $((n + 1)) ]; then
	echo "aisan list printed $lines lines, want $((n + 1)) (a header and $n slots)" >&2
	exit 1
fi

# The clock is bash's own (EPOCHREALTIME, in microseconds): reading it
# through date(1) timed two more process starts with every run, about
# ten milliseconds on a slow machine.
times=()
for _ in $(seq 1 "$runs"); do
	start=${EPOCHREALTIME/[.,]/}
	"$AISAN_BIN" list >/dev/null
	end=${EPOCHREALTIME/[.,]/}
	times+=($((end - start)))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f", m / 1e3}')
echo "aisan list, $n entries: median $median ms over $runs runs (target <= $target ms)"

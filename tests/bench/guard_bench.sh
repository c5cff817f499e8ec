#!/usr/bin/env bash
# guard_bench.sh: whole-process latency of `aisan guard`, the PreToolUse
# hook that runs before every shell command an agent issues.
#
# Usage: AISAN_BIN=path/to/aisan tests/bench/guard_bench.sh
#
# RUNS sets the number of timed runs (default 100, at least 50).
# BENCH_STRICT=1 makes the script fail when the median is over the target.
set -euo pipefail

bin=${AISAN_BIN:?set AISAN_BIN to the aisan binary}
runs=${RUNS:-100}
target_us=3000

if ((runs < 50)); then
	echo "guard_bench: RUNS=$runs is too few; use at least 50" >&2
	exit 2
fi

# A typical Claude Code PreToolUse input for the Bash tool.
input='{"session_id":"2f9c1c1e-5a1b-4c8e-9d7a-0b6f4e3a2d10","transcript_path":"/home/dev/.claude/projects/-home-dev-proj/2f9c1c1e.jsonl","cwd":"/home/dev/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cd /home/dev/proj && go test ./... 2>&1 | tail -n 40","description":"Run the test suite","timeout":120000,"run_in_background":false},"tool_use_id":"toolu_01ABCDEF"}'

# now_us prints the wall clock in microseconds, whatever the locale's
# decimal separator.
now_us() {
	local t=$EPOCHREALTIME
	echo "${t/[.,]/}"
}

for _ in 1 2 3; do # warm the page cache
	"$bin" guard <<<"$input" >/dev/null
done

samples=()
for ((i = 0; i < runs; i++)); do
	start=$(now_us)
	if ! "$bin" guard <<<"$input" >/dev/null; then
		echo "guard_bench: aisan guard refused the sample input" >&2
		exit 1
	fi
	end=$(now_us)
	samples+=($((end - start)))
done

median_us=$(printf '%s\n' "${samples[@]}" | sort -n | awk '
	{ v[NR] = $1 }
	END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }')

printf 'guard latency: median %d.%02d ms over %d runs (target <= 3 ms)\n' \
	$((median_us / 1000)) $(((median_us % 1000) / 10)) "$runs"

if [[ ${BENCH_STRICT:-} == 1 ]] && ((median_us > target_us)); then
	echo "guard_bench: median ${median_us} us is over the ${target_us} us target" >&2
	exit 1
fi

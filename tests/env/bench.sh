#!/usr/bin/env bash
# make bench: the figures the issues ask for, each as a ratio against a
# floor measured in the same run (bare bwrap, the stock tools, an empty Go
# program built as aisan is) or against its stated target, and at the end
# issue #27's table: every figure with its target and floor.
# As root the measurements run as the unprivileged test user inside the
# systemd user-manager environment, like the integration tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export GOFLAGS=${GOFLAGS:--buildvcs=false}
export CGO_ENABLED=${CGO_ENABLED:-0}
PATH=$PATH:/usr/local/go/bin

OUT=$(mktemp -d /tmp/aisan-bench.XXXXXX)
chmod 755 "$OUT"
# Measured as installed: a binary straight out of the linker starts up to
# a millisecond slower here than a copy of it (its pages are still the
# linker's), so the launch rows run copies, as make install makes them.
mkdir "$OUT/build"
bash tests/env/build.sh "$OUT/build"
install -m 0755 "$OUT/build/aisan" "$OUT/build/aisan-full" "$OUT/build/aisan-init" "$OUT/build/aisan-guard" "$OUT/"
rm -rf "$OUT/build"
# The floor of a process start: an empty Go program, built and installed
# the same way (static, the same flags), measured in the same run.
mkdir "$OUT/empty.src"
printf 'package main\n\nfunc main() {}\n' >"$OUT/empty.src/main.go"
printf 'module empty\n\ngo 1.26\n' >"$OUT/empty.src/go.mod"
(cd "$OUT/empty.src" && GOFLAGS= go build -o "$OUT/empty.build" .)
install -m 0755 "$OUT/empty.build" "$OUT/empty"
rm -rf "$OUT/empty.src" "$OUT/empty.build"
# The guard's shell parser alone, built the same way: the part of the
# guard's start that comes with the library it must link.
GOFLAGS= go build -o "$OUT/shonly.build" ./tests/bench/shonly
install -m 0755 "$OUT/shonly.build" "$OUT/shonly"
rm -f "$OUT/shonly.build"
ROWS=$OUT/figures.tsv
: >"$ROWS"
go build -o "$OUT/launchbench" ./tests/bench
go build -o "$OUT/busbench" ./tests/bench/busbench
go test -c -o "$OUT/integration.test" ./tests
cp -r tests/bench "$OUT/scripts"
chmod -R a+rX "$OUT"

inside=()
if [ "$(id -u)" = 0 ]; then
	bash tests/env/deps.sh
	bash tests/env/usermgr.sh start
	trap 'bash "$ROOT/tests/env/usermgr.sh" stop; rm -rf "$OUT"' EXIT
	inside=(bash "$ROOT/tests/env/usermgr.sh" exec)
else
	trap 'rm -rf "$OUT"' EXIT
fi

cd "$OUT"
chmod 666 "$ROWS"
"${inside[@]}" env AISAN_BIN="$OUT/aisan" "$OUT/launchbench" -aisan "$OUT/aisan" -empty "$OUT/empty" -shonly "$OUT/shonly" -rows "$ROWS" -runs "${AISAN_BENCH_RUNS:-30}"
"${inside[@]}" "$OUT/busbench" -runs 30
echo "systemd scope start (issue #5):"
"${inside[@]}" env AISAN_BIN="$OUT/aisan" "$OUT/integration.test" -test.run '^$' -test.bench 'BenchmarkScopeStart' -test.benchtime 20x 2>&1 | grep -E '^Benchmark' || true
for s in "$OUT"/scripts/*.sh; do
	[ -e "$s" ] || continue
	"${inside[@]}" env AISAN_BIN="$OUT/aisan" bash "$s"
done

# Strict mode's host side (no jail needed): the model egress chain against
# a direct client, the REAPI transport and the host allow-list proxy
# against direct connections, each in the same run.
cd "$ROOT"
echo "egress model proxy (issue #15):"
go run ./tests/bench/egressbench
echo "REAPI transport (issues #16, #27):"
reapi=$(go test ./egress/reapi -run '^$' -bench . -benchtime 20x 2>&1 | grep -E '^(Benchmark|\s)' || true)
printf '%s\n' "$reapi"
# The 64 MiB Write's share of direct throughput, from its metrics.
share=$(printf '%s\n' "$reapi" | awk '/^BenchmarkWrite64MiB/ {for (i = 2; i <= NF; i++) if ($i == "egress-%-of-direct") print $(i-1)}')
direct=$(printf '%s\n' "$reapi" | awk '/^BenchmarkWrite64MiB/ {for (i = 2; i <= NF; i++) if ($i == "direct-MiB/s") print $(i-1)}')
if [ -n "$share" ]; then
	verdict=$(awk -v s="$share" 'BEGIN {print (s >= 80) ? "ok" : "OVER TARGET"}')
	printf 'REAPI 64 MiB ByteStream Write, share of direct throughput\t%s %%\t>= 80 %%\t%s\tdirect %s MiB/s\n' "$share" "$verdict" "$direct" >>"$ROWS"
else
	printf 'REAPI 64 MiB ByteStream Write, share of direct throughput\t-\t>= 80 %%\tskipped: the benchmark failed\t-\n' >>"$ROWS"
fi
echo "host allow-list proxy (issue #18):"
go test ./egress/hostproxy -run '^$' -bench . -benchtime 20x 2>&1 | grep -E '^(Benchmark|\s)' || true

echo
echo "issue #27, every figure with its target and the floor it is taken against (same run):"
awk -F'\t' '{printf "  %-66s %-22s %-10s %-12s %s\n", $1, $2, $3, $4, $5}' "$ROWS"

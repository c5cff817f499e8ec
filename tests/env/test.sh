#!/usr/bin/env bash
# make test: unit tests, then the integration suite as an unprivileged user
# against the real stack. As root it first installs what the tests need,
# creates the test user and starts a systemd user manager for it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export GOFLAGS=${GOFLAGS:--buildvcs=false}
export CGO_ENABLED=${CGO_ENABLED:-0}
PATH=$PATH:/usr/local/go/bin

NPM_DIR=${AISAN_NPM_DIR:-/opt/aisan-test-npm}
if [ "$(id -u)" = 0 ]; then
	bash tests/env/deps.sh
	# The real agent CLIs for the guard's end-to-end tests.
	bash tests/env/npm.sh "$NPM_DIR"
fi
if [ -d "$NPM_DIR/node_modules" ]; then
	export AISAN_NODE_MODULES=${AISAN_NODE_MODULES:-$NPM_DIR/node_modules}
fi

echo "== format, imports, vet, staticcheck and unit tests"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "make test: these files are not gofmt'd (run 'make fmt'):" >&2
	echo "$unformatted" >&2
	exit 1
fi
# Imports in two groups, the standard library's, then the module's and
# third parties' (a pinned goimports, like staticcheck below).
misgrouped=$(go run golang.org/x/tools/cmd/goimports@v0.51.0 -l .)
if [ -n "$misgrouped" ]; then
	echo "make test: these files' imports are not grouped as goimports does (run 'make fmt'):" >&2
	echo "$misgrouped" >&2
	exit 1
fi
go vet ./...
# cmd/aisan is also built as the front (build tag aisanfront): vet and
# check that build too.
go vet -tags aisanfront ./cmd/aisan
# A pinned staticcheck, fetched from the module proxy like every other
# dependency; its findings fail the run.
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags aisanfront ./cmd/aisan
go test -count=1 $(go list ./... | grep -v /tests$)

OUT=$(mktemp -d /tmp/aisan-test.XXXXXX)
chmod 755 "$OUT"
bash tests/env/build.sh "$OUT"
go test -c -o "$OUT/integration.test" ./tests
cp -r tests "$OUT/src"
chmod -R a+rX "$OUT"

run_suite() {
	# The test binary runs from a copy of tests/ so the test user can read
	# its testdata wherever the checkout lives.
	(cd "$OUT/src" && "$@" env AISAN_BIN="$OUT/aisan" \
		AISAN_REQUIRE_INTEGRATION="${AISAN_REQUIRE_INTEGRATION:-}" \
		AISAN_NODE_MODULES="${AISAN_NODE_MODULES:-}" \
		TMPDIR=/tmp "$OUT/integration.test" -test.v -test.count=1 -test.timeout=20m ${AISAN_TEST_RUN:+-test.run "$AISAN_TEST_RUN"})
}

echo "== integration tests"
status=0
if [ "$(id -u)" = 0 ]; then
	trap 'bash "$ROOT/tests/env/usermgr.sh" stop; rm -rf "$OUT"' EXIT
	bash tests/env/usermgr.sh start
	run_suite bash "$ROOT/tests/env/usermgr.sh" exec >"$OUT/integration.log" 2>&1 || status=$?
else
	trap 'rm -rf "$OUT"' EXIT
	run_suite >"$OUT/integration.log" 2>&1 || status=$?
fi
# Keep the verbose log readable: per-test lines and failures, then the verdict.
grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok|panic|\s+\S+_test\.go:)' "$OUT/integration.log" | grep -v '^=== RUN' || true
if [ "$status" != 0 ]; then
	echo "== integration log (failed)"
	cat "$OUT/integration.log"
fi
# Last, where a short tail of this output still shows it: each failed
# test with the last lines it logged.
if grep -qE '^\s*--- FAIL' "$OUT/integration.log"; then
	echo "== failed tests"
	awk '
		/^=== (RUN|CONT|PAUSE|NAME)/ { cur = $3; next }
		/^[ \t]*--- FAIL: / { name = $3; print; for (i = cnt[name] > 5 ? cnt[name] - 5 : 1; i <= cnt[name]; i++) print "  " substr(msg[name, i], 1, 240); next }
		/^[ \t]+[^ \t]+_test\.go:[0-9]+:/ { msg[cur, ++cnt[cur]] = $0 }
	' "$OUT/integration.log"
fi
passed=$(grep -cE '^\s*--- PASS' "$OUT/integration.log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$OUT/integration.log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$OUT/integration.log" || true)
echo "integration: $passed passed, $failed failed, $skipped skipped"
exit "$status"

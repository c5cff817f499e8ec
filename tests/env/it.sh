#!/usr/bin/env bash
# Developer shortcut (run as root): build aisan and the integration test
# binary, then run the integration tests matching $1 as the test user inside
# the user-manager environment, leaving that environment running.
#   tests/env/it.sh 'TestBus|TestScope' [-test.v extra flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}
export CGO_ENABLED=${CGO_ENABLED:-0}
pattern=${1:-.}
shift || true
OUT=$(mktemp -d /tmp/aisan-it.XXXXXX)
chmod 755 "$OUT"
bash tests/env/build.sh "$OUT"
go test -c -o "$OUT/integration.test" ./tests
cp -r tests "$OUT/src"
chmod -R a+rX "$OUT"
bash tests/env/deps.sh
bash tests/env/usermgr.sh start
cd "$OUT/src"
status=0
[ -z "${AISAN_NODE_MODULES:-}" ] && [ -d /opt/aisan-test-npm/node_modules ] && AISAN_NODE_MODULES=/opt/aisan-test-npm/node_modules
bash "$OLDPWD/tests/env/usermgr.sh" exec env AISAN_BIN="$OUT/aisan" AISAN_NODE_MODULES="${AISAN_NODE_MODULES:-}" TMPDIR=/tmp \
	"$OUT/integration.test" -test.count=1 -test.timeout=10m -test.run "$pattern" "$@" || status=$?
rm -rf "$OUT"
exit $status

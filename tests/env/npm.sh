#!/usr/bin/env bash
# Installs, as root, the agent CLIs the hook and agent end-to-end tests
# drive, and mise, lefthook and husky (host tools the strict hand-off
# tests take the user's next step with), at pinned versions, into the directory given as $1 (their binaries
# end up in $1/node_modules/.bin), readable by the unprivileged test user.
# Idempotent: when every pinned version is there and runs, it does nothing.
#   bash tests/env/npm.sh /opt/aisan-test-npm
# All but husky (a node script) bring their native Linux binary as an
# optional dependency (mise's is @jdxcode/mise-linux-x64, lefthook's
# lefthook-linux-x64); claude's postinstall copies it over a placeholder, codex's and
# opencode's JS launchers find it at run time (and need node).
set -euo pipefail
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
OPENCODE_VERSION=1.18.33
MISE_VERSION=2026.9.15
LEFTHOOK_VERSION=2.2.2
HUSKY_VERSION=9.1.7

dir=${1:?usage: npm.sh DIR}
bin=$dir/node_modules/.bin

installed() {
	[ -x "$bin/claude" ] && [ -x "$bin/codex" ] && [ -x "$bin/opencode" ] && [ -x "$bin/mise" ] && [ -x "$bin/lefthook" ] || return 1
	"$bin/claude" --version 2>/dev/null | grep -qF "$CLAUDE_VERSION" || return 1
	"$bin/codex" --version 2>/dev/null | grep -qF "$CODEX_VERSION" || return 1
	"$bin/opencode" --version 2>/dev/null | grep -qxF "$OPENCODE_VERSION" || return 1
	"$bin/mise" --version 2>/dev/null | grep -qF "$MISE_VERSION" || return 1
	"$bin/lefthook" version 2>/dev/null | grep -qxF "$LEFTHOOK_VERSION" || return 1
	# husky prints no version; its package says it.
	[ -x "$bin/husky" ] && grep -qF "\"version\": \"$HUSKY_VERSION\"" "$dir/node_modules/husky/package.json" || return 1
}

if installed; then
	exit 0
fi

if ! command -v npm >/dev/null; then
	echo "== installing nodejs and npm"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

echo "== installing @anthropic-ai/claude-code@$CLAUDE_VERSION, @openai/codex@$CODEX_VERSION, opencode-ai@$OPENCODE_VERSION, @jdxcode/mise@$MISE_VERSION, husky@$HUSKY_VERSION and lefthook@$LEFTHOOK_VERSION into $dir"
mkdir -p "$dir"
start=$SECONDS
npm install --prefix "$dir" --no-audit --no-fund --no-update-notifier --loglevel=error \
	"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "opencode-ai@$OPENCODE_VERSION" \
	"@jdxcode/mise@$MISE_VERSION" "husky@$HUSKY_VERSION"

# lefthook's install script runs 'lefthook install' in the directory npm
# was started from, which would put hooks into whatever repository that
# is (this checkout, in CI); it does nothing under CI=true.
(cd "$dir" && CI=true npm install --prefix "$dir" --no-audit --no-fund --no-update-notifier --loglevel=error \
	"lefthook@$LEFTHOOK_VERSION")

# An npm that skips install scripts leaves claude's placeholder in place;
# run the postinstall ourselves then.
if ! "$bin/claude" --version >/dev/null 2>&1; then
	(cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs)
fi
chmod -R a+rX "$dir"

if ! installed; then
	echo "npm.sh: claude, codex, opencode, mise, lefthook or husky does not run after installing:" >&2
	"$bin/claude" --version >&2 || true
	"$bin/codex" --version >&2 || true
	"$bin/opencode" --version >&2 || true
	"$bin/mise" --version >&2 || true
	"$bin/lefthook" version >&2 || true
	exit 1
fi
echo "== agents installed in $((SECONDS - start))s: $("$bin/claude" --version), $("$bin/codex" --version), opencode $("$bin/opencode" --version), mise $("$bin/mise" --version)"

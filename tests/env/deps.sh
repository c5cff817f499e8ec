#!/usr/bin/env bash
# Installs, as root, what make test needs and creates the unprivileged test
# user. Idempotent: it installs only what is missing.
set -euo pipefail
# pre-commit: a host tool the strict hand-off tests take the next commit with.
# libglib2.0-bin: gdbus, a GDBus client for the jail bus tests.
# direnv: the host tool the strict box's .envrc test takes the next step with.
# pipenv: a Python launcher the hand-off tests run a venv's command through.
# gpg-agent, gpgconf: the shared agent the guard's jail test ends.
pkgs=(bubblewrap xdg-dbus-proxy dbus dbus-user-session libglib2.0-bin systemd procps psmisc util-linux git bash zsh fish tmux socat man-db groff-base make pre-commit direnv pipenv gpg-agent gpgconf)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "== installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
TUSER=${AISAN_TEST_USER:-aisan-test}
if ! id "$TUSER" >/dev/null 2>&1; then
	useradd --create-home --shell /bin/bash "$TUSER"
fi

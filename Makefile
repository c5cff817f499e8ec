# aisan: make test is the test command CI runs (via .ci/run).
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
PREFIX ?= /usr/local
export GOFLAGS ?= -buildvcs=false
# A static binary starts about a millisecond faster (no dynamic loader);
# every launch starts aisan once and aisan-init twice, every guarded tool
# call aisan-guard once.
export CGO_ENABLED ?= 0

.PHONY: build deps install test unit bench fmt clean

# aisan-init is the stage and the jail's PID 1, aisan-guard the guard hook
# alone: small binaries for what starts on every launch and before every
# shell command. aisan uses them when they sit next to it (and does their
# work itself when they do not).
build:
	$(GO) build -o bin/aisan ./cmd/aisan
	$(GO) build -o bin/aisan-init ./cmd/aisan-init
	$(GO) build -o bin/aisan-guard ./cmd/aisan-guard

# The runtime dependencies, through the system's package manager (Debian
# and Ubuntu; elsewhere install bubblewrap and xdg-dbus-proxy yourself).
deps:
	@command -v bwrap >/dev/null && command -v xdg-dbus-proxy >/dev/null || \
		{ command -v apt-get >/dev/null && apt-get install -y bubblewrap xdg-dbus-proxy; } || \
		echo "make: install bubblewrap and xdg-dbus-proxy with your package manager" >&2

install: deps build
	install -D -m 0755 bin/aisan $(DESTDIR)$(PREFIX)/bin/aisan
	install -D -m 0755 bin/aisan-init $(DESTDIR)$(PREFIX)/bin/aisan-init
	install -D -m 0755 bin/aisan-guard $(DESTDIR)$(PREFIX)/bin/aisan-guard

# Everything: dependencies (as root), unit tests, integration tests as an
# unprivileged user against the real bwrap, dbus and systemd user manager.
test:
	bash tests/env/test.sh

unit:
	$(GO) test ./...

bench:
	bash tests/env/bench.sh

fmt:
	gofmt -l -w .
	$(GO) run golang.org/x/tools/cmd/goimports@v0.51.0 -l -w .

clean:
	rm -rf bin

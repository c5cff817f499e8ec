# aisan: make test is the test command CI runs (via .ci/run).
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
PREFIX ?= /usr/local
export GOFLAGS ?= -buildvcs=false
# aisan records the commit it was built from ('aisan version') when this
# is a git checkout that git here can read; a tarball, or a checkout git
# refuses as another user's, builds without. The linker sets it: Go's own
# stamping (-buildvcs) misses linked worktrees, but gives the module its
# version from a tag where it works.
VCS := $(shell git rev-parse --is-inside-work-tree >/dev/null 2>&1 && echo true || echo false)
ifeq ($(VCS),true)
COMMIT := $(shell git rev-parse HEAD)$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo +dirty)
COMMIT_DATE := $(shell git log -1 --format=%cs HEAD)
endif
LDFLAGS := -X main.commit=$(COMMIT) -X main.commitDate=$(COMMIT_DATE)
# A static binary starts about a millisecond faster (no dynamic loader);
# every launch starts aisan once and aisan-init once, every guarded tool
# call aisan-guard once.
export CGO_ENABLED ?= 0

.PHONY: build deps install test unit bench fmt clean

# aisan is the front (build tag aisanfront: the deny-list launchers and
# what starts often), aisan-full everything else, strict boxes included:
# the front execs it for what it does not link (cmd/aisan/handover.go).
# aisan-init is the jail's PID 1, aisan-guard the guard hook
# alone: small binaries for what starts on every launch and before every
# shell command. aisan uses them when they sit next to it (and does their
# work itself when they do not). The manual page, aisan(1), is aisan's own
# help texts and the README's environment table, printed by the binary
# just built.
build:
	$(GO) build -trimpath -buildvcs=$(VCS) -tags aisanfront -ldflags '$(LDFLAGS)' -o bin/aisan ./cmd/aisan
	$(GO) build -trimpath -buildvcs=$(VCS) -ldflags '$(LDFLAGS)' -o bin/aisan-full ./cmd/aisan
	$(GO) build -trimpath -buildvcs=$(VCS) -o bin/aisan-init ./cmd/aisan-init
	$(GO) build -trimpath -buildvcs=$(VCS) -o bin/aisan-guard ./cmd/aisan-guard
	bin/aisan help --man > bin/aisan.1.tmp && mv bin/aisan.1.tmp bin/aisan.1

# The runtime dependencies, through the system's package manager (Debian
# and Ubuntu; elsewhere install bubblewrap and xdg-dbus-proxy yourself).
deps:
	@command -v bwrap >/dev/null && command -v xdg-dbus-proxy >/dev/null || \
		{ command -v apt-get >/dev/null && apt-get install -y bubblewrap xdg-dbus-proxy; } || \
		echo "make: install bubblewrap and xdg-dbus-proxy with your package manager" >&2

install: deps build
	install -D -m 0755 bin/aisan $(DESTDIR)$(PREFIX)/bin/aisan
	install -D -m 0755 bin/aisan-full $(DESTDIR)$(PREFIX)/bin/aisan-full
	install -D -m 0755 bin/aisan-init $(DESTDIR)$(PREFIX)/bin/aisan-init
	install -D -m 0755 bin/aisan-guard $(DESTDIR)$(PREFIX)/bin/aisan-guard
	install -D -m 0644 bin/aisan.1 $(DESTDIR)$(PREFIX)/share/man/man1/aisan.1

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

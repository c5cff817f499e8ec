# aisan: make test is the test command CI runs (via .ci/run).
GO ?= go
export GOFLAGS ?= -buildvcs=false

.PHONY: build install test unit bench fmt lint clean

build:
	$(GO) build -o bin/aisan ./cmd/aisan

install: build
	install -m 0755 bin/aisan $${PREFIX:-/usr/local}/bin/aisan

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

clean:
	rm -rf bin

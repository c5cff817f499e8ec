module github.com/aisan-dev/aisan

go 1.26.8

require (
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/creack/pty v1.1.24
	github.com/godbus/dbus/v5 v5.2.4
	github.com/mattn/go-shellwords v1.0.16
	golang.org/x/sys v0.50.0
	golang.org/x/time v0.16.0
	mvdan.cc/sh/v3 v3.14.1
)

// Test dependencies.
require (
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
)

require golang.org/x/tools v0.38.0 // indirect

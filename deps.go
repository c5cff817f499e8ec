//go:build aisan_deps

// This file pins the project's dependencies in go.mod while the packages
// that use them are being written; it is never compiled.
package deps

import (
	_ "github.com/coreos/go-systemd/v22/dbus"
	_ "github.com/creack/pty"
	_ "github.com/godbus/dbus/v5"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "golang.org/x/sys/unix"
	_ "mvdan.cc/sh/v3/syntax"
)

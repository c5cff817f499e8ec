// Package tests holds aisan's integration tests: they drive the real aisan
// binary, the real bwrap, xdg-dbus-proxy, dbus-daemon and a real systemd
// user manager, as an unprivileged user (make test arranges that when it
// runs as root).
//
// A test that needs a capability the host lacks skips with the probe's
// reason; with AISAN_REQUIRE_INTEGRATION=1 (set by .ci/run) it fails
// instead, so CI cannot pass by skipping.
package tests

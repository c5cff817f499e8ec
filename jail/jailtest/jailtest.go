// Package jailtest holds what aisan's unit tests share about the host:
// a test that needs something the machine may lack (bwrap, a PID
// namespace, a shell) skips with the reason, except under
// AISAN_REQUIRE_INTEGRATION=1 (which CI sets), where it fails, so that CI
// cannot pass by skipping.
package jailtest

import (
	"os"
	"testing"
)

// Need skips t, saying it needs what and why (err), or fails it when
// AISAN_REQUIRE_INTEGRATION=1. A nil err is a no-op.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("AISAN_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf("needs %s: %v (AISAN_REQUIRE_INTEGRATION=1 forbids skipping)", what, err)
	}
	t.Skipf("needs %s: %v", what, err)
}

// NotRoot skips a test of file modes when it runs as root, whom a mode
// does not stop. CI runs the unit tests as root, so such a test must
// name the integration test that proves the same as an unprivileged
// user (coveredBy); the skip says where the behaviour is checked.
func NotRoot(t testing.TB, coveredBy string) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skipf("root reads any directory; as a user this is checked here and by the integration test %s", coveredBy)
	}
}

package rundir

import (
	"path/filepath"
	"testing"
)

// TestLockDir: the locks are in /run/user/UID when it is ours, and in
// the state directory's run directory otherwise (a plain su, cron, a
// container), whatever XDG_RUNTIME_DIR says: one directory for every
// process sharing the state directory.
func TestLockDir(t *testing.T) {
	std, state := t.TempDir(), "/home/u/.aisan"
	if got, want := lockDir(std, state), filepath.Join(std, "aisan", "locks"); got != want {
		t.Errorf("with the runtime directory: %q, want %q", got, want)
	}
	missing := filepath.Join(t.TempDir(), "1000")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if got, want := lockDir(missing, state), "/home/u/.aisan/run/locks"; got != want {
		t.Errorf("without one: %q, want %q", got, want)
	}
}

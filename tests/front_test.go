package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontHandsOver: the front runs what it does not link (a strict
// launch, report, logs, ...) as aisan-full beside it, and only an
// aisan-full as hard to swap as itself; without one it says what is
// missing and how to install it.
func TestFrontHandsOver(t *testing.T) {
	_, env := testEnv(t)
	full := beside(t, "aisan-full")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	front := filepath.Join(dir, "aisan")
	copyExec(t, aisanBin, front, 0o755)
	copied := filepath.Join(dir, "aisan-full")

	// Alone: the deny-list side works, the rest says what is missing.
	if r := runCmd(t, "", env, "", front, "kill", "--help"); r.code != 0 {
		t.Fatalf("the front alone, kill --help: exit %d: %s", r.code, r.stderr)
	}
	r := runCmd(t, "", env, "", front, "report", "--help")
	if r.code == 0 || !strings.Contains(r.stderr, "aisan-full, which is not installed beside "+front) || !strings.Contains(r.stderr, "hint: install aisan with 'make install'") {
		t.Fatalf("the front alone, report --help: exit %d, stderr %q; want the missing aisan-full named, with a hint", r.code, r.stderr)
	}
	r = runCmd(t, "", env, "", front, "run", "--strict", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "not installed beside") {
		t.Fatalf("the front alone, a strict launch: exit %d, stderr %q; want it refused for the missing aisan-full", r.code, r.stderr)
	}

	// One that others may write is not run: it would run every strict
	// launch.
	copyExec(t, full, copied, 0o755)
	if err := os.Chmod(copied, 0o777); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "", env, "", front, "report", "--help")
	if r.code == 0 || !strings.Contains(r.stderr, "may be written by others") {
		t.Fatalf("a world-writable aisan-full: exit %d, stderr %q; want it refused", r.code, r.stderr)
	}

	// Beside it as installed: the command runs there, with the same
	// arguments.
	if err := os.Chmod(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "", env, "", front, "report", "--help")
	want := runCmd(t, "", env, "", full, "report", "--help")
	if r.code != 0 || r.stdout != want.stdout || !strings.Contains(r.stdout, "Usage: aisan report") {
		t.Fatalf("report --help through the front: exit %d, stdout %q, stderr %q; want aisan-full's %q", r.code, r.stdout, r.stderr, want.stdout)
	}
}

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeanInit: a launch runs aisan-init, installed next to aisan, as the
// jail's PID 1 and as the stage; aisan alone (copied without it) still
// launches, with itself in both roles.
func TestLeanInit(t *testing.T) {
	requireJail(t)
	lean := filepath.Join(filepath.Dir(aisanBin), "aisan-init")
	if _, err := os.Stat(lean); err != nil {
		t.Fatalf("the binary under test has no aisan-init beside it (%v): build both, as make build does", err)
	}
	_, env := testEnv(t)
	env = append(env, "AISAN_NO_SCOPE=1")
	// The stage is started through the same descriptor bwrap runs the
	// init from, so the init's executable names both.
	probe := `readlink /proc/1/exe`
	r := aisan(t, env, "", "run", "--", "sh", "-c", probe)
	if r.code != 0 {
		t.Fatalf("aisan run: %d %s", r.code, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != lean {
		t.Fatalf("the jail's init runs %q, want the lean %q", got, lean)
	}

	alone := filepath.Join(t.TempDir(), "aisan")
	data, err := os.ReadFile(aisanBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "", env, "", alone, "run", "--", "sh", "-c", probe)
	if r.code != 0 {
		t.Fatalf("aisan without aisan-init: %d %s", r.code, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != alone {
		t.Fatalf("without aisan-init the init runs %q, want aisan itself (%q)", got, alone)
	}
}

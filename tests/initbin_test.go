package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLeanInit: a launch runs aisan-init, installed next to aisan, as the
// jail's PID 1; aisan alone (copied without it) still launches, with
// itself as the init.
func TestLeanInit(t *testing.T) {
	requireJail(t)
	lean := filepath.Join(filepath.Dir(aisanBin), "aisan-init")
	if _, err := os.Stat(lean); err != nil {
		t.Fatalf("the binary under test has no aisan-init beside it (%v): build both, as make build does", err)
	}
	_, env := testEnv(t)
	env = append(env, "AISAN_NO_SCOPE=1")
	// The init is undumpable, so nothing inside the jail may read its
	// /proc/1/exe; the host, which owns the jail's user namespace, can.
	initExe := func(bin string) string {
		t.Helper()
		cmd := exec.Command(bin, "run", "--", "sleep", "300")
		cmd.Dir = slotWorktree(t)
		cmd.Env = append(os.Environ(), env...)
		background(t, cmd)
		e := slotRunningFor(t, env, cmd)
		// bwrap records the init's PID before its child has set the jail
		// up and exec'd the init: until then it runs bwrap.
		var exe string
		var err error
		waitFor(t, 10*time.Second, "the init's exec", func() bool {
			exe, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", e.InitPID))
			return err != nil || filepath.Base(exe) != "bwrap"
		})
		syscall.Kill(e.InitPID, syscall.SIGKILL)
		slotWait(t, cmd)
		if err != nil {
			t.Fatalf("reading the init's executable from the host: %v", err)
		}
		return exe
	}
	if got := initExe(aisanBin); got != lean {
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
	if got := initExe(alone); got != alone {
		t.Fatalf("without aisan-init the init runs %q, want aisan itself (%q)", got, alone)
	}
}

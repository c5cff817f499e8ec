package boxinit

import (
	"os"
	"syscall"
	"testing"
)

// TestWaitExit: the status of a real child started with Spawn, as a shell
// reports it.
func TestWaitExit(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 128 + 15}, {"kill -KILL $$", 128 + 9}} {
		pid, err := Spawn("/bin/sh", []string{"sh", "-c", tt.script}, os.Environ(), []int{0, 1, 2}, &syscall.SysProcAttr{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := WaitExit(pid); err != nil || got != tt.want {
			t.Errorf("%s: %d (%v), want %d", tt.script, got, err, tt.want)
		}
	}
	if _, err := WaitExit(os.Getpid()); err == nil {
		t.Error("waiting for a process that is not our child gave no error")
	}
}

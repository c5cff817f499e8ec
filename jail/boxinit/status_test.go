package boxinit

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestStatusOf: the status of a real child, as a shell reports it.
func TestStatusOf(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 128 + 15}, {"kill -KILL $$", 128 + 9}} {
		cmd := exec.Command("/bin/sh", "-c", tt.script)
		cmd.Run()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok {
			t.Fatalf("%s: no wait status", tt.script)
		}
		if got := StatusOf(ws); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.script, got, tt.want)
		}
	}
}

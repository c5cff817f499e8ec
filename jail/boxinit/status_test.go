package boxinit

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"
)

// TestExitCode: the status of a real child, as a shell reports it, also
// through a wrapped error; anything else is 125.
func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 128 + 15}} {
		err := exec.Command("/bin/sh", "-c", tt.script).Run()
		if got := ExitCode(err); got != tt.want {
			t.Errorf("%s: %d, want %d (%v)", tt.script, got, tt.want, err)
		}
		if got := ExitCode(fmt.Errorf("waiting: %w", err)); err != nil && got != tt.want {
			t.Errorf("%s, wrapped: %d, want %d", tt.script, got, tt.want)
		}
	}
	if got := ExitCode(errors.New("no such thing")); got != 125 {
		t.Errorf("another error: %d, want 125", got)
	}
}

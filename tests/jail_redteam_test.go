package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedteamTerminalKeystrokes: a launch whose stdin is redirected
// (`aisan run -- make test </dev/null`, a script reading from a file) but
// whose stdout and stderr are the user's terminal runs without a pty, and
// the terminal passes through as it is. The jail must not read what the
// user types there afterwards: aisan forwards the terminal's input only
// while it is the foreground job. An agent that leaves a process reading
// its stderr behind would otherwise get every line the user types at the
// shell once aisan has returned (a password for sudo or ssh included):
// the descriptor is the shell's own, open for reading and writing, and
// a process with no controlling terminal reads a terminal freely.
func TestRedteamTerminalKeystrokes(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	dir := t.TempDir()
	stolen := filepath.Join(dir, "stolen")
	term := newTerminal(t, 24, 80)
	// The user's shell: it runs aisan with stdin redirected, says when
	// aisan returned, and waits at its prompt.
	script := `aisan run -- sh -c 'setsid sh -c "cat <&2 >` + stolen + `" </dev/null >/dev/null &' </dev/null; echo RETURNED $?; sleep 60`
	shell := exec.Command("sh", "-c", script)
	shell.Dir = dir
	shell.Env = append(append(os.Environ(), env...), "PATH="+filepath.Dir(aisanBin)+":"+os.Getenv("PATH"))
	term.start(shell)
	term.expect("RETURNED 0")
	// The user types at the prompt.
	time.Sleep(500 * time.Millisecond)
	if _, err := term.master.Write([]byte("hunter2-typed-at-the-prompt\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	got, _ := os.ReadFile(stolen)
	if strings.Contains(string(got), "hunter2") {
		t.Errorf("a process the jail left behind read %q from the user's terminal after aisan returned", got)
	}
	shell.Process.Signal(syscall.SIGKILL)
}

package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStrictSignalWhileAdmitting: a strict box's agent waits for the
// host's snapshot of the repository (git status, which takes seconds in
// a large repository). A SIGINT that reaches aisan meanwhile ends the
// launch with 130 before the agent is admitted, with or without a scope,
// without waiting for git to finish; it is not handed to an agent
// started after it. The launch's trace says
// whether the agent was admitted; the agent here also ignores SIGINT as
// soon as env runs, so one started late enough leaves its file behind
// (an agent that the forwarded SIGINT ended before env ignored it would
// end with 130 too, and is seen by the trace alone).
func TestStrictSignalWhileAdmitting(t *testing.T) {
	repo, _, env := strictRepo(t)
	// A git whose status takes four seconds, and says when it began.
	bin := t.TempDir()
	began := filepath.Join(bin, "status-began")
	real, err := exec.LookPath("git") // strictRepo needed it
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = status ]; then : > " + began + "; sleep 4; break; fi; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	for _, scoped := range []bool{false, true} {
		name := "no scope"
		if scoped {
			name = "scope"
			if os.Getenv("XDG_RUNTIME_DIR") == "" {
				need(t, "a systemd user manager", errors.New("XDG_RUNTIME_DIR is unset"))
			}
		}
		t.Run(name, func(t *testing.T) {
			os.Remove(began)
			marker := filepath.Join(repo, "agent-ran")
			os.Remove(marker)
			cmd := exec.Command(aisanBin, "run", "--strict", "--", "env", "--ignore-signal=INT", "sh", "-c", ": > agent-ran")
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), env...)
			if !scoped {
				cmd.Env = append(cmd.Env, "AISAN_NO_SCOPE=1")
			}
			cmd.Env = append(cmd.Env, "AISAN_TRACE=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			background(t, cmd)
			deadline := time.Now().Add(20 * time.Second)
			for {
				if _, err := os.Stat(began); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the launch never ran git status")
				}
				time.Sleep(10 * time.Millisecond)
			}
			// The snapshot runs beside the launch's other steps: by now
			// the launch waits for it, bwrap released.
			time.Sleep(time.Second)
			cmd.Process.Signal(syscall.SIGINT)
			sent := time.Now()
			code, _ := exitStatus(cmd.Wait())
			// git's status still had three seconds to go: the launch
			// gives it up rather than wait for it.
			if d := time.Since(sent); d > 2*time.Second {
				t.Errorf("the launch took %v to end after the SIGINT: it waited for the snapshot", d.Round(time.Millisecond))
			}
			if strings.Contains(stderr.String(), " ms admitted\n") {
				t.Errorf("the agent was admitted after the SIGINT:\n%s", stderr.String())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the agent ran after the SIGINT (status %d)", code)
			}
			if code != 130 {
				t.Errorf("status %d, want 130", code)
			}
		})
	}
}

package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// aisanBin is the binary under test: $AISAN_BIN, or one built by TestMain.
var aisanBin string

func TestMain(m *testing.M) {
	aisanBin = os.Getenv("AISAN_BIN")
	var cleanup func()
	if aisanBin == "" {
		dir, err := os.MkdirTemp("", "aisan-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cleanup = func() { os.RemoveAll(dir) }
		aisanBin = filepath.Join(dir, "aisan")
		// Laid out as installed: the front, the full binary it hands
		// strict launches and most commands to, aisan-init (the in-jail
		// init) and aisan-guard (what install-hook registers).
		cmd := exec.Command("bash", "env/build.sh", dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building aisan:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	os.Exit(code)
}

// need skips t with the reason when err is not nil, or fails it when
// AISAN_REQUIRE_INTEGRATION=1.
func need(t testing.TB, what string, err error) {
	t.Helper()
	jailtest.Need(t, what, err)
}

var probeJail = sync.OnceValue(func() error {
	if os.Geteuid() == 0 {
		return errors.New("running as root; jail tests run as an unprivileged user (make test does that)")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return fmt.Errorf("bwrap not installed (apt-get install bubblewrap): %w", err)
	}
	out, err := exec.Command("bwrap", "--bind", "/", "/", "--proc", "/proc", "--unshare-pid", "true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("bwrap cannot create namespaces: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
})

// requireJail skips (or fails) unless bwrap can build a jail here, as an
// unprivileged user.
func requireJail(t testing.TB) {
	t.Helper()
	need(t, "an unprivileged user with working bwrap", probeJail())
}

var probeUserManager = sync.OnceValue(func() error {
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if rt == "" {
		return errors.New("XDG_RUNTIME_DIR is not set")
	}
	fi, err := os.Stat(filepath.Join(rt, "systemd", "private"))
	if err != nil {
		return fmt.Errorf("no systemd user manager: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s/systemd/private is not a socket", rt)
	}
	return nil
})

// requireUserManager skips (or fails) unless a systemd user manager runs.
func requireUserManager(t testing.TB) {
	t.Helper()
	need(t, "a systemd user manager (make test starts one)", probeUserManager())
}

// result is a finished command.
type result struct {
	stdout, stderr string
	code           int
}

// aisan runs the binary under test with args and env added to the
// environment, stdin from in, and waits at most a minute.
func aisan(t testing.TB, env []string, in string, args ...string) result {
	t.Helper()
	return aisanIn(t, "", env, in, args...)
}

// aisanIn is aisan with the working directory dir ("" for the test's).
func aisanIn(t testing.TB, dir string, env []string, in string, args ...string) result {
	t.Helper()
	return runCmd(t, dir, env, in, aisanBin, args...)
}

// runCmd runs a command to completion (at most a minute), isolated, with
// env added to the environment and stdin from in, and returns its output
// and status (128+N when a signal N ended it).
func runCmd(t testing.TB, dir string, env []string, in string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(in)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	isolate(cmd)
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	code, ok := exitStatus(err)
	if !ok {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	r.code = code
	return r
}

// exitStatus is the status of a child that Wait returned err for, as a
// shell reports it: 128+N when signal N ended it. ok is false for an
// error that is not the child's end.
func exitStatus(err error) (code int, ok bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee):
		if ws, isWait := ee.Sys().(syscall.WaitStatus); isWait && ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return ee.ExitCode(), true
	}
	return 0, false
}

// isolate puts a child in its own process group and kills it with the
// test process, so no test leaks a jail.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// background starts cmd isolated and kills its process group at cleanup.
func background(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	isolate(cmd)
	runtime.LockOSThread() // Pdeathsig follows the thread that forked
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
}

// waitFor polls cond every 10ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testEnv returns a HOME and AISAN_HOME private to the test, as env
// entries, so tests never touch the user's real state.
func testEnv(t testing.TB) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	env = []string{"HOME=" + home, "AISAN_HOME=" + filepath.Join(home, ".aisan")}
	// No test leaks a jail: whatever a test launched under this state
	// directory and left running (an orphan whose wrapper it killed, say)
	// is killed when it ends.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(home, ".aisan", "slots")); err != nil {
			return
		}
		cmd := exec.Command(aisanBin, "kill", "--all", "--signal", "KILL")
		cmd.Env = append(os.Environ(), env...)
		cmd.Run()
		// A killed slot's wrapper or keeper still collects what its box
		// left for review; removing the state under it would race.
		// Wait for the writers to finish, then remove it ourselves.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			list := exec.Command(aisanBin, "list", "--running", "--json")
			list.Env = cmd.Env
			out, err := list.Output()
			if err != nil || !strings.Contains(string(out), `"slot"`) {
				break
			}
		}
		state := filepath.Join(home, ".aisan")
		for deadline := time.Now().Add(10 * time.Second); ; {
			err := os.RemoveAll(state)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return home, env
}

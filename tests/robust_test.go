package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalAtStartup: a SIGTERM sent at any moment of a launch, however
// early, ends it with 143: it is never lost (the agent running to the
// end) and never ends the launch some other way.
func TestSignalAtStartup(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	for _, d := range []time.Duration{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 30, 50} {
		d *= time.Millisecond
		cmd := exec.Command(aisanBin, "run", "--", "sleep", "5")
		cmd.Env = append(os.Environ(), env...)
		background(t, cmd)
		time.Sleep(d)
		start := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		code, _ := exitStatus(cmd.Wait())
		if code != 143 || time.Since(start) > 3*time.Second {
			t.Errorf("SIGTERM %v after the start: status %d after %v, want 143 at once", d, code, time.Since(start).Round(time.Millisecond))
		}
	}
	// Nothing half-made is left: every slot is either exited with its
	// status or gone.
	r := aisan(t, env, "", "list", "--json")
	if strings.Contains(r.stdout, `"state": "running"`) || strings.Contains(r.stdout, `"state": "orphaned"`) {
		t.Errorf("launches interrupted at startup left live slots:\n%s", r.stdout)
	}
}

// TestClosedOutputEndsAgent: `aisan run -- yes | head -1` ends like
// `yes | head -1`: the agent gets EPIPE when the reader is gone, instead of
// blocking on a pipe nobody drains.
func TestClosedOutputEndsAgent(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `"$0" run -- yes | head -n 1`, aisanBin)
	cmd.Env = append(os.Environ(), env...)
	isolate(cmd)
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatal("aisan run -- yes | head -1 hung")
	}
	if err != nil || string(out) != "y\n" {
		t.Fatalf("got %q, %v", out, err)
	}
}

// TestIgnoredSignalStaysIgnored: like nohup without aisan, a SIGHUP that
// the caller ignores is ignored by the agent too.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	cmd := exec.Command("bash", "-c", `trap "" HUP; exec "$0" run -- sh -c 'sleep 0.5; echo survived'`, aisanBin)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout = &out
	background(t, cmd)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGHUP)
	if err := cmd.Wait(); err != nil || out.String() != "survived\n" {
		t.Fatalf("nohup-style SIGHUP: %v, output %q; want the agent to survive", err, out.String())
	}
}

// TestStoppedAgentDoesNotHang: an agent that stops itself (SIGTSTP) does
// not leave the launch waiting forever.
func TestStoppedAgentDoesNotHang(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	r := aisan(t, env, "", "run", "--", "sh", "-c", "kill -TSTP $$; echo resumed")
	if r.code != 0 || r.stdout != "resumed\n" {
		t.Fatalf("a self-stopping agent: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestStartFailureIsAnError: a launch that cannot create its descriptors
// fails with an error, not a crash, and leaves no slot.
func TestStartFailureIsAnError(t *testing.T) {
	requireJail(t)
	home, env := testEnv(t)
	cmd := exec.Command("bash", "-c", `ulimit -n 11; exec "$0" run -- true`, aisanBin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "panic") || !strings.Contains(string(out), "aisan: error:") {
		t.Fatalf("with 11 descriptors: %v %q", err, out)
	}
	ents, _ := os.ReadDir(filepath.Join(home, ".aisan", "slots"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			t.Errorf("a failed start left %s", e.Name())
		}
	}
}

// TestTwoStreamsOneFile: with 2>&1 the order of stdout and stderr lines
// is kept, as without aisan.
func TestTwoStreamsOneFile(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	cmd := exec.Command("bash", "-c", `"$0" run -- sh -c 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done' 2>&1`, aisanBin)
	cmd.Env = append(os.Environ(), env...)
	isolate(cmd)
	out, err := cmd.Output()
	want := "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n"
	if err != nil || string(out) != want {
		t.Fatalf("2>&1: %v\n%s\nwant\n%s", err, out, want)
	}
}

// TestJailEndsWithBwrap: bwrap is the wrapper's own child and runs
// without --die-with-parent (the jail must outlive a wrapper that hands
// it to a keeper), so the jail's init asks the kernel to kill it when
// bwrap dies. bwrap killed from the host ends the whole jail, the agent
// and what it started, and the wrapper returns.
func TestJailEndsWithBwrap(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	env = append(env, "AISAN_NO_SCOPE=1")
	cmd, out, e := slotLaunchAisan(t, slotWorktree(t), env, "run", "--", "sh", "-c", "sleep 300 & echo started; wait")
	waitFor(t, 20*time.Second, "the agent to start", func() bool { return strings.Contains(out.String(), "started") })
	pids := jailPIDs(t, e.PidNSInode)
	if len(pids) < 3 {
		t.Fatalf("the jail shows %d processes; want the init, the shell and its sleeper", len(pids))
	}
	bwrap, err := parentPID(e.InitPID)
	if err != nil {
		t.Fatal(err)
	}
	comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(bwrap), "comm"))
	if up, err := parentPID(bwrap); strings.TrimSpace(string(comm)) != "bwrap" || err != nil || up != cmd.Process.Pid {
		t.Fatalf("the init's parent %d is %q with parent %d (%v); want bwrap, the wrapper's (%d) child", bwrap, comm, up, err, cmd.Process.Pid)
	}
	if err := syscall.Kill(bwrap, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	slotWait(t, cmd)
	waitFor(t, 5*time.Second, "every process of the jail to end with bwrap", func() bool {
		for _, p := range pids {
			if slotProcRunning(p) {
				return false
			}
		}
		return true
	})
}

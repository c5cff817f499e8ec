package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJailTerminalWriteOnly: a launch whose stdin is redirected
// (`aisan run -- make test </dev/null`, a script reading from a file) but
// whose stdout and stderr are the user's terminal runs without a pty, and
// the terminal passes through as it is. The jail must not read what the
// user types there afterwards: aisan forwards the terminal's input only
// while it is the foreground job. An agent that leaves a process reading
// its stderr behind would otherwise get every line the user types at the
// shell once aisan has returned (a password for sudo or ssh included):
// the descriptor is the shell's own, open for reading and writing, and
// a process with no controlling terminal reads a terminal freely.
func TestJailTerminalWriteOnly(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	dir := t.TempDir()
	stolen, alive := filepath.Join(dir, "stolen"), filepath.Join(dir, "alive")
	term := newTerminal(t, 24, 80)
	// The user's shell: it runs aisan with stdin redirected, says when
	// aisan returned, and waits at its prompt. What the jail leaves
	// behind says it started, then reads its stderr.
	script := `aisan run -- sh -c 'setsid sh -c "echo alive >` + alive + `; cat <&2 >` + stolen + `" </dev/null >/dev/null &' </dev/null; echo RETURNED $?; sleep 60`
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
	if _, err := os.Stat(alive); err != nil {
		t.Fatalf("the process the jail left behind never started, so the test shows nothing: %v", err)
	}
	got, _ := os.ReadFile(stolen)
	if strings.Contains(string(got), "hunter2") {
		t.Errorf("a process the jail left behind read %q from the user's terminal after aisan returned", got)
	}
	shell.Process.Signal(syscall.SIGKILL)
}

// TestGuardGpgAgentKill: `gpgconf --kill gpg-agent`, the usual advice
// when a signed commit fails ("gpg failed to sign the data"), run in a
// jail ends the user's gpg-agent on the host: its socket is in the
// runtime directory every jail shares (as it must be, for signing and
// ssh to work in the jail). The other agents lose it mid-signature and
// the user loses their cached passphrases. Nothing but the guard stands
// in the way of such a kill through a shared server, and it must refuse
// the command.
func TestGuardGpgAgentKill(t *testing.T) {
	requireSlots(t)
	for _, p := range []string{"gpg-agent", "gpgconf", "gpg-connect-agent"} {
		_, err := exec.LookPath(p)
		need(t, p+" (apt-get install gpg-agent gpgconf)", err)
	}
	home, env := testEnv(t)
	gnupg := filepath.Join(home, "gnupg")
	if err := os.Mkdir(gnupg, 0o700); err != nil {
		t.Fatal(err)
	}
	env = append(env, "GNUPGHOME="+gnupg)
	dir := t.TempDir()
	// The user's agent, started on the host.
	if r := runCmd(t, dir, env, "", "gpgconf", "--launch", "gpg-agent"); r.code != 0 {
		t.Fatalf("starting gpg-agent: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() { runCmd(t, dir, env, "", "gpgconf", "--kill", "gpg-agent") })
	r := runCmd(t, dir, env, "", "gpg-connect-agent", "getinfo pid", "/bye")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.SplitN(r.stdout, "\n", 2)[0], "D ")))
	if err != nil {
		t.Fatalf("gpg-agent's pid: %q %v", r.stdout, err)
	}
	const cmd = "gpgconf --kill gpg-agent"
	// The agent runs it in its jail.
	if r := aisanIn(t, dir, env, "", "run", "--", "sh", "-c", cmd); r.code != 0 {
		t.Fatalf("%s in the jail: %d %s", cmd, r.code, r.stderr)
	}
	killed := false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			killed = true
			break
		}
	}
	if !killed {
		t.Logf("the host's gpg-agent (PID %d) survived %q in a jail", pid, cmd)
	}
	// The guard, as Claude Code runs it before the tool call.
	in, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]string{"command": cmd}})
	g := aisanIn(t, dir, env, string(in), "guard")
	if g.code != 2 {
		t.Errorf("the guard lets %q through (exit %d), and in a jail it ended the host's gpg-agent: %v", cmd, g.code, killed)
	}
}

// TestJailOtherTranscript: the transcript of another slot (what the
// user's other jailed session showed: a token printed by a script, a
// shell session's output) must not be readable from a jail, through the
// state directory or 'aisan logs' run inside: a read-only bind of the
// state dir would stop writes, not reads.
func TestJailOtherTranscript(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	victimDir, attackerDir := t.TempDir(), t.TempDir()
	victim := exec.Command(aisanBin, "run", "--", "sh", "-c", "echo victim-secret-4f1c; sleep 60")
	victim.Dir = victimDir
	victim.Env = append(os.Environ(), env...)
	var out strings.Builder
	victim.Stdout = &out
	background(t, victim)
	slot := liveSlot(t, env)
	waitFor(t, 10*time.Second, "the victim's output", func() bool {
		r := aisan(t, env, "", "logs", "--raw", slot)
		return strings.Contains(r.stdout, "victim-secret-4f1c")
	})
	r := aisanIn(t, attackerDir, env, "", "run", "--", "sh", "-c",
		"aisan logs --raw "+slot+"; cat \"$AISAN_HOME\"/transcripts/"+slot+"/* 2>/dev/null; echo attacker-ran")
	if !strings.Contains(r.stdout, "attacker-ran") {
		t.Fatalf("the other jail did not run, so the test shows nothing: %q %q", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "victim-secret-4f1c") {
		t.Errorf("a jail read slot %s's transcript: %q", slot, r.stdout)
	}
}

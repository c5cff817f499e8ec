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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The protocol tests attack aisan's own machinery from inside real jails
// and strict boxes, the way an agent that wanted to would: everything in
// a jail runs as the same user as the jail's init, so it tries to reach
// the init's descriptors (to forge the agent's exit on the readiness
// pipe), its memory (to rewrite the environment a kill's proof once read)
// and ptrace. Then the host takes its next step: the shell's `&& deploy`,
// the hand-over to a keeper, `aisan kill`.

// protocolHelper is the part of the test binary's helper that these tests
// use.
func protocolHelper(name string, args []string) (int, bool) {
	if name != "jail-attack" {
		return 0, false
	}
	// jail-attack exit N: attack, forging the agent's exit, then behave
	// like a test run that takes two seconds and fails with N.
	// jail-attack hold: attack without forging the exit, then stay.
	exit := len(args) == 2 && args[0] == "exit"
	for _, l := range jailAttack(exit) {
		fmt.Println(l)
	}
	fmt.Println("attacked")
	os.Stdout.Sync()
	if exit {
		time.Sleep(2 * time.Second)
		n, _ := strconv.Atoi(args[1])
		return n, true
	}
	time.Sleep(300 * time.Second)
	return 0, true
}

// forgedExit is what the init writes on the readiness pipe when the agent
// has exited and processes remain: 'e', then the status (0: "the tests
// passed").
var forgedExit = []byte{'e', 0}

// jailAttack tries every way at the init this process knows and returns
// one "attack: result" line each; "ok" means it worked. With forge, what
// it writes to the init's descriptors is the agent's exit; without, it
// writes nothing there (a kill test wants the agent to stay).
func jailAttack(forge bool) []string {
	payload := forgedExit
	if !forge {
		payload = nil
	}
	var out []string
	try := func(name string, err error) { out = append(out, name+": "+errnoName(err)) }

	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "CapEff" || k == "CapPrm" || k == "CapBnd" || k == "CapAmb") {
			out = append(out, strings.ToLower(k)+": "+strings.TrimSpace(v))
		}
	}

	// The init's descriptors: the readiness pipe by its number, and every
	// other one it has open.
	ents, err := os.ReadDir("/proc/1/fd")
	try("list-fds", err)
	names := []string{"7"}
	for _, e := range ents {
		if n, _ := strconv.Atoi(e.Name()); n > 2 && !slices.Contains(names, e.Name()) {
			names = append(names, e.Name())
		}
	}
	forged := 0
	for _, n := range names {
		f, err := os.OpenFile("/proc/1/fd/"+n, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			_, err = f.Write(payload)
			f.Close()
		}
		if err == nil {
			forged++
		}
		if n == "7" {
			try("forge-fd7", err)
		}
	}
	out = append(out, fmt.Sprintf("forged-writes: %d", forged))

	// The same descriptor through a pidfd.
	pidfd, err := unix.PidfdOpen(1, 0)
	if err == nil {
		var fd int
		fd, err = unix.PidfdGetfd(pidfd, 7, 0)
		if err == nil {
			_, err = unix.Write(fd, payload)
			unix.Close(fd)
		}
		unix.Close(pidfd)
	}
	try("pidfd-getfd", err)

	// The environment aisan once read to prove a kill: overwrite the
	// slot's name in the init's memory.
	_, err = os.ReadFile("/proc/1/environ")
	try("read-environ", err)
	try("rewrite-environ", rewriteInitEnv())

	// ptrace: gdb first (it would find the init traced by us after).
	if gdb, err := exec.LookPath("gdb"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		b, _ := exec.CommandContext(ctx, gdb, "-nx", "-batch", "-p", "1", "-ex", "info inferiors").CombinedOutput()
		cancel()
		switch {
		case bytes.Contains(b, []byte("Operation not permitted")):
			out = append(out, "gdb: EPERM")
		case bytes.Contains(b, []byte("(process 1) detached]")):
			out = append(out, "gdb: ok")
		default:
			out = append(out, "gdb: "+strconv.Quote(string(bytes.TrimSpace(b))))
		}
	}
	// ptrace, from one thread (the tracer is a thread).
	runtime.LockOSThread()
	_, _, en := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, 1, 0, 0, 0, 0)
	runtime.UnlockOSThread()
	err = nil
	if en != 0 {
		err = en
	}
	try("ptrace-seize", err)
	return out
}

// rewriteInitEnv overwrites the value of AISAN_JAIL in the init's
// environment, through /proc/1/mem, where /proc/1/stat says it lies.
func rewriteInitEnv() error {
	mem, err := os.OpenFile("/proc/1/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	stat, err := os.ReadFile("/proc/1/stat")
	if err != nil {
		return err
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	// Fields 50 and 51 (env_start, env_end); f[0] is field 3.
	if len(f) < 49 {
		return errors.New("short /proc/1/stat")
	}
	start, _ := strconv.ParseInt(f[47], 10, 64)
	end, _ := strconv.ParseInt(f[48], 10, 64)
	if start == 0 || end <= start {
		return errors.New("env_start hidden")
	}
	env := make([]byte, end-start)
	if _, err := mem.ReadAt(env, start); err != nil {
		return err
	}
	i := bytes.Index(append([]byte{0}, env...), []byte("\x00AISAN_JAIL="))
	if i < 0 {
		return errors.New("no AISAN_JAIL in the init's environment")
	}
	i += len("AISAN_JAIL=")
	j := i + bytes.IndexByte(env[i:], 0)
	_, err = mem.WriteAt(bytes.Repeat([]byte("x"), j-i), start+int64(i))
	return err
}

// refusedAttack is what each attack must come to: every one refused, and
// no capability that could undo the refusal.
var refusedAttack = []string{
	"capprm: 0000000000000000", "capeff: 0000000000000000", "capbnd: 0000000000000000", "capamb: 0000000000000000",
	"list-fds: EACCES", "forge-fd7: EACCES", "forged-writes: 0", "pidfd-getfd: EPERM",
	"read-environ: EACCES", "rewrite-environ: EACCES", "ptrace-seize: EPERM",
}

// checkAttack fails t unless out shows every attack refused.
func checkAttack(t *testing.T, where, out string) {
	t.Helper()
	t.Logf("%s: the attack's report:\n%s", where, out)
	lines := strings.Split(out, "\n")
	for _, want := range refusedAttack {
		if !slices.Contains(lines, want) {
			t.Errorf("%s: the attack's report lacks %q:\n%s", where, want, out)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "gdb: ") && l != "gdb: EPERM" {
			t.Errorf("%s: gdb -p 1: %s, want EPERM", where, l)
		}
	}
}

// forgedExitRun runs `aisan ARGS && touch deployed` from a host shell in
// dir, as a CI script would, where ARGS run the helper that forges "the
// tests passed" on the init's readiness pipe, then runs two seconds more
// and fails with 3. The shell must see 3 after the two seconds and never
// deploy; the slot must have ended with the agent, never handed to a
// keeper; every attack on the init must be refused.
func forgedExitRun(t *testing.T, where, dir string, env []string, args ...string) {
	t.Helper()
	deployed := filepath.Join(t.TempDir(), "deployed")
	t0 := time.Now()
	r := runCmd(t, dir, append(env, "DEPLOYED="+deployed), "", "sh", append([]string{"-c", `"$@" && touch "$DEPLOYED"`, "sh", aisanBin}, args...)...)
	took := time.Since(t0)
	checkAttack(t, where, r.stdout)
	_, err := os.Stat(deployed)
	if r.code != 3 || err == nil || took < 2*time.Second {
		t.Errorf("%s: aisan … -- <attack; sleep 2; exit 3> && deploy: code %d after %v, deployed %v; want 3 after the two seconds, nothing deployed\nstdout %s\nstderr %s", where, r.code, took, err == nil, r.stdout, r.stderr)
	}
	e := keeperOnly(t, env)
	if e.State != "exited" || e.AgentEnd != "" || e.ExitStatus == nil || *e.ExitStatus != 3 {
		t.Errorf("%s: the slot after the run: %+v; want exited 3, never handed to a keeper", where, e)
	}
}

// TestProtocolForgedExitDenyList: a deny-list jail cannot forge its
// agent's exit.
func TestProtocolForgedExitDenyList(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	forgedExitRun(t, "deny-list jail", slotWorktree(t), append(env, helperEnv("jail-attack")...), "run", "--", self(), "exit", "3")
}

// TestProtocolForgedExitStrict: nor can a strict box, whose host side
// (the egress proxy) a forged exit would hand to a keeper while the agent
// goes on.
func TestProtocolForgedExitStrict(t *testing.T) {
	repo, home, env := strictRepo(t)
	// A login for the egress to serve (no call is made).
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		time.Now().Add(time.Hour).UnixMilli())), 0o600)
	forgedExitRun(t, "strict box", repo, append(env, "AISAN_NO_SCOPE=1"), "run", "--strict", "--egress", "anthropic", "--env", "AISAN_TEST_HELPER=jail-attack", "--", self(), "exit", "3")
}

// launchAttacked starts `aisan ARGS` in dir in the background, with the
// helper attacking from inside and then staying, and waits until the
// slot shows running with its jail recorded and the attack is done.
func launchAttacked(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *syncBuffer, slotEntry) {
	t.Helper()
	cmd, out, e := slotLaunchAisan(t, dir, append(env, helperEnv("jail-attack")...), args...)
	waitFor(t, 20*time.Second, "the attack from inside", func() bool { return strings.Contains(out.String(), "attacked\n") })
	return cmd, out, e
}

// killAfterAttack: once the jail has tried everything at its init,
// `aisan kill SLOT` still ends it, and the wrapper records the kill.
func killAfterAttack(t *testing.T, where, dir string, env []string, args ...string) {
	t.Helper()
	cmd, out, e := launchAttacked(t, dir, env, args...)
	checkAttack(t, where, out.String())
	r := aisan(t, env, "", "kill", e.Slot)
	if r.code != 0 || r.stdout != "killed "+e.Slot+"\n" {
		t.Fatalf("%s: aisan kill %s after the attack: code %d, stdout %q, stderr %q", where, e.Slot, r.code, r.stdout, r.stderr)
	}
	// kill stops the agent with SIGTERM, which the helper does not catch.
	if code := slotWait(t, cmd); code != 143 {
		t.Errorf("%s: the wrapper exited %d after the kill, want 143", where, code)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("%s: the jail's init %d survived aisan kill", where, e.InitPID)
	}
}

// TestProtocolKillAfterAttackDenyList: the attack cannot spoil aisan
// kill's proof in a deny-list jail.
func TestProtocolKillAfterAttackDenyList(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	killAfterAttack(t, "deny-list jail", slotWorktree(t), env, "run", "--", self(), "hold")
}

// TestProtocolKillAfterAttackStrict: nor in a strict box.
func TestProtocolKillAfterAttackStrict(t *testing.T) {
	repo, _, env := strictRepo(t)
	killAfterAttack(t, "strict box", repo, append(env, "AISAN_NO_SCOPE=1"), "run", "--strict", "--env", "AISAN_TEST_HELPER=jail-attack", "--", self(), "hold")
}

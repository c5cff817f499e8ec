package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/creack/pty"
)

// These tests attack aisan's own machinery from inside real jails, the way
// an agent "cleaning up stale files" (or worse) would, then run the host
// side ("aisan kill", "kill --orphans", a "watch" pass, "list", the next
// launch) and check that nothing outside was harmed and that aisan said
// why.

// runDir is the directory the launcher keeps the slots' sockets in.
func runDir(env []string) string {
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		return filepath.Join(rt, "aisan")
	}
	return filepath.Join(killHome(env), "run")
}

// attackLines parses "attack: result" lines.
func attackLines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// TestStateReadOnlyInJail: from inside a jail, forging a neighbour's
// record, deleting locks, renaming the state dir, swapping a history copy
// for a symlink, planting files in the runtime dir, swapping a
// neighbour's bus proxy socket and remounting the state read-write in a
// nested namespace all fail; the neighbour stays listed as it was and
// "aisan kill" still ends exactly it. The agents' history stays
// writable, and none of aisan's descriptors reach the jail.
func TestStateReadOnlyInJail(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "history.jsonl"), nil, 0o600)
	cmdV, _, v := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, v)
	before := killRecord(t, env, v.Slot)

	// A worktree's codex history copy, as a codex launch leaves it.
	copyPath := filepath.Join(killHome(env), "history", "proj-12345678-codex", "codex-history.jsonl")
	os.MkdirAll(filepath.Dir(copyPath), 0o700)
	os.WriteFile(copyPath, nil, 0o600)

	wt := slotWorktree(t)
	r := aisanIn(t, wt, append(env, helperEnv("attack-state")...), "", "run", "--", self(), killHome(env), runDir(env), v.Slot)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stderr %q", r.code, r.stderr)
	}
	got := attackLines(r.stdout)
	want := map[string][]string{
		"forge-record":      {"EROFS"},
		"truncate-record":   {"EROFS"},
		"remove-lock":       {"EROFS", "file does not exist"}, // the slots' locks are in the run dir: none to remove
		"mkdir-in-state":    {"EROFS"},
		"rename-state-dir":  {"EBUSY", "EROFS"},
		"swap-history-copy": {"EROFS"},
		"mkdir-in-rundir":   {"EROFS"},
		"swap-proxy-socket": {"EROFS", "file does not exist"}, // the run dir is empty in a jail: no socket to swap
	}
	for attack, ok := range want {
		if g := got[attack]; !contains(ok, g) {
			t.Errorf("attack %s from inside a jail: %q; want one of %v", attack, g, ok)
		}
	}
	if g := got["remount-state"]; g != "refused" && !strings.HasPrefix(g, "unshare failed") {
		t.Errorf("remounting the state read-write in a nested namespace: %q; want refused", g)
	}

	// The agents' history stays writable: Claude's is the host's own.
	r = aisanIn(t, wt, env, "", "run", "--", "sh", "-c", `echo '{"display":"jailed prompt"}' >> "$HOME/.claude/history.jsonl"`)
	if r.code != 0 {
		t.Errorf("writing the jail's own history: code %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude", "history.jsonl")); !strings.Contains(string(b), "jailed prompt") {
		t.Errorf("the jail's history write did not reach the host file: %q", b)
	}

	// None of aisan's descriptors reach the agent: it has no descriptor
	// that the same program run without aisan lacks (and, see
	// TestCallerDescriptorsReachAgent, it has all of those).
	fdNums := func(out string) []string {
		var nums []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			fd, target, _ := strings.Cut(l, " ")
			if target != "" { // the listing's own directory is closed by now
				nums = append(nums, fd)
			}
		}
		return nums
	}
	jailed := fdNums(aisanIn(t, wt, append(env, helperEnv("fds")...), "", "run", "--", self()).stdout)
	direct := fdNums(runCmd(t, wt, helperEnv("fds"), "", self()).stdout)
	for _, fd := range jailed {
		if !contains(direct, fd) {
			t.Errorf("descriptor %s leaked into the jail (jailed %v, unjailed %v)", fd, jailed, direct)
		}
	}

	after := killRecord(t, env, v.Slot)
	if after.InitPID != before.InitPID || after.PidNSInode != before.PidNSInode || after.Unit != before.Unit {
		t.Fatalf("the victim's record changed: %+v, was %+v", after, before)
	}
	if e := slotList(t, env)[v.Slot]; e.State != "running" {
		t.Fatalf("victim %s is %s after the attacks; want running", v.Slot, e.State)
	}
	if r := aisan(t, env, "", "kill", "--signal", "KILL", v.Slot); r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", v.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmdV); code != 137 {
		t.Errorf("victim wrapper exited %d; want 137", code)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStateElsewhereReadOnly: with AISAN_HOME outside $HOME, both it and
// a ~/.aisan of another invocation's are read-only inside the jail.
func TestStateElsewhereReadOnly(t *testing.T) {
	requireSlots(t)
	home, _ := testEnv(t)
	state := filepath.Join(t.TempDir(), "state")
	env := []string{"HOME=" + home, "AISAN_HOME=" + state}
	t.Cleanup(func() { aisan(t, env, "", "kill", "--all") })
	if err := os.MkdirAll(filepath.Join(home, ".aisan", "slots"), 0o700); err != nil {
		t.Fatal(err)
	}
	script := `"$0" "$1/slots/x"; "$0" "$2/slots/x"`
	r := aisanIn(t, slotWorktree(t), append(env, helperEnv("mkdir")...), "", "run", "--", "sh", "-c", script, self(), state, filepath.Join(home, ".aisan"))
	if r.code != 0 {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	if got := strings.Fields(r.stdout); len(got) != 2 || got[0] != "EROFS" || got[1] != "EROFS" {
		t.Fatalf("mkdir in AISAN_HOME and in ~/.aisan from inside: %q; want EROFS twice", r.stdout)
	}
}

// TestStateDefaultMadeBeforeJail: with AISAN_HOME elsewhere and no
// ~/.aisan yet, a jail cannot make ~/.aisan (where an aisan started
// without AISAN_HOME would read records it acts on): the launch made it,
// and every jail sees it read-only.
func TestStateDefaultMadeBeforeJail(t *testing.T) {
	requireSlots(t)
	home, _ := testEnv(t)
	state := filepath.Join(t.TempDir(), "state")
	env := []string{"HOME=" + home, "AISAN_HOME=" + state}
	t.Cleanup(func() { aisan(t, env, "", "kill", "--all") })
	def := filepath.Join(home, ".aisan")
	os.RemoveAll(def)
	r := aisanIn(t, slotWorktree(t), append(env, helperEnv("mkdir")...), "", "run", "--", "sh", "-c", `"$0" "$1/slots"`, self(), def)
	if r.code != 0 {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != "EROFS" {
		t.Errorf("mkdir ~/.aisan/slots from inside: %q; want EROFS", got)
	}
	if _, err := os.Lstat(filepath.Join(def, "slots")); err == nil {
		t.Errorf("the jail made %s/slots", def)
	}
}

// TestStateLaunchFromInside: "aisan run" typed inside a jail (with or
// without AISAN_JAIL in its environment) is refused with one line and
// leaves nothing the host would have to act on.
func TestStateLaunchFromInside(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	script := `"$0" run -- true; echo "status=$?"; env -u AISAN_JAIL "$0" run -- true; echo "status=$?"`
	r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "sh", "-c", script, aisanBin)
	if r.code != 0 {
		t.Fatalf("outer jail: code %d, stderr %q", r.code, r.stderr)
	}
	if strings.Count(r.stdout, "status=") != 2 || strings.Contains(r.stdout, "status=0") {
		t.Errorf("inner launches: %q; want both refused", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "inside the jail") || !strings.Contains(lines[1], "read-only") {
		t.Errorf("inner launches said %q; want one line each, naming the jail and the read-only state", r.stderr)
	}
	if n := len(slotList(t, env)); n != 1 {
		t.Errorf("%d slots listed; want only the outer one", n)
	}
}

// TestKillProofForgedRecord: a record that names another jail's init and
// namespace (with the slot's own unit, or the other's) makes "aisan kill"
// refuse with a message; the other jail lives. With and without scopes.
func TestKillProofForgedRecord(t *testing.T) {
	requireSlots(t)
	for _, noScope := range []bool{false, true} {
		t.Run(fmt.Sprintf("noscope=%v", noScope), func(t *testing.T) {
			_, env := testEnv(t)
			if noScope {
				env = append(env, "AISAN_NO_SCOPE=1")
			}
			cmdV, _, v := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
			_, _, a := slotLaunch(t, slotWorktree(t), env, "sleep", "301")
			killWaitAgent(t, v)
			killWaitAgent(t, a)
			// The forged record is put right before the test's cleanup
			// kills every slot, or A's jail would outlive the test.
			orig := killRecord(t, env, a.Slot)
			t.Cleanup(func() { killForge(t, env, a.Slot, func(r *slot.Record) { *r = orig }) })
			for _, unit := range []string{a.Unit, v.Unit} {
				killForge(t, env, a.Slot, func(r *slot.Record) {
					r.InitPID, r.PidNSInode, r.Unit = v.InitPID, v.PidNSInode, unit
				})
				r := aisan(t, env, "", "kill", a.Slot)
				if r.code == 0 || !strings.Contains(r.stderr, "jail of slot \""+v.Slot+"\"") {
					t.Errorf("aisan kill of a record naming %s's jail (unit %q): code %d, stderr %q; want a refusal naming it", v.Slot, unit, r.code, r.stderr)
				}
				time.Sleep(100 * time.Millisecond)
				if !slotProcRunning(v.InitPID) || !slotProcRunning(cmdV.Process.Pid) {
					t.Fatalf("the forged record killed slot %s", v.Slot)
				}
			}
		})
	}
}

// TestOrphanNeedsDeadHolder: deleting a running slot's lock file does not
// make it an orphan for "kill --orphans" or a watch pass.
func TestOrphanNeedsDeadHolder(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	cmdV, _, v := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, v)
	if err := os.Remove(slotLockPath(t, env, v.Slot)); err != nil {
		t.Fatalf("deleting the slot's lock file: %v", err)
	}
	if e := slotList(t, env)[v.Slot]; e.State != "running" {
		t.Errorf("with its lock file gone the slot is %s; want running", e.State)
	}
	if r := aisan(t, env, "", "kill", "--orphans"); strings.Contains(r.stdout+r.stderr, v.Slot) && r.code == 0 && !strings.Contains(r.stderr, "busy") {
		t.Errorf("kill --orphans: code %d, out %q, err %q", r.code, r.stdout, r.stderr)
	}
	aisan(t, env, "", "watch", "--once")
	time.Sleep(100 * time.Millisecond)
	if !slotProcRunning(v.InitPID) || !slotProcRunning(cmdV.Process.Pid) {
		t.Fatalf("a running slot whose lock file was deleted was reaped as an orphan")
	}
	if e := slotList(t, env)[v.Slot]; e.State != "running" {
		t.Errorf("after kill --orphans and watch the slot is %s; want running", e.State)
	}
}

// TestWatchStopsOnlyOwnUnits: a service record that names a unit aisan
// does not give that slot, and another tool's file in the registry, are
// never acted on by a watch pass.
func TestWatchStopsOnlyOwnUnits(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	victimUnit := fmt.Sprintf("app-victim-%d.scope", os.Getpid())
	victim := killVictimScope(t, m, victimUnit)
	slots := filepath.Join(killHome(env), "slots")
	if err := os.MkdirAll(slots, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{
		"slot": "fake-12345678-service", "kind": "service", "worktree": "/", "wrapper_pid": 1,
		"start": time.Now().Add(-time.Hour).Format(time.RFC3339), "transcript": "",
		"unit": victimUnit, "max_runtime": int64(time.Second),
	}
	data, _ := json.Marshal(rec)
	os.WriteFile(filepath.Join(slots, "fake-12345678-service.json"), data, 0o600)
	os.WriteFile(filepath.Join(slots, "other-12345678-run.json"), []byte(`{"pid": 1, "unit": "`+victimUnit+`", "name": "another sandbox"}`), 0o600)
	r := aisan(t, env, "", "watch", "--once")
	if r.code != 0 {
		t.Logf("watch --once: code %d, stderr %q", r.code, r.stderr)
	}
	if l := aisan(t, env, "", "list"); !strings.Contains(l.stderr, "other-12345678-run.json") {
		t.Errorf("list did not warn about the foreign file: %q", l.stderr)
	}
	if st := scopeOf(t, m, victimUnit); st.ActiveState != "active" || !slotProcRunning(victim) {
		t.Fatalf("watch acted on %s, which no aisan slot owns: %s", victimUnit, st.ActiveState)
	}
}

// TestRegistryOddFiles: a FIFO, a symlink to /dev/zero and a huge file in
// the registry are skipped with a warning by list, kill and watch, which
// neither hang nor read them; watch still stops on SIGTERM.
func TestRegistryOddFiles(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	slots := filepath.Join(killHome(env), "slots")
	os.MkdirAll(slots, 0o700)
	if err := syscall.Mkfifo(filepath.Join(slots, "fifo-12345678-run.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", filepath.Join(slots, "zero-12345678-run.json"))
	os.WriteFile(filepath.Join(slots, "huge-12345678-run.json"), make([]byte, 4<<20), 0o600)
	start := time.Now()
	r := aisan(t, env, "", "list")
	if time.Since(start) > 10*time.Second || strings.Count(r.stderr, "warning") < 3 {
		t.Errorf("list took %v, stderr %q; want a quick list with three warnings", time.Since(start), r.stderr)
	}
	for _, name := range []string{"fifo-12345678-run", "zero-12345678-run", "huge-12345678-run"} {
		if r := aisan(t, env, "", "kill", name); r.code == 0 {
			t.Errorf("aisan kill %s succeeded", name)
		}
	}
	aisan(t, env, "", "watch", "--once")
	w := exec.Command(aisanBin, "watch")
	w.Env = append(os.Environ(), env...)
	background(t, w)
	time.Sleep(500 * time.Millisecond)
	w.Process.Signal(syscall.SIGTERM)
	if code := slotWait(t, w); code != 0 && code != 143 {
		t.Errorf("watch exited %d after SIGTERM", code)
	}
}

// TestHistoryCopySwapped: a slot's history copy replaced by a symlink is
// re-created, never followed: the file it pointed to is untouched.
func TestHistoryCopySwapped(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "history.jsonl"), nil, 0o600)
	wt := slotWorktree(t)
	// A stand-in codex (only Codex gets a history copy) that appends a
	// prompt to its history file.
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho '{\"text\":\"injected\"}' >> \"$HOME/.codex/history.jsonl\"\n"), 0o755)
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	if r := aisanIn(t, wt, env, "", "codex"); r.code != 0 {
		t.Fatalf("first launch: %q", r.stderr)
	}
	copies, _ := filepath.Glob(filepath.Join(killHome(env), "history", "*", "codex*.jsonl"))
	if len(copies) != 1 {
		t.Fatalf("history copies %v; want one", copies)
	}
	target := filepath.Join(home, "target")
	os.WriteFile(target, []byte("orig\n"), 0o600)
	os.Remove(copies[0])
	if err := os.Symlink(target, copies[0]); err != nil {
		t.Fatal(err)
	}
	r := aisanIn(t, wt, env, "", "codex")
	if r.code != 0 {
		t.Fatalf("second launch: code %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "orig\n" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(copies[0]); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the history copy was not re-created as a file: %v %v", fi, err)
	}
}

// TestHistoryHostFileSparse: a jail (any, not a codex one) makes the
// user's Codex history a sparse file of 40 GiB, which costs it nothing;
// the next codex launch in another worktree, whose agent adds a prompt,
// merges it into the host file within 6 GiB of address space (reading
// the file whole ran the launcher out of memory) and the prompt is there.
func TestHistoryHostFileSparse(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit here")
	}
	hostFile := filepath.Join(home, ".codex", "history.jsonl")
	os.MkdirAll(filepath.Dir(hostFile), 0o700)
	os.WriteFile(hostFile, nil, 0o600)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho '{\"session_id\":\"s1\",\"ts\":1700000000,\"text\":\"typed after\"}' >> \"$HOME/.codex/history.jsonl\"\n"), 0o755)
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	victim := slotWorktree(t)
	if r := aisanIn(t, victim, env, "", "codex"); r.code != 0 {
		t.Fatalf("first codex launch: code %d, stderr %q", r.code, r.stderr)
	}
	if r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "truncate", "-s", "40G", hostFile); r.code != 0 {
		t.Fatalf("the jail: code %d, stderr %q", r.code, r.stderr)
	}
	r := runCmd(t, victim, env, "", prlimit, "--as=6442450944", aisanBin, "codex")
	if r.code != 0 {
		t.Fatalf("the next codex launch: code %d, stderr %.400q", r.code, r.stderr)
	}
	f, err := os.Open(hostFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tail := make([]byte, 4096)
	n, _ := f.ReadAt(tail, 40<<30)
	if !strings.Contains(string(tail[:n]), `"typed after"`) {
		t.Errorf("the prompt is not at the end of the host history: %q", tail[:n])
	}
}

// TestNoTerminalInjection: without a pty (stdin not a terminal), the jail
// has no controlling terminal: TIOCSTI on the user's terminal fails (the
// same call outside the jail succeeds, so the test can tell) and
// /dev/tty cannot be opened.
func TestNoTerminalInjection(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)

	ctl := newTerminal(t, 24, 80)
	c := exec.Command(self())
	c.Env = append(os.Environ(), helperEnv("tiocsti")...)
	ctl.start(c)
	ctl.expect("tiocsti: ok")

	term := newTerminal(t, 24, 80)
	cmd := exec.Command(aisanBin, "run", "--", self())
	cmd.Env = append(append(os.Environ(), env...), helperEnv("tiocsti")...)
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr = term.slave, term.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	term.expect("tiocsti: EPERM")
	term.expect("tty_nr: 0")
	term.expect("devtty: ENXIO")
	cmd.Wait()
}

// TestBackgroundJailCannotRead: a jail started in the background of a
// job-control shell (stdout redirected, so no pty) does not get the line
// the user types for the shell; brought to the foreground with fg, it
// gets the next one.
func TestBackgroundJailCannotRead(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	script := `set -m
"$0" run -- sh -c 'read x; echo "jail-got:$x"' > "$1" &
sleep 1
echo bg-started
read y
echo "shell-got:$y"
fg >/dev/null
echo fg-done`
	term := newTerminal(t, 24, 80)
	cmd := exec.Command("bash", "-c", script, aisanBin, out)
	cmd.Env = append(os.Environ(), env...)
	term.start(cmd)
	term.expect("bg-started")
	time.Sleep(300 * time.Millisecond)
	term.master.Write([]byte("secret\r"))
	term.expect("shell-got:secret")
	time.Sleep(500 * time.Millisecond)
	term.master.Write([]byte("later\r"))
	term.expect("fg-done")
	b, _ := os.ReadFile(out)
	if strings.Contains(string(b), "secret") || !strings.Contains(string(b), "jail-got:later") {
		t.Fatalf("the jail read %q; want only the line typed while it was in the foreground", b)
	}
}

// TestListEscapesControls: a worktree whose name holds a terminal escape
// is listed as inert text.
func TestListEscapesControls(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := filepath.Join(t.TempDir(), "repo\x1b]0;pwned\x07\x1b[2J")
	if err := os.Mkdir(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := aisanIn(t, wt, env, "", "run", "--", "true"); r.code != 0 {
		t.Fatalf("launch: %q", r.stderr)
	}
	r := aisan(t, env, "", "list")
	if strings.ContainsAny(r.stdout, "\x1b\x07") || !strings.Contains(r.stdout, `\x1b`) {
		t.Fatalf("aisan list printed control characters: %q", r.stdout)
	}
}

// TestKillGraceful: "aisan kill" sends SIGTERM first and lets the agent
// exit by itself; an agent that ignores it is killed after the grace
// period; --signal sends one signal of the user's choice.
func TestKillGraceful(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)

	ready := func(out *syncBuffer) {
		waitFor(t, 10*time.Second, "the agent to set its traps", func() bool { return strings.Contains(out.String(), "ready") })
	}
	cmd, out, e := slotLaunch(t, slotWorktree(t), env, "sh", "-c", `trap 'echo got-term; exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	ready(out)
	if r := aisan(t, env, "", "kill", e.Slot); r.code != 0 {
		t.Fatalf("aisan kill: code %d, stderr %q", r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 0 || !strings.Contains(out.String(), "got-term") {
		t.Errorf("an agent that handles SIGTERM: wrapper exited %d, output %q; want 0 after got-term", code, out.String())
	}

	cmd, out, e = slotLaunch(t, slotWorktree(t), env, "sh", "-c", `trap '' TERM; echo ready; sleep 300`)
	ready(out)
	start := time.Now()
	if r := aisan(t, env, "", "kill", "--grace", "1s", e.Slot); r.code != 0 {
		t.Fatalf("aisan kill --grace 1s: code %d, stderr %q", r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 || time.Since(start) < time.Second {
		t.Errorf("an agent that ignores SIGTERM: wrapper exited %d after %v; want 137 after the 1s grace", code, time.Since(start))
	}

	cmd, out, e = slotLaunch(t, slotWorktree(t), env, "sh", "-c", `trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.05; done`)
	ready(out)
	if r := aisan(t, env, "", "kill", "--signal", "INT", e.Slot); r.code != 0 {
		t.Fatalf("aisan kill --signal INT: code %d, stderr %q", r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 7 || !strings.Contains(out.String(), "got-int") {
		t.Errorf("--signal INT: wrapper exited %d, output %q; want 7 after got-int", code, out.String())
	}
	if r := aisan(t, env, "", "kill", "--signal", "BOGUS", "x"); r.code != 2 || !strings.Contains(r.stderr, "unknown signal") {
		t.Errorf("--signal BOGUS: code %d, stderr %q", r.code, r.stderr)
	}
}

// TestKillRestoresTerminal: a full-screen agent killed from outside leaves
// the user's terminal usable: the wrapper leaves the alternate screen,
// shows the cursor and turns off mouse tracking and bracketed paste.
func TestKillRestoresTerminal(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	m, sl, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", `printf '\033[?1049h\033[?25l\033[?1000h\033[?2004hfullscreen\n'; sleep 300`)
	cmd.Dir = slotWorktree(t)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = sl, sl, sl
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sl.Close()
	var buf syncBuffer
	go func() { io.Copy(&buf, m) }()
	waitFor(t, 10*time.Second, "the agent to draw", func() bool { return strings.Contains(buf.String(), "fullscreen") })
	var name string
	for n, e := range slotList(t, env) {
		if e.State == "running" {
			name = n
		}
	}
	if r := aisan(t, env, "", "kill", "--signal", "KILL", name); r.code != 0 {
		t.Fatalf("aisan kill: %q", r.stderr)
	}
	cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	tail := buf.String()[strings.Index(buf.String(), "fullscreen"):]
	for _, seq := range []string{"\x1b[?1049l", "\x1b[?25h", "\x1b[?1000l", "\x1b[?2004l"} {
		if !strings.Contains(tail, seq) {
			t.Errorf("after the kill the terminal did not get %q; it got %q", seq, tail)
		}
	}
}

// TestPIDFilesApart: two jails whose processes have the same PIDs keep
// Claude-style <config>/sessions/<pid>.json files apart, and the host's
// directory gets none of them.
func TestPIDFilesApart(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	sessions := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sessions, "host.json"), []byte("host"), 0o600)
	script := `echo "$AISAN_JAIL" > "$HOME/.claude/sessions/$$.json"; echo "pid=$$"; echo ready; sleep 1; cat "$HOME/.claude/sessions/$$.json"; ls "$HOME/.claude/sessions"`
	cmd1, out1, _ := slotLaunch(t, slotWorktree(t), env, "sh", "-c", script)
	cmd2, out2, _ := slotLaunch(t, slotWorktree(t), env, "sh", "-c", script)
	slotWait(t, cmd1)
	slotWait(t, cmd2)
	pid1 := strings.Fields(strings.SplitN(out1.String(), "pid=", 2)[1])[0]
	pid2 := strings.Fields(strings.SplitN(out2.String(), "pid=", 2)[1])[0]
	if pid1 != pid2 {
		t.Logf("the two jails' shells had PIDs %s and %s (the test wants a collision)", pid1, pid2)
	}
	for _, o := range []string{out1.String(), out2.String()} {
		lines := strings.Split(strings.TrimSpace(o), "\n")
		if len(lines) < 4 || strings.Contains(o, "host.json") || strings.Count(o, ".json") != 1 {
			t.Errorf("a jail saw %q; want only its own pid file, holding its own slot", o)
		}
	}
	ents, _ := os.ReadDir(sessions)
	if len(ents) != 1 || ents[0].Name() != "host.json" {
		t.Errorf("the host's sessions dir holds %v; want only host.json", ents)
	}
}

// TestCallerDescriptorsReachAgent: the caller's own open descriptors reach
// a deny-list agent at the same numbers, as unjailed, low ones included
// (exec 7>f; aisan run -- …); a strict box gets none of them.
func TestCallerDescriptorsReachAgent(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "seven")
	in := filepath.Join(dir, "three")
	os.WriteFile(in, []byte("from fd 3\n"), 0o644)
	script := `exec 7>"$1"; exec 3<"$2"; exec 12>>"$1"; "$0" run -- sh -c 'echo to-seven >&7; echo to-twelve >>/proc/self/fd/12; cat <&3; ls /proc/self/fd | sort -n | tr "\n" " "'`
	r := runCmd(t, slotWorktree(t), env, "", "bash", "-c", script, aisanBin, out, in)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "from fd 3") {
		t.Errorf("the agent could not read the caller's fd 3: %q", r.stdout)
	}
	if b, _ := os.ReadFile(out); string(b) != "to-seven\nto-twelve\n" {
		t.Errorf("the caller's fds 7 and 12 got %q", b)
	}
	for _, fd := range []string{" 3 ", " 7 ", " 12 "} {
		if !strings.Contains(" "+lineWith(r.stdout+"\n", "0 ")+" ", fd) {
			t.Errorf("descriptor%s missing in the jail: %q", fd, r.stdout)
		}
	}
	// Strict: nothing of the caller's.
	repo, _, senv := strictRepo(t)
	r = runCmd(t, repo, append(senv, "AISAN_NO_SCOPE=1"), "", "bash", "-c", `exec 7>"$1"; "$0" run --strict -- sh -c 'echo x >&7' 2>&1; echo "rc=$?"`, aisanBin, out)
	if strings.Contains(r.stdout, "rc=0") {
		t.Errorf("a strict box could write the caller's fd 7: %q", r.stdout)
	}
}

// TestJailCannotReachOtherBus: a neighbour's bus gate, in aisan's run
// directory, is out of a jail's reach. A read-only bind stops no
// connect(2): through a neighbour's gate a jail would get that slot's
// allow-list (a repository's wider bus_talk), or a bus where its own is
// masked (AISAN_NO_BUS_PROXY=1). The jail sees an empty, read-only run
// directory, and its own bus still works.
func TestJailCannotReachOtherBus(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if rt == "" {
		t.Skip("no XDG_RUNTIME_DIR: no run directory of aisan's there")
	}
	cmdV, _, v := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, v)
	gates, _ := filepath.Glob(filepath.Join(runDir(env), "*", "bus"))
	if len(gates) == 0 {
		t.Skip("no bus gate on this host (no session bus, or no xdg-dbus-proxy)")
	}
	script := `ls -A "$1"; for g in "$@"; do [ "$g" = "$1" ] && continue; [ -e "$g" ] && echo "reachable $g"; done; (: > "$1/x") 2>/dev/null && echo "writable"; true`
	args := append([]string{"run", "--", "sh", "-c", script, "sh", runDir(env)}, gates...)
	r := aisanIn(t, slotWorktree(t), append(env, "AISAN_NO_BUS_PROXY=1"), "", args...)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stderr %q", r.code, r.stderr)
	}
	if out := strings.TrimSpace(r.stdout); out != "" {
		t.Errorf("the jail sees into aisan's run directory (want it empty and read-only):\n%s", out)
	}
	if r := aisan(t, env, "", "kill", "--signal", "KILL", v.Slot); r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", v.Slot, r.code, r.stderr)
	}
	slotWait(t, cmdV)
}

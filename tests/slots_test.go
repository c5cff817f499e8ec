package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/lockfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
)

// slotEntry is one element of 'aisan list --json'.
type slotEntry struct {
	Mode        string `json:"mode"`
	Slot        string `json:"slot"`
	Kind        string `json:"kind"`
	Worktree    string `json:"worktree"`
	WrapperPID  int    `json:"wrapper_pid"`
	InitPID     int    `json:"init_pid"`
	PidNSInode  uint64 `json:"pidns_inode"`
	Start       string `json:"start"`
	End         string `json:"end"`
	ExitStatus  *int   `json:"exit_status"`
	Transcript  string `json:"transcript"`
	Unit        string `json:"unit"`
	State       string `json:"state"`
	IdleSeconds *int64 `json:"idle_seconds"`
	// A kept slot's (see keeper_test.go).
	AgentEnd    string `json:"agent_end"`
	AgentStatus *int   `json:"agent_status"`
}

// slotList runs 'aisan list --json' and fails on any warning: in these
// tests the registry must always be intact.
func slotList(t *testing.T, env []string) map[string]slotEntry {
	t.Helper()
	r := aisan(t, env, "", "list", "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("aisan list --json: code %d, stderr %q", r.code, r.stderr)
	}
	var entries []slotEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("aisan list --json printed %q: %v", r.stdout, err)
	}
	m := map[string]slotEntry{}
	for _, e := range entries {
		m[e.Slot] = e
	}
	return m
}

// slotLockPath is the lock file of the slot called name, in aisan's lock
// directory, as aisan names it.
func slotLockPath(t *testing.T, env []string, name string) string {
	t.Helper()
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AISAN_HOME="); ok {
			home = v
		}
	}
	dir, err := lockfile.DirFor(filepath.Join(home, "slots"), rundir.LockDir(home))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name+".lock")
}

// slotWorktree makes a directory called myrepo to launch in, and returns
// its real path (what the registry records).
func slotWorktree(t *testing.T) string {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "myrepo")
	if err := os.Mkdir(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(wt)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// slotLaunch starts 'aisan run -- ARGS' in dir in the background, stdin
// not a terminal, and waits until the registry shows it running with its
// jail recorded.
func slotLaunch(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *syncBuffer, slotEntry) {
	t.Helper()
	return slotLaunchAisan(t, dir, env, append([]string{"run", "--"}, args...)...)
}

// slotLaunchAisan is slotLaunch for any launch: 'aisan ARGS'.
func slotLaunchAisan(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *syncBuffer, slotEntry) {
	t.Helper()
	cmd := exec.Command(aisanBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	background(t, cmd)
	return cmd, out, slotRunningFor(t, env, cmd)
}

// slotRunningFor waits for the slot whose wrapper is cmd to show as
// running with its jail's init, and returns its entry.
func slotRunningFor(t *testing.T, env []string, cmd *exec.Cmd) slotEntry {
	t.Helper()
	var e slotEntry
	waitFor(t, 20*time.Second, "the slot to show as running with its jail", func() bool {
		for _, x := range slotList(t, env) {
			if x.State == "running" && x.InitPID != 0 && x.WrapperPID == cmd.Process.Pid {
				e = x
				return true
			}
		}
		return false
	})
	return e
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// slotWait waits for a background aisan and returns its exit status
// (128+N for signal N).
func slotWait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code, ok := exitStatus(err)
		if !ok {
			t.Fatalf("waiting for aisan: %v", err)
		}
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("aisan %q did not exit", cmd.Args)
		return 0
	}
}

// slotProcRunning reports whether pid exists and is not a zombie.
func slotProcRunning(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && data[i+2] != 'Z'
}

// probeSlots checks once that 'aisan run' records its slot in the
// registry, which the launcher's wiring provides.
var probeSlots = sync.OnceValue(func() error {
	home, err := os.MkdirTemp("", "aisan-slotprobe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "HOME="+home, "AISAN_HOME="+filepath.Join(home, ".aisan"))
	wt := filepath.Join(home, "wt")
	if err := os.Mkdir(wt, 0o755); err != nil {
		return err
	}
	run := exec.Command(aisanBin, "run", "--", "true")
	run.Dir, run.Env = wt, env
	if out, err := run.CombinedOutput(); err != nil {
		return fmt.Errorf("aisan run -- true: %v: %s", err, out)
	}
	list := exec.Command(aisanBin, "list", "--json")
	list.Env = env
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("aisan list --json: %v", err)
	}
	if strings.TrimSpace(string(out)) == "[]" {
		return errors.New("'aisan run' does not record its slot in the registry yet")
	}
	return nil
})

// requireSlots skips (or fails) unless jails work and 'aisan run' uses the
// slot registry.
func requireSlots(t *testing.T) {
	t.Helper()
	requireJail(t)
	need(t, "aisan run wired to the slot registry", probeSlots())
}

// TestSlotRunListKill: a launch shows as running, its transcript holds its
// output, its record holds no argument, and 'aisan kill' ends the jail
// while the wrapper survives to record exit status 137.
func TestSlotRunListKill(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	const secret = "do-not-record-me"
	cmd, _, e := slotLaunch(t, wt, env, "sh", "-c", "echo hi; sleep 300; echo "+secret)
	if !strings.HasPrefix(e.Slot, "myrepo-") || !strings.HasSuffix(e.Slot, "-run") || e.Kind != "run" || e.Worktree != wt {
		t.Errorf("slot %+v: want myrepo-<hash>-run, kind run, worktree %s", e, wt)
	}

	waitFor(t, 10*time.Second, "'hi' in aisan logs", func() bool {
		return strings.Contains(aisan(t, env, "", "logs", e.Slot).stdout, "hi")
	})
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	rec, err := os.ReadFile(filepath.Join(home, "slots", e.Slot+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rec, []byte(secret)) || bytes.Contains(rec, []byte("sleep 300")) {
		t.Errorf("the registry record holds the command's arguments:\n%s", rec)
	}

	// An unknown slot: the error lists the live one.
	r := aisan(t, env, "", "kill", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, `no slot named "nope"`) || !strings.Contains(r.stderr, e.Slot) {
		t.Errorf("aisan kill nope: code %d, stderr %q; want an error listing %s", r.code, r.stderr, e.Slot)
	}

	r = aisan(t, env, "", "kill", "--signal", "KILL", e.Slot)
	if r.code != 0 || r.stdout != "killed "+e.Slot+"\n" {
		t.Fatalf("aisan kill %s: code %d, stdout %q, stderr %q", e.Slot, r.code, r.stdout, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d, want 137 (it must survive and report the jail's death)", code)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the jail's init %d is still running", e.InitPID)
	}
	after := slotList(t, env)[e.Slot]
	if after.State != "exited" || after.ExitStatus == nil || *after.ExitStatus != 137 || after.End == "" {
		t.Errorf("after kill: %+v, want exited with status 137 and an end", after)
	}
	r = aisan(t, env, "", "kill", e.Slot)
	if r.code != 1 || !strings.Contains(r.stderr, "is not running") {
		t.Errorf("killing an exited slot: code %d, stderr %q", r.code, r.stderr)
	}
}

// TestSlotOrphan: a wrapper killed with SIGKILL leaves its jail running;
// list shows it orphaned and 'kill --orphans' ends it and records the end.
func TestSlotOrphan(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	// The jail ignores SIGHUP, as a detached agent would, so that the
	// wrapper's pty closing is not what ends it.
	cmd, _, e := slotLaunch(t, wt, env, "sh", "-c", "trap '' HUP; sleep 300")
	t.Cleanup(func() { syscall.Kill(e.InitPID, syscall.SIGKILL) })
	cmd.Process.Signal(syscall.SIGKILL)
	slotWait(t, cmd)

	if got := slotList(t, env)[e.Slot]; got.State != "orphaned" {
		t.Fatalf("after the wrapper died: %+v, want orphaned (is the jail dying with its wrapper?)", got)
	}
	r := aisan(t, env, "", "kill", "--signal", "KILL", "--orphans")
	if r.code != 0 || r.stdout != "killed "+e.Slot+"\n" {
		t.Fatalf("aisan kill --orphans: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 10*time.Second, "the orphan's init to die", func() bool { return !slotProcRunning(e.InitPID) })
	after := slotList(t, env)[e.Slot]
	if after.State != "exited" || after.ExitStatus == nil || *after.ExitStatus != 137 || after.End == "" {
		t.Errorf("after kill --orphans: %+v, want exited with 137", after)
	}
}

// TestSlotConcurrentLaunches: twenty launches racing in one worktree, all
// alive at once, get twenty distinct slots, and the registry stays intact.
func TestSlotConcurrentLaunches(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	const n = 20
	// Each jail checks in, then waits for all the others, so all twenty
	// hold their slot at the same time.
	barrier := t.TempDir()
	script := `mktemp -p "$0" >/dev/null; i=0; while [ "$(ls "$0" | wc -l)" -lt ` + fmt.Sprint(n) +
		` ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; [ $i -lt 600 ]`
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := aisanIn(t, wt, env, "", "run", "--", "sh", "-c", script, barrier)
			codes[i] = r.code
			if r.code != 0 {
				t.Errorf("launch %d: code %d, stderr %q", i, r.code, r.stderr)
			}
		})
	}
	wg.Wait()
	slots := slotList(t, env)
	if len(slots) != n {
		t.Fatalf("registry lists %d slots, want %d", len(slots), n)
	}
	for name, e := range slots {
		if e.Worktree != wt || e.State != "exited" || e.ExitStatus == nil || *e.ExitStatus != 0 {
			t.Errorf("slot %s: %+v, want exited 0 in %s", name, e, wt)
		}
	}
}

// TestSlotStaleEntry: a record left by a long-dead launch, whose PIDs now
// belong to an unrelated process, shows as exited, and no kill touches
// that process.
func TestSlotStaleEntry(t *testing.T) {
	_, env := testEnv(t)
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	pid, _ := markerProcess(t)
	const name = "old-0badc0de-claude"
	rec := fmt.Sprintf(`{"slot":%q,"kind":"claude","worktree":"/gone","wrapper_pid":%d,"init_pid":%d,"pidns_inode":4026531000,"start":"2025-01-01T00:00:00Z","transcript":"/gone/t.log"}`, name, pid, pid)
	if err := os.MkdirAll(filepath.Join(home, "slots"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "slots", name+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := slotList(t, env)[name]; got.State != "exited" {
		t.Errorf("stale entry is %q, want exited", got.State)
	}
	if r := aisan(t, env, "", "kill", name); r.code != 1 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("aisan kill %s: code %d, stderr %q; want 'not running'", name, r.code, r.stderr)
	}
	for _, flag := range []string{"--all", "--orphans"} {
		if r := aisan(t, env, "", "kill", flag); r.code != 0 || r.stdout != "" {
			t.Errorf("aisan kill %s: code %d, stdout %q, stderr %q; want nothing killed", flag, r.code, r.stdout, r.stderr)
		}
	}
	if !slotProcRunning(pid) {
		t.Fatalf("the unrelated process %d was killed", pid)
	}
}

// TestSlotBadInput: unknown slots and corrupt registry files.
func TestSlotBadInput(t *testing.T) {
	_, env := testEnv(t)
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	for _, args := range [][]string{{"kill", "nope"}, {"logs", "nope"}, {"kill", "../../etc"}} {
		r := aisan(t, env, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "aisan: error: no slot named") || !strings.Contains(r.stderr, "aisan: hint: run 'aisan list'") {
			t.Errorf("aisan %q: code %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, "slots"), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(home, "slots", "broken-12345678-claude.json")
	if err := os.WriteFile(bad, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"kill", "--all"}, {"kill", "--orphans"}} {
		r := aisan(t, env, "", args...)
		if r.code != 0 || !strings.Contains(r.stderr, "aisan: warning:") || !strings.Contains(r.stderr, bad) {
			t.Errorf("aisan %q with a corrupt record: code %d, stderr %q; want a warning naming %s", args, r.code, r.stderr, bad)
		}
	}
	if data, err := os.ReadFile(bad); err != nil || string(data) != "{torn" {
		t.Errorf("the corrupt record was changed: %q, %v", data, err)
	}
}

// TestSlotStateDir: a state dir that cannot be written stops the launch
// with an error naming it; one inside a git worktree or inside the jailed
// directory launches, read-only in the jail.
func TestSlotStateDir(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	wt := slotWorktree(t)

	locked := filepath.Join(home, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	r := aisanIn(t, wt, append(env, "AISAN_HOME="+filepath.Join(locked, "state")), "", "run", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, locked) || !strings.Contains(r.stderr, "AISAN_HOME") {
		t.Errorf("unwritable state dir: code %d, stderr %q", r.code, r.stderr)
	}

	// A state dir inside a git worktree, or inside the jailed directory
	// itself (claude typed in a dotfiles ~), launches: the state is
	// read-only in the jail all the same.
	repo := filepath.Join(home, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{filepath.Join(repo, "state"), filepath.Join(wt, ".aisan")} {
		r = aisanIn(t, wt, append(env, "AISAN_HOME="+state), "", "run", "--", "sh", "-c", `mkdir "$AISAN_HOME/x"`)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only") {
			t.Errorf("state dir %s: code %d, stderr %q; want a launch whose jail cannot write the state", state, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(state, "slots")); err != nil {
			t.Errorf("state dir %s: no slot recorded: %v", state, err)
		}
	}
}

// TestSlotHistory: prompt history follows the worktree and nothing typed
// in a jail is lost. A jailed claude reads and appends the host's own file
// (Claude filters it by project itself). A jailed codex, whose file is
// untagged, gets a copy shared by the worktree's codex slots, from a
// subdirectory too, and what it appends reaches the host file when the
// launch ends.
func TestSlotHistory(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	wt := slotWorktree(t)
	if err := os.Mkdir(filepath.Join(wt, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(wt, "sub", "dir")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "bin")
	os.Mkdir(bin, 0o755)
	// Stand-in agents: each prints the history it sees, then adds a line.
	for _, a := range []string{"claude", "codex"} {
		// Lines in Codex's own shape: the merge back takes history
		// entries only.
		fake := "#!/bin/sh\nf=\"$HOME/." + a + "/history.jsonl\"\ncat \"$f\"\necho \"{\\\"session_id\\\":\\\"s\\\",\\\"ts\\\":1,\\\"text\\\":\\\"$1\\\"}\" >> \"$f\"\n"
		if err := os.WriteFile(filepath.Join(bin, a), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(home, "."+a), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	line := func(s string) string { return `{"session_id":"s","ts":1,"text":"` + s + `"}` + "\n" }
	host := func(a string) string {
		data, _ := os.ReadFile(filepath.Join(home, "."+a, "history.jsonl"))
		return string(data)
	}
	write := func(a, data string) {
		if err := os.WriteFile(filepath.Join(home, "."+a, "history.jsonl"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write("claude", line("outside"))
	r := aisanIn(t, sub, env, "", "claude", "jailed")
	if r.code != 0 || r.stdout != line("outside") {
		t.Fatalf("claude in a jail: code %d, saw %q, want the host file\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if got := host("claude"); got != line("outside")+line("jailed") {
		t.Errorf("host claude history %q, want the jailed prompt appended", got)
	}

	write("codex", line("outside"))
	r = aisanIn(t, wt, env, "", "codex", "first")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("codex in a jail: code %d, saw %q, want the worktree's (empty) copy\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if got := host("codex"); got != line("outside")+line("first") {
		t.Errorf("host codex history %q, want the jailed prompt merged in", got)
	}
	r = aisanIn(t, sub, env, "", "codex", "second")
	if r.code != 0 || r.stdout != line("first") {
		t.Errorf("codex in a subdirectory: code %d, saw %q, want the worktree's copy\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if got := host("codex"); got != line("outside")+line("first")+line("second") {
		t.Errorf("host codex history %q, want both jailed prompts merged once", got)
	}
	entries := slotList(t, env)
	root := filepath.Base(wt)
	for name := range entries {
		if !strings.HasPrefix(name, root+"-") {
			t.Errorf("slot %s is not named after the worktree root %s", name, root)
		}
	}
	if len(entries) != 2 {
		t.Errorf("slots %v, want one claude and one codex slot for the worktree", entries)
	}
}

// TestSlotShellInit: the functions 'aisan shell-init' prints pass a
// multi-line prompt through 'aisan claude --' to the jailed claude
// intact, in bash, zsh and fish. They run the aisan that printed them:
// an aisan first on PATH, which a jail could have put there, is not run.
func TestSlotShellInit(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	// The stand-in claude records its argv, NUL-separated; the aisan
	// first on PATH says it ran.
	decoy := filepath.Join(dir, "decoy-ran")
	for name, body := range map[string]string{
		"claude": "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$ARGV_OUT\"\n",
		"aisan":  "#!/bin/sh\necho \"$@\" >> " + decoy + "\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prompt := "Line one.\n\n\"double\" 'single' $HOME ${x} $(id) `id` \\ * %s\nlast line "
	promptFile := filepath.Join(dir, "prompt.md")
	os.WriteFile(promptFile, []byte(prompt), 0o644)
	for _, c := range []struct{ shell, line string }{
		{"bash", `eval "$("$AISAN_BIN" shell-init bash)"; claude --append-system-prompt "$(cat "$PROMPT_FILE")"`},
		{"zsh", `eval "$("$AISAN_BIN" shell-init zsh)"; claude --append-system-prompt "$(cat "$PROMPT_FILE")"`},
		{"fish", `"$AISAN_BIN" shell-init fish | source; claude --append-system-prompt "$(cat $PROMPT_FILE)"`},
	} {
		t.Run(c.shell, func(t *testing.T) {
			if _, err := exec.LookPath(c.shell); err != nil {
				need(t, c.shell, err)
			}
			out := filepath.Join(t.TempDir(), "argv")
			flags := map[string][]string{"bash": {"--norc", "--noprofile"}, "zsh": {"-f"}, "fish": {"--no-config"}}[c.shell]
			r := runCmd(t, dir, append(env, "PATH="+bin+":"+os.Getenv("PATH"), "AISAN_BIN="+aisanBin,
				"PROMPT_FILE="+promptFile, "ARGV_OUT="+out, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home), "",
				c.shell, append(flags, "-c", c.line)...)
			if r.code != 0 {
				t.Fatalf("%s: exit %d\n%s", c.shell, r.code, r.stderr)
			}
			if data, err := os.ReadFile(decoy); err == nil {
				t.Fatalf("the function ran the aisan first on PATH: %q", data)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("the jailed claude did not run: %v\nstderr %s", err, r.stderr)
			}
			got := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
			want := []string{"--append-system-prompt", prompt}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
				t.Errorf("argv %q\nwant %q", got, want)
			}
		})
	}
}

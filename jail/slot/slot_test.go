package slot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// The test binary doubles as the processes the tests need — a wrapper that
// holds a slot, racing launchers — selected by SLOT_TEST_HELPER, so they
// run the real package code in separate processes.
func TestMain(m *testing.M) {
	if h := os.Getenv("SLOT_TEST_HELPER"); h != "" {
		if err := helper(h, os.Getenv("SLOT_TEST_HOME"), os.Getenv("SLOT_TEST_WORKTREE")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	testOnlyAcceptUnnamedInit = true
	os.Exit(m.Run())
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func helper(mode, home, worktree string) error {
	reg, err := Open(home)
	if err != nil {
		return err
	}
	s, err := reg.Acquire(worktree, "claude")
	if err != nil {
		return err
	}
	switch mode {
	case "hold":
		// A launcher: print the name, hold the slot until stdin closes.
		fmt.Println(s.Name())
		io.Copy(io.Discard, os.Stdin)
		return s.Release()
	case "wrapper", "wrapper-nodeathsig":
		// The launcher's life in miniature: start a jail, record it,
		// wait for it, record how it ended.
		jail, err := startJail(mode == "wrapper")
		if err != nil {
			return err
		}
		if err := recordJail(s, jail.Process.Pid); err != nil {
			return err
		}
		fmt.Println(s.Name())
		err = jail.Wait()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				status = 128 + int(ws.Signal())
			}
		}
		if err := s.Finish(status); err != nil {
			return err
		}
		return s.Release()
	}
	return fmt.Errorf("unknown helper %q", mode)
}

// startHelper runs the test binary as helper mode and returns it with the
// first line it printed (the slot name) and its stdin.
func startHelper(t *testing.T, mode, home, worktree string) (*exec.Cmd, string, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SLOT_TEST_HELPER="+mode, "SLOT_TEST_HOME="+home, "SLOT_TEST_WORKTREE="+worktree)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	isolate(cmd, true)
	start(t, cmd)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s printed no slot name: %v", mode, err)
	}
	return cmd, strings.TrimSpace(line), stdin
}

// isolate gives a child its own process group and, with deathsig, has the
// kernel kill it when the test dies, so no test leaks processes.
func isolate(cmd *exec.Cmd, deathsig bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if deathsig {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
}

// start starts cmd on a locked thread (Pdeathsig follows the thread that
// forked) and kills its process group at cleanup.
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	runtime.LockOSThread()
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

// startJail starts a stand-in for a jail: a shell as PID 1 of a new PID
// namespace that leaves a second process running beside it. As non-root it
// needs a user namespace too, as bwrap does.
func startJail(deathsig bool) (*exec.Cmd, error) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & exec sleep 301")
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Setpgid: true}
	if deathsig {
		attr.Pdeathsig = syscall.SIGKILL
	}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a process in a new PID namespace: %w", err)
	}
	return cmd, nil
}

// recordJail records pid as s's jail init, with its namespace inode and
// start time, as a launch does.
func recordJail(s *Slot, pid int) error {
	ino, err := nsInode(strconv.Itoa(pid))
	if err != nil {
		return err
	}
	return s.Update(func(r *Record) { r.InitPID, r.PidNSInode, r.InitStart = pid, ino, InitStart(pid) })
}

// needJail starts a stand-in jail or skips, saying why; with
// AISAN_REQUIRE_INTEGRATION=1 it fails instead.
func needJail(t *testing.T) *exec.Cmd {
	t.Helper()
	jail, err := startJail(true)
	if err != nil {
		jailtest.Need(t, "PID namespaces", err)
	}
	t.Cleanup(func() {
		jail.Process.Kill()
		jail.Wait()
	})
	return jail
}

// children returns the host PIDs of pid's children.
func children(t *testing.T, pid int) []int {
	t.Helper()
	var kids []int
	deadline := time.Now().Add(5 * time.Second)
	for len(kids) == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, f := range strings.Fields(string(data)) {
			n, _ := strconv.Atoi(f)
			kids = append(kids, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return kids
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// newTree returns a fresh state dir and a worktree beside it.
func newTree(t *testing.T) (home, worktree string) {
	t.Helper()
	dir := t.TempDir()
	home, worktree = filepath.Join(dir, "state"), filepath.Join(dir, "myrepo")
	if err := os.Mkdir(worktree, 0o755); err != nil {
		t.Fatal(err)
	}
	return home, worktree
}

func openReg(t *testing.T, home string) *Registry {
	t.Helper()
	reg, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	reg.settle = 10 * time.Second
	return reg
}

func listMap(t *testing.T, reg *Registry) map[string]Entry {
	t.Helper()
	entries, problems := reg.List()
	for _, p := range problems {
		t.Errorf("List problem: %v", p)
	}
	m := map[string]Entry{}
	for _, e := range entries {
		m[e.Slot] = e
	}
	return m
}

func TestBaseName(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a", "my repo!")
	b := filepath.Join(dir, "b", "my repo!")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	na, err := BaseName(a, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(na, "my-repo-") || !strings.HasSuffix(na, "-claude") || len(na) != len("my-repo-")+8+len("-claude") {
		t.Errorf("BaseName(%q) = %q, want my-repo-<8 hex>-claude", a, na)
	}
	if nl, _ := BaseName(link, "claude"); nl != na {
		t.Errorf("through a symlink the name is %q, want %q (names follow the real path)", nl, na)
	}
	if nb, _ := BaseName(b, "claude"); nb == na {
		t.Errorf("two worktrees with one basename share the name %q", na)
	}
	if nc, _ := BaseName(a, "codex"); nc == na || !strings.HasSuffix(nc, "-codex") {
		t.Errorf("codex name %q: want a different name ending in -codex", nc)
	}
	for _, kind := range []string{"", "Claude", "a/b", "-x", "claude-2"} {
		if _, err := BaseName(a, kind); err == nil {
			t.Errorf("BaseName with kind %q: no error", kind)
		}
	}
	if _, err := BaseName(filepath.Join(dir, "missing"), "claude"); err == nil {
		t.Error("BaseName of a missing worktree: no error")
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"myrepo":                  "myrepo",
		"my repo":                 "my-repo",
		"..hidden":                "hidden",
		"/":                       "root",
		"ünïcode":                 "n-code",
		"a  b\tc":                 "a-b-c",
		"x.y_z-1":                 "x.y_z-1",
		strings.Repeat("a", 60):   strings.Repeat("a", maxBaseLen),
		"-- weird --":             "weird",
		strings.Repeat("ab-", 30): strings.TrimRight(strings.Repeat("ab-", 30)[:maxBaseLen], "-"),
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"myrepo-3f9c2a1b-claude":   true,
		"myrepo-3f9c2a1b-claude-2": true,
		"":                         false,
		".":                        false,
		"..":                       false,
		"../x":                     false,
		"a/b":                      false,
		".hidden":                  false,
		"-flag":                    false,
		"a b":                      false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("AISAN_HOME", "")
	if h, err := Home(); err != nil || h != "/home/someone/.aisan" {
		t.Errorf("Home() = %q, %v; want ~/.aisan", h, err)
	}
	t.Setenv("AISAN_HOME", "/var/tmp/state/")
	if h, err := Home(); err != nil || h != "/var/tmp/state" {
		t.Errorf("Home() = %q, %v; want $AISAN_HOME", h, err)
	}
	t.Setenv("AISAN_HOME", "relative/state")
	if _, err := Home(); err == nil || !strings.Contains(err.Error(), "relative/state") {
		t.Errorf("relative AISAN_HOME: err = %v, want one naming it", err)
	}
}

func TestCheckHome(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	repo := mk(filepath.Join(dir, "repo"))
	mk(filepath.Join(repo, ".git"))
	wt := mk(filepath.Join(dir, "wt"))
	// A linked worktree has a .git file, not a directory.
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := mk(filepath.Join(dir, "plain"))
	other := mk(filepath.Join(dir, "other"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		home, jailed string
		refuse       string // the project dir the error must name, "" = accepted
	}{
		{filepath.Join(other, ".aisan"), plain, ""},
		{filepath.Join(other, "not", "yet", "there"), plain, ""},
		{filepath.Join(other, ".aisan"), "", ""},
		{filepath.Join(repo, "state"), plain, repo},
		{filepath.Join(repo, "deep", "not", "yet"), plain, repo},
		{filepath.Join(wt, ".aisan"), plain, wt},
		{filepath.Join(plain, ".aisan"), plain, plain},
		{plain, plain, plain},
		{filepath.Join(link, "state"), plain, plain},
		{filepath.Join(plain, "state"), link, link},
	} {
		err := CheckHome(c.home, c.jailed)
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("CheckHome(%q, %q) = %v, want nil", c.home, c.jailed, err)
		case c.refuse != "" && err == nil:
			t.Errorf("CheckHome(%q, %q) accepted; want it refused (inside %s)", c.home, c.jailed, c.refuse)
		case c.refuse != "":
			var he *HomeError
			if !errors.As(err, &he) || !strings.Contains(err.Error(), c.home) || !strings.Contains(err.Error(), c.refuse) || !strings.Contains(err.Error(), "AISAN_HOME") {
				t.Errorf("CheckHome(%q, %q) = %v; want a HomeError naming %s, %s and AISAN_HOME", c.home, c.jailed, err, c.home, c.refuse)
			}
		}
	}
}

func TestAcquireRecordsAndReleases(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	if got := listMap(t, reg); len(got) != 0 {
		t.Fatalf("a state dir that does not exist lists %v", got)
	}
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := BaseName(wt, "claude")
	if s.Name() != base {
		t.Errorf("first slot is %q, want %q", s.Name(), base)
	}
	path := filepath.Join(home, "slots", base+".json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v, want 0600", fi.Mode().Perm())
	}
	rec := s.Record()
	real, _ := filepath.EvalSymlinks(wt)
	if rec.Kind != "claude" || rec.Worktree != real || rec.WrapperPID != os.Getpid() || rec.Start.IsZero() || !rec.End.IsZero() || rec.ExitStatus != nil {
		t.Errorf("initial record %+v", rec)
	}
	if !strings.HasPrefix(s.TranscriptPath(), filepath.Join(home, "transcripts", base)+"/") {
		t.Errorf("transcript path %q is not under transcripts/%s/", s.TranscriptPath(), base)
	}

	// A second launch in the same worktree gets the next name.
	s2, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if s2.Name() != base+"-2" {
		t.Errorf("second slot is %q, want %q", s2.Name(), base+"-2")
	}
	got := listMap(t, reg)
	if got[base].State != Running || got[base+"-2"].State != Running {
		t.Errorf("held slots list as %v and %v, want running", got[base].State, got[base+"-2"].State)
	}

	if err := s.Finish(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(*Record) {}); err == nil {
		t.Error("Update after Release succeeded")
	}
	e := listMap(t, reg)[base]
	if e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 3 || e.End.IsZero() {
		t.Errorf("after Finish(3) and Release: %+v, want exited with status 3", e)
	}
	// The stable name is free again, and reused; its transcript is new.
	if err := os.MkdirAll(filepath.Dir(rec.Transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec.Transcript, []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s3, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if s3.Name() != base {
		t.Errorf("re-launch got %q, want the freed %q", s3.Name(), base)
	}
	if s3.TranscriptPath() == rec.Transcript {
		t.Errorf("re-launch reuses the transcript path %q", rec.Transcript)
	}
	s2.Release()
	s3.Release()
}

// A launched child must not inherit the lock: if it did, a dead wrapper's
// slot would look running for as long as its jail lives.
func TestLockNotInherited(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "300")
	isolate(child, true)
	start(t, child)
	leaveOrphaned(t, s)
	if st := listMap(t, reg)[s.Name()].State; st != Exited {
		t.Errorf("with the holder's child still alive the slot is %s, want exited", st)
	}
}

// Twenty launchers racing in one worktree, each its own process, get
// twenty distinct slots, and the registry stays readable throughout.
func TestAcquireRace(t *testing.T) {
	home, wt := newTree(t)
	const n = 20
	type result struct {
		name string
		in   io.WriteCloser
	}
	results := make(chan result, n)
	for range n {
		go func() {
			_, name, in := startHelper(t, "hold", home, wt)
			results <- result{name, in}
		}()
	}
	seen := map[string]bool{}
	var ins []io.WriteCloser
	for range n {
		r := <-results
		if seen[r.name] {
			t.Errorf("slot %q handed out twice", r.name)
		}
		seen[r.name] = true
		ins = append(ins, r.in)
	}
	reg := openReg(t, home)
	got := listMap(t, reg)
	if len(got) != n {
		t.Errorf("registry lists %d slots, want %d", len(got), n)
	}
	for name := range seen {
		if got[name].State != Running {
			t.Errorf("slot %q is %q, want running", name, got[name].State)
		}
	}
	for _, in := range ins {
		in.Close()
	}
}

func TestCorruptRecordIsReportedAndKept(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	base, _ := BaseName(wt, "claude")
	if err := os.MkdirAll(filepath.Join(home, "slots"), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(home, "slots", base+".json")
	junk := []byte("{not json")
	if err := os.WriteFile(bad, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(home, "slots", "other-12345678-claude.json")
	if err := os.WriteFile(wrong, []byte(`{"slot":"someone-else"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if s.Name() != base+"-2" {
		t.Errorf("with the base name's record corrupt, Acquire chose %q, want %q", s.Name(), base+"-2")
	}
	entries, problems := reg.List()
	if len(entries) != 1 || entries[0].Slot != s.Name() {
		t.Errorf("List = %v, want just %s", entries, s.Name())
	}
	for _, path := range []string{bad, wrong} {
		found := false
		for _, p := range problems {
			var ce *CorruptError
			if errors.As(p, &ce) && ce.Path == path && strings.Contains(p.Error(), path) {
				found = true
			}
		}
		if !found {
			t.Errorf("List problems %v do not name %s", problems, path)
		}
	}
	if data, err := os.ReadFile(bad); err != nil || string(data) != string(junk) {
		t.Errorf("corrupt record changed: %q, %v", data, err)
	}
	if _, err := reg.Lookup(base); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Lookup of the corrupt slot: %v, want an error naming %s", err, bad)
	}
}

func TestUnwritableHome(t *testing.T) {
	_, wt := newTree(t)
	// A file where a directory should be fails for root too, unlike a
	// chmod; the integration tests cover permissions as a normal user.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, home := range []string{file, filepath.Join(file, "state")} {
		reg, err := Open(home)
		if err == nil {
			_, err = reg.Acquire(wt, "claude")
		}
		if err == nil || !strings.Contains(err.Error(), home) || !strings.Contains(err.Error(), "AISAN_HOME") {
			t.Errorf("launching with state dir %s: %v; want an error naming it and AISAN_HOME", home, err)
		}
	}
}

func TestUnknownSlot(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	for _, name := range []string{"nope", "../../etc/passwd", ""} {
		err := reg.Kill(name, syscall.SIGKILL)
		var ue *UnknownSlotError
		if !errors.As(err, &ue) || len(ue.Live) != 1 || ue.Live[0] != s.Name() || !strings.Contains(err.Error(), s.Name()) {
			t.Errorf("Kill(%q) = %v; want an UnknownSlotError listing %s", name, err, s.Name())
		}
	}
}

// A record left behind by a wrapper that died long ago, whose PIDs now
// belong to unrelated processes, must show as exited, and no kill may
// touch those processes.
func TestStaleRecordSparesUnrelatedProcesses(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	stranger := exec.Command("sleep", "300")
	isolate(stranger, true)
	start(t, stranger)
	pid := stranger.Process.Pid
	hostNS, err := nsInode(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what  string
		inode uint64
	}{
		{"the dead jail's namespace", hostNS + 7919},
		// A record can only name the host's namespace if it was forged or
		// corrupted; that must not make the stranger a target either.
		{"the host's own namespace", hostNS},
	} {
		s, err := reg.Acquire(wt, "claude")
		if err != nil {
			t.Fatal(err)
		}
		name := s.Name()
		if err := s.Update(func(r *Record) { r.WrapperPID, r.InitPID, r.PidNSInode = pid, pid, c.inode }); err != nil {
			t.Fatal(err)
		}
		s.Release()

		if st := listMap(t, reg)[name].State; st != Exited {
			t.Errorf("%s: stale slot is %s, want exited", c.what, st)
		}
		var nr *NotRunningError
		if err := reg.Kill(name, syscall.SIGKILL); !errors.As(err, &nr) {
			t.Errorf("%s: Kill = %v, want NotRunningError", c.what, err)
		}
		if killed, problems := reg.KillOrphans(syscall.SIGKILL); len(killed)+len(problems) != 0 {
			t.Errorf("%s: KillOrphans = %v, %v; want nothing", c.what, killed, problems)
		}
		if killed, problems := reg.KillAll(syscall.SIGKILL); len(killed)+len(problems) != 0 {
			t.Errorf("%s: KillAll = %v, %v; want nothing", c.what, killed, problems)
		}
		if err := KillPidNS(Record{Slot: name, InitPID: pid, PidNSInode: c.inode}, syscall.SIGKILL); err == nil {
			t.Errorf("%s: KillPidNS reported success", c.what)
		}
		if !running(pid) {
			t.Fatalf("%s: the unrelated process %d was killed", c.what, pid)
		}
	}
}

// A wrapper that died leaves an orphan: lock free, jail alive. Its name
// stays taken, list shows it, and KillOrphans ends the whole namespace and
// records the end.
func TestOrphanIsListedAndReaped(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	jail := needJail(t)
	inner := children(t, jail.Process.Pid)
	if len(inner) != 1 {
		t.Fatalf("jail children %v, want one", inner)
	}
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	name := s.Name()
	if err := recordJail(s, jail.Process.Pid); err != nil {
		t.Fatal(err)
	}
	leaveOrphaned(t, s) // what a killed wrapper leaves behind

	if st := listMap(t, reg)[name].State; st != Orphaned {
		t.Fatalf("slot %s is %s, want orphaned", name, st)
	}
	s2, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if s2.Name() == name {
		t.Fatalf("a new launch took the orphan's name %s", name)
	}
	s2.Release()

	killed, problems := reg.KillOrphans(syscall.SIGKILL)
	if len(killed) != 1 || killed[0] != name || len(problems) != 0 {
		t.Fatalf("KillOrphans = %v, %v; want [%s]", killed, problems, name)
	}
	err = jail.Wait()
	if ws, ok := jail.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("jail init ended with %v, want SIGKILL", err)
	}
	waitGone(t, inner[0])
	e := listMap(t, reg)[name]
	if e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 137 || e.End.IsZero() {
		t.Errorf("reaped orphan: %+v, want exited with status 137 and an end", e)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d in the jail survived its init", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill ends a running slot's jail and spares the wrapper, which records
// the end itself.
func TestKillRunningSparesWrapper(t *testing.T) {
	needJail(t)
	home, wt := newTree(t)
	reg := openReg(t, home)
	wrapper, name, _ := startHelper(t, "wrapper", home, wt)
	e, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if e.State != Running || e.InitPID == 0 {
		t.Fatalf("slot %s: %+v, want running with a jail", name, e)
	}
	inner := children(t, e.InitPID)
	if err := reg.Kill(name, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, pid := range inner {
		waitGone(t, pid)
	}
	if err := wrapper.Wait(); err != nil {
		t.Errorf("wrapper ended with %v, want a clean exit: it must be spared", err)
	}
	e = listMap(t, reg)[name]
	if e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 137 {
		t.Errorf("after kill: %+v, want exited with status 137 recorded by the wrapper", e)
	}
	var nr *NotRunningError
	if err := reg.Kill(name, syscall.SIGKILL); !errors.As(err, &nr) {
		t.Errorf("second Kill = %v, want NotRunningError", err)
	}
}

// SIGKILL to the wrapper process makes a real orphan; KillAll finds it.
func TestKilledWrapperLeavesOrphan(t *testing.T) {
	needJail(t)
	home, wt := newTree(t)
	reg := openReg(t, home)
	wrapper, name, _ := startHelper(t, "wrapper-nodeathsig", home, wt)
	e, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { KillPidNS(e.Record, syscall.SIGKILL) })
	wrapper.Process.Signal(syscall.SIGKILL)
	wrapper.Wait()
	if st := listMap(t, reg)[name].State; st != Orphaned {
		t.Fatalf("after the wrapper died, slot %s is %s, want orphaned", name, st)
	}
	killed, problems := reg.KillAll(syscall.SIGKILL)
	if len(killed) != 1 || killed[0] != name || len(problems) != 0 {
		t.Fatalf("KillAll = %v, %v; want [%s]", killed, problems, name)
	}
	waitGone(t, e.InitPID)
	if e := listMap(t, reg)[name]; e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 137 {
		t.Errorf("after KillAll: %+v, want exited with 137", e)
	}
}

// The Killer seam is used for live slots, and ErrJailGone from it means
// "not running", not a failure.
func TestKillerSeam(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	var calls []string
	reg.Killer = func(rec Record, sig syscall.Signal) error {
		calls = append(calls, rec.Slot)
		return ErrJailGone
	}
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	s.Update(func(r *Record) { r.InitPID, r.PidNSInode = 1, 1 })
	var nr *NotRunningError
	if err := reg.Kill(s.Name(), syscall.SIGKILL); !errors.As(err, &nr) {
		t.Errorf("Kill with a Killer reporting ErrJailGone = %v, want NotRunningError", err)
	}
	if len(calls) != 1 || calls[0] != s.Name() {
		t.Errorf("Killer calls %v, want [%s]", calls, s.Name())
	}
}

// A launch that never started leaves nothing behind.
func TestAbandon(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(s.TranscriptPath()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.TranscriptPath(), []byte("bwrap: oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Abandon(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(home, "slots"), filepath.Join(home, "transcripts")} {
		if des, _ := os.ReadDir(dir); len(des) != 0 {
			t.Errorf("%s holds %v after Abandon", dir, des)
		}
	}
	if err := s.Update(func(*Record) {}); err == nil {
		t.Error("Update after Abandon succeeded")
	}
	s2, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Release()
	if s2.Name() != s.Name() {
		t.Errorf("after Abandon the next launch got %q, want %q", s2.Name(), s.Name())
	}
}

// TestLockFileWriteOnly: lock files are write-only, so that no jail (which
// sees them on a read-only mount) can open one and hold its lock; lock
// files of older versions become so at the first look.
func TestLockFileWriteOnly(t *testing.T) {
	tests := []struct {
		name string
		old  os.FileMode // 0: no file yet
		look func(path string) error
	}{
		{"new, locked", 0, func(p string) error { _, err := tryLock(p); return err }},
		{"old, locked", 0o600, func(p string) error { _, err := tryLock(p); return err }},
		{"old, listed", 0o600, func(p string) error { _, err := lockHeld(p); return err }},
		{"old readable, listed", 0o644, func(p string) error { _, err := lockHeld(p); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.lock")
			if tt.old != 0 {
				if err := os.WriteFile(p, nil, tt.old); err != nil {
					t.Fatal(err)
				}
				os.Chmod(p, tt.old)
			}
			if err := tt.look(p); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != lockMode {
				t.Fatalf("lock file mode %v, want %v", fi.Mode().Perm(), os.FileMode(lockMode))
			}
		})
	}
}

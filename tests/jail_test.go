package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// marker returns a process, started outside any jail, whose command line
// holds a unique marker.
func markerProcess(t *testing.T) (pid int, marker string) {
	t.Helper()
	marker = fmt.Sprintf("aisanmarker%d%d", os.Getpid(), time.Now().UnixNano()%1e9)
	cmd := exec.Command("bash", "-c", "exec -a "+marker+" sleep 300")
	background(t, cmd)
	waitFor(t, 5*time.Second, "the marker process", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
		return strings.HasPrefix(string(b), marker)
	})
	return cmd.Process.Pid, marker
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestJailHidesForeignPIDs: a process outside is invisible from inside,
// cannot be signalled, and a name-based kill inside does not reach it.
func TestJailHidesForeignPIDs(t *testing.T) {
	requireJail(t)
	pid, marker := markerProcess(t)
	_, env := testEnv(t)

	r := aisan(t, env, "", "run", "--", "sh", "-c", fmt.Sprintf("test -e /proc/%d && echo visible; true", pid))
	if r.code != 0 || strings.Contains(r.stdout, "visible") {
		t.Fatalf("pid %d visible inside (code %d): %q %q", pid, r.code, r.stdout, r.stderr)
	}
	r = aisan(t, append(env, helperEnv("signal")...), "", "run", "--", self(), strconv.Itoa(pid), "0")
	if got := strings.TrimSpace(r.stdout); got != "ESRCH" {
		t.Fatalf("kill -0 %d from inside: %q (stderr %q), want ESRCH", pid, got, r.stderr)
	}
	r = aisan(t, env, "", "run", "--", "pkill", "-f", marker)
	if r.code != 1 { // pkill: 1 means nothing matched
		t.Errorf("pkill -f %s inside exited %d, want 1 (no match): %s", marker, r.code, r.stderr)
	}
	if !alive(pid) {
		t.Fatalf("the marker process outside died after pkill inside")
	}
	// Control: outside a jail the same probes do see it, so the checks
	// above can fail.
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Fatalf("control: pid %d not visible outside: %v", pid, err)
	}
	if out, err := exec.Command("pgrep", "-f", marker).Output(); err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(pid) {
		t.Fatalf("control: pgrep -f %s outside found %q (%v), want %d", marker, out, err, pid)
	}
}

// cgroupDir is this process's own cgroup2 directory.
func cgroupDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var rel string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st syscall.Statfs_t
		if syscall.Statfs(root, &st) == nil && st.Type == 0x63677270 { // CGROUP2_SUPER_MAGIC
			return filepath.Join(root, rel)
		}
	}
	t.Fatal("no cgroup2 hierarchy mounted")
	return ""
}

// TestJailCgroupsReadOnly: writes under /sys/fs/cgroup fail with EROFS,
// including the cgroup.procs and cgroup.kill of the test's own cgroup,
// which the test can write outside.
func TestJailCgroupsReadOnly(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	dir := cgroupDir(t)
	procs := filepath.Join(dir, "cgroup.procs")
	// Control: outside, our own cgroup is ours to write (the test
	// environment delegates it), so EROFS inside is the mount, not
	// permissions.
	f, err := os.OpenFile(procs, os.O_WRONLY, 0)
	need(t, "a cgroup delegated to the test user (make test sets one up)", err)
	f.Close()

	for _, probe := range [][]string{
		{"write", procs, "0"},
		{"write", filepath.Join(dir, "cgroup.kill"), "1"},
		{"mkdir", filepath.Join(dir, "aisan-escape")},
	} {
		r := aisan(t, append(env, helperEnv(probe[0])...), "", append([]string{"run", "--", self()}, probe[1:]...)...)
		if got := strings.TrimSpace(r.stdout); got != "EROFS" {
			t.Errorf("%s %s inside: %q (stderr %q), want EROFS", probe[0], probe[1], got, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "aisan-escape")); err == nil {
		t.Error("a cgroup was created from inside")
	}
}

// TestJailHidesUserManagerSocket: $XDG_RUNTIME_DIR/systemd is empty inside.
func TestJailHidesUserManagerSocket(t *testing.T) {
	requireJail(t)
	requireUserManager(t)
	_, env := testEnv(t)
	rt := os.Getenv("XDG_RUNTIME_DIR")
	r := aisan(t, env, "", "run", "--", "ls", "-A", filepath.Join(rt, "systemd"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Fatalf("%s/systemd inside: code %d, %q %q; want empty", rt, r.code, r.stdout, r.stderr)
	}
	r = aisan(t, append(env, helperEnv("connect")...), "", "run", "--", self(), filepath.Join(rt, "systemd", "private"))
	if !strings.HasPrefix(r.stdout, "error:") {
		t.Fatalf("the user manager's private socket answered inside: %q", r.stdout)
	}
}

// TestJailSharesHomeTmpAndSockets: $HOME and /tmp are the host's, and a
// socket under $XDG_RUNTIME_DIR (standing for ssh-agent) is reachable.
func TestJailSharesHomeTmpAndSockets(t *testing.T) {
	requireJail(t)
	home, env := testEnv(t)
	tmp, err := os.MkdirTemp("/tmp", "aisan-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	r := aisan(t, env, "", "run", "--", "sh", "-c", `echo inside > "$HOME/from-jail" && echo inside > "$1/from-jail"`, "sh", tmp)
	if r.code != 0 {
		t.Fatalf("writing inside: %d %s", r.code, r.stderr)
	}
	for _, p := range []string{filepath.Join(home, "from-jail"), filepath.Join(tmp, "from-jail")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "inside\n" {
			t.Errorf("%s outside: %q %v", p, b, err)
		}
	}

	rt := os.Getenv("XDG_RUNTIME_DIR")
	if rt == "" {
		rt = t.TempDir()
	}
	sock := filepath.Join(rt, fmt.Sprintf("aisan-test-agent-%d.sock", os.Getpid()))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "agent-here")
			c.Close()
		}
	}()
	r = aisan(t, append(env, helperEnv("connect")...), "", "run", "--", self(), sock)
	if got := strings.TrimSpace(r.stdout); got != "agent-here" {
		t.Fatalf("socket %s inside: %q %q", sock, got, r.stderr)
	}
}

// TestJailNoProjectTextOnCommandLines: inside, no command line but the
// agent's own names the worktree or any agent argument; the jail's init
// is called aisan-init and nothing more.
func TestJailNoProjectTextOnCommandLines(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	wt := filepath.Join(t.TempDir(), "wtsecretname")
	if err := os.Mkdir(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	r := aisanIn(t, wt, append(env, helperEnv("cmdlines")...), "", "run", "--", self(), "argsecretvalue")
	if r.code != 0 {
		t.Fatalf("code %d: %s", r.code, r.stderr)
	}
	var cmdlines map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &cmdlines); err != nil {
		t.Fatalf("decoding %q: %v", r.stdout, err)
	}
	if _, ok := cmdlines["1"]; !ok {
		t.Fatal("saw no other process inside (the jail's init should be there)")
	}
	if init := strings.TrimRight(cmdlines["1"], "\x00"); init != "aisan-init" {
		t.Errorf("PID 1's command line is %q, want aisan-init", cmdlines["1"])
	}
	delete(cmdlines, "1")
	for pid, cl := range cmdlines {
		for _, secret := range []string{"wtsecretname", "argsecretvalue", "aisan"} {
			if strings.Contains(cl, secret) {
				t.Errorf("pid %s's command line %q contains %q", pid, cl, secret)
			}
		}
	}
}

// TestJailArgumentsArriveIntact passes awkward arguments through every
// launcher and compares what the program received.
func TestJailArgumentsArriveIntact(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	big := strings.Repeat("x", 100<<10)
	awkward := []string{"two words", `quote"s`, "it's", "new\nline", "$HOME", "$(id)", "", "--explain", "--memory-max", "-h", "--", "\t", "latin1-\xe9-not-utf8", "\x01\x7f", big}

	bin := t.TempDir()
	for _, name := range []string{"claude", "codex", "opencode"} {
		if err := os.Symlink(self(), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "argv.json")
	env = append(env, helperEnv("argv")...)
	env = append(env, "AISAN_TEST_OUT="+out, "PATH="+bin+":"+os.Getenv("PATH"))

	check := func(label string, want []string, args ...string) {
		t.Helper()
		os.Remove(out)
		r := aisan(t, env, "", args...)
		if r.code != 0 {
			t.Fatalf("%s: code %d: %s", label, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		var got [][]byte
		json.Unmarshal(b, &got)
		if len(got) != len(want) {
			t.Fatalf("%s: got %d args, want %d", label, len(got), len(want))
		}
		for i := range want {
			if string(got[i]) != want[i] {
				t.Fatalf("%s: arg %d = %.60q, want %.60q", label, i, got[i], want[i])
			}
		}
	}
	check("run", awkward, append([]string{"run", "--", self()}, awkward...)...)
	for _, kind := range []string{"claude", "codex", "opencode"} {
		check(kind+" --", awkward, append([]string{kind, "--"}, awkward...)...)
	}
	// Without "--", the first argument that is not an aisan option ends
	// aisan's options.
	check("claude --continue", []string{"--continue", "--explain"}, "claude", "--continue", "--explain")
}

// TestJailExitStatus: the agent's status comes back, 128+N for a signal.
func TestJailExitStatus(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	for _, code := range []int{0, 1, 42} {
		r := aisan(t, append(env, helperEnv("exit")...), "", "run", "--", self(), strconv.Itoa(code))
		if r.code != code {
			t.Errorf("exit %d came back as %d (%s)", code, r.code, r.stderr)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGSEGV} {
		r := aisan(t, env, "", "run", "--", "sh", "-c", "kill -"+strconv.Itoa(int(sig))+" $$")
		if r.code != 128+int(sig) {
			t.Errorf("death by %v came back as %d, want %d (%s)", sig, r.code, 128+int(sig), r.stderr)
		}
	}
}

// TestJailForwardsSignals: SIGINT, SIGTERM and SIGHUP sent to aisan reach
// the agent.
func TestJailForwardsSignals(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if signal.Ignored(sig) {
			// Started under nohup (or the like): aisan inherits the
			// ignored signal and, by design, keeps it ignored all the
			// way down (TestIgnoredSignalStaysIgnored).
			t.Logf("%v is ignored by this test run; aisan ignores it too", sig)
			continue
		}
		cmd := exec.Command(aisanBin, "run", "--", self())
		cmd.Env = append(append(os.Environ(), env...), helperEnv("trap")...)
		stdout, _ := cmd.StdoutPipe()
		background(t, cmd)
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("helper did not get ready: %q", sc.Text())
		}
		cmd.Process.Signal(sig)
		for sc.Scan() {
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 100+int(sig) {
			t.Errorf("%v to aisan: exit %d, want %d (the agent's trap)", sig, code, 100+int(sig))
		}
	}
}

// TestJailBadInput: each mistake gets one error line, a hint, a non-zero
// status, and leaves nothing behind.
func TestJailBadInput(t *testing.T) {
	home, env := testEnv(t)
	r := aisan(t, env, "", "frobnicate")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "aisan: error: unknown command") || !strings.Contains(r.stderr, "aisan: hint:") {
		t.Errorf("unknown command: %d %q", r.code, r.stderr)
	}
	// An option run does not have is a usage error, not a command (one
	// an agent's launcher does not have goes to the agent).
	_, env2 := testEnv(t)
	r = aisan(t, env2, "", "run", "--no-such-option")
	if r.code != 2 || !strings.Contains(r.stderr, `aisan: error: run: unknown option --no-such-option`) {
		t.Errorf("run --no-such-option: %d %q", r.code, r.stderr)
	}
	r = aisan(t, env, "", "run")
	if r.code != 2 || !strings.Contains(r.stderr, "no command") {
		t.Errorf("run without a command: %d %q", r.code, r.stderr)
	}

	// An agent that is not installed: say how to install it, status 127,
	// before any slot is taken.
	noAgent := t.TempDir()
	os.Symlink("/usr/bin/bwrap", filepath.Join(noAgent, "bwrap"))
	r = aisan(t, append(env, "PATH="+noAgent), "", "claude", "--continue")
	if r.code != 127 || !strings.Contains(r.stderr, `aisan: error: cannot run "claude": not found in PATH`) ||
		!strings.Contains(r.stderr, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("claude not installed: %d %q", r.code, r.stderr)
	}

	// No bwrap on PATH: the error names the package.
	empty := t.TempDir()
	r = aisan(t, append(env, "PATH="+empty), "", "run", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "bwrap is not installed") || !strings.Contains(r.stderr, "bubblewrap") {
		t.Errorf("missing bwrap: %d %q", r.code, r.stderr)
	}

	// A working directory that was deleted.
	gone := filepath.Join(t.TempDir(), "gone")
	os.Mkdir(gone, 0o755)
	cmd := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" run -- true`, "sh", gone, aisanBin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "current directory no longer exists") || !strings.Contains(string(out), "aisan: hint:") {
		t.Errorf("deleted cwd: %v %q", err, out)
	}
	// bwrap that cannot create a namespace (what an AppArmor-restricted
	// host does): its message and the likely fix, and no state left. The
	// host here allows namespaces, so a stand-in bwrap plays the refusal.
	fake := t.TempDir()
	script := "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(fake, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r = aisan(t, append(env, onlyBwrap(t, fake)), "", "run", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "aisan: error: bwrap could not start the jail: bwrap: setting up uid map: Permission denied") ||
		!strings.Contains(r.stderr, "aisan: hint: unprivileged user namespaces look restricted") {
		t.Errorf("bwrap refusing namespaces: %d %q", r.code, r.stderr)
	}

	// Nothing left behind in the state dir by failed launches.
	ents, _ := os.ReadDir(filepath.Join(home, ".aisan", "slots"))
	for _, e := range ents {
		t.Errorf("stale state after failed launches: %s", e.Name())
	}
}

// TestJailHidesManagerOutsideRuntimeDir: with XDG_RUNTIME_DIR pointing
// elsewhere, the user manager still listens in /run/user/UID; the jail
// hides its private socket and bus there too.
func TestJailHidesManagerOutsideRuntimeDir(t *testing.T) {
	requireJail(t)
	requireUserManager(t)
	std := fmt.Sprintf("/run/user/%d", os.Getuid())
	if os.Getenv("XDG_RUNTIME_DIR") != std {
		need(t, "the user manager's runtime dir at "+std, fmt.Errorf("XDG_RUNTIME_DIR is %q", os.Getenv("XDG_RUNTIME_DIR")))
	}
	_, env := testEnv(t)
	// No bus address either: nothing points the jail at /run/user/UID/bus.
	env = append(env, "XDG_RUNTIME_DIR="+t.TempDir(), "DBUS_SESSION_BUS_ADDRESS=", "AISAN_NO_SCOPE=1")
	for _, sock := range []string{filepath.Join(std, "systemd", "private"), filepath.Join(std, "bus")} {
		// Control: outside, the socket answers.
		if c, err := net.Dial("unix", sock); err != nil {
			t.Fatalf("control: %s does not answer outside: %v", sock, err)
		} else {
			c.Close()
		}
		r := aisan(t, append(env, helperEnv("connect")...), "", "run", "--", self(), sock)
		if !strings.HasPrefix(r.stdout, "error:") {
			t.Errorf("%s answered inside although XDG_RUNTIME_DIR points elsewhere: %q %q", sock, r.stdout, r.stderr)
		}
	}
}

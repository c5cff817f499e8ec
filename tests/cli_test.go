package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// shellSession is an interactive shell on a terminal of its own.
type shellSession struct {
	t   *testing.T
	pty *os.File
	mu  sync.Mutex
	out bytes.Buffer
}

func startShell(t *testing.T, env []string, argv ...string) *shellSession {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	s := &shellSession{t: t, pty: f}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return s
}

func (s *shellSession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// expect waits for want in what the shell printed since mark.
func (s *shellSession) expect(mark int, want string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.output()[mark:], want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the shell never printed %q:\n%q", want, s.output()[mark:])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestShellCompletion: a real bash, zsh and fish load aisan's completion
// through 'aisan shell-init' and complete "aisan k" to "aisan kill": the
// completed line runs, and kill says it has no slot (the line as typed
// would be an unknown command).
func TestShellCompletion(t *testing.T) {
	dir := filepath.Dir(aisanBin)
	for _, c := range []struct {
		shell string
		argv  []string
		setup string
		ready string // prints READY-42, which its echo does not show
	}{
		{"bash", []string{"bash", "--norc", "--noprofile", "-i"}, `eval "$(aisan shell-init bash)"`, "echo READY-$((40+2))"},
		// compinit after the integration: the completion registers itself
		// at the next prompt.
		{"zsh", []string{"zsh", "-f", "-i"}, `eval "$(aisan shell-init zsh)"; autoload -Uz compinit; compinit -u -D`, "echo READY-$((40+2))"},
		{"fish", []string{"fish", "--no-config", "-i"}, `aisan shell-init fish | source`, "echo READY-(math 40+2)"},
	} {
		t.Run(c.shell, func(t *testing.T) {
			_, err := exec.LookPath(c.shell)
			need(t, c.shell+" (tests/env/deps.sh installs it)", err)
			home := t.TempDir()
			env := []string{
				"PATH=" + dir + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TERM=xterm-256color",
				"AISAN_HOME=" + filepath.Join(home, ".aisan"), "LANG=C.UTF-8", "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
			}
			s := startShell(t, env, c.argv...)
			s.pty.Write([]byte(c.setup + "\r"))
			s.pty.Write([]byte(c.ready + "\r"))
			s.expect(0, "READY-42")
			time.Sleep(300 * time.Millisecond)
			mark := len(s.output())
			s.pty.Write([]byte("aisan k\t"))
			time.Sleep(time.Second)
			s.pty.Write([]byte("\r"))
			s.expect(mark, "kill: no slot given")
			if strings.Contains(s.output()[mark:], `unknown command "k"`) {
				t.Errorf("%s ran the line uncompleted", c.shell)
			}
		})
	}
}

// TestKillNoteOnTerminal: an agent on a terminal that 'aisan kill' ends
// leaves one line there saying which slot was ended, and by what.
func TestKillNoteOnTerminal(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	dir := worktree(t)
	term := newTerminal(t, 24, 100)
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", "echo agent-up; sleep 300")
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var seen []string
	var mu sync.Mutex
	go func() {
		for l := range term.lines {
			mu.Lock()
			seen = append(seen, l)
			mu.Unlock()
		}
	}()
	term.start(cmd)
	waitFor(t, 10*time.Second, "the agent's first line", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, "agent-up") })
	})
	slot := liveSlot(t, env)
	if r := aisan(t, env, "", "kill", slot); r.code != 0 {
		t.Fatalf("aisan kill: %d %s", r.code, r.stderr)
	}
	cmd.Wait()
	var notes []string
	waitFor(t, 5*time.Second, "the kill note on the terminal", func() bool {
		mu.Lock()
		defer mu.Unlock()
		notes = nil
		for _, l := range seen {
			if strings.Contains(l, "was ended by") {
				notes = append(notes, l)
			}
		}
		return len(notes) > 0
	})
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], "aisan: slot "+slot+" was ended by 'aisan kill' (PID ") || !strings.HasSuffix(notes[0], "with SIGTERM") {
		t.Errorf("the terminal's lines about the kill: %q (all: %q)", notes, seen)
	}
}

// TestJailInitName: in ps inside a jail (and a strict box), PID 1 is
// called aisan-init, not /proc/self/fd/4.
func TestJailInitName(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	dir := worktree(t)
	probe := `printf 'comm=%s\n' "$(cat /proc/1/comm)"; printf 'cmdline=%s\n' "$(tr '\0' ' ' </proc/1/cmdline)"; ps -o pid=,args= -p 1`
	for _, mode := range [][]string{{"run", "--"}, {"run", "--strict", "--"}} {
		r := aisanIn(t, dir, env, "", append(mode, "sh", "-c", probe)...)
		if r.code != 0 {
			t.Fatalf("%q: %d %s", mode, r.code, r.stderr)
		}
		for _, want := range []string{"comm=aisan-init\n", "cmdline=aisan-init", "1 aisan-init"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%q: PID 1 is not called aisan-init (%q):\n%s", mode, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "/proc/self/fd") {
			t.Errorf("%q: PID 1 still shows its descriptor:\n%s", mode, r.stdout)
		}
	}
}

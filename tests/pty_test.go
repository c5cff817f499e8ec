package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// terminal is a pty pair the test plays the user's terminal with.
type terminal struct {
	t      *testing.T
	master *os.File
	slave  *os.File
	lines  chan string
	seen   []string
}

func newTerminal(t *testing.T, rows, cols uint16) *terminal {
	t.Helper()
	m, s, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	pty.Setsize(m, &pty.Winsize{Rows: rows, Cols: cols})
	term := &terminal{t: t, master: m, slave: s, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(m)
		for sc.Scan() {
			term.lines <- strings.TrimRight(sc.Text(), "\r")
		}
		close(term.lines)
	}()
	return term
}

// start runs cmd with the terminal as its controlling tty.
func (term *terminal) start(cmd *exec.Cmd) {
	term.t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.slave, term.slave, term.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		term.t.Fatal(err)
	}
	term.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

// expect waits for a line containing want.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-term.lines:
			if !ok {
				term.t.Fatalf("terminal closed waiting for %q; saw %q", want, term.seen)
			}
			term.seen = append(term.seen, l)
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			term.t.Fatalf("timed out waiting for %q; saw %q", want, term.seen)
		}
	}
}

func termios(t *testing.T, f *os.File) *unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio
}

func liveSlot(t *testing.T, env []string) string {
	t.Helper()
	var name string
	waitFor(t, 10*time.Second, "a running slot in aisan list --json", func() bool {
		r := aisan(t, env, "", "list", "--json")
		var entries []map[string]any
		if json.Unmarshal([]byte(r.stdout), &entries) != nil {
			return false
		}
		for _, e := range entries {
			if e["state"] == "running" {
				name, _ = e["slot"].(string)
				return true
			}
		}
		return false
	})
	return name
}

// TestPTYInteractiveSession drives a jailed agent through a real terminal:
// it sees the terminal's size and its changes, gets what is typed, its
// output lands in the transcript, and `aisan kill` from another shell ends
// it, after which the terminal is back in the mode it was in.
func TestPTYInteractiveSession(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	before := termios(t, term.slave)

	cmd := exec.Command(aisanBin, "run", "--", self())
	cmd.Env = append(append(os.Environ(), env...), helperEnv("tty")...)
	term.start(cmd)
	term.expect("size 24 80")

	pty.Setsize(term.master, &pty.Winsize{Rows: 40, Cols: 120})
	term.expect("size 40 120")

	term.master.Write([]byte("hello jail\r"))
	term.expect("echo hello jail")

	slotName := liveSlot(t, env)
	waitFor(t, 5*time.Second, "the transcript to hold the echo", func() bool {
		r := aisan(t, env, "", "logs", slotName)
		return strings.Contains(r.stdout, "echo hello jail")
	})

	r := aisan(t, env, "", "kill", "--signal", "KILL", slotName)
	if r.code != 0 {
		t.Fatalf("aisan kill %s: %d %s", slotName, r.code, r.stderr)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 137 {
		t.Fatalf("after aisan kill the wrapper ended with %v, want exit 137", err)
	}
	after := termios(t, term.slave)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Fatalf("terminal not restored: lflag %#x->%#x iflag %#x->%#x oflag %#x->%#x",
			before.Lflag, after.Lflag, before.Iflag, after.Iflag, before.Oflag, after.Oflag)
	}
}

// TestPTYRestoredOnSignal: SIGTERM to aisan on a terminal reaches the
// agent, and the terminal is restored when it ends.
func TestPTYRestoredOnSignal(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	before := termios(t, term.slave)
	cmd := exec.Command(aisanBin, "run", "--", self())
	cmd.Env = append(append(os.Environ(), env...), helperEnv("trap")...)
	term.start(cmd)
	term.expect("ready")
	if raw := termios(t, term.slave); raw.Lflag&unix.ICANON != 0 {
		t.Fatalf("terminal not in raw mode while the agent runs")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 100+int(syscall.SIGTERM) {
		t.Fatalf("SIGTERM on a pty: %v, want the agent's exit %d", err, 100+int(syscall.SIGTERM))
	}
	after := termios(t, term.slave)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag {
		t.Fatalf("terminal not restored after SIGTERM")
	}
}

// TestNoTTYPassesStreams: without a terminal, stdin, stdout and stderr
// pass through and the status comes back.
func TestNoTTYPassesStreams(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	r := aisan(t, env, "line one\nline two\n", "run", "--", "sh", "-c", "cat; echo err >&2; exit 3")
	if r.stdout != "line one\nline two\n" || r.stderr != "err\n" || r.code != 3 {
		t.Fatalf("got stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
	}
}

// TestTerminalInStdoutOnly: stdin from a pipe, stdout on the user's
// terminal: the agent writes to the terminal, but it is not the jail's
// controlling terminal (nothing inside can type into it or take it over
// as a job: see TestNoTerminalInjection), so /dev/tty is not there; the
// terminal works for the user afterwards.
func TestTerminalInStdoutOnly(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", `echo ready; [ -t 1 ] && echo stdout-tty; if (exec </dev/tty) 2>/dev/null; then echo "got tty"; else echo "got no tty"; fi`)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = term.slave, term.slave
	cmd.Stdin = strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	term.expect("ready")
	term.expect("stdout-tty")
	term.expect("got no tty")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("aisan: %v", err)
	}
}

// TestTerminalInStdinOnly: stdin on a terminal, stdout and stderr to
// files: the files get exactly what the agent wrote (no pty, no CRLF, no
// streams merged), and the agent does not see a terminal on stdout.
func TestTerminalInStdinOnly(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	dir := t.TempDir()
	outF, _ := os.Create(filepath.Join(dir, "out"))
	errF, _ := os.Create(filepath.Join(dir, "err"))
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", `echo out; echo err >&2; [ -t 1 ] && echo stdout-is-tty; true`)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.slave, outF, errF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("aisan: %v", err)
	}
	outF.Close()
	errF.Close()
	o, _ := os.ReadFile(filepath.Join(dir, "out"))
	e, _ := os.ReadFile(filepath.Join(dir, "err"))
	if string(o) != "out\n" || string(e) != "err\n" {
		t.Fatalf("stdout %q stderr %q; want \"out\\n\" and \"err\\n\"", o, e)
	}
}

// TestCtrlZSuspendsAndFgResumes: in a job-control shell on a terminal, ^Z
// stops the jailed agent and gives the shell back (the job is stopped),
// and fg resumes it where it was, with a pty session and
// with the streams piped (aisan run -- cmd | cat).
func TestCtrlZSuspendsAndFgResumes(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	for _, tc := range []struct{ name, pipe string }{{"pty", ""}, {"pipe", " | cat"}} {
		t.Run(tc.name, func(t *testing.T) {
			script := `set -m
"$0" run -- sh -c 'echo started; i=0; while [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); echo $i >> "$HOME/ticks"; done; echo finished'` + tc.pipe + `
echo "returned:$?"
jobs
a=$(wc -l < "$HOME/ticks"); sleep 1; b=$(wc -l < "$HOME/ticks")
echo "ticks-while-stopped:$((b-a))"
fg >/dev/null
echo "fg-status:$?"`
			term := newTerminal(t, 24, 80)
			cmd := exec.Command("bash", "-c", script, aisanBin)
			cmd.Env = append(os.Environ(), env...)
			term.start(cmd)
			term.expect("started")
			time.Sleep(300 * time.Millisecond)
			term.master.Write([]byte{0x1a})
			term.expect("returned:14") // 147: the wrapper stops itself with SIGSTOP
			term.expect("Stopped")
			term.expect("ticks-while-stopped:0")
			term.expect("finished")
			term.expect("fg-status:0")
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the shell: %v; saw %q", err, term.seen)
			}
		})
	}
}

// TestPTYLogsRendered: 'aisan logs' plays an interactive session's
// transcript through a terminal of the sizes the user's terminal had, so
// what the interface drew reads as text: each exchange, the line the
// terminal wrapped at the width it had then, the status line as last
// redrawn after a resize, the frame a full-screen view showed. --raw keeps
// the bytes; --launches and --launch N pick a launch.
func TestPTYLogsRendered(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	var slotName string
	for launch := 1; launch <= 2; launch++ {
		term := newTerminal(t, 24, 80)
		cmd := exec.Command(aisanBin, "run", "--", self())
		cmd.Env = append(append(os.Environ(), env...), helperEnv("tui")...)
		term.start(cmd)
		term.expect("status cols=80")
		if launch == 1 {
			slotName = liveSlot(t, env)
		}
		pty.Setsize(term.master, &pty.Winsize{Rows: 30, Cols: 120})
		term.expect("status cols=120")
		fmt.Fprintf(term.master, "hello jail %d\r", launch)
		term.expect(fmt.Sprintf("agent: HELLO JAIL %d", launch))
		term.expect("status cols=120") // redrawn under the answer
		term.master.Write([]byte("quit\r"))
		if err := cmd.Wait(); err != nil {
			t.Fatalf("launch %d: %v; terminal showed %q", launch, err, term.seen)
		}
	}

	r := aisan(t, env, "", "logs", slotName)
	if r.code != 0 {
		t.Fatalf("aisan logs %s: %d %s", slotName, r.code, r.stderr)
	}
	t.Logf("aisan logs %s:\n%s", slotName, r.stdout)
	lines := strings.Split(r.stdout, "\n")
	has := func(want string) bool { return slices.Contains(lines, want) }
	x80 := strings.Repeat("x", 80)
	for _, want := range []string{"you: hello jail 2", "agent: HELLO JAIL 2", x80, "full screen frame"} {
		if !has(want) {
			t.Errorf("aisan logs lacks the line %q", want)
		}
	}
	// In the order it was on screen: the status line as redrawn for 120
	// columns (the typed "quit" echoed over it), then the full-screen view.
	if !strings.HasSuffix(r.stdout, "cols=120]\nfull screen frame\n") {
		t.Errorf("aisan logs does not end with the last status line, then the full-screen frame: …%q", r.stdout[max(0, len(r.stdout)-300):])
	}
	if strings.Count(r.stdout, x80) != 2 || strings.Contains(r.stdout, x80+"x") {
		t.Errorf("the 160 x's are not wrapped at the recorded 80 columns")
	}
	if strings.Contains(r.stdout, "\x1b") || strings.Contains(r.stdout, "hello jail 1") || strings.Contains(r.stdout, "cols=80]") {
		t.Errorf("aisan logs shows escapes, the other launch, or a status line since redrawn")
	}
	raw := aisan(t, env, "", "logs", "--raw", slotName)
	if !strings.Contains(raw.stdout, "\x1b[2K") || !strings.Contains(raw.stdout, "you: hello jail 2") {
		t.Errorf("aisan logs --raw lost the bytes: %q", raw.stdout)
	}
	ls := aisan(t, env, "", "logs", "--launches", slotName)
	if ls.code != 0 || len(strings.Split(strings.TrimSpace(ls.stdout), "\n")) != 3 {
		t.Errorf("aisan logs --launches: %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	first := aisan(t, env, "", "logs", "--launch", "1", slotName)
	if !strings.Contains(first.stdout, "agent: HELLO JAIL 1") || strings.Contains(first.stdout, "JAIL 2") {
		t.Errorf("aisan logs --launch 1 shows %q, want the first launch", first.stdout)
	}
	if r := aisan(t, env, "", "logs", "--launch", "3", slotName); r.code == 0 || !strings.Contains(r.stderr, "has 2 kept launches") {
		t.Errorf("aisan logs --launch 3: %d %q", r.code, r.stderr)
	}
}

// TestPTYLogsHugeCounts: a jail that prints escape sequences with counts
// of two billion (repeat the last character, tab forward or back, erase
// characters) does not keep the host's next 'aisan logs' busy: the
// rendering cuts each count to the screen's width, as a terminal's line
// would, and prints what the terminal showed.
func TestPTYLogsHugeCounts(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	seqs := `x\033[999999999b\r\n\033[999999999I\033[999999999Z\033[999999999Xdone\r\n`
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", `printf "$1$1$1"; echo printed`, "sh", seqs)
	cmd.Env = append(os.Environ(), env...)
	term.start(cmd)
	term.expect("printed")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the jail: %v; terminal showed %q", err, term.seen)
	}
	slotName := ""
	for name := range slotList(t, env) {
		slotName = name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	logs := exec.CommandContext(ctx, aisanBin, "logs", slotName)
	logs.Env = append(os.Environ(), env...)
	out, err := logs.Output()
	if ctx.Err() != nil {
		t.Fatalf("aisan logs %s still runs after 20s (a jail's nine bytes keep it busy)", slotName)
	}
	if err != nil {
		t.Fatalf("aisan logs %s: %v", slotName, err)
	}
	if want := strings.Repeat("x", 80) + "\n"; strings.Count(string(out), want) != 3 || strings.Count(string(out), "done") != 3 {
		t.Errorf("aisan logs %s = %q, want three lines of 80 x's and three of done", slotName, out)
	}
}

// TestLogsPlainHugeColumn: a jail whose output goes to a pipe (no
// terminal: its transcript is played line by line) and moves the cursor
// to column 999999999 does not make the host's next 'aisan logs'
// allocate gigabytes of spaces (it ran out of memory) nor run for long:
// it prints the line within 2 GiB of address space and 20 seconds.
func TestLogsPlainHugeColumn(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit here")
	}
	if r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "printf", `a\033[999999999Gb\nafter\n`); r.code != 0 {
		t.Fatalf("the jail: code %d, stderr %q", r.code, r.stderr)
	}
	slotName := ""
	for name := range slotList(t, env) {
		slotName = name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	logs := exec.CommandContext(ctx, prlimit, "--as=2147483648", aisanBin, "logs", slotName)
	logs.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	logs.Stderr = &stderr
	out, err := logs.Output()
	if ctx.Err() != nil {
		t.Fatalf("aisan logs %s still runs after 20s", slotName)
	}
	if err != nil {
		t.Fatalf("aisan logs %s: %v; stderr %.300q", slotName, err, stderr.String())
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "a ") || !strings.HasSuffix(lines[0], " b") || len(lines[0]) > 1<<10 || lines[1] != "after" {
		t.Errorf("aisan logs %s = %.300q, want a line of a, some spaces and b, then after", slotName, out)
	}
}

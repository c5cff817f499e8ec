package tests

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// stealPTY PATH...: from inside a jail, opens each path (another
// terminal's /dev/pts/N) as an attacker would, writes a marker into what
// opened and reads it for two seconds, printing "open PATH: RESULT" and
// "stolen PATH: BYTES". Then it opens a pty of its own, through /dev/ptmx
// and the path ptsname gives, and prints "newpty: RESULT".
func stealPTY(paths []string) int {
	// Raw descriptors: an *os.File of a non-blocking descriptor would
	// wait in the poller instead of returning at once.
	opened := map[int]string{}
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		fmt.Printf("open %s: %s\n", p, errnoName(err))
		if err == nil {
			unix.Write(fd, []byte("PWNED-BY-JAIL\r\n"))
			opened[fd] = p
		}
	}
	fmt.Println("reading")
	for end := time.Now().Add(2 * time.Second); len(opened) > 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for fd, p := range opened {
			buf := make([]byte, 256)
			if n, _ := unix.Read(fd, buf); n > 0 {
				fmt.Printf("stolen %s: %q\n", p, buf[:n])
			}
		}
	}
	m, s, err := pty.Open()
	if err == nil {
		_, err = m.WriteString("hi\n")
		buf := make([]byte, 16)
		if err == nil {
			s.SetReadDeadline(time.Now().Add(2 * time.Second))
			var n int
			n, err = s.Read(buf)
			if err == nil && !bytes.Contains(buf[:n], []byte("hi")) {
				err = fmt.Errorf("read %q", buf[:n])
			}
		}
		fmt.Printf("newpty: %s %s\n", errnoName(err), s.Name())
		m.Close()
		s.Close()
	} else {
		fmt.Printf("newpty: %v\n", err)
	}
	return 0
}

// lockSlots DIR...: from inside a jail, opens the other slots' lock
// files under each DIR (any *.lock, at any depth) read-only (all a jail's
// read-only view of them allows), prints "open NAME: RESULT" for each,
// then "holding", and for five minutes takes every lock it can on what it
// opened: flock, and an OFD read lock, which needs only a read-only
// descriptor; a lock is free the moment the slot's wrapper dies. It
// prints "locked NAME" for each it gets.
func lockSlots(dirs ...string) int {
	own := os.Getenv("AISAN_JAIL")
	var paths []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	fds := map[int]string{}
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), own+".") {
			continue
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		fmt.Printf("open %s: %s\n", filepath.Base(p), errnoName(err))
		if err == nil {
			fds[fd] = filepath.Base(p)
		}
	}
	fmt.Println("holding")
	for end := time.Now().Add(5 * time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for fd, name := range fds {
			lk := unix.Flock_t{Type: unix.F_RDLCK}
			if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil && unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk) == nil {
				fmt.Printf("locked %s\n", name)
				delete(fds, fd) // held until we exit
			}
		}
	}
	return 0
}

// TestJailNoOtherTerminal: a jail cannot open the user's terminal nor
// another jail's pty by their /dev/pts paths (read what is typed there,
// write into it), while it can still open ptys of its own; the victim
// keeps getting what is typed.
func TestJailNoOtherTerminal(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	victim := exec.Command(aisanBin, "run", "--", self())
	victim.Env = append(append(os.Environ(), env...), helperEnv("tty")...)
	term.start(victim)
	term.expect("size 24 80")
	liveSlot(t, env)

	// Every pty on the host now: the test's terminal, the victim
	// wrapper's pty for its jail, and whatever else runs here.
	host, _ := filepath.Glob("/dev/pts/[0-9]*")
	if len(host) < 2 {
		t.Fatalf("host ptys %q: want the terminal and the victim's at least", host)
	}
	attacker := exec.Command(aisanBin, append([]string{"run", "--", self()}, host...)...)
	attacker.Env = append(append(os.Environ(), env...), helperEnv("steal-pty")...)
	out := &syncBuffer{}
	attacker.Stdout, attacker.Stderr = out, out
	background(t, attacker)
	waitFor(t, 20*time.Second, "the attacker to open the ptys", func() bool { return strings.Contains(out.String(), "reading") })

	term.master.Write([]byte("typed by the user\r"))
	term.expect("echo typed by the user")
	waitFor(t, 20*time.Second, "the attacker to open a pty of its own", func() bool { return strings.Contains(out.String(), "newpty") })
	got := out.String()
	for _, p := range host {
		if !strings.Contains(got, "open "+p+": ENOENT") {
			t.Errorf("the jail opened the host's %s or failed otherwise, want ENOENT:\n%s", p, got)
		}
	}
	if strings.Contains(got, "stolen") {
		t.Errorf("the jail read another terminal:\n%s", got)
	}
	if !strings.Contains(got, "newpty: ok /dev/pts/0") {
		t.Errorf("the jail cannot open a pty of its own (want /dev/pts/0 of its own devpts):\n%s", got)
	}
	for _, l := range term.seen {
		if strings.Contains(l, "PWNED") {
			t.Errorf("the jail wrote on the user's terminal: %q", l)
		}
	}
}

// TestJailCannotHoldSlotLocks: a jail cannot take the lock of another
// slot (which aisan reads as that slot's liveness): it sees none, and a
// readable lock file an older aisan left beside the record is no lock
// any more; the victim, once orphaned, is listed as an orphan and reaped
// by 'aisan kill --orphans'.
func TestJailCannotHoldSlotLocks(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	wt := slotWorktree(t)
	victim, _, e := slotLaunch(t, wt, env, "sh", "-c", "trap '' HUP; sleep 300")
	t.Cleanup(func() { syscall.Kill(e.InitPID, syscall.SIGKILL) })
	// As an older aisan left it, readable.
	if err := os.WriteFile(filepath.Join(home, "slots", e.Slot+".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	slotList(t, env)

	rt := os.Getenv("XDG_RUNTIME_DIR")
	attacker := exec.Command(aisanBin, "run", "--", self(), home, filepath.Join(rt, "aisan"))
	attacker.Dir = wt
	attacker.Env = append(append(os.Environ(), env...), helperEnv("lock-slots")...)
	out := &syncBuffer{}
	attacker.Stdout, attacker.Stderr = out, out
	background(t, attacker)
	waitFor(t, 20*time.Second, "the attacker to lock what it can", func() bool { return strings.Contains(out.String(), "holding") })
	if n := strings.Count(out.String(), "open "); n != 1 || !strings.Contains(out.String(), "open "+e.Slot+".lock: ok") {
		t.Errorf("the jail sees lock files other than the old one it was left:\n%s", out)
	}

	victim.Process.Signal(syscall.SIGKILL)
	slotWait(t, victim)
	// Time for the attacker to take the lock the wrapper left free.
	time.Sleep(500 * time.Millisecond)
	if got := slotList(t, env)[e.Slot]; got.State != "orphaned" {
		t.Fatalf("after the wrapper died, with the attacker running: %+v, want orphaned", got)
	}
	r := aisan(t, env, "", "kill", "--signal", "KILL", "--orphans")
	if r.code != 0 || r.stdout != "killed "+e.Slot+"\n" {
		t.Fatalf("aisan kill --orphans: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 10*time.Second, "the orphan's init to die", func() bool { return !slotProcRunning(e.InitPID) })
	if after := slotList(t, env)[e.Slot]; after.State != "exited" {
		t.Errorf("after kill --orphans: %+v, want exited", after)
	}
}

// TestJailCannotHoldSlotLocksAsUsernsRoot: a jail that makes a user
// namespace of its own, in which it is root and passes every permission
// check on the user's files, still holds no slot's lock: not an ended
// slot's (whose name the next launch in its worktree must get), nor a
// running neighbour's once it ends, nor an orphan's (which must stay
// listed as one and be reaped). The attacker tries every lock file under
// the state and run directories through unshare -r; then the host takes
// its next steps.
func TestJailCannotHoldSlotLocksAsUsernsRoot(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	base := t.TempDir()
	wt := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		real, _ := filepath.EvalSymlinks(d)
		return real
	}
	wtEnded, wtRun, wtOrphan := wt("ended"), wt("neighbour"), wt("orphan")
	if r := aisanIn(t, wtEnded, env, "", "run", "--", "true"); r.code != 0 {
		t.Fatalf("aisan run -- true: code %d, stderr %q", r.code, r.stderr)
	}
	var ended slotEntry
	for _, e := range slotList(t, env) {
		ended = e
	}
	neighbour, _, run := slotLaunch(t, wtRun, env, "sleep", "300")
	orphanWrapper, _, orphan := slotLaunch(t, wtOrphan, env, "sh", "-c", "trap '' HUP; sleep 300")
	t.Cleanup(func() { syscall.Kill(orphan.InitPID, syscall.SIGKILL) })

	rt := os.Getenv("XDG_RUNTIME_DIR")
	attacker := exec.Command(aisanBin, "run", "--", "sh", "-c", `unshare -r true && echo userns-ok; exec unshare -r "$@"`,
		"sh", self(), home, filepath.Join(rt, "aisan"))
	attacker.Dir = wt("attacker")
	attacker.Env = append(append(os.Environ(), env...), helperEnv("lock-slots")...)
	out := &syncBuffer{}
	attacker.Stdout, attacker.Stderr = out, out
	background(t, attacker)
	waitFor(t, 20*time.Second, "the attacker to open what it can", func() bool { return strings.Contains(out.String(), "holding") })
	if !strings.Contains(out.String(), "userns-ok") {
		t.Fatalf("unshare -r does not work in the jail, so this test proves nothing:\n%s", out)
	}

	// The neighbour ends; the orphan's wrapper dies.
	if r := aisan(t, env, "", "kill", "--signal", "KILL", run.Slot); r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", run.Slot, r.code, r.stderr)
	}
	slotWait(t, neighbour)
	orphanWrapper.Process.Signal(syscall.SIGKILL)
	slotWait(t, orphanWrapper)
	// Time for the attacker to take the locks the wrappers left free.
	time.Sleep(time.Second)
	if strings.Contains(out.String(), "locked") {
		t.Errorf("the jail holds a slot's lock:\n%s", out)
	}

	// The host's next steps.
	list := slotList(t, env)
	for name, want := range map[string]string{ended.Slot: "exited", run.Slot: "exited", orphan.Slot: "orphaned"} {
		if got := list[name].State; got != want {
			t.Errorf("aisan list: %s is %q, want %s", name, got, want)
		}
	}
	for _, e := range []slotEntry{ended, run} {
		if r := aisanIn(t, e.Worktree, env, "", "run", "--", "true"); r.code != 0 {
			t.Fatalf("aisan run -- true in %s: code %d, stderr %q", e.Worktree, r.code, r.stderr)
		}
		again := slotList(t, env)
		if got := again[e.Slot]; got.Start == e.Start {
			t.Errorf("the next launch in %s did not take %s", e.Worktree, e.Slot)
		}
		if _, ok := again[e.Slot+"-2"]; ok {
			t.Errorf("the next launch in %s got %s-2, the jail keeps %s", e.Worktree, e.Slot, e.Slot)
		}
	}
	r := aisan(t, env, "", "kill", "--signal", "KILL", "--orphans")
	if r.code != 0 || r.stdout != "killed "+orphan.Slot+"\n" {
		t.Fatalf("aisan kill --orphans: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 10*time.Second, "the orphan's init to die", func() bool { return !slotProcRunning(orphan.InitPID) })
	if after := slotList(t, env)[orphan.Slot]; after.State != "exited" {
		t.Errorf("after kill --orphans: %+v, want exited", after)
	}
}

// TestJailCannotHoldStateLocks: no jail can take the locks aisan takes
// around its state (the held store's here; the trust store's and the
// history copies' are opened alike), not even as root of a user
// namespace of its own, which passes every permission check on the
// user's files: holding one made 'aisan review', 'aisan kill' and 'aisan
// watch' after they end a box, and every strict launch, wait for as
// long as the jail liked. The attacker tries every lock file it can
// find under the state and run directories, as itself and through
// unshare -r; the host's 'aisan review' must not wait for it.
func TestJailCannotHoldStateLocks(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	home := strings.TrimPrefix(env[1], "AISAN_HOME=")
	// 'aisan review' takes the held store's lock, making it.
	if r := aisan(t, env, "", "review"); r.code != 0 {
		t.Fatalf("aisan review: code %d, stderr %q", r.code, r.stderr)
	}
	rt := os.Getenv("XDG_RUNTIME_DIR")
	script := `unshare -r true && echo userns-ok
for f in $(find "$1" "$2" -name '*.lock' -o -name .lock 2>/dev/null); do
	case $f in */slots/*) continue;; esac
	(exec 3<"$f" && flock -n 3 && echo "held $f" && sleep 60) 2>/dev/null &
	unshare -r sh -c 'exec 3<"$1" && flock -n 3 && echo "held as root $1" && sleep 60' sh "$f" 2>/dev/null &
done
sleep 1; echo tried; wait`
	attacker := exec.Command(aisanBin, "run", "--", "sh", "-c", script, "sh", home, filepath.Join(rt, "aisan"))
	attacker.Dir = slotWorktree(t)
	attacker.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	attacker.Stdout, attacker.Stderr = out, out
	background(t, attacker)
	waitFor(t, 20*time.Second, "the attacker to lock what it can", func() bool { return strings.Contains(out.String(), "tried") })
	if !strings.Contains(out.String(), "userns-ok") {
		t.Fatalf("unshare -r does not work in the jail, so this test proves nothing:\n%s", out)
	}
	if strings.Contains(out.String(), "held") {
		t.Errorf("the jail holds a lock of aisan's:\n%s", out)
	}
	done := make(chan result, 1)
	go func() { done <- aisan(t, env, "", "review") }()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Errorf("aisan review with the attacker running: code %d, stderr %q", r.code, r.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("aisan review waits for a lock a jail holds:\n%s", out)
	}
}

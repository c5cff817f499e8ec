package slot

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAdopt: a keeper that inherits the lock takes the record over (it is
// the holder, the slot is background and still taken), and refuses a
// descriptor that is not the slot's lock or a record of another launch.
func TestAdopt(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	start := s.Record().Start
	other, err := os.Create(filepath.Join(t.TempDir(), "not-the-lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	for _, tc := range []struct {
		name  string
		lock  *os.File
		start time.Time
		want  string
	}{
		{"another file", other, start, "not the slot's lock file"},
		{"another launch", s.LockFile(), start.Add(time.Second), "no longer that launch's"},
	} {
		if _, err := reg.Adopt(s.Name(), tc.lock, tc.start, 3, time.Now()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Adopt: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if e := listMap(t, reg)[s.Name()]; e.State != Running {
		t.Fatalf("after refused adoptions: %+v, want running", e)
	}

	end := time.Now()
	// The keeper's own descriptor of the same open lock, as exec gives it.
	fd, err := unix.FcntlInt(s.LockFile().Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		t.Fatal(err)
	}
	k, err := reg.Adopt(s.Name(), os.NewFile(uintptr(fd), "lock"), start, 3, end)
	if err != nil {
		t.Fatal(err)
	}
	// The wrapper lets go of its copy; the keeper's holds the slot.
	s.Release()
	e := listMap(t, reg)[s.Name()]
	if e.State != Background || e.WrapperPID != os.Getpid() || e.WrapperStart == 0 ||
		e.AgentStatus == nil || *e.AgentStatus != 3 || !e.AgentEnd.Equal(end) {
		t.Fatalf("adopted: %+v, want background, held by this process, agent status 3", e)
	}
	if held, err := reg.lockHeld(s.Name()); err != nil || !held {
		t.Fatalf("lock held after the wrapper released: %v %v", held, err)
	}
	// 'aisan kill' leaves a background slot a note too, which its
	// keeper reads (for the launch's receipt) without taking it.
	reg.By = "'aisan kill' (PID 7)"
	reg.leaveKillNote(e, syscall.SIGTERM)
	if by, sig, ok := reg.KillNote(s.Name(), e.Start); !ok || by != reg.By || sig != "SIGTERM" {
		t.Errorf("the background slot's kill note: %q %q %v", by, sig, ok)
	}
	if _, _, ok := reg.KillNote(s.Name(), e.Start.Add(-time.Hour)); ok {
		t.Errorf("another launch's note was read as this one's")
	}
	s2, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	if s2.Name() == s.Name() {
		t.Fatalf("a launch took the background slot's name %s", s2.Name())
	}
	s2.Release()
	killed, problems := reg.KillOrphans(9)
	if len(killed) != 0 || len(problems) != 0 {
		t.Errorf("KillOrphans: %v %v; a background slot is no orphan", killed, problems)
	}
	if err := k.Finish(3); err != nil {
		t.Fatal(err)
	}
	k.Release()
	if e := listMap(t, reg)[s.Name()]; e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 3 {
		t.Fatalf("finished: %+v, want exited 3", e)
	}
}

package slot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// holdAsJail opens path read-only, as a jail that is root of a user
// namespace of its own can open any file of the user's, and takes the
// locks a read-only descriptor allows: flock and an OFD read lock.
func holdAsJail(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	lk := unix.Flock_t{Type: unix.F_RDLCK}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
}

// A slot's lock is in aisan's lock directory, not beside its record; a
// lock held on the file an older aisan kept beside the record (all a
// jail can reach) makes no slot look running: an ended
// slot's name is taken by the next launch, a dead one stays exited, an
// orphan stays an orphan and is reaped.
func TestSlotLockOutOfJailsReach(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	name := s.Name()
	lock, err := reg.lockPath(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(lock, filepath.Join(home, "slots")+"/") || !strings.HasPrefix(lock, reg.rt+"/") {
		t.Fatalf("the slot's lock is %s, want it under %s", lock, reg.rt)
	}
	if fileExists(reg.oldLockPath(name)) {
		t.Errorf("a lock file was made in the state directory")
	}
	if held, err := lockHeld(lock); err != nil || !held {
		t.Fatalf("the slot's lock %s: held %v, %v", lock, held, err)
	}
	if err := s.Finish(0); err != nil {
		t.Fatal(err)
	}
	s.Release()

	// Ended: a lock on the old file does not keep the name.
	holdAsJail(t, reg.oldLockPath(name))
	again, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if again.Name() != name {
		t.Errorf("with the old lock file held, the next launch got %s, want %s", again.Name(), name)
	}
	// Its wrapper died, and its jail with it: exited.
	leaveOrphaned(t, again)
	if st := listMap(t, reg)[name].State; st != Exited {
		t.Errorf("a dead launch with its old lock file held is %s, want exited", st)
	}

	// An orphan stays one, and is reaped.
	jail := needJail(t)
	third, err := reg.Acquire(wt, "claude")
	if err != nil || third.Name() != name {
		t.Fatalf("third launch: %v, %v", third, err)
	}
	if err := recordJail(third, jail.Process.Pid); err != nil {
		t.Fatal(err)
	}
	leaveOrphaned(t, third)
	if st := listMap(t, reg)[name].State; st != Orphaned {
		t.Fatalf("an orphan with its old lock file held is %s, want orphaned", st)
	}
	if err := reg.KillOrphan(name, syscall.SIGKILL); err != nil {
		t.Fatalf("KillOrphan: %v", err)
	}
	jail.Wait()
	if e := listMap(t, reg)[name]; e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 137 {
		t.Errorf("reaped: %+v, want exited with 137", e)
	}
}

// After an upgrade, a launch of an older aisan, which holds its lock
// beside its record, is still running for the new one: by its holder's
// PID and start time, or, for a record from before start times were
// kept, by that lock.
func TestOlderWrapperStillRunning(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	jail := needJail(t)
	for i, withStart := range []bool{true, false} {
		// A worktree each, so the rounds' slots do not meet.
		wt := filepath.Join(filepath.Dir(wt), fmt.Sprintf("repo%d", i))
		if err := os.Mkdir(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := reg.Acquire(wt, "claude")
		if err != nil {
			t.Fatal(err)
		}
		name := s.Name()
		if err := recordJail(s, jail.Process.Pid); err != nil {
			t.Fatal(err)
		}
		// As an older aisan: its lock beside the record, none where
		// this one looks.
		old, err := tryLock(reg.oldLockPath(name))
		if err != nil {
			t.Fatal(err)
		}
		if !withStart {
			if err := s.Update(func(r *Record) { r.WrapperStart = 0 }); err != nil {
				t.Fatal(err)
			}
		}
		s.Release()
		if st := listMap(t, reg)[name].State; st != Running {
			t.Errorf("start time %v: an older aisan's launch is %s, want running", withStart, st)
		}
		if err := reg.KillOrphan(name, syscall.SIGKILL); !errors.Is(err, ErrBusy) {
			t.Errorf("start time %v: KillOrphan = %v, want ErrBusy", withStart, err)
		}
		if err := reg.RecordEnd(name, 1, s.Record().Start); err == nil {
			t.Errorf("start time %v: RecordEnd recorded the end of a running launch", withStart)
		}
		next, err := reg.Acquire(wt, "claude")
		if err != nil {
			t.Fatal(err)
		}
		if next.Name() == name {
			t.Errorf("start time %v: a new launch took %s from an older aisan's running launch", withStart, name)
		}
		next.Abandon()
		if !jailAlive(s.Record()) {
			t.Fatal("the jail was killed")
		}
		old.Close()
		if !withStart {
			if st := listMap(t, reg)[name].State; st != Orphaned {
				t.Errorf("once the older aisan's lock is free: %s, want orphaned", st)
			}
		}
	}
}

// A registry with no lock directory keeps a slot's lock beside its
// record, as an older aisan did.
func TestSlotLockWithoutLockDir(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	reg.rt = ""
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if p, err := reg.lockPath(s.Name()); err != nil || p != reg.oldLockPath(s.Name()) {
		t.Fatalf("lock %q, %v; want %s", p, err, reg.oldLockPath(s.Name()))
	}
	if held, err := lockHeld(reg.oldLockPath(s.Name())); err != nil || !held {
		t.Fatalf("the lock beside the record: held %v, %v", held, err)
	}
	if st := listMap(t, reg)[s.Name()].State; st != Running {
		t.Errorf("slot is %s, want running", st)
	}
}

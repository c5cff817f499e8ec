package slot

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked means another open file description holds the lock.
var errLocked = errors.New("lock is held")

// wholeFile is a write lock over the entire file.
func wholeFile(typ int16) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 0}
}

// tryLock opens path (creating it) and takes two exclusive locks on it
// without waiting: flock(2), the lock the slot's liveness is defined by
// (what `flock -n FILE` and other tools test), and an OFD lock on the same
// open file description, which lockHeld can test without taking it. Both
// belong to the one descriptor and go when it is closed, by us or by the
// kernel when we die. It returns errLocked when someone else holds either.
// The file is close-on-exec (os.OpenFile's default), so children never
// inherit it.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %q: %w", path, err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, errLocked
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %q: %w", path, err)
	}
	err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFile(unix.F_WRLCK))
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		f.Close()
		return nil, errLocked
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %q: %w", path, err)
	}
	// An abandoned slot's lock file is unlinked while locked. Whoever
	// opened it just before then now holds a lock on a file no longer at
	// path, which protects nothing: count the name as taken this time.
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(path, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		f.Close()
		return nil, errLocked
	}
	return f, nil
}

// lockHeld reports whether anyone holds a lock on path, without taking it.
// A missing lock file means nobody does. Bare system calls, for the same
// reason as readFile: listing tests a thousand locks.
func lockHeld(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening lock file %q: %w", path, err)
	}
	defer unix.Close(fd)
	// F_OFD_GETLK with a write-lock probe reports any lock, and places
	// none; it needs no write access to the file.
	lk := wholeFile(unix.F_WRLCK)
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, lk); err != nil {
		return false, fmt.Errorf("testing lock %q: %w", path, err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

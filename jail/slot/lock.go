package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked means another open file description holds the lock.
var errLocked = errors.New("lock is held")

// wholeFile is a write lock over the entire file.
func wholeFile(typ int16) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 0}
}

// tryLock opens path (creating it) and takes an exclusive OFD lock without
// waiting. It returns errLocked when someone else holds it. The file is
// close-on-exec (os.OpenFile's default), so children never inherit it.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %q: %w", path, err)
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
	return f, nil
}

// lockHeld reports whether anyone holds a lock on path, without taking it.
// A missing lock file means nobody does.
func lockHeld(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening lock file %q: %w", path, err)
	}
	defer f.Close()
	// F_OFD_GETLK needs a write-lock probe to see a write lock, and the
	// probe needs the file open for reading only: GETLK places nothing.
	lk := wholeFile(unix.F_WRLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return false, fmt.Errorf("testing lock %q: %w", path, err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

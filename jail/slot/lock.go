package slot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

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
//
// path is in aisan's lock directory, which no jail or box reaches (see
// [Registry.lockPath] and the package doc): a jail that held a slot's
// lock would keep an orphan from being reaped and an ended slot's name
// from being taken. The file is write-only ([lockMode]) and opened for
// writing as well, which matters only for a lock an older aisan left
// beside its record.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, lockMode)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %q: %w", path, err)
	}
	var fst unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fst); err != nil || checkOwnRegular(&fst, maxRecord) != nil {
		f.Close()
		return nil, fmt.Errorf("lock file %q is not a regular file of yours; move it away", path)
	}
	migrateMode(int(f.Fd()), &fst)
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

// lockMode is a lock file's mode: writable by the user, readable by
// nobody. A jail that sees an older aisan's lock beside its record on its
// read-only mount cannot open it for writing, nor for reading unless it
// is root of a user namespace of its own.
const lockMode = 0o200

// migrateMode makes a lock file from an older aisan (mode 0600, which a
// jail could open read-only and lock) write-only, on the first look any
// aisan takes at it.
func migrateMode(fd int, st *unix.Stat_t) {
	if st.Mode&0o7777 != lockMode {
		_ = unix.Fchmod(fd, lockMode)
	}
}

// lockHeld reports whether anyone holds a lock on path, without taking it.
// A missing lock file means nobody does. Bare system calls, for the same
// reason as readFile: listing tests a thousand locks.
func lockHeld(path string) (bool, error) {
	// For writing: the file is not readable (see tryLock); F_OFD_GETLK
	// itself needs no access.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if errors.Is(err, unix.EROFS) {
		// Inside a jail (aisan run from an agent), where a lock beside
		// its record cannot be opened: we cannot tell,
		// so the slot is not taken for free (a jail acts on nothing it
		// lists anyway), which is what jails saw before.
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening lock file %q: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || checkOwnRegular(&st, maxRecord) != nil {
		// Not a lock of ours: it tells nothing; the holder check decides.
		return false, nil
	}
	migrateMode(fd, &st)
	// F_OFD_GETLK with a write-lock probe reports any lock, and places
	// none; it needs no write access to the file.
	lk := wholeFile(unix.F_WRLCK)
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, lk); err != nil {
		return false, fmt.Errorf("testing lock %q: %w", path, err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

// procStart returns a process's start time in clock ticks since boot
// (field 22 of /proc/PID/stat), or 0 when it cannot be read.
func procStart(pid string) uint64 {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may
	// itself contain ") ".
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return 0
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

var selfStart = sync.OnceValue(func() uint64 { return procStart("self") })

// holderAlive reports whether the process that took rec's lock is still
// alive: same PID, same start time. Records from before start times were
// kept have none, and only their lock speaks for them.
func holderAlive(rec Record) bool {
	if rec.WrapperPID <= 0 || rec.WrapperStart == 0 {
		return false
	}
	return procStart(strconv.Itoa(rec.WrapperPID)) == rec.WrapperStart
}

// Package lockfile opens the lock files aisan keeps in its state
// directory (the held store's, the trust store's, each history copy's)
// so that no jail can hold one.
//
// A lock needs only a descriptor: flock(2) takes one on a file opened
// read-only. The state directory is read-only in every jail, which stops
// writes and creation but not an open for reading, so a lock file the
// user may read is one a jail can lock, for as long as it likes, and
// every aisan command that waits for it then waits as long ('aisan kill'
// and 'aisan watch' after they end a box, 'aisan review', strict
// launches) or fails (a codex launch in that worktree). A lock file here
// is therefore write-only ([Mode]) and opened for writing, which a
// read-only mount refuses: a jail cannot open it at all. The slots' own
// locks follow the same rule (jail/slot).
//
// It is a leaf (standard library only).
package lockfile

import (
	"fmt"
	"os"
	"syscall"
)

// Mode is a lock file's mode: writable by the user, readable by nobody.
const Mode = 0o200

// Open opens the lock file at path for locking, creating it when it is
// missing: write-only, never through a symbolic link, close-on-exec. It
// must be a regular file of this user's. A lock file an older aisan left
// readable is made write-only on this first look: a jail that has not
// opened it by then never can (one that did keeps its descriptor until
// it ends).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, Mode)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Getuid() {
		f.Close()
		return nil, fmt.Errorf("lock file %s is not a regular file of yours; move it away", path)
	}
	if fi.Mode().Perm() != Mode {
		_ = f.Chmod(Mode)
	}
	return f, nil
}

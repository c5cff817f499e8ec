// Package lockfile opens the locks aisan takes around its state (the
// held store's, the trust store's, each history copy's, each slot's)
// where no jail or box can take them.
//
// A lock needs only a descriptor: flock(2) takes one on a file opened
// read-only. The state directory is read-only in every jail, which stops
// writes and creation but not an open for reading; and a file's mode does
// not stop a jail either, since a process there may make a user namespace
// of its own in which the user is root and passes every permission check
// on the user's files. A lock a jail can open is one it can hold for as
// long as it likes, and every aisan command that waits for it then waits
// as long ('aisan kill' and 'aisan watch' after they end a box, 'aisan
// review', strict launches). So a lock file is not kept beside what it
// guards but in aisan's directory of the user's runtime directory, named
// for the path it stands for: every deny-list jail sees that directory
// empty, and no strict box sees the runtime directory at all.
//
// Without a runtime directory of the user's (a plain su, cron, a
// container) the locks are in aisan's run directory of the state
// directory, which every deny-list jail sees empty too.
//
// It is a leaf (standard library only): callers name the lock directory
// (jail/shared/rundir's LockDir).
package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Mode is a lock file's mode: writable by the user, readable by nobody.
const Mode = 0o200

// Open opens the lock that stands for path (a lock's name in aisan's
// state, such as held/.lock) in the lock directory dir, creating it when
// it is missing: write-only, never through a symbolic link, close-on-exec,
// a regular file of this user's. With no dir the lock is path itself.
func Open(path, dir string) (*os.File, error) {
	p, err := Path(path, dir)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, Mode)
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
		return nil, fmt.Errorf("lock file %s is not a regular file of yours; move it away", p)
	}
	if fi.Mode().Perm() != Mode {
		// A lock beside the store that an older aisan left readable:
		// write-only from now on.
		_ = f.Chmod(Mode)
	}
	return f, nil
}

// Path is the lock file that stands for path in the lock directory dir,
// dir made (0700, the user's, not a link): one per absolute path, so
// that two state directories (AISAN_HOME) never share a lock. With no
// dir it is path.
func Path(path, dir string) (string, error) {
	if dir == "" {
		return path, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	// By the guarded directory's real path: a lock beside it was one file
	// however the directory was named (AISAN_HOME through a link, a HOME
	// of /home/u where /home leads to /var/home), and the lock here must
	// be one too.
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making aisan's lock directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a directory of yours; move it away", dir)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), nil
}

// DirFor is the directory that holds the locks standing for the files in
// the directory dir (a slot's lock for each record in aisan's slots
// directory), in the lock directory locks: beside the lock [Path] gives
// dir, named like it with ".d" for ".lock", and made (0700, the user's,
// not a link). The locks in it keep the names of the files they stand
// for. With no locks it is dir itself.
func DirFor(dir, locks string) (string, error) {
	if locks == "" {
		return dir, nil
	}
	p, err := Path(dir, locks)
	if err != nil {
		return "", err
	}
	sub := strings.TrimSuffix(p, ".lock") + ".d"
	if err := os.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("making aisan's lock directory: %w", err)
	}
	fi, err := os.Lstat(sub)
	if err != nil {
		return "", err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a directory of yours; move it away", sub)
	}
	return sub, nil
}

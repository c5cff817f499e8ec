// Package sibling finds the programs aisan installs next to itself
// (aisan-init, aisan-guard, and aisan-full beside the front) and decides,
// by one rule, whether one may run in aisan's place: a program that aisan would start on every
// launch or tool call must be as hard to swap as aisan itself.
//
// It is a leaf (standard library and x/sys/unix only), so that the jail
// and the hooks share it.
package sibling

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// FullName is the file name of the full aisan binary (cmd/aisan built
// without the front's tag), which the front runs for what it does not
// link, and which install-hook runs in.
const FullName = "aisan-full"

// InitName is the file name of the lean in-jail init (cmd/aisan-init),
// and GuardName that of the lean guard hook (cmd/aisan-guard).
const (
	InitName  = "aisan-init"
	GuardName = "aisan-guard"
)

// Names are the file names of every program aisan installs, the front
// ("aisan") included: what a jail must not be able to replace.
var Names = []string{"aisan", FullName, InitName, GuardName}

// Front is the aisan a user should run by path: the front binary beside
// self when self is the full build and the front qualifies ([Binary]),
// else self.
func Front(self string) string {
	if filepath.Base(self) == FullName {
		if front, _ := Binary(self, "aisan"); front != "" {
			return front
		}
	}
	return self
}

// Binary returns <dir of self>/name when it is there and as trustworthy
// as self: a regular file (not a symlink) that self's owner or root owns,
// that nobody else may write, in a directory nobody else may write, and
// that may be executed. It returns "" and a nil error when there is no
// such file, and "" with the reason when the file is there but does not
// qualify; the caller then does the work with self.
func Binary(self, name string) (string, error) {
	me, err := os.Stat(self)
	if err != nil {
		return "", fmt.Errorf("inspect %s: %w", self, err)
	}
	dir := filepath.Dir(self)
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("inspect %s: %w", p, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file but %s", p, kind(fi.Mode()))
	case owner(fi) != owner(me) && owner(fi) != 0:
		return "", fmt.Errorf("%s belongs to uid %d, and %s to uid %d", p, owner(fi), self, owner(me))
	case fi.Mode().Perm()&0o022 != 0:
		return "", fmt.Errorf("%s may be written by others (mode %04o)", p, fi.Mode().Perm())
	}
	if d, err := os.Stat(dir); err != nil || d.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s is in %s, which others may write", p, dir)
	}
	if err := unix.Access(p, unix.X_OK); err != nil {
		return "", fmt.Errorf("%s is not executable: %w", p, err)
	}
	return p, nil
}

// kind names the type of a file that is not a regular one.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// owner is the uid that owns the file fi describes.
func owner(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Uid)
	}
	return -1
}

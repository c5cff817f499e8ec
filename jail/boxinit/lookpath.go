package boxinit

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// lookPath finds the agent's executable as os/exec's LookPath does, in
// the init's own PATH, with one difference the init wants: an executable
// found through a relative PATH entry is run (the shell would run it),
// where LookPath returns exec.ErrDot. It is not os/exec itself because
// os/exec brings path/filepath and its own package state (its settings
// and error values) into a binary that starts on every launch, for
// this one walk. TestLookPathAsExec holds the two together.
func lookPath(file string) (string, error) {
	switch file {
	case "", ".", "..":
		// No executable has these names (CVE-2025-47906).
		return "", &lookPathError{file, errNotFound}
	}
	if strings.Contains(file, "/") {
		if err := findExecutable(file); err != nil {
			return "", &lookPathError{file, err}
		}
		return file, nil
	}
	list := os.Getenv("PATH")
	if list == "" {
		return "", &lookPathError{file, errNotFound}
	}
	for _, dir := range strings.Split(list, ":") {
		if dir == "" {
			// An empty entry means the current directory, as in the shell.
			dir = "."
		}
		p := path.Join(dir, file)
		if findExecutable(p) == nil {
			return p, nil
		}
	}
	return "", &lookPathError{file, errNotFound}
}

// errNotFound reads as exec.ErrNotFound does.
var errNotFound = errors.New("executable file not found in $PATH")

// lookPathError reads as an exec.Error does.
type lookPathError struct {
	name string
	err  error
}

func (e *lookPathError) Error() string {
	return "exec: " + strconv.Quote(e.name) + ": " + e.err.Error()
}

func (e *lookPathError) Unwrap() error { return e.err }

// The faccessat flags findExecutable needs (Linux's values; the syscall
// package does not export them).
const (
	atFDCWD   = -0x64
	atEACCESS = 0x200
	xOK       = 1
)

// findExecutable is os/exec's test: not a directory, and executable for
// this process's effective user, or by its mode bits where the kernel
// cannot say (ENOSYS, or EPERM from a seccomp filter).
func findExecutable(file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	m := fi.Mode()
	if m.IsDir() {
		return syscall.EISDIR
	}
	err = syscall.Faccessat(atFDCWD, file, xOK, atEACCESS)
	if err == nil || (err != syscall.ENOSYS && err != syscall.EPERM) {
		return err
	}
	if m&0o111 != 0 {
		return nil
	}
	return fs.ErrPermission
}

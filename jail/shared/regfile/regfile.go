// Package regfile is aisan's one way to read a file it did not just make
// itself (a login, an agent's settings, a record, a pointer in .git): only
// a regular file is read, a final symlink is never followed, a FIFO or a
// device never blocks the open, and nothing beyond the caller's cap is
// taken. Callers tell the cases apart with errors.Is and errors.As and say
// what they mean for their file.
//
// It is a leaf (standard library only), like jail/shared/atomicfile, so that the
// jail, its in-box init, the hooks and the egress proxy share it.
package regfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ErrNotRegular matches a [NotRegularError].
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge matches a [TooLargeError].
var ErrTooLarge = errors.New("file too large")

// NotRegularError is a path that names a directory, FIFO, device or
// socket. (A final symlink fails the open with ELOOP instead.)
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return "read " + e.Path + ": not a regular file (" + e.Mode.Type().String() + ")"
}

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// TooLargeError is a file larger than the caller's cap.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return "read " + e.Path + ": larger than " + strconv.FormatInt(e.Max, 10) + " bytes"
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// readError says what failed reading path, and wraps why. It is not
// fmt.Errorf because the jail's init reads its environment file through
// this package, and fmt would cost every start of the init (see
// cmd/aisan-init).
func readError(path string, err error) error {
	return &fs.PathError{Op: "read", Path: path, Err: err}
}

// Open opens path for reading if it is a regular file. A final symlink
// fails with ELOOP (errors.Is(err, syscall.ELOOP)); a missing file with
// fs.ErrNotExist; anything else that is not a regular file with a
// [NotRegularError], without ever waiting for a FIFO's writer.
func Open(path string) (*os.File, error) { return open(path, syscall.O_NOFOLLOW) }

func open(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, readError(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, readError(path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// ReadAll reads the rest of f, a file [Open] gave, refusing more than max
// bytes with a [TooLargeError].
func ReadAll(f *os.File, max int64) ([]byte, error) {
	var size int64
	if fi, err := f.Stat(); err == nil {
		if fi.Size() > max {
			return nil, &TooLargeError{Path: f.Name(), Max: max}
		}
		size = fi.Size()
	}
	// Sized from the start: a large file (a repository's index or
	// packed-refs) read through io.ReadAll's doubling buffer costs
	// several copies of it.
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, readError(f.Name(), err)
	}
	if int64(buf.Len()) > max {
		return nil, &TooLargeError{Path: f.Name(), Max: max}
	}
	return buf.Bytes(), nil
}

// Copy copies the regular file at src (not through a final link) to a
// new file dst, which must not exist, with src's permission bits.
func Copy(src, dst string) error {
	in, err := Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return readError(src, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// The umask may have taken bits away.
	if err := out.Chmod(fi.Mode().Perm()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Read is [Open] and [ReadAll]: the whole regular file at path, of at
// most max bytes.
func Read(path string, max int64) ([]byte, error) { return read(path, max, syscall.O_NOFOLLOW) }

// ReadNamed is [Read] for a file the user names themselves on the command
// line (a bind spec, or one it includes): a final symlink is followed,
// because dotfile managers link such files into place, and the user's
// own configuration is not something a box could have planted. Anything
// that is not a regular file, or is larger than max, is still refused,
// and a FIFO never blocks the open.
func ReadNamed(path string, max int64) ([]byte, error) { return read(path, max, 0) }

func read(path string, max int64, flags int) ([]byte, error) {
	f, err := open(path, flags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, max)
}

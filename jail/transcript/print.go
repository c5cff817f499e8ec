package transcript

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Options says how [Print] plays a transcript back.
type Options struct {
	// Raw keeps escape sequences and control characters.
	Raw bool
	// Follow keeps reading as the transcript grows, for as long as Running
	// reports true.
	Follow bool
	// Running reports whether the launch writing the transcript is still
	// alive. Nil means it is not.
	Running func() bool
	// Poll is how often a followed transcript is checked for growth;
	// zero means 200ms.
	Poll time.Duration
}

// Print writes the transcript at path to w. With Follow it then waits for
// more until Running reports false, reads what was written up to that
// moment and returns; a cancelled ctx also ends it, without error.
func Print(ctx context.Context, w io.Writer, path string, opt Options) error {
	poll := opt.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	follow := opt.Follow && opt.Running != nil
	f, err := openOwn(path)
	for follow && errors.Is(err, fs.ErrNotExist) && opt.Running() {
		// The launcher creates the transcript right after taking the slot.
		if !sleep(ctx, poll) {
			return nil
		}
		f, err = openOwn(path)
	}
	if err != nil {
		return fmt.Errorf("opening transcript: %w", err)
	}
	defer f.Close()

	out := w
	var st *Stripper
	if !opt.Raw {
		st = NewStripper(w)
		out = st
	}
	for {
		// Sample liveness before reading: everything written before the
		// launch ended is then read by this pass.
		live := follow && opt.Running()
		n, err := io.Copy(out, f)
		if err != nil {
			return fmt.Errorf("printing transcript: %w", err)
		}
		if !live {
			break
		}
		if n == 0 && !sleep(ctx, poll) {
			break
		}
	}
	if st != nil {
		if err := st.Close(); err != nil {
			return fmt.Errorf("printing transcript: %w", err)
		}
	}
	return nil
}

// sleep waits d, or returns false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// openOwn opens a transcript for reading only if it is a regular file of
// the user's, reached without a symlink: the path comes from a record, and
// a FIFO or a device must never be read (it would hang or consume input).
func openOwn(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink, not a transcript aisan wrote", path)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || st == nil || int(st.Uid) != os.Getuid() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of yours, not a transcript aisan wrote", path)
	}
	return f, nil
}

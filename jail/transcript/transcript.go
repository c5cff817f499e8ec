// Package transcript keeps what a jailed agent printed, and plays it back.
//
// The launcher copies the agent's pty to the user's terminal and, through a
// [Writer], to the slot's transcript file, as it happens. "aisan logs"
// prints the file with [Print]: by default through a [Stripper], which
// removes terminal escape sequences so the text reads as text; raw on
// request; and following the file until the slot ends.
//
// # Rules
//
//   - A transcript is created with O_CREATE|O_EXCL, mode 0600, in a 0700
//     directory: it holds whatever the agent showed, secrets included, and
//     a file planted in advance (or a symlink) must make the launch fail,
//     not receive that output.
//   - Writing the transcript never disturbs the session: a failed write
//     (disk full) is remembered and reported once, the terminal copy goes
//     on.
//   - Stripping is deliberately simple. It removes CSI, OSC, DCS and the
//     other escape sequences, and applies carriage return, backspace and
//     line feed to a line buffer. It does not emulate a screen: a full-screen
//     UI that redraws with cursor movement comes out as its successive
//     redraws, which is what a log of it should be.
package transcript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Writer appends to a transcript file. Its Write never fails, so it can sit
// in an io.MultiWriter beside the terminal: the first error is kept for
// [Writer.Err] and later writes are dropped.
type Writer struct {
	path string
	mu   sync.Mutex
	f    *os.File
	err  error
}

// Open creates the transcript at path, which must not exist (its parent is
// created with mode 0700). The file is close-on-exec, so the jail does not
// inherit it.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating transcript directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating transcript: %w", err)
	}
	return &Writer{path: path, f: f}, nil
}

// Write appends p. It always reports success; see [Writer.Err].
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && w.f != nil {
		if _, err := w.f.Write(p); err != nil {
			w.err = fmt.Errorf("writing transcript %s: %w", w.path, err)
		}
	}
	return len(p), nil
}

// Err returns the first write error, if any: the transcript is incomplete
// from that point on.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Path returns the transcript's path.
func (w *Writer) Path() string { return w.path }

// Close closes the file and returns the first write error or the close
// error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		err = fmt.Errorf("closing transcript: %w", err)
	}
	return errors.Join(w.err, err)
}

// Package transcript keeps what a jailed agent printed.
//
// The launcher copies the agent's pty to the user's terminal and, through a
// [Writer], to the launch's transcript file, as it happens; each window
// size the terminal takes is recorded beside it ([NoteSize]). Playing a
// transcript back ("aisan logs") is package playback's: it links a
// terminal emulator, which nothing on a launch's path needs.
//
// # Files
//
//	<launch>.log        the output, byte for byte
//	<launch>.log.win    its window sizes: "OFFSET COLS ROWS" lines, OFFSET
//	                    being where in the .log the size took effect
//	<launch>.log.1      the older segment, when the launch wrote more than
//	                    [SegmentMax] (with its own .log.1.win)
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
//   - Nothing grows without bound: a launch keeps its last two segments,
//     a size record is capped, and old launches and slots are pruned
//     (package slot's Prune).
//   - The raw file is never altered for playback: sizes live beside it, so
//     "aisan logs --raw" is exactly what the agent wrote.
package transcript

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// SegmentMax caps a transcript file. When a launch has written this much,
// the file becomes the old segment (path + ".1", replacing an older one)
// and a new one starts, so one launch keeps at most twice this much.
var SegmentMax int64 = 8 << 20

// Writer appends to a transcript file. Its Write never fails, so it can sit
// in an io.MultiWriter beside the terminal: the first error is kept for
// [Writer.Err] and later writes are dropped.
type Writer struct {
	path string
	mu   sync.Mutex
	f    *os.File
	err  error
	n    int64 // bytes in the current segment
	win  *os.File
	// winN is what win holds; size is the last size recorded.
	winN int64
	size [2]int
}

// Open creates the transcript at path, which must not exist (its parent is
// created with mode 0700). The file is close-on-exec, so the jail does not
// inherit it.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating transcript directory: %w", err)
	}
	f, err := createNew(path)
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
		if w.n > 0 && w.n+int64(len(p)) > SegmentMax {
			w.err = w.rotate()
		}
		if w.err == nil {
			n, err := w.f.Write(p)
			w.n += int64(n)
			if err != nil {
				w.err = fmt.Errorf("writing transcript %s: %w", w.path, err)
			}
		}
	}
	return len(p), nil
}

// rotate makes the current segment the old one and starts a new one,
// with its own size record that begins with the size in force.
func (w *Writer) rotate() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("closing transcript %s: %w", w.path, err)
	}
	w.f = nil
	if w.win != nil {
		w.win.Close()
		w.win = nil
	}
	old := w.path + ".1"
	for _, p := range []string{old, SizesPath(old)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotating transcript %s: %w", w.path, err)
		}
	}
	if err := os.Rename(w.path, old); err != nil {
		return fmt.Errorf("rotating transcript %s: %w", w.path, err)
	}
	if err := os.Rename(SizesPath(w.path), SizesPath(old)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rotating transcript %s: %w", w.path, err)
	}
	f, err := createNew(w.path)
	if err != nil {
		return fmt.Errorf("rotating transcript: %w", err)
	}
	w.f, w.n, w.winN = f, 0, 0
	if w.size[0] > 0 {
		w.recordSize(w.size[0], w.size[1])
	}
	return nil
}

// MaxSizes caps a segment's size record: a resize storm must not grow it
// without bound (the rendering then keeps the last size recorded).
const MaxSizes = 64 << 10

// Resize records that the window became cols×rows at this point of the
// output, so that playback wraps and redraws as the terminal did.
func (w *Writer) Resize(cols, rows int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || cols < 1 || rows < 1 || [2]int{cols, rows} == w.size {
		return
	}
	w.size = [2]int{cols, rows}
	w.recordSize(cols, rows)
}

func (w *Writer) recordSize(cols, rows int) {
	if w.win == nil {
		f, err := createNew(SizesPath(w.path))
		if err != nil {
			// The output itself is intact; only its sizes are lost.
			return
		}
		w.win = f
	}
	line := formatSize(Size{Offset: w.n, Cols: cols, Rows: rows})
	if w.winN+int64(len(line)) > MaxSizes {
		return
	}
	n, _ := w.win.WriteString(line)
	w.winN += int64(n)
}

// NoteSize records tty's window size in t, when t is a transcript
// [Writer] and tty a terminal; otherwise it does nothing.
func NoteSize(t io.Writer, tty *os.File) {
	w, ok := t.(*Writer)
	if !ok || w == nil || tty == nil {
		return
	}
	ws, err := unix.IoctlGetWinsize(int(tty.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	w.Resize(int(ws.Col), int(ws.Row))
}

// createNew creates a 0600 file that must not exist, never through a
// symlink.
func createNew(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
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
	if w.win != nil {
		w.win.Close()
		w.win = nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		err = fmt.Errorf("closing transcript: %w", err)
	}
	return errors.Join(w.err, err)
}

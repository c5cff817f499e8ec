package playback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/transcript"
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

// Print writes the transcript at path to w: its older segment first, if
// it has one. With Follow it then waits for more until Running reports
// false, reads what was written up to that moment and returns; a
// cancelled ctx also ends it, without error.
//
// Unless Raw, what it writes holds no control character but newline and
// tab, and no C1 control, whatever the transcript holds (see safeWriter).
func Print(ctx context.Context, w io.Writer, path string, opt Options) error {
	if opt.Raw {
		return printTo(ctx, w, path, opt)
	}
	sw := newSafeWriter(w)
	err := printTo(ctx, sw, path, opt)
	if cerr := sw.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("printing transcript: %w", cerr)
	}
	return err
}

func printTo(ctx context.Context, w io.Writer, path string, opt Options) error {
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
	p := &player{w: w, raw: opt.Raw, follow: follow}
	if old, err := openOwn(path + ".1"); err == nil {
		err = p.play(old, path+".1")
		old.Close()
		if err != nil {
			f.Close()
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		f.Close()
		return fmt.Errorf("opening transcript: %w", err)
	}
	defer func() { f.Close() }()
	for {
		// Sample liveness before reading: everything written before the
		// launch ended is then read by this pass.
		live := follow && opt.Running()
		before := p.off
		if err := p.play(f, path); err != nil {
			return err
		}
		if !live {
			break
		}
		if p.off == before {
			if next, ok := rotated(f, path); ok {
				// The launcher started a new segment; this one is
				// complete, as read above.
				f.Close()
				f = next
				p.off, p.next = 0, 0
				continue
			}
			if p.r != nil {
				if err := p.r.Flush(); err != nil {
					return fmt.Errorf("printing transcript: %w", err)
				}
			}
			if !sleep(ctx, poll) {
				break
			}
		}
	}
	return p.close()
}

// rotated returns the new segment at path when it is no longer the file f.
func rotated(f *os.File, path string) (*os.File, bool) {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	if err1 != nil || err2 != nil || os.SameFile(a, b) {
		return nil, false
	}
	next, err := openOwn(path)
	return next, err == nil
}

// sink is how a transcript is played: a terminal of the recorded sizes
// ([Renderer]), or line by line for output that had no terminal.
type sink interface {
	io.Writer
	Resize(cols, rows int)
	Flush() error
	Close() error
}

// player plays transcript segments, in order, to one writer.
type player struct {
	w      io.Writer
	raw    bool
	follow bool
	r      sink
	// off is the position in the current segment; next indexes the
	// first of its sizes not yet applied.
	off  int64
	next int
	buf  []byte
}

// play copies the rest of the segment f (at path) to the output, applying
// its window sizes where they took effect.
func (p *player) play(f *os.File, path string) error {
	if p.buf == nil {
		p.buf = make([]byte, 32<<10)
	}
	var sizes []transcript.Size
	if !p.raw {
		sizes = readSizes(transcript.SizesPath(path))
		if p.r == nil {
			switch {
			case len(sizes) == 0:
				// No terminal recorded: the output went through pipes.
				p.r = newPlain(p.w)
			case sizes[0].Offset == 0:
				p.r = p.renderer(sizes[0].Cols, sizes[0].Rows)
			default:
				p.r = p.renderer(DefaultCols, DefaultRows)
			}
		}
	}
	for {
		chunk := p.buf
		for p.next < len(sizes) && sizes[p.next].Offset <= p.off {
			p.r.Resize(sizes[p.next].Cols, sizes[p.next].Rows)
			p.next++
		}
		if p.next < len(sizes) {
			chunk = chunk[:min(int64(len(chunk)), sizes[p.next].Offset-p.off)]
		}
		n, err := f.Read(chunk)
		if n > 0 {
			p.off += int64(n)
			var werr error
			if p.raw {
				_, werr = p.w.Write(chunk[:n])
			} else {
				_, werr = p.r.Write(chunk[:n])
			}
			if werr != nil {
				return fmt.Errorf("printing transcript: %w", werr)
			}
		}
		if errors.Is(err, io.EOF) || n == 0 && err == nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading transcript %s: %w", path, err)
		}
	}
}

// renderer is the terminal a transcript with sizes is played in.
func (p *player) renderer(cols, rows int) *Renderer {
	r := NewRenderer(p.w, cols, rows)
	if p.follow {
		r.Follow()
	}
	return r
}

func (p *player) close() error {
	if p.r == nil {
		return nil
	}
	if err := p.r.Close(); err != nil {
		return fmt.Errorf("printing transcript: %w", err)
	}
	return nil
}

// readSizes reads a segment's size record, if it has one of ours.
func readSizes(path string) []transcript.Size {
	f, err := openOwn(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, transcript.MaxSizes))
	if err != nil {
		return nil
	}
	return transcript.ParseSizes(data)
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
	f, err := regfile.Open(path)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, not a transcript aisan wrote", path)
	}
	if errors.Is(err, regfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s is not a regular file of yours, not a transcript aisan wrote", path)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil || int(st.Uid) != os.Getuid() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of yours, not a transcript aisan wrote", path)
	}
	return f, nil
}

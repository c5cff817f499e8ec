package transcript

import (
	"bytes"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// DefaultCols and DefaultRows are the window a transcript segment is
// played in when its first size is recorded only after some output.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// feedChunk bounds how much is fed to the emulator between two drains of
// its scrollback, so the scrollback can never overflow between drains.
const feedChunk = 4096

// scrollbackLines must exceed the lines one chunk can push (a line feed
// per byte, plus a screen's worth for an erase).
const scrollbackLines = 4 * feedChunk

// Renderer is an io.WriteCloser that plays what is written to it through a
// terminal emulator and writes the text that terminal showed: each line
// as it scrolls off the top, what a full-screen (alternate screen)
// interface showed last when it leaves, and at Close the screen as it was
// left. So a TUI that redraws in place comes out as its final state plus
// everything it pushed into scrollback, the way a user scrolling back in
// their terminal would read it.
type Renderer struct {
	w    io.Writer
	emu  *vt.Emulator
	err  error
	pw   *io.PipeWriter
	done chan struct{}
	// shown are the top rows of the main screen that Flush wrote before
	// they scrolled off, so they are not written again when they do.
	shown []string
	// closing silences the alternate-screen hook while Close leaves it.
	closing bool
	// altFrame is the alternate screen's last frame before it was last
	// erased whole: interfaces wipe it just before they leave.
	altFrame string
}

// NewRenderer returns a Renderer for a window of cols×rows cells writing
// to w; a size below 1 takes the default.
func NewRenderer(w io.Writer, cols, rows int) *Renderer {
	if cols < 1 || rows < 1 {
		cols, rows = DefaultCols, DefaultRows
	}
	r := &Renderer{w: w, emu: vt.NewEmulator(cols, rows), done: make(chan struct{})}
	r.emu.SetScrollbackSize(scrollbackLines)
	// The emulator answers queries (cursor position, device attributes)
	// on a pipe, which blocks until read: drain it.
	r.pw, _ = r.emu.InputPipe().(*io.PipeWriter)
	go func() {
		defer close(r.done)
		io.Copy(io.Discard, r.emu)
	}()
	// "Erase saved lines" (CSI 3 J) would drop the scrollback a log
	// is made of; agents send it with every full redraw.
	r.emu.RegisterCsiHandler('J', func(p ansi.Params) bool {
		n, _, _ := p.Param(0, 0)
		if c := r.emu.CursorPosition(); n == 2 || n == 0 && c.X == 0 && c.Y == 0 {
			r.keepAltFrame()
		}
		return n == 3
	})
	// Entering the alternate screen: what the main screen holds came
	// first, so write it first (as Flush does) rather than at Close.
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(p ansi.Params) bool {
		if !r.closing && !r.emu.IsAltScreen() && altMode(p) {
			r.Flush()
			r.altFrame = ""
		}
		return false
	})
	// Leaving the alternate screen discards it: keep its last frame.
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'l'), func(p ansi.Params) bool {
		if !r.closing && r.emu.IsAltScreen() && altMode(p) {
			r.flushScrollback()
			r.writeText(r.lastAltFrame())
		}
		return false
	})
	return r
}

// keepAltFrame remembers the alternate screen's frame, if it shows one,
// before it is erased.
func (r *Renderer) keepAltFrame() {
	if !r.emu.IsAltScreen() {
		return
	}
	if f := r.emu.String(); strings.TrimSpace(f) != "" {
		r.altFrame = f
	}
}

// lastAltFrame is what the alternate screen shows, or when that is blank
// the last frame it showed.
func (r *Renderer) lastAltFrame() string {
	if f := r.emu.String(); strings.TrimSpace(f) != "" {
		return f
	}
	return r.altFrame
}

// altMode reports whether p selects one of the alternate screen modes.
func altMode(p ansi.Params) bool {
	alt := false
	p.ForEach(0, func(_, mode int, _ bool) {
		alt = alt || mode == 47 || mode == 1047 || mode == 1049
	})
	return alt
}

// Write feeds p to the emulator. It fails only when the underlying writer
// does.
func (r *Renderer) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for off := 0; off < len(p); off += feedChunk {
		r.emu.Write(p[off:min(off+feedChunk, len(p))])
		r.flushScrollback()
		if r.err != nil {
			return off, r.err
		}
	}
	return len(p), nil
}

// Resize changes the emulated window, as the recorded terminal changed.
func (r *Renderer) Resize(cols, rows int) {
	if cols < 1 || rows < 1 || cols > maxDim || rows > maxDim {
		return
	}
	r.emu.Resize(cols, rows)
	r.flushScrollback()
}

// Flush writes what has scrolled off so far and, on the main screen, the
// rows above the cursor, which a line-by-line program has finished (for a
// followed transcript, which must not lag a screen behind). A program that
// later redraws those rows shows both versions.
func (r *Renderer) Flush() error {
	r.flushScrollback()
	if r.emu.IsAltScreen() {
		return r.err
	}
	rows := strings.Split(r.emu.String(), "\n")
	y := min(r.emu.CursorPosition().Y, len(rows))
	var b bytes.Buffer
	for i := len(r.shown); i < y; i++ {
		row := strings.TrimRight(rows[i], " ")
		r.shown = append(r.shown, row)
		b.WriteString(row)
		b.WriteByte('\n')
	}
	r.write(b.Bytes())
	return r.err
}

// Close writes the rest: the main screen, then the alternate screen if the
// interface was still showing it.
func (r *Renderer) Close() error {
	r.flushScrollback()
	alt := r.emu.IsAltScreen()
	var altText string
	if alt {
		altText = r.lastAltFrame()
		r.closing = true
		r.emu.Write([]byte("\x1b[?1049l"))
	}
	rows := strings.Split(r.emu.String(), "\n")
	for len(rows) > 0 && len(r.shown) > 0 && strings.TrimRight(rows[0], " ") == r.shown[0] {
		rows, r.shown = rows[1:], r.shown[1:]
	}
	r.writeText(strings.Join(rows, "\n"))
	if alt {
		r.writeText(altText)
	}
	if r.pw != nil {
		r.pw.Close()
		<-r.done
	}
	return r.err
}

// flushScrollback writes the lines that scrolled off and forgets them.
func (r *Renderer) flushScrollback() {
	n := r.emu.ScrollbackLen()
	if n == 0 {
		return
	}
	var b bytes.Buffer
	for _, l := range r.emu.Scrollback().Lines() {
		line := strings.TrimRight(l.String(), " ")
		if r.skipShown(line) {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	r.emu.ClearScrollback()
	r.write(b.Bytes())
}

// skipShown reports whether line, scrolling off, is the next row Flush
// already wrote. A screen erase keeps only rows with text, so blank shown
// rows may be passed over; any other difference means the screen was
// redrawn, and what was shown is forgotten.
func (r *Renderer) skipShown(line string) bool {
	for len(r.shown) > 0 {
		first := r.shown[0]
		r.shown = r.shown[1:]
		if first == line {
			return true
		}
		if first != "" {
			r.shown = nil
		}
	}
	return false
}

// writeText writes a screen's text, without its trailing blank lines.
func (r *Renderer) writeText(s string) {
	var b bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(strings.TrimRight(l, " "))
		b.WriteByte('\n')
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	if len(out) == 0 {
		return
	}
	r.write(append(out, '\n'))
}

func (r *Renderer) write(p []byte) {
	if r.err == nil {
		_, r.err = r.w.Write(p)
	}
}

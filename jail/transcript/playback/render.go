package playback

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aisan-dev/aisan/jail/transcript"
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

// repeatsPerByte bounds the characters repeats (REP) may draw, per byte
// played.
const repeatsPerByte = 4

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
	// altRows is the alternate screen as last compared (see scrolledOut);
	// altSeen are the lines of it written last, not to write twice.
	altRows []string
	altSeen []string
	// fed counts the bytes played; held waits for the next write.
	fed int64
	// repeated counts the characters repeats (REP) drew.
	repeated int64
	held     []byte
	// follow is set for a followed transcript (see Follow).
	follow *following
	// osc takes out what the emulator would misread (see oscFilter).
	osc oscFilter
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
	// Counts the emulator steps through one at a time: repeat the last
	// character (REP), tab forward or back (CHT, CBT), erase characters
	// (ECH). In ten bytes a jail can ask for a billion steps, which kept
	// 'aisan logs' busy for minutes per sequence. Past the screen's width
	// a tab or an erase does nothing more, so they are cut to it; a repeat
	// is cut to the width too, and all repeats together to a few times
	// what was played, so that no transcript costs much more to play than
	// plain text of its size. The emulator's own handler then runs.
	for _, c := range []int{'b', 'I', 'Z', 'X'} {
		r.emu.RegisterCsiHandler(c, func(p ansi.Params) bool {
			if len(p) == 0 {
				return false
			}
			n := min(p[0].Param(1), r.emu.Width())
			if c == 'b' {
				left := repeatsPerByte*(r.fed+feedChunk) - r.repeated
				if left < 1 {
					return true // nothing left to repeat: drop it
				}
				n = int(min(int64(n), left))
				r.repeated += int64(n)
			}
			p[0] = ansi.Param(ansi.Parameter(n, p[0].HasMore()))
			return false
		})
	}
	// Entering the alternate screen: what the main screen holds came
	// first, so write it first (as Flush does) rather than at Close.
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(p ansi.Params) bool {
		if !r.closing && !r.emu.IsAltScreen() && altMode(p) {
			if r.follow != nil {
				r.follow.look(r, true)
				r.follow.alt = nil
			} else {
				r.showRows()
			}
			r.altFrame, r.altRows, r.altSeen = "", nil, nil
		}
		return false
	})
	// Leaving the alternate screen discards it: keep its last frame.
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'l'), func(p ansi.Params) bool {
		if !r.closing && r.emu.IsAltScreen() && altMode(p) {
			r.flushScrollback()
			if r.follow != nil {
				r.writeUnseen(r.lastAltFrame())
			} else {
				r.writeText(r.lastAltFrame())
			}
		}
		// The end of a synchronized update is a whole frame: the
		// best moment to see what scrolled.
		sync := false
		p.ForEach(0, func(_, mode int, _ bool) { sync = sync || mode == 2026 })
		if sync {
			r.scrolledOut()
		}
		return false
	})
	return r
}

// minShiftMatch is how many rows must have moved up together before a
// change of the alternate screen counts as a scroll.
const minShiftMatch = 3

// scrolledOut writes the lines a full-screen interface scrolled out of
// its view since the last look. Such an interface keeps its conversation
// itself and redraws the visible part, so no terminal scrollback records
// it: when a block of rows reappears k rows higher, the rows it pushed out
// at the top are what scrolled by. Rows that stayed (a fixed header) are
// not written, nor a line just written (an interface that scrolls back and
// forth).
func (r *Renderer) scrolledOut() {
	if !r.emu.IsAltScreen() {
		r.altRows = nil
		return
	}
	cur := strings.Split(r.emu.String(), "\n")
	prev := r.altRows
	r.altRows = cur
	if prev == nil {
		return
	}
	// The scroll that explains the most rows: cur[i] == prev[i+k] for a
	// block starting at row top, which pushed prev[top:top+k] out.
	bestK, best, top := 0, 0, 0
	for k := 1; k < len(prev); k++ {
		match, text, first := 0, 0, -1
		for i := 0; i+k < len(prev) && i < len(cur); i++ {
			if strings.TrimSpace(cur[i]) == "" {
				continue
			}
			text++
			if cur[i] == prev[i+k] {
				match++
				if first < 0 {
					first = i
				}
			}
		}
		if match >= minShiftMatch && 2*match >= text && match > best {
			bestK, best, top = k, match, first
		}
	}
	var b bytes.Buffer
	for j := top; j < top+bestK; j++ {
		line := strings.TrimRight(prev[j], " ")
		if strings.TrimSpace(line) == "" || slices.Contains(r.altSeen, line) {
			continue
		}
		r.seen(line)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	r.write(b.Bytes())
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

// maxHeld bounds what Write holds back for a grapheme cluster that may
// go on in the next write.
const maxHeld = 64 << 10

// Write plays p. It fails only when the underlying writer does.
//
// The emulator ends a grapheme cluster (a letter and its combining marks)
// at the end of each of its writes, so the bytes from the last ASCII byte
// on, where a cluster may still be going on, wait for the next write:
// the text must not depend on how the output was cut into writes.
func (r *Renderer) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.held = append(r.held, r.osc.filter(p)...)
	i := bytes.LastIndexFunc(r.held, func(c rune) bool { return c < utf8.RuneSelf })
	if i < 0 && len(r.held) < maxHeld {
		return len(p), nil
	}
	if i < 0 {
		i = len(r.held)
	}
	rest := bytes.Clone(r.held[i:])
	r.feed(r.held[:i])
	r.held = rest
	return len(p), r.err
}

// release plays what Write held back.
func (r *Renderer) release() {
	held := r.held
	r.held = nil
	r.feed(held)
}

// feed plays p, looking at the screen at fixed offsets of the stream, so
// that how the output is cut into writes changes nothing.
func (r *Renderer) feed(p []byte) {
	for done := 0; done < len(p) && r.err == nil; {
		n := min(len(p)-done, feedChunk-int(r.fed%feedChunk))
		r.emu.Write(p[done : done+n])
		r.fed += int64(n)
		done += n
		if r.fed%feedChunk == 0 {
			r.flushScrollback()
			r.scrolledOut()
		}
	}
}

// Resize changes the emulated window, as the recorded terminal changed.
func (r *Renderer) Resize(cols, rows int) {
	if cols < 1 || rows < 1 || cols > transcript.MaxDim || rows > transcript.MaxDim {
		return
	}
	r.release()
	r.emu.Resize(cols, rows)
	r.flushScrollback()
}

// Flush writes what has scrolled off so far and, on the main screen, the
// rows above the cursor, which a line-by-line program has finished (for a
// followed transcript, which must not lag a screen behind). A program that
// later redraws those rows shows both versions.
//
// For a followed transcript (see Follow) it prints the rows that have
// settled instead.
func (r *Renderer) Flush() error {
	r.release()
	if r.follow != nil {
		r.follow.look(r, false)
		return r.err
	}
	r.showRows()
	return r.err
}

// showRows is Flush without what Write holds back, for the emulator's
// hooks (which run inside a write).
func (r *Renderer) showRows() {
	r.flushScrollback()
	if r.emu.IsAltScreen() {
		return
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
}

// Close writes the rest: the main screen, then the alternate screen if the
// interface was still showing it.
func (r *Renderer) Close() error {
	r.release()
	if r.follow != nil {
		return r.closeFollowed()
	}
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

// closeFollowed is Close for a followed transcript: what the screens
// show that was not printed yet.
func (r *Renderer) closeFollowed() error {
	if r.emu.IsAltScreen() {
		r.follow.look(r, true)
		r.closing = true
		r.emu.Write([]byte("\x1b[?1049l"))
	}
	r.follow.look(r, true)
	if r.pw != nil {
		r.pw.Close()
		<-r.done
	}
	return r.err
}

// writeUnseen writes the lines of a full-screen frame that were not
// printed lately (a followed transcript).
func (r *Renderer) writeUnseen(frame string) {
	var b bytes.Buffer
	for _, l := range strings.Split(frame, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" || slices.Contains(r.altSeen, l) {
			continue
		}
		r.seen(l)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	r.write(b.Bytes())
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
		if r.follow != nil && r.follow.scrolled(line) || r.follow == nil && r.skipShown(line) {
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

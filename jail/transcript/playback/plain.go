package playback

import (
	"io"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// maxLine bounds the line buffer of plain playback: output that never
// ends a line (a spinner that only ever returns the carriage) is written
// in pieces rather than held forever.
const maxLine = 64 << 10

// padPerByte bounds the spaces that moves past a line's end add, per
// byte played.
const padPerByte = 4

// plain plays output that went to pipes rather than a terminal: its lines
// are as long as the program wrote them (a terminal of any width would
// wrap them, and a JSON line must stay one line). A maintained parser
// (charmbracelet/x/ansi) takes the escape sequences apart; of them only
// the ones that shape a line of text are applied — carriage return,
// backspace, erase in line, cursor to column — and the rest dropped.
type plain struct {
	w    io.Writer
	p    *ansi.Parser
	line []rune
	col  int
	err  error
	// fed counts the bytes played, padded the spaces columns past a
	// line's end added (see print).
	fed, padded int
}

func newPlain(w io.Writer) *plain {
	pl := &plain{w: w, p: ansi.NewParser()}
	pl.p.SetHandler(ansi.Handler{
		Print:     pl.print,
		Execute:   pl.execute,
		HandleCsi: pl.csi,
	})
	return pl
}

func (pl *plain) print(r rune) {
	if pl.col > len(pl.line) {
		// A column past the line's end is padded with spaces, up to
		// maxLine and within what the bytes played so far pay for: in
		// ten bytes a jail can ask for column 999999999, which made
		// 'aisan logs' allocate gigabytes for a line of spaces.
		pad := min(pl.col-len(pl.line), maxLine-len(pl.line), padPerByte*pl.fed-pl.padded)
		for range max(pad, 0) {
			pl.line = append(pl.line, ' ')
		}
		pl.padded += max(pad, 0)
		pl.col = len(pl.line)
	}
	if pl.col < len(pl.line) {
		pl.line[pl.col] = r
	} else {
		pl.line = append(pl.line, r)
	}
	pl.col++
	if len(pl.line) >= maxLine {
		pl.emit(false)
	}
}

func (pl *plain) execute(b byte) {
	switch b {
	case '\n':
		pl.emit(true)
	case '\r':
		pl.col = 0
	case '\b':
		pl.col = max(pl.col-1, 0)
	case '\t':
		pl.print('\t')
	}
}

func (pl *plain) csi(cmd ansi.Cmd, params ansi.Params) {
	if cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return
	}
	n, _, _ := params.Param(0, 0)
	switch cmd.Final() {
	case 'K':
		switch n {
		case 0:
			pl.line = pl.line[:min(pl.col, len(pl.line))]
		case 1:
			for i := 0; i < min(pl.col+1, len(pl.line)); i++ {
				pl.line[i] = ' '
			}
		case 2:
			pl.line = pl.line[:0]
		}
	case 'G':
		pl.col = max(n, 1) - 1
	}
}

// emit writes the line so far, with a newline when it ended.
func (pl *plain) emit(newline bool) {
	buf := make([]byte, 0, len(pl.line)+1)
	for _, r := range pl.line {
		buf = utf8.AppendRune(buf, r)
	}
	if newline {
		buf = append(buf, '\n')
	}
	pl.line, pl.col = pl.line[:0], 0
	if pl.err == nil && len(buf) > 0 {
		_, pl.err = pl.w.Write(buf)
	}
}

func (pl *plain) Write(p []byte) (int, error) {
	for _, b := range p {
		pl.fed++
		pl.p.Advance(b)
	}
	return len(p), pl.err
}

func (pl *plain) Resize(int, int) {}

func (pl *plain) Flush() error { return pl.err }

func (pl *plain) Close() error {
	if len(pl.line) > 0 {
		pl.emit(false)
	}
	return pl.err
}

package transcript

import (
	"io"
	"unicode/utf8"
)

// maxLine bounds the line buffer: output that never ends a line (a
// spinner that only ever returns the carriage) is emitted in chunks
// rather than held forever.
const maxLine = 64 << 10

// maxString bounds an OSC/DCS string: an unterminated one would otherwise
// swallow the rest of the transcript.
const maxString = 64 << 10

// escape-parser states, after ECMA-48 and the DEC VT state diagram, cut
// down to what is needed to skip sequences.
type state uint8

const (
	ground   state = iota
	escape         // after ESC
	escInter       // ESC, then intermediate bytes 0x20-0x2F
	csi            // ESC [
	str            // ESC ] (OSC), ESC P (DCS), ESC X, ESC ^, ESC _: until BEL or ST
	strEsc         // ESC inside a string: ST is ESC \
)

// Stripper is an io.WriteCloser that removes terminal escape sequences
// from what is written to it and writes the text to the underlying writer,
// one line at a time. Carriage return moves back to the start of the line
// and later text overwrites earlier text, as on a terminal; backspace moves
// back one character; other control characters except tab are dropped.
// Close writes a final unterminated line. Sequences and UTF-8 characters
// split across writes are handled.
type Stripper struct {
	w       io.Writer
	st      state
	strLen  int
	line    []rune
	col     int
	pending []byte // an incomplete UTF-8 sequence from the last write
	out     []byte

	params   []byte // a CSI's parameter bytes, within paramBuf
	paramBuf [16]byte
}

// NewStripper returns a Stripper writing to w.
func NewStripper(w io.Writer) *Stripper { return &Stripper{w: w} }

// Write strips p. It returns len(p) unless the underlying writer fails.
func (s *Stripper) Write(p []byte) (int, error) {
	buf := p
	if len(s.pending) > 0 {
		buf = append(s.pending, p...)
		s.pending = nil
	}
	for i := 0; i < len(buf); {
		b := buf[i]
		if b < utf8.RuneSelf {
			s.byte(b)
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			s.pending = append([]byte(nil), buf[i:]...)
			break
		}
		r, size := utf8.DecodeRune(buf[i:])
		i += size
		switch s.st {
		case ground:
			s.put(r)
		case str:
			s.inString()
		case escape, escInter, csi:
			// Not part of any sequence: the sequence was malformed.
			s.st = ground
			s.put(r)
		default:
			s.st = ground
		}
	}
	if err := s.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// byte feeds one ASCII byte through the state machine.
func (s *Stripper) byte(b byte) {
	switch s.st {
	case escape:
		switch {
		case b == '[':
			s.st, s.params = csi, s.paramBuf[:0]
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			s.st, s.strLen = str, 0
		case b == 0x1b:
		case b >= 0x20 && b <= 0x2f:
			s.st = escInter
		case b >= 0x30 && b <= 0x7e:
			s.st = ground
		default:
			s.st = ground
			s.control(b)
		}
	case escInter:
		switch {
		case b >= 0x20 && b <= 0x2f:
		case b >= 0x30 && b <= 0x7e:
			s.st = ground
		default:
			s.st = ground
			s.control(b)
		}
	case csi:
		switch {
		case b >= 0x20 && b <= 0x3f:
			if len(s.params) < cap(s.params) {
				s.params = append(s.params, b)
			}
		case b >= 0x40 && b <= 0x7e:
			s.st = ground
			s.csiFinal(b)
		case b == 0x1b:
			s.st = escape
		default:
			// A control character inside a CSI is executed, and the
			// sequence goes on; dropping it is the simple equivalent.
			s.control(b)
		}
	case str:
		switch b {
		case 0x07, 0x18, 0x1a: // BEL ends an OSC; CAN and SUB cancel
			s.st = ground
		case 0x1b:
			s.st = strEsc
		default:
			s.inString()
		}
	case strEsc:
		if b == '\\' {
			s.st = ground
			return
		}
		s.st = escape
		s.byte(b)
	default:
		if b == 0x1b {
			s.st = escape
			return
		}
		if b < 0x20 || b == 0x7f {
			s.control(b)
			return
		}
		s.put(rune(b))
	}
}

// inString counts a byte of an OSC/DCS string and gives up on the string
// when it grows past maxString.
func (s *Stripper) inString() {
	s.strLen++
	if s.strLen > maxString {
		s.st = ground
	}
}

// csiFinal applies the two CSI sequences that act on a single line, and
// that line-redrawing UIs use in place of a carriage return: cursor to
// column n (CHA, "G") and erase in line ("K"). The rest (cursor up, screen
// erase, colours) only move or paint, and are dropped.
func (s *Stripper) csiFinal(final byte) {
	switch final {
	case 'G':
		n := 0
		for _, c := range s.params {
			if c < '0' || c > '9' {
				return // private or multi-parameter: not CHA as we know it
			}
			if n < maxLine {
				n = n*10 + int(c-'0')
			}
		}
		if n > 0 {
			n--
		}
		s.col = n
	case 'K':
		switch string(s.params) {
		case "", "0":
			s.line = s.line[:min(s.col, len(s.line))]
		case "2":
			s.line = s.line[:0]
		}
	}
}

// control applies a C0 control character in the ground state.
func (s *Stripper) control(b byte) {
	switch b {
	case '\n':
		s.endLine(true)
	case '\r':
		s.col = 0
	case '\b':
		if s.col > 0 {
			s.col--
		}
	case '\t':
		s.put('\t')
	}
}

// put writes r at the cursor, overwriting what was there; a cursor moved
// past the end of the line leaves blanks behind it.
func (s *Stripper) put(r rune) {
	for len(s.line) < s.col {
		s.line = append(s.line, ' ')
	}
	if s.col < len(s.line) {
		s.line[s.col] = r
	} else {
		s.line = append(s.line, r)
	}
	s.col++
	if len(s.line) >= maxLine {
		s.endLine(true)
	}
}

// endLine moves the line to the output.
func (s *Stripper) endLine(newline bool) {
	for _, r := range s.line {
		s.out = utf8.AppendRune(s.out, r)
	}
	if newline {
		s.out = append(s.out, '\n')
	}
	s.line, s.col = s.line[:0], 0
}

func (s *Stripper) flush() error {
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.w.Write(s.out)
	s.out = s.out[:0]
	return err
}

// Close writes the last line if it has no newline. It does not close the
// underlying writer.
func (s *Stripper) Close() error {
	if len(s.pending) > 0 {
		s.pending = nil
		if s.st == ground {
			s.put(utf8.RuneError)
		}
	}
	if len(s.line) > 0 {
		s.endLine(false)
	}
	return s.flush()
}

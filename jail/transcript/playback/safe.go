package playback

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// safeWriter passes text on with everything a terminal would act on made
// inert: C0 controls but newline and tab, DEL, C1 controls (as bytes and
// encoded in UTF-8) and bytes that are not UTF-8 are written as escapes
// (\x1b, \u009b, \xff). The emulator consumes the escape sequences it
// knows; this is for what it lets through, and for the plain playback of
// output that went to pipes. Whatever the agent printed, 'aisan logs'
// cannot drive the terminal it is read on.
type safeWriter struct {
	w io.Writer
	// part is an incomplete UTF-8 sequence at the end of the last write.
	part []byte
	out  []byte
}

func newSafeWriter(w io.Writer) *safeWriter { return &safeWriter{w: w} }

func (s *safeWriter) Write(p []byte) (int, error) {
	data := p
	if len(s.part) > 0 {
		data = append(s.part, p...)
		s.part = nil
	}
	out := s.out[:0]
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || c == '\n' || c == '\t' {
				out = append(out, c)
			} else {
				out = fmt.Appendf(out, "\\x%02x", c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			if !utf8.FullRune(data[i:]) && len(data)-i < utf8.UTFMax {
				// Maybe the rest comes with the next write.
				s.part = append(s.part[:0], data[i:]...)
				break
			}
			out = fmt.Appendf(out, "\\x%02x", c)
			i++
			continue
		}
		if r >= 0x80 && r < 0xa0 {
			q := strconv.QuoteRune(r)
			out = append(out, q[1:len(q)-1]...)
		} else {
			out = append(out, data[i:i+n]...)
		}
		i += n
	}
	s.out = out
	if len(out) > 0 {
		if _, err := s.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close writes an incomplete sequence left at the end, escaped.
func (s *safeWriter) Close() error {
	var out []byte
	for _, c := range s.part {
		out = fmt.Appendf(out, "\\x%02x", c)
	}
	s.part = nil
	if len(out) == 0 {
		return nil
	}
	_, err := s.w.Write(out)
	return err
}

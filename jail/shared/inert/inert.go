// Package inert makes text that may come from a box or a hand-edited
// file safe to print on the user's terminal.
package inert

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text escapes what a terminal would act on rather than show: C0
// control characters (escape sequences, carriage returns, tabs that
// break a table), DEL, C1 controls (U+009B is CSI on some terminals)
// and bytes that are not UTF-8, each as Go quotes it.
func Text(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Lines is Text for each line of s, the newlines between them kept: a
// message of several lines stays one, and none of them acts on the
// terminal.
func Lines(s string) string {
	if !strings.Contains(s, "\n") {
		return Text(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Text(l)
	}
	return strings.Join(lines, "\n")
}

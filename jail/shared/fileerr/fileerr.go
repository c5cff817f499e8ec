// Package fileerr is the error for a problem at a place in a file the user
// wrote (a bind spec, aisan's configuration): the file, the line and the
// key, so that the message points where to look.
package fileerr

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a problem at a place in a file.
type Error struct {
	File string
	Line int    // 0 when the problem is the file as a whole
	Key  string // "" when no key is involved
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Hints are those of the problem itself, if it has any.
func (e *Error) Hints() []string {
	var h interface{ Hints() []string }
	if errors.As(e.Err, &h) {
		return h.Hints()
	}
	return nil
}

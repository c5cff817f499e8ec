package trust

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/diff"
)

// RefusedError is a file that may not define a box: it lies where a box
// can write and its content is not the approved one (or, for a credential
// source, at all).
type RefusedError struct {
	// What the file is: "bind spec", "egress file", "token_file of …".
	What string
	// Path is the file as named.
	Path string
	// Place is where a box can write that holds it.
	Place Place
	// Approved is the earlier approval the file no longer matches, nil
	// when there is none.
	Approved *Approval
	// Now is the content read.
	Now []byte
	// Approvable is false for a credential source, which no approval
	// lets through.
	Approvable bool
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s lies where a strict box can write (%s: %s)", e.What, Printable(e.Path), Printable(e.Place.Path), e.Place.Why)
	switch {
	case !e.Approvable:
		b.WriteString("; aisan reads or runs it while the box lives, so it never uses one from there")
	case e.Approved == nil:
		b.WriteString(" and you have not approved it")
	default:
		fmt.Fprintf(&b, " and has changed since you approved it on %s:\n", e.Approved.Approved.Format("2006-01-02 15:04 MST"))
		b.WriteString(strings.TrimSuffix(Diff(e.Approved.Content, e.Now), "\n"))
	}
	return b.String()
}

// Hints say how to go on.
func (e *RefusedError) Hints() []string {
	if !e.Approvable {
		return []string{
			"move it where no box is given read-write (for example ~/.config/aisan/) and name it there",
		}
	}
	verb := "read it"
	if e.Approved != nil {
		verb = "read the change"
	}
	return []string{
		fmt.Sprintf("%s; if it is what you want, approve this content: aisan trust %s", verb, Printable(e.Path)),
		"or keep the file where no box is given read-write (for example ~/.config/aisan/)",
	}
}

// Diff is the unified diff from the approved content to the current, as
// text that is safe to print (see [Printable]).
func Diff(approved, now []byte) string {
	d := diff.Diff("approved", approved, "now", now)
	var b strings.Builder
	for line := range strings.Lines(string(d)) {
		b.WriteString(Printable(strings.TrimSuffix(line, "\n")))
		b.WriteByte('\n')
	}
	return b.String()
}

// Printable escapes what a terminal would act on rather than show: C0
// controls but tab, DEL, C1 controls and bytes that are not UTF-8 become
// \xNN (\u00NN for C1), so a file a box wrote cannot drive the user's
// terminal through aisan's messages.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

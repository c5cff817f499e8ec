package slot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// MarshalJSON flattens an entry into its record's fields plus "state" and,
// for a live slot, "idle_seconds": the shape "aisan list --json" promises
// to scripts.
func (e Entry) MarshalJSON() ([]byte, error) {
	var idle *int64
	if e.State != Exited {
		s := int64(e.Idle / time.Second)
		idle = &s
	}
	return json.Marshal(struct {
		Record
		State       State  `json:"state"`
		IdleSeconds *int64 `json:"idle_seconds,omitempty"`
	}{e.Record, e.State, idle})
}

// WriteJSON writes entries as one JSON array ("[]" when there are none).
func WriteJSON(w io.Writer, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding slot list: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteTable writes entries as the table "aisan list" shows: slot, kind,
// state (with the exit status once known), idle age, worktree, and a UNIT
// column only when some slot runs in a systemd unit.
func WriteTable(w io.Writer, entries []Entry) error {
	units := false
	for _, e := range entries {
		units = units || e.Unit != ""
	}
	// tabwriter writes cell by cell; buffer so a long list is a few
	// writes, not one system call per cell.
	bw := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	// Each row is built in one reused buffer and written whole: through
	// fmt, a list of a thousand slots made five allocations a row.
	line := []byte("SLOT\tKIND\tSTATE\tIDLE\tWORKTREE")
	if units {
		line = append(line, "\tUNIT"...)
	}
	tw.Write(append(line, '\n'))
	for _, e := range entries {
		kind := e.Kind
		if e.Mode != "" {
			kind += "/" + e.Mode
		}
		line = append(line[:0], Printable(e.Slot)...)
		line = append(append(line, '\t'), Printable(kind)...)
		line = append(append(line, '\t'), e.State...)
		if e.State == Exited && e.ExitStatus != nil {
			line = strconv.AppendInt(append(line, " ("...), int64(*e.ExitStatus), 10)
			line = append(line, ')')
		}
		idle := "-"
		if e.State != Exited {
			idle = Age(e.Idle)
		}
		line = append(append(line, '\t'), idle...)
		line = append(append(line, '\t'), Printable(e.Worktree)...)
		if units {
			unit := e.Unit
			if unit == "" {
				unit = "-"
			}
			line = append(append(line, '\t'), Printable(unit)...)
		}
		tw.Write(append(line, '\n'))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// Age formats d coarsely, the way a glance at a table wants it: 42s, 5m,
// 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}

// Printable escapes what a terminal would act on — control characters
// (escape sequences, carriage returns, tabs that break the table), DEL,
// C1 controls and invalid UTF-8 — so that a field of a record, which a
// path or a hand-edited file may have filled, prints as inert text.
func Printable(s string) string {
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

package slot

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aisan-dev/aisan/jail/shared/inert"
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
//
// The columns are laid out as text/tabwriter lays out tab-separated cells
// with two spaces of padding (FuzzWriteTable holds the two together), but
// in two passes over the cells: the widths, then the text. Through the
// tabwriter, a list of a thousand slots spent about a twentieth of its
// time, mostly on the memory for the cells it keeps.
func WriteTable(w io.Writer, entries []Entry) error {
	cells, cols := TableCells(entries)
	return WriteColumns(w, cells, cols)
}

// TableCells returns the cells of WriteTable's table, the header's first,
// cols to a row: a caller that adds a column lays them out with
// WriteColumns.
func TableCells(entries []Entry) (cells []string, cols int) {
	units := false
	for _, e := range entries {
		units = units || e.Unit != ""
	}
	header := []string{"SLOT", "KIND", "STATE", "IDLE", "WORKTREE"}
	if units {
		header = append(header, "UNIT")
	}
	cols = len(header)
	cells = make([]string, 0, (len(entries)+1)*cols)
	cells = append(cells, header...)
	for _, e := range entries {
		state, idle := string(e.State), "-"
		if e.State == Exited && e.ExitStatus != nil {
			state += " (" + strconv.Itoa(*e.ExitStatus) + ")"
		}
		if e.State != Exited {
			idle = Age(e.Idle)
		}
		kind := e.Kind
		if e.Mode != "" {
			kind += "/" + e.Mode
		}
		cells = append(cells, Printable(e.Slot), Printable(kind), state, idle, Printable(e.Worktree))
		if units {
			unit := e.Unit
			if unit == "" {
				unit = "-"
			}
			cells = append(cells, Printable(unit))
		}
	}
	return cells, cols
}

// WriteColumns writes cells, cols to a row, as lines of columns: each cell
// but a row's last padded with spaces to its column's widest cell, in
// runes, plus two.
func WriteColumns(w io.Writer, cells []string, cols int) error {
	const padding = 2
	width := make([]int, cols-1)
	size := 0
	for i, c := range cells {
		n := utf8.RuneCountInString(c)
		if col := i % cols; col < cols-1 {
			width[col] = max(width[col], n)
		}
		size += len(c)
	}
	// At most: a cell's padding is never more than its column's width
	// plus the padding, and each row ends in a newline.
	rows := len(cells) / cols
	for _, n := range width {
		size += (n + padding) * rows
	}
	out := make([]byte, 0, size+rows)
	for i, c := range cells {
		out = append(out, c...)
		if col := i % cols; col < cols-1 {
			for range width[col] - utf8.RuneCountInString(c) + padding {
				out = append(out, ' ')
			}
		} else {
			out = append(out, '\n')
		}
	}
	_, err := w.Write(out)
	return err
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

// Printable escapes what a terminal would act on (see [inert.Text]), so
// that a field of a record, which a path or a hand-edited file may have
// filled, prints as inert text.
func Printable(s string) string { return inert.Text(s) }

package slot

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files with the output they got")

// TestWriteTable holds "aisan list"'s table to a golden file: the UNIT
// column appears when a slot has a unit, a strict box's kind says so,
// an ended slot shows its status and no idle age, and what a record
// carries that a terminal would act on prints escaped.
func TestWriteTable(t *testing.T) {
	status := func(s int) *int { return &s }
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	plain := []Entry{
		{Record: Record{Slot: "repo-0123abcd-claude", Kind: "claude", Worktree: "/home/u/repo", Start: start, ExitStatus: status(0)}, State: Exited},
		{Record: Record{Slot: "repo-0123abcd-codex", Kind: "codex", Worktree: "/home/u/repo"}, State: Running, Idle: 42 * time.Second},
		{Record: Record{Slot: "other-89abcdef-run", Kind: "run", Worktree: "/home/u/other"}, State: Background, Idle: 3 * time.Hour},
	}
	mixed := []Entry{
		{Record: Record{Slot: "repo-0123abcd-claude", Kind: "claude", Mode: "strict", Worktree: "/home/u/répo", Unit: "aisan-repo-0123abcd-claude.scope"}, State: Running, Idle: 5 * time.Minute},
		{Record: Record{Slot: "esc-00000001-run", Kind: "run\x07", Worktree: "/w/\x1b[31mred\tx", ExitStatus: status(130)}, State: Exited},
		{Record: Record{Slot: "gone-00000002-run", Kind: "run", Worktree: "/w/gone"}, State: Orphaned, Idle: 50 * time.Hour},
	}
	var got bytes.Buffer
	for _, entries := range [][]Entry{nil, plain, mixed} {
		if err := WriteTable(&got, entries); err != nil {
			t.Fatal(err)
		}
		got.WriteString("--\n")
	}
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the table differs from %s (go test -update rewrites it):\n%s", golden, got.Bytes())
	}
}

// FuzzWriteTable: the table is laid out as text/tabwriter lays out the
// same cells, whatever the records hold. (What the cells say is
// TestWriteTable's.)
func FuzzWriteTable(f *testing.F) {
	f.Add("repo-0123abcd-claude", "claude", "", "/home/u/repo", "", 0, int64(0), uint8(0))
	f.Add("a", "run\x07", "strict", "/w/\x1b[31m\t", "aisan-a.scope", 130, int64(time.Hour), uint8(1))
	f.Add("é", "", "x", "/w/répo\xff", "-", -1, int64(50*time.Hour), uint8(3))
	f.Fuzz(func(t *testing.T, slot, kind, mode, worktree, unit string, status int, idle int64, state uint8) {
		states := []State{Exited, Running, Background, Orphaned}
		e := Entry{Record: Record{Slot: slot, Kind: kind, Mode: mode, Worktree: worktree, Unit: unit, ExitStatus: &status}, State: states[int(state)%len(states)], Idle: time.Duration(idle)}
		other := Entry{Record: Record{Slot: "repo-0123abcd-codex", Kind: "codex", Worktree: "/home/u/repo"}, State: Running, Idle: time.Minute}
		for _, entries := range [][]Entry{{e}, {other, e}, {e, other}} {
			var got, want bytes.Buffer
			if err := WriteTable(&got, entries); err != nil {
				t.Fatal(err)
			}
			tabwriterTable(&want, entries)
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("got\n%q\ntabwriter's\n%q", got.Bytes(), want.Bytes())
			}
		}
	})
}

// tabwriterTable lays the table's cells out with text/tabwriter.
func tabwriterTable(b *bytes.Buffer, entries []Entry) {
	cells, cols := TableCells(entries)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for i := 0; i < len(cells); i += cols {
		fmt.Fprintln(tw, strings.Join(cells[i:i+cols], "\t"))
	}
	tw.Flush()
}

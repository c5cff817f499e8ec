package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/boxstate"
)

// strictStates reads the state file of each strict slot's latest launch
// (what it spent, its limits), by slot; a slot without one is absent.
func strictStates(entries []slot.Entry) map[string]boxstate.Summary {
	out := map[string]boxstate.Summary{}
	for _, e := range entries {
		if e.Mode != "strict" {
			continue
		}
		st, err := boxstate.Read(e.Slot)
		// The state file is the latest launch's: it starts serving a
		// moment after the slot is taken.
		if err != nil || st.Start.Before(e.Start.Add(-time.Second)) {
			continue
		}
		out[e.Slot] = st
	}
	return out
}

// writeListJSON is slot.WriteJSON with each strict slot's state as
// "steer".
func writeListJSON(w io.Writer, entries []slot.Entry, states map[string]boxstate.Summary) error {
	var buf bytes.Buffer
	if err := slot.WriteJSON(&buf, entries); err != nil {
		return err
	}
	if len(states) == 0 {
		_, err := w.Write(buf.Bytes())
		return err
	}
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &objs); err != nil {
		return fmt.Errorf("encoding slot list: %w", err)
	}
	for i, e := range entries {
		if st, ok := states[e.Slot]; ok {
			objs[i]["steer"] = st.Raw
		}
	}
	data, err := json.MarshalIndent(objs, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding slot list: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// writeListTable is slot.WriteTable with a TOKENS column when a strict
// slot is listed.
func writeListTable(w io.Writer, entries []slot.Entry, states map[string]boxstate.Summary) error {
	strict := false
	for _, e := range entries {
		strict = strict || e.Mode == "strict"
	}
	if !strict {
		return slot.WriteTable(w, entries)
	}
	// The column goes last, so that the others keep their places.
	cells, cols := slot.TableCells(entries)
	out := make([]string, 0, len(cells)/cols*(cols+1))
	for i := 0; i < len(cells); i += cols {
		cell := "TOKENS"
		if i > 0 {
			cell = tokensCell(entries[i/cols-1], states)
		}
		out = append(append(out, cells[i:i+cols]...), cell)
	}
	return slot.WriteColumns(w, out, cols+1)
}

// tokensCell is the TOKENS cell of e: total spent (input, output,
// cache) and the budget, "-" for a deny-list slot.
func tokensCell(e slot.Entry, states map[string]boxstate.Summary) string {
	st, ok := states[e.Slot]
	if !ok {
		return "-"
	}
	var in, outT, cache int64
	for _, b := range st.Backends {
		in += b.Tokens.Input
		outT += b.Tokens.Output
		cache += b.Tokens.CacheRead + b.Tokens.CacheCreation
	}
	cell := fmt.Sprintf("%s (in %s, out %s, cache %s)", tokenCount(st.Spent()), tokenCount(in), tokenCount(outT), tokenCount(cache))
	if st.Budget > 0 {
		cell += " of " + tokenCount(st.Budget)
	}
	return cell
}

// tokenCount writes n the way budgets are written: 950, 12.5k, 2.1M.
func tokenCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1000000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

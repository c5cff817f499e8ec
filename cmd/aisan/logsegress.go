//go:build !aisanfront

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// maxEgressLog caps what is read of a slot's egress log (and of its
// rotated generation).
const maxEgressLog = 64 << 20

// errNoEgressLog is returned by readEgressLog for a slot without one.
var errNoEgressLog = errors.New("no egress log")

// readEgressLog reads slot's egress log, the rotated generation first.
func readEgressLog(slotName string) ([]byte, error) {
	p, err := strictbox.AuditPath(slotName)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, f := range []string{p + ".1", p} {
		b, err := regfile.Read(f, maxEgressLog)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the egress log: %w", err)
		}
		data = append(data, b...)
	}
	if data == nil {
		return nil, errNoEgressLog
	}
	return data, nil
}

// printEgressLog prints slot's egress log, the rotated generation first:
// as it is with asJSON, else one readable line per entry.
func printEgressLog(w io.Writer, slotName string, asJSON bool) error {
	data, err := readEgressLog(slotName)
	if errors.Is(err, errNoEgressLog) {
		return withHint(fmt.Errorf("slot %s has no egress log", slotName), "only strict boxes keep one")
	}
	if err != nil {
		return err
	}
	if asJSON {
		// A log written before its lines were escaped may hold them raw.
		_, err := w.Write(audit.InertJSON(data))
		return err
	}
	// Columns as wide as their widest cell, whatever a backend or a
	// path is called; the verdict (free text) comes last.
	bw := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for line := range bytes.Lines(data) {
		var e audit.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			fmt.Fprintf(tw, "(unreadable line: %s)\n", slot.Printable(string(bytes.TrimSpace(line))))
			continue
		}
		if e.Status == 0 && e.Note != "" {
			// A change made from outside the box: a grant, a lapse, a
			// denial, the budget or the rate set.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\t%s\n", e.Time.Local().Format(time.DateTime), slot.Printable(e.Backend),
				slot.Printable(e.Method), slot.Printable(e.Path), slot.Printable(e.Note))
			continue
		}
		verdict := strconv.Itoa(e.Status)
		if e.Refused != "" {
			verdict += " refused: " + e.Refused
		}
		if e.Tokens != nil {
			verdict += ", tokens " + tokensLine(*e.Tokens)
		}
		if e.Note != "" {
			verdict += " (" + e.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tup %d B, down %d B, %.1f ms\t%s\n",
			e.Time.Local().Format(time.DateTime), slot.Printable(e.Backend), slot.Printable(e.Method),
			slot.Printable(e.Path), e.BytesUp, e.BytesDown, e.MS, slot.Printable(verdict))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

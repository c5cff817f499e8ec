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

// printEgressLog prints slot's egress log, the rotated generation first:
// as it is with asJSON, else one readable line per entry.
func printEgressLog(w io.Writer, slotName string, asJSON bool) error {
	p, err := strictbox.AuditPath(slotName)
	if err != nil {
		return err
	}
	var data []byte
	for _, f := range []string{p + ".1", p} {
		b, err := regfile.Read(f, maxEgressLog)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the egress log: %w", err)
		}
		data = append(data, b...)
	}
	if data == nil {
		return withHint(fmt.Errorf("slot %s has no egress log", slotName), "only strict boxes with egress endpoints or --allow-host keep one")
	}
	if asJSON {
		_, err := w.Write(data)
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
		verdict := strconv.Itoa(e.Status)
		if e.Refused != "" {
			verdict += " refused: " + e.Refused
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

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
	bw := bufio.NewWriter(w)
	for line := range bytes.Lines(data) {
		var e audit.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			fmt.Fprintf(bw, "(unreadable line: %s)\n", slot.Printable(string(bytes.TrimSpace(line))))
			continue
		}
		verdict := strconv.Itoa(e.Status)
		if e.Refused != "" {
			verdict += " refused: " + e.Refused
		}
		fmt.Fprintf(bw, "%s  %-9s %-7s %s  %s  up %d B, down %d B, %.1f ms\n",
			e.Time.Local().Format(time.DateTime), slot.Printable(e.Backend), slot.Printable(e.Method),
			slot.Printable(e.Path), slot.Printable(verdict), e.BytesUp, e.BytesDown, e.MS)
	}
	return bw.Flush()
}

package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Status is the outcome of one check.
type Status int

// The statuses, from best to worst.
const (
	// OK: the promise holds, or there is nothing to fix.
	OK Status = iota
	// Warn: aisan works, but something is missing or risky.
	Warn
	// Fail: a denial or transparency promise does not hold, or aisan
	// cannot run here.
	Fail
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Fail:
		return "FAIL"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// MarshalText writes the status in lower case, for scripts.
func (s Status) MarshalText() ([]byte, error) { return []byte(strings.ToLower(s.String())), nil }

// UnmarshalText reads a status written by MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	for _, c := range []Status{OK, Warn, Fail} {
		if strings.EqualFold(c.String(), string(b)) {
			*s = c
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", b)
}

// Finding is what one check found.
type Finding struct {
	// Status is ok, warn or FAIL.
	Status Status `json:"status"`
	// Name is the check's name.
	Name string `json:"name"`
	// Detail is the finding in one line.
	Detail string `json:"detail"`
	// Fix is the command that fixes a warn or FAIL on this host, one per
	// line when it takes more than one step; empty when Status is OK.
	Fix string `json:"fix,omitempty"`
}

// Problem reports whether f needs fixing.
func (f Finding) Problem() bool { return f.Status != OK }

// Check is one named probe of the host.
type Check struct {
	// Name is the check's name, as printed.
	Name string
	// Run looks at the host and says what it found. It must not block
	// for long: preflight as a whole stays under a second.
	Run func(ctx context.Context, e *Env) Finding
}

// Run runs checks concurrently and returns their findings in the order
// of checks. A finding's Name is always its check's.
func Run(ctx context.Context, e *Env, checks []Check) []Finding {
	out := make([]Finding, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			f := c.Run(ctx, e)
			f.Name = c.Name
			if f.Status == OK {
				f.Fix = ""
			}
			out[i] = f
		})
	}
	wg.Wait()
	return out
}

// Problems counts the findings that need fixing.
func Problems(findings []Finding) int {
	n := 0
	for _, f := range findings {
		if f.Problem() {
			n++
		}
	}
	return n
}

// Summary is the last line of the human output.
func Summary(findings []Finding) string {
	switch n := Problems(findings); n {
	case 0:
		return "preflight: ok"
	case 1:
		return "preflight: 1 problem"
	default:
		return fmt.Sprintf("preflight: %d problems", n)
	}
}

// WriteText prints one line per finding — status, name, detail — with a
// "fix:" line under each problem, then the [Summary]. A fix already
// printed for an earlier problem (one cause failing several checks) is
// referred to, not repeated, so the output stays one screen. With quiet,
// only the problems are printed, and nothing at all when there are none.
func WriteText(w io.Writer, findings []Finding, quiet bool) error {
	width := 0
	for _, f := range findings {
		width = max(width, len(f.Name))
	}
	var b strings.Builder
	firstWith := map[string]string{} // fix -> name of the first finding with it
	for _, f := range findings {
		if quiet && !f.Problem() {
			continue
		}
		fmt.Fprintf(&b, "%-4s  %-*s  %s\n", f.Status, width, f.Name, f.Detail)
		if !f.Problem() {
			continue
		}
		if first, ok := firstWith[f.Fix]; ok && f.Fix != "" {
			fmt.Fprintf(&b, "      fix: as for %s, above\n", first)
			continue
		}
		firstWith[f.Fix] = f.Name
		for _, line := range strings.Split(f.Fix, "\n") {
			if line != "" {
				fmt.Fprintf(&b, "      fix: %s\n", line)
			}
		}
	}
	if !quiet || Problems(findings) > 0 {
		b.WriteString(Summary(findings) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Report is the JSON form of a preflight.
type Report struct {
	// Findings are in check order.
	Findings []Finding `json:"findings"`
	// Problems counts the findings that are not ok.
	Problems int `json:"problems"`
}

// WriteJSON prints the findings as one indented [Report].
func WriteJSON(w io.Writer, findings []Finding) error {
	if findings == nil {
		findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Report{Findings: findings, Problems: Problems(findings)})
}

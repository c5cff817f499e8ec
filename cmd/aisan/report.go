//go:build !aisanfront

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

const reportUsage = `
Usage: aisan report SLOT [--launch N] [--json]

Sums up one launch of a slot on one screen: its mode, command, start,
duration and exit status; for a strict box also the files it changed in
the repository (against the repository at launch) and the changes held
for review; the hosts it reached and was refused, with counts; its model
calls, tokens and refusals per backend; where its credentials came from
(by name, never their value); the processes it left behind and how they
ended; its peak memory and CPU time.

The report is built from what aisan kept on the host (the slot's record,
the launch's receipt, its egress log); nothing is asked of the box.

Options:
  --launch N   report launch N of 'aisan logs --launches SLOT' instead of
               the latest
  --json       print the report as one JSON object
  -h, --help   show this help

Example:
  aisan report myrepo-3f9c2a1b-claude
  aisan report myrepo-3f9c2a1b-claude --json | jq .backends
`

func runReport(ctx context.Context, args []string) error {
	fs := newFlagSet("report", reportUsage)
	asJSON := fs.Bool("json", false, "")
	launch := fs.Int("launch", 0, "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	launchSet, err := launchGiven("report", fs, *launch)
	if err != nil {
		return err
	}
	name, err := oneSlot("report", names)
	if err != nil {
		return err
	}
	reg, err := openRegistry()
	if err != nil {
		return err
	}
	e, err := reg.Lookup(name)
	if err != nil {
		return slotError(err)
	}
	li, running := slot.InfoOf(e.Record), e.State != slot.Exited
	if launchSet {
		ls, err := reg.Launches(e.Slot)
		if err != nil {
			return err
		}
		l, err := nthLaunch(ls, e.Slot, *launch)
		if err != nil {
			return err
		}
		if l.Path != e.Transcript {
			running = false
			if l.Info == nil {
				li = slot.LaunchInfo{Kind: e.Kind, Start: l.Start}
			} else {
				li = *l.Info
			}
		}
	}
	var r *strictbox.Receipt
	if li.Mode == "strict" {
		if r, err = strictbox.FindReceipt(e.Slot, li.Start, li.End); err != nil {
			return err
		}
	}
	var log []audit.Entry
	var heldPaths []string
	var heldState string
	if r != nil {
		if log, err = readEgressEntries(e.Slot); err != nil {
			return err
		}
		heldPaths, heldState = heldOf(e.Slot, r.Held)
	}
	rep := strictbox.BuildReport(e.Slot, li, running, time.Now(), r, log, heldPaths, heldState)
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return writeReport(os.Stdout, rep)
}

// heldOf lists the paths of the held set dir, and its state, when it is
// still held.
func heldOf(slotName, dir string) ([]string, string) {
	if dir == "" {
		return nil, ""
	}
	home, err := slot.Home()
	if err != nil {
		return nil, ""
	}
	sets, _ := held.List(home, slotName)
	for _, s := range sets {
		if s.Dir == dir {
			return s.Files, s.State
		}
	}
	return nil, ""
}

// readEgressEntries reads slot's egress log, the rotated generation
// first; a line that does not parse is skipped, a missing log is none.
func readEgressEntries(slotName string) ([]audit.Entry, error) {
	data, err := readEgressLog(slotName)
	if errors.Is(err, errNoEgressLog) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []audit.Entry
	for line := range bytes.Lines(data) {
		var e audit.Entry
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// writeReport prints a report as the screen shows it.
func writeReport(w io.Writer, r strictbox.Report) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	s := slot.Printable
	p("slot      %s\n", s(r.Slot))
	cmd := r.Command
	if cmd == "" {
		cmd = "-"
	}
	p("launch    %s, %s (%s)\n", s(r.Mode), s(r.Kind), s(cmd))
	p("started   %s\n", r.Start.Local().Format(time.DateTime))
	dur := (time.Duration(r.DurationSeconds) * time.Second).String()
	switch {
	case r.Running:
		p("duration  %s so far (it runs)\n", dur)
	case r.ExitStatus != nil:
		p("duration  %s, exit status %d\n", dur, *r.ExitStatus)
	default:
		p("duration  %s, exit status unknown\n", dur)
	}
	if !r.Receipt {
		if r.Mode == "strict" {
			p("\nno receipt is kept of this launch (it is older than receipts, or was pruned)\n")
		} else {
			p("\na deny-list jail keeps no receipt: 'aisan logs %s' shows what it printed\n", s(r.Slot))
		}
		return bw.Flush()
	}
	if r.PeakMemory > 0 || r.CPUSeconds > 0 {
		p("resources peak memory %s, CPU time %.1fs\n", byteSize(r.PeakMemory), r.CPUSeconds)
	}
	p("\nfiles changed in %s:\n", s(r.Repo))
	switch {
	case r.ChangesUnknown != "":
		p("  not known: %s\n", s(r.ChangesUnknown))
	case len(r.Changes) == 0:
		p("  none\n")
	}
	for _, c := range r.Changes {
		p("  %-9s%s\n", c.How, s(c.Path))
	}
	if len(r.Held) > 0 {
		p("held for review (%s; 'aisan review %s'):\n", s(r.HeldState), s(r.Slot))
		for _, f := range r.Held {
			p("  %s\n", s(f))
		}
	}
	p("\nhosts:\n")
	if len(r.Hosts) == 0 {
		p("  none asked for\n")
	}
	for _, h := range r.Hosts {
		p("  %-40s reached %d, refused %d\n", s(h.Host), h.Reached, h.Refused)
	}
	p("\nmodel and service calls:\n")
	if len(r.Backends) == 0 {
		p("  none\n")
	}
	for _, b := range r.Backends {
		p("  %-28s %d calls, %d refused; tokens %s\n", s(b.Backend), b.Calls, b.Refused, tokensLine(b.Tokens))
	}
	var limits []string
	if r.Budget > 0 {
		limits = append(limits, "budget "+strconv.FormatInt(r.Budget, 10)+" tokens")
	}
	if r.Rate != "" {
		limits = append(limits, "rate "+r.Rate)
	}
	if len(limits) > 0 {
		p("  limits at the end: %s\n", strings.Join(limits, ", "))
	}
	if len(r.Credentials) > 0 {
		p("\ncredentials (where each came from; never their value):\n")
		for _, k := range sortedKeys(r.Credentials) {
			p("  %-28s %s\n", s(k), s(r.Credentials[k]))
		}
	}
	if len(r.Steering) > 0 {
		p("\nchanged from outside while it ran:\n")
		for _, l := range r.Steering {
			p("  %s\n", s(l))
		}
	}
	p("\nprocesses left behind when the agent exited:\n")
	if len(r.Left) == 0 {
		p("  none\n")
	}
	for _, pr := range r.Left {
		p("  %d %s\n", pr.PID, s(pr.Name))
	}
	if len(r.Left) > 0 && r.LeftEnd != "" {
		p("  they %s\n", s(r.LeftEnd))
	}
	return bw.Flush()
}

// tokensLine is a call's or a backend's tokens, in one short phrase.
func tokensLine(t audit.Tokens) string {
	if t.Total() == 0 {
		return "none counted"
	}
	out := fmt.Sprintf("%s (input %s, output %s", tokenCount(t.Total()), tokenCount(t.Input), tokenCount(t.Output))
	if t.CacheRead > 0 || t.CacheCreation > 0 {
		out += fmt.Sprintf(", cache read %s, cache write %s", tokenCount(t.CacheRead), tokenCount(t.CacheCreation))
	}
	return out + ")"
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

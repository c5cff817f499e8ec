package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"syscall"

	"github.com/aisan-dev/aisan/jail/transcript"
)

const logsUsage = `
Usage: aisan logs [--raw] [-f] SLOT

Prints the transcript of a slot's latest launch: everything the agent
printed, as plain text. Terminal escape sequences (colours, cursor
movement, window titles) are removed and carriage-return overwrites are
applied, so a progress line shows its last state. A full-screen interface
comes out as its successive redraws.

Options:
  --raw          print the transcript byte for byte, escape sequences
                 included (replay it with cat in a terminal)
  --egress       print the strict box's egress log instead: one line per
                 request or connection the host side answered or refused
  --json         with --egress, the log's JSON lines as they are
  -f, --follow   keep printing as the agent writes, until the slot ends
  -h, --help     show this help

Example:
  aisan logs -f myrepo-3f9c2a1b-claude
`

func runLogs(ctx context.Context, args []string) error {
	fs := newFlagSet("logs", logsUsage)
	raw := fs.Bool("raw", false, "")
	egressLog := fs.Bool("egress", false, "")
	asJSON := fs.Bool("json", false, "")
	var follow bool
	fs.BoolVar(&follow, "f", false, "")
	fs.BoolVar(&follow, "follow", false, "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(names) == 0:
		return withHint(usageErr("logs: no slot given"), "aisan logs SLOT; 'aisan list' shows the slots")
	case len(names) > 1:
		return withHint(usageErr("logs: one slot at a time, got %d", len(names)), "aisan logs SLOT")
	}
	reg, err := openRegistry()
	if err != nil {
		return err
	}
	e, err := reg.Lookup(names[0])
	if err != nil {
		return slotError(err)
	}
	if *egressLog {
		return printEgressLog(os.Stdout, e.Slot, *asJSON)
	}
	err = transcript.Print(ctx, os.Stdout, e.Transcript, transcript.Options{
		Raw:     *raw,
		Follow:  follow,
		Running: func() bool { return reg.SameRun(e) },
	})
	if errors.Is(err, syscall.EPIPE) {
		// The reader went away (aisan logs X | head): not an error.
		return nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return withHint(err, "the slot's launch ended before its transcript was created")
	}
	return err
}

// parseInterspersed parses fs's flags wherever they appear among the
// positional arguments ("aisan logs SLOT -f" as well as "aisan logs -f
// SLOT"), and returns the positional ones. After "--" everything is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at a non-flag, or consumes "--" and stops after it.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

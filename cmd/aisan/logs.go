//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"text/tabwriter"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/transcript/playback"
)

const logsUsage = `
Usage: aisan logs [--raw] [-f] [--launch N] SLOT
       aisan logs --launches SLOT

Prints the transcript of a slot's latest launch as plain text: the output
is played through a terminal emulator of the window sizes the terminal
had, so what an interactive agent drew reads as it did on screen: every
line that scrolled by (prompts and answers), then the screen as the agent
left it. A full-screen interface's last frame is kept when it leaves.

Options:
  --raw          print the transcript byte for byte, escape sequences
                 included (replay it with cat in a terminal)
  --egress       print the strict box's egress log instead: one line per
                 request or connection the host side answered or refused
  --json         with --egress, the log's JSON lines as they are
  -f, --follow   keep printing as the agent writes, until the slot ends
  --launches     list the slot's kept launches, numbered from 1 (oldest):
                 start, mode, command, exit status and size
  --launch N     print launch N of that list instead of the latest
  -h, --help     show this help

Each launch keeps its last 16 MiB of output; a slot keeps its last 10
launches, and slots that ended more than 30 days ago are removed ('aisan
prune' removes ended slots at once).

Example:
  aisan logs -f myrepo-3f9c2a1b-claude
  aisan logs --launches myrepo-3f9c2a1b-claude
`

func runLogs(ctx context.Context, args []string) error {
	fs := newFlagSet("logs", logsUsage)
	raw := fs.Bool("raw", false, "")
	egressLog := fs.Bool("egress", false, "")
	asJSON := fs.Bool("json", false, "")
	var follow bool
	fs.BoolVar(&follow, "f", false, "")
	fs.BoolVar(&follow, "follow", false, "")
	listLaunches := fs.Bool("launches", false, "")
	launch := fs.Int("launch", 0, "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	launchSet, err := launchGiven("logs", fs, *launch)
	if *listLaunches && (launchSet || *raw || follow) {
		return withHint(usageErr("logs: --launches lists; it takes no --launch, --raw or --follow"), "aisan logs --launches SLOT")
	}
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
	path := e.Transcript
	if *listLaunches || launchSet {
		ls, err := reg.Launches(e.Slot)
		if err != nil {
			return err
		}
		if *listLaunches {
			return printLaunches(os.Stdout, ls, e)
		}
		l, err := nthLaunch(ls, e.Slot, *launch)
		if err != nil {
			return err
		}
		path = l.Path
	}
	err = playback.Print(ctx, os.Stdout, path, playback.Options{
		Raw:     *raw,
		Follow:  follow && path == e.Transcript,
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

// printLaunches writes one line per kept launch: its number, start,
// mode, command, how it ended (or that it runs) and size.
func printLaunches(w io.Writer, ls []slot.Launch, e slot.Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tSTARTED\tMODE\tCOMMAND\tSTATUS\tSIZE")
	for _, l := range ls {
		info := l.Info
		status := "-"
		if l.Path == e.Transcript {
			cur := slot.InfoOf(e.Record)
			info = &cur
			if e.State != slot.Exited {
				status = string(e.State)
			}
		}
		mode, command := "-", "-"
		if info != nil {
			mode = "deny-list"
			if info.Mode != "" {
				mode = slot.Printable(info.Mode)
			}
			if info.Command != "" {
				command = slot.Printable(info.Command)
			}
			if info.ExitStatus != nil && status == "-" {
				status = strconv.Itoa(*info.ExitStatus)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", l.N, l.Start.Local().Format("2006-01-02 15:04:05"), mode, command, status, byteSize(l.Size))
	}
	return tw.Flush()
}

// byteSize is n in the largest unit that keeps it at least 1.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// launchGiven reports whether cmd's flag set fs was given --launch, whose
// value is n, and refuses a number no launch has.
func launchGiven(cmd string, fs *flag.FlagSet, n int) (bool, error) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "launch" })
	if set && n < 1 {
		return true, withHint(usageErr("%s: --launch %d: launches are numbered from 1", cmd, n), "aisan logs --launches SLOT lists them")
	}
	return set, nil
}

// nthLaunch is launch n (from 1) of the slot's kept launches ls, as
// 'aisan logs --launches' numbers them.
func nthLaunch(ls []slot.Launch, slotName string, n int) (slot.Launch, error) {
	if n > len(ls) {
		return slot.Launch{}, withHint(fmt.Errorf("slot %s has %d kept launches, not %d", slotName, len(ls), n), "aisan logs --launches "+slotName+" lists them")
	}
	return ls[n-1], nil
}

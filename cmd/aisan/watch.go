package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/systemd"
)

const watchUsage = `
Usage: aisan watch [options]

Supervises slots until stopped: reaps orphaned jails (whose aisan
process died), stops headless services that outlived their runtime cap
when systemd did not, and records how slots ended. Interactive sessions
are never stopped for running long or for being idle.

It normally runs as the user unit aisan-watch.service ('aisan
install-service' installs and starts it); each action is one line on
standard output, which the journal keeps.

Options:
  --interval DURATION   time between passes (default 5s)
  --once                do one pass and exit
  -h, --help            show this help
`

func runWatch(ctx context.Context, args []string) error {
	fs := newFlagSet("watch", watchUsage)
	interval := fs.Duration("interval", systemd.DefaultWatchInterval, "")
	once := fs.Bool("once", false, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *interval <= 0 {
		return withHint(usageErr("watch: --interval must be positive"), "run 'aisan watch --help' for usage")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	report := func(e systemd.Event) {
		fmt.Fprintf(os.Stdout, "%s %s\n", time.Now().Format(time.RFC3339), e)
		if e.Action == systemd.ActionReaped && e.Err == nil {
			// A strict orphan's wrapper did not collect what its box
			// left; now that the box is gone, collect it.
			if reg, err := openRegistry(); err == nil {
				collectStale(reg)
			}
		}
	}
	sup, closeFn, err := launch.Supervisor(ctx, report)
	if err != nil {
		return err
	}
	defer closeFn()
	sup.Interval = *interval
	if *once {
		events, err := sup.Sweep(ctx)
		for _, e := range events {
			report(e)
		}
		return err
	}
	return sup.Run(ctx)
}

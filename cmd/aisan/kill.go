package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
)

const killUsage = `
Usage: aisan kill SLOT...
       aisan kill --all
       aisan kill --orphans

Kills every process in a slot's jail, and nothing else: this is the
targeted replacement for pkill and killall. The slot's aisan process is
spared; it sees the jail end, records it and exits with status 137.

A jail with a systemd scope is killed through it (every process in the
scope), after checking that the jail's init is in that scope; otherwise
through its init process (PID 1 of its PID namespace), after checking that
the process is still in the jail's namespace, so a PID or a unit name that
something else has reused is never hit. A headless service is stopped
through systemd, so it is not restarted.

Options:
  --all        kill every running and orphaned slot
  --orphans    kill only orphaned slots (their aisan died, their jail did
               not), and record their end
  -h, --help   show this help

Prints "killed SLOT" for each slot it killed. 'aisan list' shows the
slots and their state.

Example:
  aisan kill myrepo-3f9c2a1b-claude
`

func runKill(ctx context.Context, args []string) error {
	fs := newFlagSet("kill", killUsage)
	all := fs.Bool("all", false, "")
	orphans := fs.Bool("orphans", false, "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	hint := "run 'aisan kill --help' for usage"
	switch {
	case *all && *orphans:
		return withHint(usageErr("kill: --all and --orphans cannot be combined (--all includes orphans)"), hint)
	case (*all || *orphans) && len(names) > 0:
		opt := "--all"
		if *orphans {
			opt = "--orphans"
		}
		return withHint(usageErr("kill: %s and a slot name (%q) cannot be combined", opt, names[0]), hint)
	case !*all && !*orphans && len(names) == 0:
		return withHint(usageErr("kill: no slot given"), "aisan kill SLOT, or --all, or --orphans; 'aisan list' shows the slots")
	}
	reg, err := openRegistry()
	if err != nil {
		return err
	}
	// Through the slot's systemd scope when it has one (it holds the
	// stage, bwrap and the jail, and ends them together), by the jail's
	// PID namespace otherwise.
	reg.Killer = jail.Killer(ctx)
	if *all || *orphans {
		var killed []string
		var problems []error
		if *all {
			killed, problems = reg.KillAll(syscall.SIGKILL)
		} else {
			killed, problems = reg.KillOrphans(syscall.SIGKILL)
		}
		for _, name := range killed {
			fmt.Println("killed", name)
		}
		var failed []error
		for _, p := range problems {
			var ce *slot.CorruptError
			if errors.As(p, &ce) {
				warn([]error{p})
			} else {
				failed = append(failed, p)
			}
		}
		return errors.Join(failed...)
	}
	var failed []error
	for _, name := range names {
		if err := reg.Kill(name, syscall.SIGKILL); err != nil {
			failed = append(failed, err)
			continue
		}
		fmt.Println("killed", name)
	}
	if len(failed) == 1 {
		return slotError(failed[0])
	}
	return errors.Join(failed...)
}

// slotError adds the hint that helps with an unknown or exited slot.
func slotError(err error) error {
	var unknown *slot.UnknownSlotError
	var exited *slot.NotRunningError
	if errors.As(err, &unknown) || errors.As(err, &exited) {
		return withHint(err, "run 'aisan list' to see the slots and their state")
	}
	return err
}

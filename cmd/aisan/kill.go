package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
	"golang.org/x/sys/unix"
)

const killUsage = `
Usage: aisan kill SLOT...
       aisan kill --all
       aisan kill --orphans

Ends every process in a slot's jail, and nothing else: this is the
targeted replacement for pkill and killall. As a user would, it sends the
agent SIGTERM first, waits up to the grace period (5s) for it to exit, and
then kills whatever is left of the jail with SIGKILL. The slot's aisan
process is spared; it sees the jail end, records it and exits with the
agent's status (143 after SIGTERM, 137 after SIGKILL). A background slot
(the agent exited, processes it left run on) gets SIGTERM on every process
left, the grace, then SIGKILL; its end is recorded with the agent's status.

A jail with a systemd scope is killed through it (every process in the
scope), after checking that the jail's init is in that scope; otherwise
through its init process (PID 1 of its PID namespace), after checking that
the process is still in the jail's namespace, so a PID or a unit name that
something else has reused is never hit. A headless service is stopped
through systemd, so it is not restarted.

A strict box whose aisan died (an orphan) has nobody to collect what it
changed of what host tools run: once it is killed, kill collects it and
says what it holds for review ('aisan review').

Options:
  --all            end every running, background and orphaned slot
  --orphans        end only orphaned slots (their aisan died, their jail
                   did not), and record their end
  --grace DURATION time between SIGTERM and SIGKILL (default 5s)
  --signal SIG     send SIG (KILL, TERM, INT, HUP, … or a number) instead,
                   once, with no escalation; KILL kills the whole jail at once
  -h, --help       show this help

Prints "killed SLOT" for each slot it killed. 'aisan list' shows the
slots and their state. The terminal of a killed agent gets one line
saying which slot 'aisan kill' ended, from which terminal, with which
signal.

Example:
  aisan kill myrepo-3f9c2a1b-claude
`

func runKill(ctx context.Context, args []string) error {
	fs := newFlagSet("kill", killUsage)
	all := fs.Bool("all", false, "")
	orphans := fs.Bool("orphans", false, "")
	grace := fs.Duration("grace", slot.DefaultGrace, "")
	sigName := fs.String("signal", "", "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	var sig syscall.Signal
	if *sigName != "" {
		if sig, err = parseSignal(*sigName); err != nil {
			return withHint(usageErr("kill: %v", err), "for example --signal KILL, --signal TERM or --signal 9")
		}
	}
	if *grace < 0 {
		return withHint(usageErr("kill: --grace %v is negative", *grace), "for example --grace 10s")
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
	// Through the slot's systemd scope when it has one (it holds bwrap
	// and the jail, and ends them together), by the jail's
	// PID namespace otherwise.
	reg.Killer = launch.Killer(ctx)
	reg.By = killerName()
	if *all || *orphans {
		var killed []string
		var problems []error
		switch {
		case sig == 0:
			killed, problems = reg.StopAll(*grace, *orphans)
		case *all:
			killed, problems = reg.KillAll(sig)
		default:
			killed, problems = reg.KillOrphans(sig)
		}
		for _, name := range killed {
			fmt.Println("killed", name)
		}
		if len(killed) > 0 {
			// An orphan among them had nobody left to collect its set.
			collectStale(reg)
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
	killed := false
	for _, name := range names {
		if sig == 0 {
			_, err = reg.Stop(name, *grace)
		} else {
			err = reg.Kill(name, sig)
		}
		if err != nil {
			failed = append(failed, slotError(err))
			continue
		}
		fmt.Println("killed", name)
		killed = true
	}
	if killed {
		collectStale(reg)
	}
	return joinErrors(failed)
}

// killerName says who is killing, for the line the killed agent's
// terminal gets: this command, its PID and its terminal.
func killerName() string {
	where := ""
	for fd := range 3 {
		if t, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && (strings.HasPrefix(t, "/dev/pts/") || strings.HasPrefix(t, "/dev/tty")) {
			where = " on " + t
			break
		}
	}
	return fmt.Sprintf("'aisan kill' (PID %d%s)", os.Getpid(), where)
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

// parseSignal reads a signal by name (KILL, SIGKILL, kill) or number.
func parseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("signal %d is out of range", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig := unix.SignalNum("SIG" + name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/jail/slot"
)

const pruneUsage = `
Usage: aisan prune [--all | --older DURATION]

Removes slots that have ended, with their transcripts, now. Without an
option it applies what launches apply on their own (at most once an
hour): slots that ended more than 30 days ago go, and so do all but the
200 that ended last; a slot that stays keeps its last 10 launches.

A live slot (running, background or orphaned) is never touched, nor one
that a launch takes while prune works: each slot is removed under its
lock, after its record is read again.

Options:
  --all              remove every slot that has ended
  --older DURATION   remove the slots that ended more than DURATION ago
                     (90m, 12h, 7d, 2w)
  -h, --help         show this help

Prints "removed SLOT" for each slot it removed.

Example:
  aisan prune --older 7d
`

func runPrune(_ context.Context, args []string) error {
	fs := newFlagSet("prune", pruneUsage)
	all := fs.Bool("all", false, "")
	older := fs.String("older", "", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	policy := slot.DefaultPrune
	switch {
	case *all && *older != "":
		return withHint(usageErr("prune: --all and --older cannot be combined"), "run 'aisan prune --help' for usage")
	case *all:
		policy.MaxAge, policy.MaxSlots = 0, 0
	case *older != "":
		d, err := parseAge(*older)
		if err != nil {
			return withHint(usageErr("prune: --older %q: %v", *older, err), "for example --older 12h or --older 7d")
		}
		policy.MaxAge, policy.MaxSlots = d, math.MaxInt
	}
	reg, err := openRegistry()
	if err != nil {
		return err
	}
	removed, _, problems := reg.PruneNow(policy, time.Now())
	for _, name := range removed {
		fmt.Fprintln(os.Stdout, "removed", name)
	}
	warn(problems)
	return nil
}

// parseAge reads a duration as Go writes them (90m, 1h30m) or in days
// and weeks (7d, 2w).
func parseAge(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) || v*float64(unit) > math.MaxInt64 {
				return 0, fmt.Errorf("not a number of %s", map[string]string{"d": "days", "w": "weeks"}[suffix])
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration")
	}
	if d < 0 {
		return 0, fmt.Errorf("a duration cannot be negative")
	}
	return d, nil
}

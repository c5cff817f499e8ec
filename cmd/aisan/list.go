package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

const listUsage = `
Usage: aisan list [--running] [--json]

Lists the slots (jailed agents, one per launch) recorded in the state dir,
$AISAN_HOME (default ~/.aisan), sorted by name:

  SLOT      the name 'aisan kill' and 'aisan logs' take
  KIND      claude, codex, opencode or run
  STATE     running: its aisan is alive; background: the agent exited
            but processes it left run on in the jail ('aisan kill SLOT'
            ends them); orphaned: its aisan died but the jail still runs
            ('aisan kill --orphans' ends it); exited, with the exit status
            when it is known
  IDLE      time since the agent last printed anything
  WORKTREE  the directory it runs in
  UNIT      the systemd unit holding the jail (shown when a slot has one)
  TOKENS    a strict box's model tokens of its latest launch (input,
            output and cache), and its budget when it has one (shown
            when a strict slot is listed)

A registry file that cannot be read is named on stderr and skipped; it is
never deleted. Slots that ended stay listed until they are pruned ('aisan
prune').

Options:
  --running   only the live slots: running, background and orphaned
  --json      print a JSON array instead: every record field, plus
              "state" and "idle_seconds", and for a strict box "steer":
              its rate, budget, host allow-list and calls and tokens
              per backend
  -h, --help  show this help

Example:
  aisan list --running
  aisan list --json | jq -r '.[] | select(.state == "running") | .slot'
`

func runList(ctx context.Context, args []string) error {
	fs := newFlagSet("list", listUsage)
	asJSON := fs.Bool("json", false, "")
	running := fs.Bool("running", false, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	reg, err := openRegistry()
	if err != nil {
		return err
	}
	entries, problems := reg.List()
	warn(problems)
	if *running {
		entries = slices.DeleteFunc(entries, func(e slot.Entry) bool { return e.State == slot.Exited })
	}
	states := strictStates(entries)
	if *asJSON {
		return writeListJSON(os.Stdout, entries, states)
	}
	if err := writeListTable(os.Stdout, entries, states); err != nil {
		return err
	}
	if home, err := slot.Home(); err == nil {
		noteHeld(home)
	}
	return nil
}

// noteHeld tells 'aisan list' users that changes await review.
func noteHeld(home string) {
	sets, _ := held.Manifests(home, "")
	var slots []string
	for _, s := range sets {
		if (s.State == held.Held || s.State == held.Unreadable) && (len(slots) == 0 || slots[len(slots)-1] != s.Slot) {
			slots = append(slots, s.Slot)
		}
	}
	if len(slots) > 0 {
		fmt.Fprintf(os.Stderr, "aisan: note: strict boxes left changes to what host tools run, held for review in %s: 'aisan review SLOT' shows them\n", strings.Join(slots, ", "))
	}
}

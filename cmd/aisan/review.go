//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

const reviewUsage = `
Usage: aisan review [SLOT [--apply | --discard]]

A strict box works on copies of what host tools run or obey in its
repository without asking: the agents' project settings, hooks, MCP
servers and plugins (.claude/, .mcp.json, .codex/, opencode.json,
.opencode/), .envrc, .vscode/, .devcontainer/, and what git reads to
decide what to run (.git/config, hooks, info, modules, a core.hooksPath
in the repository). What the box changed there, and what it planted
deeper where nothing could be protected while it ran, is held aside when
it ends instead of reaching the repository.

Without SLOT, lists the slots with held changes. With SLOT, shows them as
a diff (a/ the repository's at the box's start, b/ the box's).

Options:
  --apply     write the held changes into the repository and drop them;
              a file the host changed since the box started is never
              overwritten: nothing is written, and both versions are shown;
              only what the last 'aisan review SLOT' showed is written:
              changes held since (a box of the slot ended) are shown
              instead, and nothing is written
  --discard   drop the held changes
  -h, --help  show this help

Example:
  aisan review myrepo-3f9c2a1b-claude
  aisan review myrepo-3f9c2a1b-claude --apply
`

func runReview(ctx context.Context, args []string) error {
	fs := newFlagSet("review", reviewUsage)
	apply := fs.Bool("apply", false, "")
	discard := fs.Bool("discard", false, "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(names) > 1 {
		return withHint(usageErr("review: give at most one slot"), "run 'aisan review --help' for usage")
	}
	if *apply && *discard {
		return withHint(usageErr("review: --apply and --discard exclude each other"), "read the diff first: aisan review SLOT")
	}
	home, err := slot.Home()
	if err != nil {
		return err
	}
	if reg, err := openRegistry(); err == nil {
		collectStale(reg)
	}
	if len(names) == 0 {
		if *apply || *discard {
			return withHint(usageErr("review: --apply and --discard need a slot"), "run 'aisan review' to list the slots with held changes")
		}
		return listHeld(home)
	}
	name := names[0]
	if !slot.ValidName(name) {
		return withHint(usageErr("review: %q is not a slot name", name), "run 'aisan review' to list the slots with held changes")
	}
	sets, problems := held.List(home, name)
	warn(problems)
	var ready, unreadable []held.Set
	for _, s := range sets {
		switch s.State {
		case held.Held:
			ready = append(ready, s)
		case held.Unreadable:
			unreadable = append(unreadable, s)
		}
	}
	if len(ready) == 0 && len(unreadable) == 0 {
		if len(sets) > 0 {
			return withHint(fmt.Errorf("slot %s holds nothing to review yet: its box is still running", name), "run it again once the box has ended ('aisan list' shows it)")
		}
		return withHint(fmt.Errorf("slot %s holds no changes", name), "run 'aisan review' to list the slots with held changes")
	}
	switch {
	case *discard:
		for _, s := range unreadable {
			if err := held.Discard(s.Dir); err != nil {
				return err
			}
		}
		for _, s := range ready {
			if err := held.Discard(s.Dir); err != nil {
				return err
			}
			for _, u := range s.Unchecked {
				if u.Parked != "" {
					fmt.Fprintf(os.Stderr, "aisan: warning: %s stays where the box's end renamed it aside, at %s: aisan could not read it; look into it, then remove it or rename it back\n", held.Quote(u.Path), held.Quote(u.Parked))
				}
			}
		}
		fmt.Printf("dropped the changes held for %s\n", name)
		return nil
	case *apply:
		if len(unreadable) > 0 {
			return unreadableSets(name, unreadable)
		}
		// Only what the user read: a set held since the last review (a
		// box of the slot still running then) is shown now, and nothing
		// is written until the user has read it.
		var unseen []held.Set
		for _, s := range ready {
			ok, err := held.WasShown(s.Dir)
			if err != nil {
				return err
			}
			if !ok {
				unseen = append(unseen, s)
			}
		}
		if len(unseen) > 0 {
			if err := showSets(name, unseen); err != nil {
				return err
			}
			return withHint(fmt.Errorf("not applied: 'aisan review %s' did not show what is above (a box of the slot ended after it, or it was not run); nothing was written", name),
				fmt.Sprintf("read it, then run 'aisan review %s --apply' again", name))
		}
		for _, s := range ready {
			err := held.ApplyShown(s.Dir)
			var ce *held.ConflictError
			if errors.As(err, &ce) {
				ce.RenderConflicts(os.Stdout)
			}
			if err != nil {
				return err
			}
			fmt.Printf("applied to %s: %s\n", held.Quote(s.Repo), strings.Join(relTo(s.Repo, s.Files), ", "))
		}
		return nil
	}
	if err := showSets(name, ready); err != nil {
		return err
	}
	if len(unreadable) > 0 {
		return unreadableSets(name, unreadable)
	}
	fmt.Fprintf(os.Stderr, "aisan: hint: 'aisan review %s --apply' writes these into the repository, --discard drops them\n", name)
	return nil
}

// unreadableSets is the error for held sets of slot name whose record
// cannot be read back: nothing of them can be shown, so nothing applied.
func unreadableSets(name string, sets []held.Set) error {
	var why []string
	for _, s := range sets {
		why = append(why, held.Quote(s.Problem.Error()))
	}
	return withHint(fmt.Errorf("slot %s holds changes aisan cannot read back (%s): the box left more than can be shown; nothing of it was applied", name, strings.Join(why, "; ")),
		fmt.Sprintf("'aisan review %s --discard' drops them (and every other change held for the slot)", name))
}

// showSets prints the held sets of slot name as a diff, each recorded as
// shown: --apply writes only what was.
func showSets(name string, sets []held.Set) error {
	for _, s := range sets {
		fmt.Printf("# %s: the box of %s (started %s) in %s\n", name, s.Kind, s.Start.Local().Format("2006-01-02 15:04"), held.Quote(s.Repo))
		for _, l := range held.UncheckedLines(s.Repo, name, s.Unchecked) {
			fmt.Printf("# %s\n", l)
		}
		if err := held.Show(os.Stdout, s.Dir); err != nil {
			return err
		}
	}
	return nil
}

// listHeld prints the slots with held changes.
func listHeld(home string) error {
	sets, problems := held.List(home, "")
	warn(problems)
	if len(sets) == 0 {
		fmt.Fprintln(os.Stderr, "aisan: no held changes")
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tSTATE\tSTARTED\tREPOSITORY\tFILES")
	for _, s := range sets {
		state := "held"
		switch s.State {
		case held.Unreadable:
			state = "unreadable"
		case held.Open:
			state = "running"
		}
		files := relTo(s.Repo, s.Files)
		if s.State == held.Unreadable {
			files = []string{"(too much to read back: --discard drops it)"}
		}
		if len(s.Unchecked) > 0 {
			files = append(files, fmt.Sprintf("(%d paths NOT CHECKED)", len(s.Unchecked)))
		}
		started, repo := s.Start.Local().Format("2006-01-02 15:04"), held.Quote(s.Repo)
		if s.State == held.Unreadable {
			started, repo = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Slot, state, started, repo, strings.Join(files, ", "))
	}
	return tw.Flush()
}

// relTo names files relative to repo, escaped: a box chose them, and
// they must not reach the terminal raw.
func relTo(repo string, files []string) []string {
	var out []string
	for _, f := range files {
		if r, err := filepath.Rel(repo, f); err == nil && !strings.HasPrefix(r, "..") {
			f = r
		}
		out = append(out, held.Quote(f))
	}
	return out
}

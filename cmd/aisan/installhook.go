//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aisan-dev/aisan/hooks"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
)

const installHookUsage = `
Usage: aisan install-hook [--claude] [--codex]

Registers the guard as a PreToolUse hook for the Bash tool, so that an
agent asking to run a name-based or broadcast kill (pkill -f, killall,
kill -1, ...) is refused with the reason and the command to use instead.

Claude Code reads the hook from ~/.claude/settings.json ($CLAUDE_CONFIG_DIR
if set), Codex from ~/.codex/hooks.json ($CODEX_HOME if set). The hook is
merged into the file: every other setting and hook is kept. The previous
content is saved to <file>.aisan-bak first, and the file is replaced
atomically. A file that is not valid JSON (comments, trailing commas) is
refused and left untouched; the other agent still gets its hook, and the
exit status is 1. Running the command again changes nothing.

The hook runs aisan-guard, the guard alone in a small binary that starts
fast, when it sits next to this aisan binary (an executable file with
the same owner, as 'make install' puts it); otherwise it runs this
binary's 'aisan guard', which decides the same. Either is named by its
absolute path: after moving the binaries, run install-hook again. A hook
of either form, or from another aisan binary, is replaced, not added.

Options:
  --claude     install for Claude Code (created if ~/.claude is missing)
  --codex      install for Codex (created if ~/.codex is missing)
  -h, --help   show this help

Without --claude or --codex, installs for each agent whose configuration
directory exists.

Codex runs a new hook only once you have trusted it: open /hooks in codex
and approve it (hooks delivered as managed hooks are trusted by policy).

Example:
  aisan install-hook --claude
`

const uninstallHookUsage = `
Usage: aisan uninstall-hook [--claude] [--codex]

Removes the hook that install-hook added, and only that, from
~/.claude/settings.json and ~/.codex/hooks.json. The previous content is
saved to <file>.aisan-bak first. A file that cannot be edited is left
untouched and reported; the other is still done, and the exit status is 1.

Options:
  --claude     uninstall from Claude Code only
  --codex      uninstall from Codex only
  -h, --help   show this help

Without --claude or --codex, uninstalls from both.

Example:
  aisan uninstall-hook
`

// hookFlags parses the agent selection shared by both commands.
func hookFlags(name, usage string, args []string) (claude, codex bool, err error) {
	fs := newFlagSet(name, usage)
	fs.BoolVar(&claude, "claude", false, "")
	fs.BoolVar(&codex, "codex", false, "")
	if err := parseFlags(fs, args); err != nil {
		return false, false, err
	}
	return claude, codex, noArgs(fs)
}

// selectAgents returns the agents named by the flags; with neither flag,
// every agent, or with onlyPresent those whose directory exists.
func selectAgents(claude, codex, onlyPresent bool) (picked, all []hooks.Agent, err error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, nil, err
	}
	all = hooks.Agents(home, os.Getenv)
	for _, a := range all {
		switch {
		case claude || codex:
			if (a.Name == "claude" && claude) || (a.Name == "codex" && codex) {
				picked = append(picked, a)
			}
		case !onlyPresent:
			picked = append(picked, a)
		case a.Present():
			picked = append(picked, a)
		}
	}
	return picked, all, nil
}

func runInstallHook(ctx context.Context, args []string) error {
	claude, codex, err := hookFlags("install-hook", installHookUsage, args)
	if err != nil {
		return err
	}
	agents, all, err := selectAgents(claude, codex, true)
	if err != nil {
		return err
	}
	if len(agents) == 0 {
		return withHint(fmt.Errorf("install-hook: neither %s nor %s exists", all[0].Dir, all[1].Dir),
			"to install anyway: aisan install-hook --claude (or --codex)")
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return fmt.Errorf("install-hook: locating the aisan binary: %w", err)
	}
	lean, err := hooks.LeanGuard(bin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "aisan: note: the hook runs 'aisan guard', which starts slower than the lean guard: %v\n", err)
	}
	h := hooks.Hook{Binary: bin, Guard: lean, Timeout: hooks.DefaultTimeout}
	return forEachAgent(agents, func(a hooks.Agent) error {
		res, err := hooks.InstallFile(a.File, h, protectedDirs()...)
		if err != nil {
			return err
		}
		switch {
		case !res.Changed:
			fmt.Printf("%s: the guard hook is already in %s; nothing changed\n", a.Name, res.Path)
		case res.Created:
			fmt.Printf("%s: created %s with the guard hook\n", a.Name, res.Path)
		default:
			fmt.Printf("%s: added the guard hook to %s (previous content in %s)\n", a.Name, res.Path, res.Backup)
		}
		if a.Name == "codex" && res.Changed {
			fmt.Println("codex: codex skips a new or changed hook until you trust it: open /hooks in codex and approve it (managed hooks are trusted by policy)")
		}
		return nil
	})
}

func runUninstallHook(ctx context.Context, args []string) error {
	claude, codex, err := hookFlags("uninstall-hook", uninstallHookUsage, args)
	if err != nil {
		return err
	}
	agents, _, err := selectAgents(claude, codex, false)
	if err != nil {
		return err
	}
	return forEachAgent(agents, func(a hooks.Agent) error {
		res, err := hooks.UninstallFile(a.File, protectedDirs()...)
		if err != nil {
			return err
		}
		if res.Changed {
			fmt.Printf("%s: removed the guard hook from %s (previous content in %s)\n", a.Name, res.Path, res.Backup)
		} else {
			fmt.Printf("%s: no guard hook in %s; nothing changed\n", a.Name, res.Path)
		}
		return nil
	})
}

// forEachAgent runs edit for every agent in turn: each agent's file is the
// user's own, so one that cannot be edited must not cost the other agent
// its hook. A failure is reported on stderr when it happens, under its
// agent's name; the exit status then says that something failed.
func forEachAgent(agents []hooks.Agent, edit func(hooks.Agent) error) error {
	failed := false
	for _, a := range agents {
		if err := edit(a); err != nil {
			report(hookError(fmt.Errorf("%s: %w", a.Name, err)), os.Stderr)
			failed = true
		}
	}
	if failed {
		return exitStatus(1)
	}
	return nil
}

// hookError adds the way out to a settings file we refused to edit.
func hookError(err error) error {
	var pe *hooks.ParseError
	if errors.As(err, &pe) {
		return withHint(err, "the file was left untouched: fix it (JSON allows no comments or trailing commas) and run the command again")
	}
	var se *hooks.ShapeError
	if errors.As(err, &se) {
		return withHint(err, `the file was left untouched: the agent reads an object there, with "hooks" an object; fix it and run the command again`)
	}
	return err
}

// protectedDirs are aisan's own directories (the state dir, a ~/.aisan of
// another invocation's, the run dir, the configuration dirs), which every
// jail sees read-only: a settings file a jail turned into a link to one
// of them is not written through (see hooks.InstallFile).
func protectedDirs() []string {
	home, _ := os.UserHomeDir()
	ah, _ := slot.Home()
	h := jail.Host{Env: os.Environ(), Home: home, AisanHome: ah, RuntimeDir: jail.RuntimeDir(os.Getenv)}
	h.GatherStateDirs()
	out := h.StateDirs
	// Those that do not exist yet too: a link may lead to where they
	// will be.
	if ah != "" {
		out = append(out, ah)
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".aisan"))
	}
	if rd := jail.UserRunDir(); rd != "" {
		out = append(out, rd)
	}
	return out
}

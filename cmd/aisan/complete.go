package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/shell"
)

const completionUsage = `
Usage: aisan completion bash|zsh|fish

Prints the shell completion for aisan: its commands, their options and
the values those take, and the slot names 'aisan kill' and 'aisan logs'
take (live ones for kill). 'aisan shell-init' includes it. To load it
alone, put one of these in your shell's startup file:

  source <(aisan completion bash)     # ~/.bashrc
  source <(aisan completion zsh)      # ~/.zshrc
  aisan completion fish | source      # ~/.config/fish/config.fish

At each Tab the shell asks aisan itself ('aisan __complete'), which reads
the same command table and help texts that --help prints: what it offers
always matches the aisan on your PATH.

Options:
  -h, --help   show this help

Example:
  aisan completion zsh > ~/.zsh/functions/_aisan
`

// completeCommand is the hidden command the completion scripts call.
const completeCommand = "__complete"

func runCompletion(_ context.Context, args []string) error {
	fs := newFlagSet("completion", completionUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hint := "aisan completion bash|zsh|fish"
	switch fs.NArg() {
	case 0:
		return withHint(usageErr("completion: no shell given"), hint)
	case 1:
	default:
		return withHint(usageErr("completion: unexpected argument %q", fs.Arg(1)), hint)
	}
	script, err := shell.Completion(fs.Arg(0))
	if err != nil {
		return withHint(usageErr("completion: %v", err), hint)
	}
	fmt.Print(script)
	return nil
}

// runComplete answers a completion script: args are the words after
// "aisan" up to the cursor, the last being the word under completion
// ("" at a new word). It prints one candidate a line, "VALUE\tWHAT",
// then one line saying what the shell should add on its own:
// ":files", ":commands" (executables) or ":none".
func runComplete(_ context.Context, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		args = []string{""}
	}
	c := completer{live: liveSlots, all: allSlots}
	cands, then := c.complete(args[:len(args)-1], args[len(args)-1])
	if then == thenHandOver {
		return errHandOver
	}
	w := io.Writer(os.Stdout)
	for _, cd := range cands {
		// A description is one line of text, whatever the help says.
		fmt.Fprintf(w, "%s\t%s\n", cd.value, strings.Join(strings.Fields(cd.what), " "))
	}
	fmt.Fprintf(w, ":%s\n", then)
	return nil
}

// candidate is one completion and what it is.
type candidate struct{ value, what string }

// fallback is what the shell adds to the candidates on its own.
type fallback string

const (
	thenNone     fallback = "none"
	thenFiles    fallback = "files"
	thenCommands fallback = "commands"
	// thenHandOver: the command is not linked into the front; the full
	// binary completes it (handover.go).
	thenHandOver fallback = ""
)

// completer completes aisan command lines. The slot lists are functions
// so that only a completion that needs them reads the state dir.
type completer struct {
	live, all func() []candidate
}

// complete returns the candidates for cur after the words before it.
func (c completer) complete(before []string, cur string) ([]candidate, fallback) {
	if len(before) == 0 {
		if strings.HasPrefix(cur, "-") {
			return filter([]candidate{{"--help", "show the list of commands"}, {"--version", "print the version"}}, cur), thenNone
		}
		return filter(commandCandidates(), cur), thenNone
	}
	cmd, ok := lookupCommand(before[0])
	if !ok {
		return nil, thenFiles
	}
	return c.completeArgs(cmd, describe(cmd), before[1:], cur)
}

// completeArgs completes the arguments of one command, as its help
// describes them.
func (c completer) completeArgs(cmd command, d helpDoc, before []string, cur string) ([]candidate, fallback) {
	if d.handedOver {
		return nil, thenHandOver
	}
	// Walk what was typed: options (and the values they took) and
	// positional arguments. A launcher's options end at its first
	// argument; the others take options anywhere before "--".
	launcher := isLauncher(cmd.name)
	var pos []string
	optionsDone := false
	for i := 0; i < len(before); i++ {
		w := before[i]
		switch {
		case optionsDone:
			pos = append(pos, w)
		case w == "--":
			optionsDone = true
		case strings.HasPrefix(w, "-") && w != "-":
			if o, ok := d.option(w); ok && o.takesValue && !strings.Contains(w, "=") {
				i++
			}
		default:
			pos = append(pos, w)
			if launcher {
				optionsDone = true
			}
		}
	}
	// The value of an option.
	if n := len(before); n > 0 && !optionsDone {
		if o, ok := d.option(before[n-1]); ok && o.takesValue && !strings.Contains(before[n-1], "=") && strings.HasPrefix(before[n-1], "-") {
			return c.values(cmd, o.metavar, cur)
		}
	}
	if name, val, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(cur, "-") && !optionsDone {
		if o, found := d.option(name); found && o.takesValue {
			cands, then := c.values(cmd, o.metavar, val)
			for i := range cands {
				cands[i].value = name + "=" + cands[i].value
			}
			return cands, then
		}
	}
	// explain KIND …: after the kind, the launcher's own options.
	if len(pos) > 0 && placeholderAt(d, 0) == "KIND" {
		if l, ok := lookupCommand(pos[0]); ok && isLauncher(l.name) {
			return c.completeArgs(l, describe(l), afterFirst(before, pos[0]), cur)
		}
	}
	if strings.HasPrefix(cur, "-") && !optionsDone {
		var cands []candidate
		for _, o := range d.options {
			for _, n := range o.names {
				if strings.HasPrefix(n, "--") || len(o.names) == 1 {
					cands = append(cands, candidate{n, o.text})
				}
			}
		}
		return filter(cands, cur), thenNone
	}
	return c.values(cmd, placeholderAt(d, len(pos)), cur)
}

// afterFirst returns the words after the first occurrence of w.
func afterFirst(words []string, w string) []string {
	if i := slices.Index(words, w); i >= 0 {
		return words[i+1:]
	}
	return nil
}

// placeholderAt is the synopsis' placeholder for the i-th positional
// argument (the last one repeats when it ends in "..."), "" when there is
// none. Of several synopsis lines, the first with one there wins.
func placeholderAt(d helpDoc, i int) string {
	for _, args := range d.positionals() {
		switch {
		case i < len(args):
			return args[i]
		case len(args) > 0 && strings.HasSuffix(args[len(args)-1], "..."):
			return args[len(args)-1]
		}
	}
	return ""
}

// values completes a value named by placeholder (an option's metavar or
// an argument of the synopsis).
func (c completer) values(cmd command, placeholder, cur string) ([]candidate, fallback) {
	p := strings.TrimSuffix(placeholder, "...")
	switch {
	case p == "SLOT" && cmd.name == "kill":
		return filter(c.live(), cur), thenNone
	case p == "SLOT":
		return filter(c.all(), cur), thenNone
	case p == "KIND":
		var cands []candidate
		for _, l := range commands {
			if isLauncher(l.name) {
				cands = append(cands, candidate{l.name, l.short})
			}
		}
		return filter(cands, cur), thenNone
	case p == "SPEC":
		// A shipped spec by name, or a file.
		var cands []candidate
		for _, n := range bindspec.Shipped() {
			cands = append(cands, candidate{n, "the shipped bind spec for " + n})
		}
		return filter(cands, cur), thenFiles
	case p == "COMMAND" && cmd.name == "help":
		return filter(commandCandidates(), cur), thenNone
	case p == "COMMAND":
		return nil, thenCommands
	case p == "SIG":
		var cands []candidate
		for _, s := range []string{"TERM", "INT", "HUP", "QUIT", "KILL", "USR1", "USR2"} {
			cands = append(cands, candidate{s, "SIG" + s})
		}
		return filter(cands, cur), thenNone
	case strings.Contains(p, "FILE") || strings.Contains(p, "SOCKET") || strings.Contains(p, "."):
		return nil, thenFiles
	case literalValues().MatchString(p):
		var cands []candidate
		for _, v := range strings.Split(p, "|") {
			cands = append(cands, candidate{v, ""})
		}
		return filter(cands, cur), thenNone
	case p == "ARG" || p == "":
		return nil, thenFiles
	}
	// DURATION, N, SIZE, PATTERN, NAME[=VALUE]…: nothing to offer.
	return nil, thenNone
}

// isLauncher reports whether name runs an agent or a command in a jail.
func isLauncher(name string) bool {
	switch name {
	case "run", "claude", "codex", "opencode":
		return true
	}
	return false
}

// lookupCommand finds a visible command by name.
func lookupCommand(name string) (command, bool) {
	c, ok := findCommand(name)
	return c, ok && !c.hidden
}

// commandCandidates are the visible commands.
func commandCandidates() []candidate {
	var cands []candidate
	for _, c := range commands {
		if !c.hidden {
			cands = append(cands, candidate{c.name, c.short})
		}
	}
	return cands
}

// filter keeps the candidates that start with prefix.
func filter(cands []candidate, prefix string) []candidate {
	var out []candidate
	for _, c := range cands {
		if strings.HasPrefix(c.value, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// liveSlots and allSlots read the registry for slot names; a state dir
// that cannot be read completes nothing.
func liveSlots() []candidate {
	return slotCandidates(func(e slot.Entry) bool { return e.State != slot.Exited })
}

func allSlots() []candidate { return slotCandidates(func(slot.Entry) bool { return true }) }

func slotCandidates(keep func(slot.Entry) bool) []candidate {
	home, err := slot.Home()
	if err != nil {
		return nil
	}
	reg, err := slot.Open(home)
	if err != nil {
		return nil
	}
	entries, _ := reg.List()
	var cands []candidate
	for _, e := range entries {
		if keep(e) {
			cands = append(cands, candidate{e.Slot, string(e.State) + " " + e.Kind + " in " + slot.Printable(e.Worktree)})
		}
	}
	return cands
}

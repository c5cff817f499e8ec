// Command aisan runs AI coding agents inside bubblewrap jails.
//
// This file is the whole of the command's machinery: a table of
// subcommands, one file per subcommand, and the mapping from errors to
// exit codes and "aisan: error:" / "aisan: hint:" lines. Logic lives in
// the packages; nothing here decides policy.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/inert"
)

// command is one row of the subcommand table.
type command struct {
	name   string
	short  string
	hidden bool
	run    func(ctx context.Context, args []string) error
	// printsOnly: the command reads and prints, and changes nothing, so
	// a reader that goes away may end it as it ends cat (SIGPIPE). The
	// others turn SIGPIPE into an error and a cancelled context, so that
	// a launch outlives a closed pipe and cleans up after its jail.
	// Registering that handler starts a runtime thread and waits for it:
	// a tenth of what 'aisan version' takes.
	printsOnly bool
}

var commands []command

func init() {
	// Assigned in init so that run functions may refer to the table (help).
	commands = []command{
		{name: "run", short: "run any command in a deny-list jail", run: runRun},
		{name: "claude", short: "run Claude Code in a jail", run: runClaude},
		{name: "codex", short: "run Codex in a jail", run: runCodex},
		{name: "opencode", short: "run opencode in a jail", run: runOpencode},
		{name: "explain", short: "print the jail a launcher would build, and exit", run: runExplain},
		{name: "list", short: "list slots (jailed agents) and their state", run: runList, printsOnly: true},
		{name: "kill", short: "kill one slot's jail, every live slot, or orphans", run: runKill},
		{name: "logs", short: "print a slot's transcript", run: runLogs},
		{name: "allow", short: "grant a running strict box a host, budget or rate", run: runAllow},
		{name: "deny", short: "take a host off a running strict box's allow-list", run: runDeny},
		{name: "report", short: "summarise one launch of a slot: files, hosts, tokens, processes", run: runReport},
		{name: "review", short: "show, apply or drop what strict boxes changed of what host tools run", run: runReview},
		{name: "prune", short: "remove ended slots and their transcripts now", run: runPrune},
		{name: "trust", short: "approve a bind spec or egress file kept where a box can write", run: runTrust},
		{name: "config", short: "print the launch options in effect here and where each comes from", run: runConfig},
		{name: "shell-init", short: "print shell functions that jail claude, codex, opencode", run: runShellInit, printsOnly: true},
		{name: "completion", short: "print the shell completion for aisan", run: runCompletion, printsOnly: true},
		{name: "spawn-service", short: "run a headless, time-capped command in a jail", run: runSpawnService},
		{name: "watch", short: "supervise slots and services (runs as a user unit)", run: runWatch},
		{name: "install-service", short: "install and enable the aisan-watch user unit", run: runInstallService},
		{name: "uninstall-service", short: "stop, disable and remove the aisan-watch user unit", run: runUninstallService},
		{name: "guard", short: "PreToolUse hook: refuse name-based and broadcast kills", run: runGuard},
		{name: "install-hook", short: "register the guard hook with Claude Code and Codex", run: runInstallHook},
		{name: "uninstall-hook", short: "remove the guard hook from agent settings", run: runUninstallHook},
		{name: "preflight", short: "prove on this host that the jail holds", run: runPreflight},
		{name: "version", short: "print the version", run: runVersion, printsOnly: true},
		{name: "help", short: "show help for a command", run: runHelp, printsOnly: true},
		// Internal steps of a launch. They take no user input.
		{name: keepCommand, hidden: true, run: runKeep},
		{name: receiptCommand, hidden: true, run: runReceipt},
		{name: busRelayCommand, hidden: true, run: runBusRelay},
		{name: completeCommand, hidden: true, run: runComplete, printsOnly: true},
	}
}

func main() {
	os.Exit(mainWithCode(os.Args[1:], os.Stderr))
}

func mainWithCode(args []string, stderr io.Writer) int {
	// The in-jail init is entered by exec'ing our own binary through a file
	// descriptor; it has its own argv convention and must not parse flags.
	if isInit() {
		return runInit()
	}
	ctx := context.Background()
	if !printsOnly(args) {
		var cancel context.CancelFunc
		ctx, cancel = signal.NotifyContext(ctx, syscall.SIGPIPE)
		defer cancel()
	}
	err := dispatch(ctx, args)
	if errors.Is(err, errHandOver) {
		err = execFull(args)
	}
	return report(err, stderr)
}

// helpFlags and versionFlags are what aisan takes in a command's place
// for its usage and its version.
var (
	helpFlags    = []string{"-h", "-help", "--help"}
	versionFlags = []string{"-version", "--version"}
)

// findCommand is the table's row called name, hidden rows included.
func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// printsOnly reports whether args name a command that only prints
// (command.printsOnly), the flags for help and the version included.
func printsOnly(args []string) bool {
	if len(args) == 0 || slices.Contains(helpFlags, args[0]) || slices.Contains(versionFlags, args[0]) {
		return true // the usage (on stderr without a command), the version
	}
	c, ok := findCommand(args[0])
	return !ok || c.printsOnly // an unknown command's error only prints
}

func dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		printUsage(os.Stderr)
		return usageErr("no command given")
	}
	name := args[0]
	switch {
	case slices.Contains(helpFlags, name):
		printUsage(os.Stdout)
		return nil
	case slices.Contains(versionFlags, name):
		return runVersion(ctx, nil)
	}
	if c, ok := findCommand(name); ok {
		return c.run(ctx, args[1:])
	}
	return unknownCommand("", name)
}

// unknownCommand is the error for a command name aisan does not have,
// with the nearest one it has when there is one (context is "help: "
// for 'aisan help NAME').
func unknownCommand(context, name string) error {
	var names []string
	for _, c := range commands {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	if n := nearest(name, names); n != "" {
		return withHint(usageErr("%sunknown command %q; did you mean %q?", context, name, n), "run 'aisan help' for the list of commands")
	}
	return withHint(usageErr("%sunknown command %q", context, name), "run 'aisan help' for the list of commands")
}

// mainSynopsis and mainIntro open 'aisan --help' and the manual page.
const (
	mainSynopsis = "aisan <command> [options] [--] [args...]"
	mainIntro    = `
aisan runs AI coding agents (Claude Code, Codex, opencode) in bubblewrap
jails: everything works as outside, except that the agent cannot see or
signal processes outside its jail, write cgroups, or reach systemd.

With --strict (or AISAN_STRICT=1) a launcher builds an allow-list box
instead: the repository, system directories and what bind specs name; no
network route and no credential inside; the model is reached through a
proxy on the host that checks each request and adds the credential.
`
)

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n%s\nCommands:\n", mainSynopsis, mainIntro)
	width := 0
	for _, c := range commands {
		if !c.hidden {
			width = max(width, len(c.name))
		}
	}
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.short)
		}
	}
	fmt.Fprint(w, `
Run 'aisan help <command>' or 'aisan <command> --help' for a command's
options, and 'aisan help --man' for the manual page.
`)
}

// report prints err the way every aisan command does and returns the exit
// code: 0 for success, 2 for usage errors, the propagated status for an
// agent's exit, 1 otherwise.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	if errors.Is(err, errHelpShown) {
		return 0
	}
	printError(err, stderr)
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	var c codedError
	if errors.As(err, &c) {
		return c.Code()
	}
	return 1
}

// printError prints err as "aisan: error:" and "aisan: hint:" lines; the
// errors of an errors.Join (a command that failed on several arguments)
// each get their own error line and hints.
func printError(err error, stderr io.Writer) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printError(e, stderr)
		}
		return
	}
	fmt.Fprintf(stderr, "aisan: error: %v\n", err)
	// Hints from anywhere in the chain: a package error's own Hints
	// method, or lines added with withHint.
	var h interface{ Hints() []string }
	if errors.As(err, &h) {
		for _, line := range h.Hints() {
			fmt.Fprintf(stderr, "aisan: hint: %s\n", line)
		}
	}
}

// joinErrors returns the one error as it is, or all of them joined
// (printError gives each its own lines and hints); nil for none.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// codedError lets a package error choose its own exit code.
type codedError interface {
	error
	Code() int
}

// exitStatus carries an agent's exit status through the error path without
// printing anything.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// errHelpShown is returned after a command printed its usage for -h.
var errHelpShown = errors.New("help shown")

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// say prints what the packages have to tell the user, in aisan's one
// format: "aisan: warning: …", "aisan: note: …", "aisan: hint: …", or
// "aisan: …" for a plain line.
func say(w io.Writer) jail.Say {
	return func(level jail.Level, text string) {
		// Notes name what a box may have written (a go.mod's paths, a
		// link's target, a file's name): nothing in them may act on the
		// terminal.
		text = inert.Lines(text)
		if level == jail.Plain {
			fmt.Fprintf(w, "aisan: %s\n", text)
			return
		}
		fmt.Fprintf(w, "aisan: %s: %s\n", level, text)
	}
}

// withHint adds fix-it lines to err (see [jail.HintedError]).
func withHint(err error, hints ...string) error {
	return jail.WithHints(err, hints...)
}

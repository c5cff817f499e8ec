package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aisan-dev/aisan/jail/shared/sibling"
	"github.com/aisan-dev/aisan/shell"
)

const shellInitUsage = `
Usage: aisan shell-init bash|zsh|fish

Prints shell functions named claude, codex and opencode that run the
agent in an aisan jail ('aisan claude -- ARG...'), every argument passed
through unchanged, and aisan's own completion ('aisan completion').

The functions run this aisan by its absolute path, never the first aisan
on PATH: a jail can write the directories of yours on PATH
(~/.local/bin, say), and an aisan it put there would run unjailed at
your next claude. Load them from your shell's startup file, naming aisan
by its path there too ('command -v aisan' prints it), and run
shell-init again (open a new shell) after moving aisan:

  eval "$(/usr/local/bin/aisan shell-init bash)"     # ~/.bashrc
  eval "$(/usr/local/bin/aisan shell-init zsh)"      # ~/.zshrc
  /usr/local/bin/aisan shell-init fish | source      # ~/.config/fish/config.fish

Inside a jail (AISAN_JAIL is set) the functions run the real command, so
an agent that starts another agent does not nest jails. To run an agent
unjailed on the host, set NO_AISAN:

  NO_AISAN=1 claude --version

An alias with the same name wins over these functions; remove it.

Options:
  -h, --help   show this help

Example:
  echo "eval \"\$($(command -v aisan) shell-init zsh)\"" >> ~/.zshrc
`

func runShellInit(ctx context.Context, args []string) error {
	fs := newFlagSet("shell-init", shellInitUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hint := "aisan shell-init bash|zsh|fish"
	switch fs.NArg() {
	case 0:
		return withHint(usageErr("shell-init: no shell given"), hint)
	case 1:
	default:
		return withHint(usageErr("shell-init: unexpected argument %q", fs.Arg(1)), hint)
	}
	script, err := shell.Script(fs.Arg(0), functionsAisan())
	if err != nil {
		return withHint(usageErr("shell-init: %v", err), hint)
	}
	completion, err := shell.Completion(fs.Arg(0))
	if err != nil {
		return withHint(usageErr("shell-init: %v", err), hint)
	}
	fmt.Print(script, "\n", completion)
	return nil
}

// functionsAisan is the aisan the shell functions run: this binary, by
// its real path, or the front beside it when this is the full build (it
// starts faster, and hands it what it does not link). When the binary
// cannot be found, the functions look "aisan" up on PATH as they used to,
// and say so: functions that fail to load would leave claude unjailed.
func functionsAisan() string {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "aisan shell-init: cannot find its own binary (%v): the functions will run the first aisan on PATH; run shell-init by its absolute path\n", err)
		return ""
	}
	return sibling.Front(self)
}

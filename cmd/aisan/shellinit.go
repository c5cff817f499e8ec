package main

import (
	"context"
	"fmt"

	"github.com/aisan-dev/aisan/shell"
)

const shellInitUsage = `
Usage: aisan shell-init bash|zsh|fish

Prints shell functions named claude, codex and opencode that run the
agent in an aisan jail ('aisan claude -- ARG...'), every argument passed
through unchanged, and aisan's own completion ('aisan completion'). Load
them from your shell's startup file:

  eval "$(aisan shell-init bash)"     # ~/.bashrc
  eval "$(aisan shell-init zsh)"      # ~/.zshrc
  aisan shell-init fish | source      # ~/.config/fish/config.fish

Inside a jail (AISAN_JAIL is set) the functions run the real command, so
an agent that starts another agent does not nest jails. To run an agent
unjailed on the host, set NO_AISAN:

  NO_AISAN=1 claude --version

An alias with the same name wins over these functions; remove it.

Options:
  -h, --help   show this help

Example:
  echo 'eval "$(aisan shell-init zsh)"' >> ~/.zshrc
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
	script, err := shell.Script(fs.Arg(0))
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

// Package shell holds the shell functions that make the agent commands a
// user already types — claude, codex, opencode — start inside an aisan
// jail, and hands them to "aisan shell-init".
//
// aisan.sh serves bash and zsh, aisan.fish serves fish. Each function
// calls "aisan <kind> -- <args>", passing every argument through as one
// word, byte for byte: a prompt given as "$(cat FILE)", newlines, quotes
// and dollar signs included, must reach the agent unchanged. The
// functions step aside (run the real command) inside a jail, where
// AISAN_JAIL is set, so an agent that starts another agent does not try
// to nest jails, and on the host when NO_AISAN is set to anything but the
// empty string.
//
// complete.bash, complete.zsh and complete.fish complete aisan's own
// command line ("aisan completion", and appended by "aisan shell-init"):
// at each Tab they ask "aisan __complete", so the candidates come from
// the command table of the aisan on PATH, never from a copy.
//
// The scripts are embedded so that the binary and the functions it prints
// always come from the same version.
package shell

import (
	_ "embed"
	"fmt"
)

//go:embed aisan.sh
var posix string

//go:embed aisan.fish
var fish string

// The completion scripts: each asks "aisan __complete" at every Tab, so
// what they offer comes from the command table of the aisan on PATH.
var (
	//go:embed complete.bash
	completeBash string
	//go:embed complete.zsh
	completeZsh string
	//go:embed complete.fish
	completeFish string
)

// Shells lists the shells [Script] knows, in the order help shows them.
var Shells = []string{"bash", "zsh", "fish"}

// Script returns the integration script for the named shell.
func Script(name string) (string, error) {
	switch name {
	case "bash", "zsh":
		return posix, nil
	case "fish":
		return fish, nil
	}
	return "", fmt.Errorf("no shell integration for %q; supported shells: bash, zsh, fish", name)
}

// Completion returns the completion script for the named shell.
func Completion(name string) (string, error) {
	switch name {
	case "bash":
		return completeBash, nil
	case "zsh":
		return completeZsh, nil
	case "fish":
		return completeFish, nil
	}
	return "", fmt.Errorf("no completion for %q; supported shells: bash, zsh, fish", name)
}

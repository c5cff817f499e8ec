// Package shell holds the shell functions that make the agent commands a
// user already types — claude, codex, opencode — start inside an aisan
// jail, and hands them to "aisan shell-init".
//
// aisan.sh serves bash and zsh, aisan.fish serves fish. Each function
// calls "aisan <kind> -- <args>", passing every argument through as one
// word, byte for byte. It names aisan by the absolute path [Script] is
// given (that of the aisan printing the functions), never by a lookup on
// PATH when the agent starts: a deny-list jail writes where the user
// writes, ~/.local/bin included, and an aisan it put earlier on PATH
// would otherwise run, unjailed, at the user's next claude.
// The arguments pass through intact: a prompt given as "$(cat FILE)",
// newlines, quotes and dollar signs included, must reach the agent unchanged. The
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
	"path/filepath"
	"strings"
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

// runAisan is how the functions in the embedded scripts run aisan; Script
// puts the binary's path in place of the name.
const runAisan = "command aisan "

// Script returns the integration script for the named shell, its
// functions running the aisan binary at the absolute path aisan, or the
// first aisan on PATH when aisan is "" (the caller's own path unknown).
func Script(name, aisan string) (string, error) {
	if aisan != "" && !filepath.IsAbs(aisan) {
		return "", fmt.Errorf("the aisan the functions run, %q, is not an absolute path", aisan)
	}
	var src, quoted string
	switch name {
	case "bash", "zsh":
		src, quoted = posix, quotePOSIX(aisan)
	case "fish":
		src, quoted = fish, quoteFish(aisan)
	default:
		return "", fmt.Errorf("no shell integration for %q; supported shells: bash, zsh, fish", name)
	}
	if strings.Count(src, runAisan) != 1 {
		return "", fmt.Errorf("bug: the %s script runs aisan %d times, want once", name, strings.Count(src, runAisan))
	}
	if aisan == "" {
		return src, nil
	}
	return strings.Replace(src, runAisan, "command "+quoted+" ", 1), nil
}

// quotePOSIX quotes s as one word for bash and zsh: single quotes keep
// every byte, a single quote itself is closed, escaped and reopened.
func quotePOSIX(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quoteFish quotes s as one word for fish, whose single quotes give
// meaning to a backslash before a quote or a backslash, and to nothing
// else.
func quoteFish(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
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

// Command aisan-guard is the PreToolUse hook that 'aisan install-hook'
// registers with Claude Code and Codex: the same hook as 'aisan guard'
// ([guard.RunHook]), in a binary of its own.
//
// # Why a second binary
//
// The agents start the hook as a new process before every shell command,
// so its start-up is paid on each tool call. The aisan binary links
// everything its launchers need (the egress proxy, HTTP/2, TOML, a
// terminal emulator, D-Bus), and the loader's and runtime's share of
// starting a binary grows with its size. This one links only the guard,
// golang.org/x/sys/unix and the standard library (a test in cmd/aisan
// holds it to that), which keeps a whole run within the few milliseconds
// that 'make bench' checks. It decides exactly as 'aisan guard' does:
// both call the one function.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/aisan-dev/aisan/guard"
)

const usage = `Usage: aisan-guard < hook-input.json

The guard hook that 'aisan install-hook' registers with Claude Code and
Codex, in a small binary that starts fast. It reads the PreToolUse hook's
JSON input on stdin and refuses name-based and broadcast kills exactly as
'aisan guard' does: on allow it exits 0 and prints nothing; on deny it
prints the hook's deny JSON on stdout, the reason on stderr, and exits 2.
Unreadable input, a terminal on stdin and internal errors are denied too.

See 'aisan guard --help' for what is refused and why.

Example:
  echo '{"tool_name":"Bash","tool_input":{"command":"pkill node"}}' | aisan-guard
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run returns the exit status. A stray argument means the hook is
// misconfigured, and it still exits 2: the agents let a call through on
// any other status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return guard.RunHook(stdin, stdout, stderr, os.Getenv("AISAN_JAIL"))
	}
	for _, a := range args {
		if a != "-h" && a != "-help" && a != "--help" {
			fmt.Fprintf(stderr, "aisan-guard: error: unexpected argument %q\naisan-guard: hint: run 'aisan-guard --help' for usage\n", a)
			return guard.HookDeny
		}
	}
	fmt.Fprint(stdout, usage)
	return 0
}

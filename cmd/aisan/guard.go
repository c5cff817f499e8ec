//go:build !aisanfront

package main

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/guard"
)

const guardUsage = `
Usage: aisan guard < hook-input.json

The PreToolUse hook that Claude Code and Codex run before each shell
command. It reads the hook's JSON input on stdin and refuses commands that
kill processes by name or by broadcast: pkill, killall, kill -1, kill 0,
kill of a negative process group, kill fed from pgrep/pidof/ps/lsof,
systemctl --user stop|kill|restart, loginctl terminate-*, tmux
kill-server and the like, however they are wrapped or nested.

On allow it exits 0 and prints nothing. On deny it prints the hook's deny
JSON on stdout, the reason on stderr, and exits 2. Input that is not valid
hook JSON, input over 1 MiB, a terminal on stdin, and internal errors are
denied too, since the agents run a tool call whenever the hook fails.
Tools other than Bash (or Codex's shell) are allowed without a look.

The reason names the sanctioned alternative: kill <PID> after
pgrep -a <pattern> inside the jail, or aisan kill <slot> from the user's
shell. The slot name comes from $AISAN_JAIL when set.

'aisan install-hook' registers aisan-guard with the agents when it sits
next to aisan: a small binary that runs this same hook and starts faster.
Otherwise it registers this command.

Example:
  echo '{"tool_name":"Bash","tool_input":{"command":"pkill node"}}' | aisan guard
`

func runGuard(ctx context.Context, args []string) error {
	fs := newFlagSet("guard", guardUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	// The lean aisan-guard binary runs the same function: one hook, two
	// entry points.
	if code := guard.RunHook(os.Stdin, os.Stdout, os.Stderr, os.Getenv("AISAN_JAIL")); code != guard.HookAllow {
		return exitStatus(code)
	}
	return nil
}

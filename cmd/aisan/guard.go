package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

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

'aisan install-hook' registers this command with the agents.

Example:
  echo '{"tool_name":"Bash","tool_input":{"command":"pkill node"}}' | aisan guard
`

// guardReadTimeout bounds the wait for the hook input. The agents write it
// and close stdin at once; the bound only matters if something holds the
// pipe open, and it must stay well under the hook's own timeout so that
// the deny lands before the agent gives up on the hook (which would let
// the call through).
var guardReadTimeout = 3 * time.Second

func runGuard(ctx context.Context, args []string) error {
	fs := newFlagSet("guard", guardUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return guardHook(os.Stdin, os.Stdout, os.Stderr, os.Getenv("AISAN_JAIL"))
}

// guardHook is the whole hook: read, decide, answer. Every failure on the
// way is a deny.
func guardHook(stdin *os.File, stdout, stderr io.Writer, slot string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = guardDeny(stdout, stderr, fmt.Sprintf("aisan guard failed with an internal error (%v) and refuses what it cannot check", r))
		}
	}()
	if isTerminal(stdin) {
		return guardDeny(stdout, stderr, "aisan guard reads a PreToolUse hook's JSON input on stdin, and stdin is a terminal; it is meant to be run by Claude Code or Codex (see 'aisan guard --help')")
	}
	data, err := readHookInput(stdin, guardReadTimeout)
	if err != nil {
		return guardDeny(stdout, stderr, fmt.Sprintf("aisan guard could not read the hook input (%v) and refuses what it cannot check", err))
	}
	in, err := guard.ParseHookInput(data)
	if err != nil {
		return guardDeny(stdout, stderr, fmt.Sprintf("aisan guard could not understand the hook input (%v) and refuses what it cannot check", err))
	}
	if !in.RunsShell() {
		return nil
	}
	v := guard.New(guard.WithSlot(slot)).Check(in.Command)
	if v.Allow {
		return nil
	}
	return guardDeny(stdout, stderr, v.Reason)
}

// guardDeny writes a deny in both forms the agents read (JSON on stdout,
// text on stderr) and makes the process exit 2, which both agents treat
// as a block.
func guardDeny(stdout, stderr io.Writer, reason string) error {
	stdout.Write(guard.DenyOutput(reason))
	fmt.Fprintln(stderr, reason)
	return exitStatus(2)
}

// readHookInput reads stdin to EOF, at most guard.MaxHookInput bytes, and
// gives up after timeout. On timeout the reading goroutine stays blocked;
// the process exits right after, so nothing leaks for long.
func readHookInput(r io.Reader, timeout time.Duration) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, guard.MaxHookInput+1))
		done <- result{data, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("read stdin: %w", res.err)
		}
		if len(res.data) > guard.MaxHookInput {
			return nil, guard.ErrHookInputTooLarge
		}
		return res.data, nil
	case <-timer.C:
		return nil, fmt.Errorf("no end of input on stdin after %v", timeout)
	}
}

// isTerminal reports whether f is a terminal. It never reads from f.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

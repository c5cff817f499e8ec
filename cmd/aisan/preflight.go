//go:build !aisanfront

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aisan-dev/aisan/preflight"
)

const preflightUsage = `
Usage: aisan preflight [--strict] [--json | --quiet]

Proves on this host that the jail holds, and says how to fix what does
not. Each check prints one line: ok, warn or FAIL, its name and what it
found; every warn and FAIL is followed by a "fix:" line with the command
that fixes it on this distribution.

It checks the dependencies (bwrap, xdg-dbus-proxy, a systemd user
manager, git), runs bwrap once to prove user namespaces work, then
launches one real jail, the way agents are launched, and from inside it
tries the four denials (foreign PIDs, cgroup writes, systemd over the
session bus, the user manager's socket) and the transparency promises
($HOME, /tmp, agent sockets, allowed bus names). Last come the hazards:
an abstract bus address, a state dir inside a project, the guard hook or
shell integration missing, a supervisor unit a jail could add lines to,
undelegated cgroup controllers, running as root.

The last line is "preflight: ok" (exit status 0) or "preflight: N
problems" (exit status 1).

With --strict it also checks strict mode's model backends: for each the
host has a credential for (the Claude login, the Codex login), that it is
there, parses and has not expired (naming the file, never its content),
that the refresher's lock can be taken, and that the upstream answers
one request (AISAN_ANTHROPIC_UPSTREAM and AISAN_CODEX_UPSTREAM apply).

Options:
  --strict     also check strict mode's model backends
  --json       print the findings as JSON, for scripts
  --quiet      print only the problems (nothing when there are none)
  -h, --help   show this help

Example:
  aisan preflight --quiet || exit 1
`

func runPreflight(ctx context.Context, args []string) error {
	fs := newFlagSet("preflight", preflightUsage)
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	strict := fs.Bool("strict", false, "")
	// The inside half of the live probe: aisan runs itself in the probe
	// jail with this flag. Not a user command, so not in the usage.
	inside := fs.Bool("probe-inside", false, hiddenFlag)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *inside {
		return preflight.RunInside(ctx, os.Stdout)
	}
	if *asJSON && *quiet {
		return withHint(usageErr("preflight: --json and --quiet cannot be used together"), "use --json, and filter on \"status\" in the output")
	}
	env, err := preflight.NewEnv()
	if err != nil {
		return err
	}
	checks := preflight.Checks()
	if *strict {
		checks = append(checks, preflight.StrictChecks()...)
	}
	findings := preflight.Run(ctx, env, checks)
	env.Close()
	if *asJSON {
		err = preflight.WriteJSON(os.Stdout, findings)
	} else {
		err = preflight.WriteText(os.Stdout, findings, *quiet)
	}
	if err != nil {
		return fmt.Errorf("writing the findings: %w", err)
	}
	if preflight.Problems(findings) > 0 {
		return exitStatus(1)
	}
	return nil
}

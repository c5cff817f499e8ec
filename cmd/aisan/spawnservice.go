package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

const spawnServiceUsage = `
Usage: aisan spawn-service NAME [options] -- COMMAND [ARG...]

Runs COMMAND headless in a deny-list jail, as the transient systemd user
unit aisan-svc-NAME.service, in the current directory. Its output goes to
the slot's transcript ('aisan logs NAME'); it shows in 'aisan list' with
kind "service" and ends with 'aisan kill NAME'.

A service always has a runtime cap: systemd stops it when the cap is
reached. Interactive sessions (aisan claude, aisan run) never have one.

Options:
  --max-runtime DURATION   stop the service after this long (default 1h;
                           e.g. 90s, 30m, 2h)
  --restart on-failure     restart COMMAND when it fails (the cap still
                           bounds the whole service)
  --memory-max SIZE        cap memory (e.g. 4G)
  --cpu-quota PERCENT      cap CPU (e.g. 150%)
  --tasks-max N            cap the number of tasks
  -h, --help               show this help

Needs a systemd user manager.

Example:
  aisan spawn-service devserver --max-runtime 2h -- npm run dev
`

func runSpawnService(ctx context.Context, args []string) error {
	fs := newFlagSet("spawn-service", spawnServiceUsage)
	maxRuntime := fs.Duration("max-runtime", systemd.DefaultMaxRuntime, "")
	restart := fs.String("restart", "", "")
	var lf launcherFlags
	lf.registerLimits(fs)
	hint := "run 'aisan spawn-service --help' for usage"
	if len(args) == 0 || args[0] == "--" {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			fs.Usage()
			return errHelpShown
		}
		return withHint(usageErr("spawn-service: no service name given"), "aisan spawn-service NAME [options] -- COMMAND [ARG...]")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fs.Usage()
		return errHelpShown
	}
	name := args[0]
	if strings.HasPrefix(name, "-") {
		return withHint(usageErr("spawn-service: the service name comes first, before %s", name), "aisan spawn-service NAME [options] -- COMMAND [ARG...]")
	}
	if !slot.ValidName(name) {
		return withHint(usageErr("spawn-service: invalid service name %q", name), "a name is 1 to 128 letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	command := fs.Args()
	if len(command) == 0 {
		return withHint(usageErr("spawn-service: no command given"), "aisan spawn-service "+name+" [options] -- COMMAND [ARG...]")
	}
	switch *restart {
	case "", "no", "on-failure":
	default:
		return withHint(usageErr("spawn-service: --restart %q: only on-failure is supported", *restart), hint)
	}
	if *maxRuntime <= 0 {
		return withHint(usageErr("spawn-service: --max-runtime must be positive, got %v", *maxRuntime), hint)
	}
	limits, err := parseLimits(lf)
	if err != nil {
		return err
	}
	unit, err := launch.SpawnService(ctx, launch.ServiceRequest{
		Name:             name,
		Command:          command,
		MaxRuntime:       *maxRuntime,
		RestartOnFailure: *restart == "on-failure",
		Limits:           limits,
	})
	if err != nil {
		return launchError(err)
	}
	fmt.Printf("started %s (slot %s, stops after %v); 'aisan logs %s' shows its output\n", unit, name, maxRuntime.Round(time.Second), name)
	return nil
}

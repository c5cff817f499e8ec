//go:build aisanfront

package main

import (
	"context"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/launch"
)

// The front (handover.go) hands these to the full binary.
var (
	runAllow         = handOver
	runDeny          = handOver
	runReport        = handOver
	runReview        = handOver
	runTrust         = handOver
	runConfig        = handOver
	runLogs          = handOver
	runGuard         = handOver
	runInstallHook   = handOver
	runUninstallHook = handOver
	runPreflight     = handOver
	runReceipt       = handOver
)

func handOver(context.Context, []string) error { return errHandOver }

// A strict launch, and explain --policy, are the full binary's.
func (lf *launcherFlags) strictMode(jail.Kind) (launch.Mode, error) { return nil, errHandOver }

func explainPolicy([]string) error { return errHandOver }

// handOverEarly: a launch its command line makes strict goes to the full
// binary at once, before the front reads any configuration, since the
// full binary reads it all again. (A launch the configuration makes strict
// is handed over by strictMode.)
func (lf *launcherFlags) handOverEarly() error {
	if lf.strict {
		return errHandOver
	}
	return nil
}

// keeperModes: the front launches deny-list jails only; a strict box's
// keeper is started by the full binary that launched it.
func keeperModes() []launch.Mode { return []launch.Mode{launch.Deny{}} }

// frontBuild: this is the front.
const frontBuild = true

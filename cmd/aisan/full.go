//go:build !aisanfront

package main

import (
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// The full binary links every command (handover.go); the front's
// counterparts of these are in front.go.

// frontBuild: this is the full binary.
const frontBuild = false

// handOverEarly: the full binary launches every mode itself.
func (*launcherFlags) handOverEarly() error { return nil }

// keeperModes are the modes a keeper this binary starts may take over:
// both.
func keeperModes() []launch.Mode { return []launch.Mode{launch.Deny{}, &strictbox.Box{}} }

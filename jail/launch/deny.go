package launch

import (
	"context"
	"os"
	"slices"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/history"
)

// Deny is the deny-list jail's [Mode]: per-slot history copies and
// per-launch PID directories before the plan, a filtered bus's gate
// while it runs.
type Deny struct {
	// Env are variables the command layer adds for the agent's kind
	// (opencode's permission rules, which carry the kill guard).
	Env []string
}

var _ Mode = Deny{}

// Name is "": the record of a deny-list jail names no mode.
func (Deny) Name() string { return "" }

// PassFDs is true: as unjailed, the caller's descriptors reach the agent.
func (Deny) PassFDs() bool { return true }

// CheckCommand finds name as the jail's init will: on the host's PATH,
// which the jail keeps, or as a path.
func (Deny) CheckCommand(name string, kind jail.Kind, h jail.Host) error {
	return findCommand(name, kind, h.Env)
}

// Prepare copies the agent's history into the slot's own (merged back by
// undo when the launch ends) and makes the per-launch directories over
// the agents' PID-keyed ones; dry names what it would make.
func (d Deny) Prepare(req jail.Request, h jail.Host, slot string, dry bool) (jail.Prepared, func(), error) {
	prep := jail.Prepared{Env: slices.Clone(d.Env)}
	kind := string(req.Kind)
	if dry {
		prep.History = history.Paths(h.AisanHome, slot, kind, h.HistoryDirs())
		prep.PIDDirs = previewPIDDirs(h, slot)
		return prep, nil, nil
	}
	var err error
	if prep.History, err = history.Prepare(h.AisanHome, slot, kind, h.Cwd, h.HistoryDirs()); err != nil {
		return prep, nil, err
	}
	undo := func() {
		if err := history.MergeBack(h.AisanHome, slot, kind, h.HistoryDirs()); err != nil {
			req.Say(jail.Warning, err.Error())
		}
	}
	prep.PIDDirs, err = preparePIDDirs(h, slot)
	return prep, undo, err
}

// Serve opens the gate of a filtered bus: the socket the jail's clients
// connect to, behind which the proxy starts on the first connection.
// (keepable needs nothing more: a keeper takes the relay's lifeline.)
func (Deny) Serve(_ context.Context, s *jail.Session, _ bool) (Services, error) {
	if s.Spec.Bus.Mode != busproxy.Filtered {
		return busServices{}, nil
	}
	gate, err := busproxy.OpenGate(s.Spec.Bus)
	if err != nil {
		return nil, err
	}
	gate.Watch()
	return busServices{gate}, nil
}

// Resume holds the bus relay's lifeline, which keeps the relay and its
// proxy serving the jail until the keeper exits.
func (Deny) Resume(k Kept, _ jail.Say) (Services, error) {
	if len(k.Files) == 0 {
		return busServices{}, nil
	}
	gate, err := busproxy.Lifeline(k.Files[0])
	if err != nil {
		return nil, err
	}
	return busServices{gate}, nil
}

// busServices is a deny-list jail's host side: a filtered bus's gate, if
// any.
type busServices struct{ gate *busproxy.Gate }

func (busServices) Env() []string { return nil }

// Keep hands the keeper the bus relay's lifeline.
func (b busServices) Keep() (Kept, error) {
	if b.gate == nil {
		return Kept{}, nil
	}
	f, err := b.gate.Keep()
	if err != nil {
		return Kept{}, err
	}
	return Kept{Files: []*os.File{f}}, nil
}

// Admitting: nothing of the bus waits for the agent's admission.
func (busServices) Admitting(context.Context) {}

// Ended: the bus has nothing to finish before Stop.
func (busServices) Ended(bool) {}

// Drain leaves the bus to the keeper: it serves the jail to its end.
func (busServices) Drain(context.Context) {}

// Stop closes the gate and the relay's lifeline, which ends the relay and
// its proxy (if we die, the kernel closes it for us).
func (b busServices) Stop() {
	if b.gate != nil {
		b.gate.Close()
	}
}

package launch

import (
	"context"
	"os"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// WatchRegistry adapts the slot registry to the supervisor behind
// `aisan watch`.
type WatchRegistry struct {
	Reg *slot.Registry
}

var _ systemd.Registry = WatchRegistry{}

// LiveSlots lists the slots whose end is not recorded: running and
// orphaned sessions, and services (a service whose wrapper systemd killed
// shows as exited without an end; the supervisor records it).
func (w WatchRegistry) LiveSlots(ctx context.Context) ([]systemd.Slot, error) {
	entries, problems := w.Reg.List()
	for _, p := range problems {
		// A corrupt record is reported by list; it never stops a sweep.
		_ = p
	}
	var out []systemd.Slot
	for _, e := range entries {
		if !e.End.IsZero() {
			continue
		}
		service := e.Kind == string(jail.KindService)
		if e.State == slot.Exited && !service {
			continue
		}
		out = append(out, systemd.Slot{
			Name:    e.Slot,
			Service: service,
			// Only a unit name aisan gives this slot (the rule "aisan
			// kill" uses): a record naming any other unit is not acted
			// on through it.
			Unit:       SlotUnit(e.Record),
			Started:    e.Start,
			MaxRuntime: e.MaxRuntime,
			Orphaned:   e.State == slot.Orphaned && !service,
		})
	}
	return out, nil
}

// ReapOrphan kills an orphan's jail (through its scope when it has one) and
// records its end, holding the slot's lock throughout
// ([slot.Registry.KillOrphan]). A slot that a new launch has taken since
// it was listed is running, not orphaned: its lock is held, and nothing is
// killed.
func (w WatchRegistry) ReapOrphan(ctx context.Context, name string) error {
	return w.Reg.KillOrphan(name, syscall.SIGKILL)
}

// RecordEnd records how a service ended.
func (w WatchRegistry) RecordEnd(ctx context.Context, name string, end systemd.End) error {
	return w.Reg.RecordEnd(name, end.ExitStatus, end.At)
}

// Supervisor builds the `aisan watch` loop for the registry in home.
func Supervisor(ctx context.Context, report func(systemd.Event)) (*systemd.Supervisor, func(), error) {
	home, err := slot.Home()
	if err != nil {
		return nil, nil, err
	}
	reg, err := slot.Open(home)
	if err != nil {
		return nil, nil, err
	}
	reg.Killer = Killer(ctx)
	sup := &systemd.Supervisor{Registry: WatchRegistry{Reg: reg}, Report: report}
	closeFn := func() {}
	if m, err := systemd.Connect(ctx, os.Getenv); err == nil {
		sup.Units = m
		closeFn = m.Close
	}
	return sup, closeFn, nil
}

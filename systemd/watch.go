package systemd

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Rules of the supervisor (aisan watch):
//
//   - An interactive slot is never touched while its wrapper lives: no
//     runtime cap, no idle kill.
//   - An interactive slot whose wrapper died (its lock is free, its jail
//     lives on) is an orphan: the registry reaps it, under the slot's lock,
//     killing its jail through its scope when it has one and its PID
//     namespace otherwise, and records its end.
//   - A service is systemd's to stop at its cap (RuntimeMaxSec=). The
//     supervisor stops it only when it runs on past its cap plus a grace
//     period, which happens when Restart=on-failure started it again.
//   - A service that ended is recorded with systemd's result.
//   - A slot whose state cannot be read is left alone for this pass.

// Slot is what the supervisor needs to know about one slot whose end is
// not recorded yet, as the registry knows it.
type Slot struct {
	// Name is the slot's name.
	Name string
	// Service marks a headless service (spawn-service); the others are
	// interactive sessions.
	Service bool
	// Unit is the slot's scope or service unit; "" when it was launched
	// without a user manager.
	Unit string
	// Started is when the slot was launched.
	Started time.Time
	// MaxRuntime is a service's runtime cap; interactive slots have none.
	MaxRuntime time.Duration
	// Orphaned marks an interactive slot whose wrapper died while its
	// jail lives on. Services have no wrapper and are never orphans.
	Orphaned bool
}

// End is how a service ended, for the registry.
type End struct {
	// At is when the supervisor noticed.
	At time.Time
	// Reason says what happened, in words: "stopped by systemd at its
	// runtime cap of 1h0m0s".
	Reason string
	// Result is systemd's result for the unit ("success", "timeout",
	// "exit-code", "signal"…); "" when systemd no longer knew.
	Result string
	// ExitStatus is the main process's exit status or signal number, when
	// systemd still knew it.
	ExitStatus int
}

// Registry is the slot registry as the supervisor uses it.
type Registry interface {
	// LiveSlots returns the slots whose end is not recorded: running and
	// orphaned sessions, and services.
	LiveSlots(ctx context.Context) ([]Slot, error)
	// ReapOrphan kills an orphaned slot's jail, through its scope when it
	// has one (see [Manager.KillUnit]) and its PID namespace otherwise,
	// and records its end. It holds the slot's lock while it works, so
	// that no launch or other reaper races it.
	ReapOrphan(ctx context.Context, slot string) error
	// RecordEnd records how a service ended.
	RecordEnd(ctx context.Context, slot string, end End) error
}

// Units is the part of [Manager] the supervisor uses.
type Units interface {
	Status(ctx context.Context, unit string) (UnitStatus, error)
	StopUnit(ctx context.Context, unit string) error
}

var _ Units = (*Manager)(nil)

// Supervisor defaults.
const (
	DefaultWatchInterval = 5 * time.Second
	DefaultCapGrace      = 30 * time.Second
	// reapTimeout bounds reaping one orphan.
	reapTimeout = 15 * time.Second
)

// Supervisor is the loop behind aisan watch. Registry is required; Units
// is nil on hosts without a user manager (there are no services then).
type Supervisor struct {
	Registry Registry
	Units    Units
	// Interval between passes; default DefaultWatchInterval.
	Interval time.Duration
	// CapGrace is how long a service may run past its cap before the
	// supervisor stops it; default DefaultCapGrace.
	CapGrace time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Report receives every event; nil discards them.
	Report func(Event)
}

// ActionReaped is the Action of an orphan's jail killed.
const ActionReaped = "reaped"

// Event is one thing the supervisor did or failed to do.
type Event struct {
	Slot string
	// Action is what was done: "reaped", "stopped", "recorded".
	Action string
	// Detail says why, for the log.
	Detail string
	// Err is set when the action failed.
	Err error
}

func (e Event) String() string {
	if e.Err != nil {
		return fmt.Sprintf("slot %s: %s failed: %v", e.Slot, e.Action, e.Err)
	}
	return fmt.Sprintf("slot %s: %s: %s", e.Slot, e.Action, e.Detail)
}

// Run sweeps at once and then every Interval until ctx ends, reporting
// every event. A failed pass is reported and the loop goes on. It returns
// nil when ctx ends.
func (s *Supervisor) Run(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		events, err := s.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			s.report(Event{Action: "listing slots", Err: err})
		}
		for _, e := range events {
			s.report(e)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Supervisor) report(e Event) {
	if s.Report != nil {
		s.Report(e)
	}
}

// action is what one pass does to one slot.
type action int

const (
	actNone        action = iota
	actReap               // orphaned session: the registry reaps it
	actStopService        // service past its cap and grace: stop it
	actRecordEnd          // service that ended: record systemd's result
)

// decide is the supervisor's policy for one slot. st is the unit's state,
// nil when the slot has no unit or there is no manager.
func decide(sl Slot, st *UnitStatus, now time.Time, grace time.Duration) action {
	if sl.Service {
		switch {
		case st == nil:
			return actNone // a service always has a unit; nothing to go on
		case !st.Active():
			return actRecordEnd
		case sl.MaxRuntime > 0 && now.After(sl.Started.Add(sl.MaxRuntime+grace)):
			return actStopService
		}
		return actNone
	}
	if sl.Orphaned {
		return actReap
	}
	return actNone
}

// Sweep makes one pass over the live slots and returns what it did.
func (s *Supervisor) Sweep(ctx context.Context) ([]Event, error) {
	slots, err := s.Registry.LiveSlots(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing slots: %w", err)
	}
	now := s.now()
	grace := s.CapGrace
	if grace <= 0 {
		grace = DefaultCapGrace
	}
	var events []Event
	for _, sl := range slots {
		if ctx.Err() != nil {
			break
		}
		var st *UnitStatus
		if sl.Service && sl.Unit != "" && s.Units != nil {
			v, err := s.Units.Status(ctx, sl.Unit)
			if err != nil {
				events = append(events, Event{Slot: sl.Name, Action: "reading unit state", Err: err})
				continue
			}
			st = &v
		}
		if e, ok := s.apply(ctx, sl, st, decide(sl, st, now, grace)); ok {
			events = append(events, e)
		}
	}
	return events, nil
}

// apply carries out act for one slot.
func (s *Supervisor) apply(ctx context.Context, sl Slot, st *UnitStatus, act action) (Event, bool) {
	switch act {
	case actReap:
		ctx, cancel := context.WithTimeout(ctx, reapTimeout)
		defer cancel()
		if err := s.Registry.ReapOrphan(ctx, sl.Name); err != nil {
			return Event{Slot: sl.Name, Action: "reaping orphan", Err: err}, true
		}
		return Event{Slot: sl.Name, Action: ActionReaped, Detail: "orphan: its wrapper died; its jail was killed"}, true
	case actStopService:
		if !strings.HasPrefix(sl.Unit, "aisan-") {
			return Event{Slot: sl.Name, Action: "stopping service past its cap", Err: fmt.Errorf("unit %q is not one of aisan's; left alone", sl.Unit)}, true
		}
		ctx, cancel := context.WithTimeout(ctx, serviceStopTimeout+reapTimeout)
		defer cancel()
		if err := s.Units.StopUnit(ctx, sl.Unit); err != nil {
			return Event{Slot: sl.Name, Action: "stopping service past its cap", Err: err}, true
		}
		return s.record(ctx, sl, End{
			Reason: fmt.Sprintf("ran past its runtime cap of %v; aisan watch stopped it", sl.MaxRuntime),
			Result: "timeout",
		}, "stopped")
	case actRecordEnd:
		reason := "ended"
		if st.ActiveState == "failed" {
			reason = "failed"
		}
		if st.Result == "timeout" {
			reason = fmt.Sprintf("stopped by systemd at its runtime cap of %v", sl.MaxRuntime)
		}
		return s.record(ctx, sl, End{Reason: reason, Result: st.Result, ExitStatus: st.ExecMainStatus}, "recorded")
	}
	return Event{}, false
}

func (s *Supervisor) record(ctx context.Context, sl Slot, end End, action string) (Event, bool) {
	end.At = s.now()
	if err := s.Registry.RecordEnd(ctx, sl.Name, end); err != nil {
		return Event{Slot: sl.Name, Action: "recording the end", Err: err}, true
	}
	return Event{Slot: sl.Name, Action: action, Detail: end.Reason}, true
}

func (s *Supervisor) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

package systemd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	running := &UnitStatus{ActiveState: "active", SubState: "running"}
	restarting := &UnitStatus{ActiveState: "activating", SubState: "auto-restart"}
	gone := &UnitStatus{LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}
	failed := &UnitStatus{ActiveState: "failed", Result: "timeout"}
	svc := Slot{Name: "s", Service: true, Unit: "aisan-svc-s.service", Started: t0, MaxRuntime: time.Hour}
	sess := Slot{Name: "i", Unit: "aisan-i.scope", Started: t0}
	grace := 30 * time.Second
	tests := []struct {
		name string
		slot Slot
		st   *UnitStatus
		now  time.Time
		want action
	}{
		{"live session, days old", sess, nil, t0.Add(72 * time.Hour), actNone},
		{"live session with a cap by mistake", with(sess, func(s *Slot) { s.MaxRuntime = time.Second }), nil, t0.Add(time.Hour), actNone},
		{"orphan", with(sess, func(s *Slot) { s.Orphaned = true }), nil, t0, actReap},
		{"orphan without scope", with(sess, func(s *Slot) { s.Orphaned = true; s.Unit = "" }), nil, t0, actReap},
		{"service within cap", svc, running, t0.Add(59 * time.Minute), actNone},
		{"service at cap: systemd's turn", svc, running, t0.Add(time.Hour + grace), actNone},
		{"service past cap and grace", svc, running, t0.Add(time.Hour + grace + time.Second), actStopService},
		{"restarted service past cap", svc, restarting, t0.Add(2 * time.Hour), actStopService},
		{"service stopped by systemd at cap", svc, failed, t0.Add(time.Hour), actRecordEnd},
		{"service ended and collected", svc, gone, t0.Add(time.Minute), actRecordEnd},
		{"service with no manager", svc, nil, t0.Add(2 * time.Hour), actNone},
		{"service marked orphaned is still a service", with(svc, func(s *Slot) { s.Orphaned = true }), running, t0, actNone},
	}
	for _, tt := range tests {
		if got := decide(tt.slot, tt.st, tt.now, grace); got != tt.want {
			t.Errorf("%s: decide = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func with(s Slot, f func(*Slot)) Slot { f(&s); return s }

// fakeUnits is a user manager in memory; every call is logged.
type fakeUnits struct {
	states map[string]UnitStatus
	fail   map[string]error // unit → error from Status
	calls  []string
}

func (f *fakeUnits) Status(ctx context.Context, unit string) (UnitStatus, error) {
	f.calls = append(f.calls, "status "+unit)
	if err := f.fail[unit]; err != nil {
		return UnitStatus{}, err
	}
	st, ok := f.states[unit]
	if !ok {
		return UnitStatus{Name: unit, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}, nil
	}
	return st, nil
}

func (f *fakeUnits) StopUnit(ctx context.Context, unit string) error {
	f.calls = append(f.calls, "stop "+unit)
	delete(f.states, unit)
	return nil
}

type fakeRegistry struct {
	slots  []Slot
	reaped []string
	ends   map[string]End
}

func (r *fakeRegistry) LiveSlots(ctx context.Context) ([]Slot, error) { return r.slots, nil }

func (r *fakeRegistry) ReapOrphan(ctx context.Context, slot string) error {
	if slot == "stuck" {
		return errors.New("slot \"stuck\" is busy")
	}
	r.reaped = append(r.reaped, slot)
	return nil
}

func (r *fakeRegistry) RecordEnd(ctx context.Context, slot string, e End) error {
	if r.ends == nil {
		r.ends = map[string]End{}
	}
	r.ends[slot] = e
	return nil
}

func TestSweep(t *testing.T) {
	now := t0.Add(3 * time.Hour)
	units := &fakeUnits{
		states: map[string]UnitStatus{
			"aisan-svc-long.service":  {ActiveState: "active"},
			"aisan-svc-young.service": {ActiveState: "active"},
			"aisan-svc-capped.service": {
				ActiveState: "failed", Result: "timeout", ExecMainStatus: int(syscall.SIGTERM),
			},
		},
		fail: map[string]error{"aisan-svc-broken.service": errors.New("bus hiccup")},
	}
	reg := &fakeRegistry{slots: []Slot{
		{Name: "live", Unit: "aisan-live.scope", Started: t0},
		{Name: "orphan", Unit: "aisan-orphan.scope", Started: t0, Orphaned: true},
		{Name: "noscope", Started: t0, Orphaned: true},
		{Name: "stuck", Started: t0, Orphaned: true},
		{Name: "broken", Service: true, Unit: "aisan-svc-broken.service", Started: t0, MaxRuntime: time.Hour},
		{Name: "long", Service: true, Unit: "aisan-svc-long.service", Started: t0, MaxRuntime: time.Hour},
		{Name: "young", Service: true, Unit: "aisan-svc-young.service", Started: now.Add(-time.Minute), MaxRuntime: time.Hour},
		{Name: "capped", Service: true, Unit: "aisan-svc-capped.service", Started: t0, MaxRuntime: time.Hour},
		{Name: "done", Service: true, Unit: "aisan-svc-done.service", Started: t0, MaxRuntime: time.Hour},
	}}
	sup := &Supervisor{Registry: reg, Units: units, Now: func() time.Time { return now }}
	events, err := sup.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.String())
	}
	want := []string{
		"slot orphan: reaped: orphan: its wrapper died; its jail was killed",
		"slot noscope: reaped: orphan: its wrapper died; its jail was killed",
		`slot stuck: reaping orphan failed: slot "stuck" is busy`,
		"slot broken: reading unit state failed: bus hiccup",
		"slot long: stopped: ran past its runtime cap of 1h0m0s; aisan watch stopped it",
		"slot capped: recorded: stopped by systemd at its runtime cap of 1h0m0s",
		"slot done: recorded: ended",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantCalls := []string{
		"status aisan-svc-broken.service",
		"status aisan-svc-long.service", "stop aisan-svc-long.service",
		"status aisan-svc-young.service",
		"status aisan-svc-capped.service",
		"status aisan-svc-done.service",
	}
	if !slices.Equal(units.calls, wantCalls) {
		t.Errorf("manager calls:\n%s\nwant:\n%s (sessions are the registry's, never the manager's)", strings.Join(units.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	if !slices.Equal(reg.reaped, []string{"orphan", "noscope"}) {
		t.Errorf("reaped %q; want [orphan noscope]", reg.reaped)
	}
	if e := reg.ends["capped"]; e.Result != "timeout" || e.ExitStatus != int(syscall.SIGTERM) || !e.At.Equal(now) {
		t.Errorf("recorded end of capped = %+v", e)
	}
	if e := reg.ends["long"]; e.Result != "timeout" || !strings.Contains(e.Reason, "aisan watch stopped it") {
		t.Errorf("recorded end of long = %+v", e)
	}
	for _, s := range []string{"live", "young", "broken", "orphan"} {
		if _, ok := reg.ends[s]; ok {
			t.Errorf("slot %s was recorded by the supervisor", s)
		}
	}
}

// TestSweepNoManager: without a user manager orphans are still reaped (the
// registry uses the PID namespace) and services are left alone.
func TestSweepNoManager(t *testing.T) {
	reg := &fakeRegistry{slots: []Slot{
		{Name: "a", Unit: "aisan-a.scope", Orphaned: true},
		{Name: "b", Orphaned: true},
		{Name: "c"},
		{Name: "s", Service: true, Unit: "aisan-svc-s.service", MaxRuntime: time.Second},
	}}
	sup := &Supervisor{Registry: reg}
	if _, err := sup.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reg.reaped, []string{"a", "b"}) || len(reg.ends) != 0 {
		t.Errorf("reaped %q, recorded %v; want [a b] and nothing", reg.reaped, reg.ends)
	}
}

// TestRunStops: Run sweeps at once, keeps going, and returns nil when its
// context ends.
func TestRunStops(t *testing.T) {
	reg := &fakeRegistry{slots: []Slot{{Name: "b", Orphaned: true}}}
	ctx, cancel := context.WithCancel(context.Background())
	var events []Event
	sup := &Supervisor{Registry: reg, Interval: time.Millisecond, Report: func(e Event) {
		events = append(events, e)
		if len(events) == 3 {
			cancel()
		}
	}}
	if err := sup.Run(ctx); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(events) != 3 {
		t.Errorf("events = %v", events)
	}
}

package jail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// EnvNoScope=1 launches without a systemd scope even when a user manager
// is there (for measurements, and for users who do not want them).
const EnvNoScope = "AISAN_NO_SCOPE"

// hintedError carries fix-it lines for the CLI's "hint:" output.
type hintedError struct {
	err   error
	hints []string
}

func (e *hintedError) Error() string   { return e.err.Error() }
func (e *hintedError) Unwrap() error   { return e.err }
func (e *hintedError) Hints() []string { return e.hints }

// scoper puts a slot's jail into its own systemd scope. A nil *scoper runs
// jails without one.
type scoper struct {
	m      *systemd.Manager
	limits systemd.Limits
}

// newScoper connects to the user manager. Without one the launch goes on
// unscoped (said once on stderr), unless AISAN_REQUIRE_SCOPE=1 makes that a
// refusal.
func newScoper(ctx context.Context, getenv func(string) string, limits Limits, stderr io.Writer) (*scoper, error) {
	if getenv(EnvNoScope) == "1" {
		return nil, nil
	}
	m, err := systemd.Connect(ctx, getenv)
	if err != nil {
		var hints []string
		var h interface{ Hint() []string }
		if errors.As(err, &h) {
			hints = h.Hint()
		}
		if systemd.ScopeRequired(getenv) {
			return nil, &hintedError{
				err:   fmt.Errorf("%w; refusing to launch without a systemd scope because %s=1", err, systemd.EnvRequireScope),
				hints: hints,
			}
		}
		fmt.Fprintf(stderr, "aisan: warning: %v; running without a systemd scope (aisan kill still works through the jail's PID namespace)\n", err)
		for _, l := range hints {
			fmt.Fprintf(stderr, "aisan: hint: %s\n", l)
		}
		return nil, nil
	}
	return &scoper{m: m, limits: systemd.Limits(limits)}, nil
}

func (s *scoper) close() {
	if s != nil && s.m != nil {
		s.m.Close()
	}
}

// place starts the slot's scope around pid and records its name.
func (s *scoper) place(ctx context.Context, sl *slot.Slot, pid int, stderr io.Writer) error {
	unit := systemd.UnitName(sl.Name())
	err := s.m.StartScope(ctx, unit, "aisan jail for slot "+sl.Name(), pid, s.limits)
	if errors.Is(err, systemd.ErrUnitExists) {
		// Slot names are unique within one state directory; a second
		// one (another AISAN_HOME) can hold a live slot of the same
		// name. The registry records whichever name we get.
		var b [4]byte
		rand.Read(b[:])
		unit = systemd.UnitName(sl.Name() + "-" + hex.EncodeToString(b[:]))
		err = s.m.StartScope(ctx, unit, "aisan jail for slot "+sl.Name(), pid, s.limits)
	}
	if err != nil {
		return fmt.Errorf("placing the jail in a systemd scope: %w", err)
	}
	if err := sl.Update(func(r *slot.Record) { r.Unit = unit }); err != nil {
		return err
	}
	if !s.limits.IsZero() {
		delegated, derr := s.m.DelegatedControllers(ctx)
		v1, _ := systemd.V1Controllers()
		if derr == nil {
			if err := systemd.CheckDelegation(s.limits, delegated, v1); err != nil {
				fmt.Fprintf(stderr, "aisan: warning: %v\n", err)
				var h interface{ Hint() []string }
				if errors.As(err, &h) {
					for _, l := range h.Hint() {
						fmt.Fprintf(stderr, "aisan: hint: %s\n", l)
					}
				}
			}
		}
	}
	return nil
}

// Killer ends a slot's jail through its systemd scope when it has one,
// and through the jail's PID namespace otherwise (or when the scope is
// gone or the manager unreachable).
func Killer(ctx context.Context) slot.Killer {
	return func(rec slot.Record, sig syscall.Signal) error {
		if rec.Unit != "" {
			if m, err := systemd.Connect(ctx, os.Getenv); err == nil {
				err = m.KillUnit(ctx, rec.Unit, sig)
				m.Close()
				if err == nil {
					return nil
				}
				if !errors.Is(err, systemd.ErrNoSuchUnit) {
					return err
				}
			}
		}
		return slot.KillPidNS(rec, sig)
	}
}

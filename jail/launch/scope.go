package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// EnvNoScope names the variable that, set to 1, launches without a
// systemd scope even when a user manager is there (for measurements, and
// for users who do not want them).
const EnvNoScope = "AISAN_NO_SCOPE"

// scoper puts a slot's jail into its own systemd scope. A nil *scoper runs
// jails without one.
type scoper struct {
	m      *systemd.Manager
	limits systemd.Limits
}

// newScoper connects to the user manager. Without one the launch goes on
// unscoped (said once on stderr), unless AISAN_REQUIRE_SCOPE=1 makes that a
// refusal.
func newScoper(ctx context.Context, getenv func(string) string, limits jail.Limits, say jail.Say) (*scoper, error) {
	if getenv(EnvNoScope) == "1" {
		return nil, nil
	}
	m, err := systemd.Connect(ctx, getenv)
	trace("manager connected")
	if err != nil {
		var nm *systemd.NoManagerError
		isNoManager := errors.As(err, &nm)
		if systemd.ScopeRequired(getenv) {
			var hints []string
			switch {
			case isNoManager && !nm.Booted:
				// No command gives this host a manager: the only fix is
				// not to require one.
				hints = []string{"this host does not run systemd, so no jail here can have a scope; unset " + systemd.EnvRequireScope + " to launch without one"}
			case isNoManager:
				hints = nm.Hints()
			}
			return nil, jail.WithHints(fmt.Errorf("%w; refusing to launch without a systemd scope because %s=1", err, systemd.EnvRequireScope), hints...)
		}
		// One short line: the launch works, kills go through the PID
		// namespace, and preflight has the remedies for those who want a
		// scope (AISAN_NO_SCOPE=1 silences it).
		reason := err.Error()
		if isNoManager {
			reason = "no systemd user manager (" + nm.Reason + ")"
		}
		say(jail.Note, fmt.Sprintf("%s: running without a scope; 'aisan preflight' says how to get one, %s=1 silences this", reason, EnvNoScope))
		return nil, nil
	}
	return &scoper{m: m, limits: systemd.Limits(limits)}, nil
}

func (s *scoper) close() {
	if s != nil && s.m != nil {
		s.m.Close()
	}
}

// place starts the scope of slot sl around the jail's held processes
// ([Stage.Held]) and returns its unit's name.
func (s *scoper) place(ctx context.Context, sl *slot.Slot, pids []int) (string, error) {
	unit := systemd.UnitName(sl.Name())
	err := s.m.StartScope(ctx, unit, "aisan jail for slot "+sl.Name(), pids, s.limits)
	if errors.Is(err, systemd.ErrUnitExists) {
		// Slot names are unique within one state directory; a second
		// one (another AISAN_HOME) can hold a live slot of the same
		// name. The registry records whichever name we get.
		var b [4]byte
		rand.Read(b[:])
		unit = systemd.UnitName(sl.Name() + "-" + hex.EncodeToString(b[:]))
		err = s.m.StartScope(ctx, unit, "aisan jail for slot "+sl.Name(), pids, s.limits)
	}
	trace("scope started")
	if err != nil {
		return "", fmt.Errorf("placing the jail in a systemd scope: %w", err)
	}
	return unit, nil
}

// inScope checks that each of pids is in unit's cgroup, as /proc says.
func inScope(unit string, pids []int) error {
	for _, pid := range pids {
		cg, err := systemd.ProcCgroup(pid)
		if err != nil {
			return fmt.Errorf("placing the jail in a systemd scope: %w", err)
		}
		if path.Base(cg) != unit {
			return fmt.Errorf("placing the jail in a systemd scope: process %d is in %s, not in %s", pid, cg, unit)
		}
	}
	return nil
}

// checkLimits says when the scope's limits cannot take effect, for want
// of delegated cgroup controllers. It runs once the agent has started:
// the answer changes nothing of the launch.
func (s *scoper) checkLimits(ctx context.Context, say jail.Say) {
	if s.limits.IsZero() {
		return
	}
	delegated, err := s.m.DelegatedControllers(ctx)
	if err != nil {
		return
	}
	v1, _ := systemd.V1Controllers()
	if err := systemd.CheckDelegation(s.limits, delegated, v1); err != nil {
		say(jail.Warning, err.Error())
		var h interface{ Hints() []string }
		if errors.As(err, &h) {
			for _, l := range h.Hints() {
				say(jail.Hint, l)
			}
		}
	}
}

// SlotUnit returns the systemd unit that rec's jail runs in, as far as
// the record can be trusted: rec.Unit, when it is a name aisan gives that
// slot — aisan-<slot>.scope or, on a name collision, aisan-<slot>-<8 hex
// digits>.scope for a session, aisan-svc-<slot>.service for a service —
// and "" otherwise. The registry lives in a directory the user (and so
// perhaps an agent) can write; a record naming "app.slice", or another
// slot's unit, must not make "aisan kill" act on it.
func SlotUnit(rec slot.Record) string {
	u := rec.Unit
	if u == "" || !slot.ValidName(rec.Slot) {
		return ""
	}
	if rec.Kind == string(jail.KindService) {
		if u == systemd.ServiceName(rec.Slot) {
			return u
		}
		return ""
	}
	if u == systemd.UnitName(rec.Slot) {
		return u
	}
	// The collision variant: place's UnitName(slot + "-" + 8 hex digits).
	// Slot names are short and need no escaping, so the digits sit just
	// before the suffix.
	const tag = 8
	stem, ok := strings.CutSuffix(u, ".scope")
	if !ok || len(stem) < tag+1 || stem[len(stem)-tag-1] != '-' {
		return ""
	}
	h := stem[len(stem)-tag:]
	for i := 0; i < len(h); i++ {
		if !('0' <= h[i] && h[i] <= '9' || 'a' <= h[i] && h[i] <= 'f') {
			return ""
		}
	}
	if u == systemd.UnitName(rec.Slot+"-"+h) {
		return u
	}
	return ""
}

// stopTimeout bounds stopping a service's unit: systemd gives it 10 s
// between SIGTERM and SIGKILL, then it must be gone.
const stopTimeout = 30 * time.Second

// Killer ends a slot's jail through its systemd unit when it has one, and
// through the jail's PID namespace ([slot.KillPidNS]) otherwise.
//
// The record may be stale — its launch ended, and the next launch of the
// slot took the same scope name — or forged. So the unit is used only if
// it is a name aisan gives that slot ([SlotUnit]) and the recorded init,
// pinned with a pidfd and checked against the recorded PID namespace, is
// in that unit's cgroup ([slot.Init.InUnit]); then:
//
//   - a session's scope gets sig on every process (KillUnit), which ends
//     bwrap and the jail together;
//   - a service's unit is stopped (StopUnit): systemd sends SIGTERM, the
//     wrapper (the unit's main process) forwards it and records the end,
//     and a stopped service is not restarted, as one whose jail was
//     killed would be under Restart=on-failure.
//
// An init that is gone is [slot.ErrJailGone]; an init that is not in the
// unit (or a unit that is not loaded, or a manager out of reach) is
// signalled through its pidfd instead.
func Killer(ctx context.Context) slot.Killer {
	return func(rec slot.Record, sig syscall.Signal) error {
		unit := SlotUnit(rec)
		if unit == "" {
			return slot.KillPidNS(rec, sig)
		}
		pinned, err := slot.PinInit(rec)
		if err != nil {
			return err
		}
		defer pinned.Close()
		if sig != syscall.SIGKILL && rec.Kind != string(jail.KindService) {
			// Any other signal is for the agent, which the init forwards
			// it to; through the scope it would also reach bwrap, and end
			// the jail from outside.
			return pinned.Signal(sig)
		}
		in, err := pinned.InUnit(unit)
		if errors.Is(err, slot.ErrNoUnifiedCgroup) {
			// Nothing tells the unit here; the init is proven by its
			// namespace and its slot name.
			return pinned.Signal(sig)
		}
		if err != nil {
			return err
		}
		if !in {
			// PinInit proved the init is this slot's jail (namespace and
			// slot name); the unit the record names is not its, so it is
			// left alone.
			return pinned.Signal(sig)
		}
		m, err := systemd.Connect(ctx, os.Getenv)
		if err != nil {
			return pinned.Signal(sig)
		}
		defer m.Close()
		if rec.Kind == string(jail.KindService) {
			sctx, cancel := context.WithTimeout(ctx, stopTimeout)
			defer cancel()
			// Stopping a unit that is not loaded succeeds; this one
			// held the init a moment ago, so it is loaded.
			return m.StopUnit(sctx, unit)
		}
		err = m.KillUnit(ctx, unit, sig)
		if errors.Is(err, systemd.ErrNoSuchUnit) {
			return pinned.Signal(sig)
		}
		return err
	}
}

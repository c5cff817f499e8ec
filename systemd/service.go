package systemd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// DefaultMaxRuntime is the runtime cap of a headless service when the user
// gives none.
const DefaultMaxRuntime = time.Hour

// serviceStopTimeout is how long a stopping service gets between SIGTERM
// and SIGKILL (systemd's default is 90 s, long for a jail with no one
// waiting on it).
const serviceStopTimeout = 10 * time.Second

// Service is a headless command run by the user manager as a transient
// service unit. Every field is explicit; zero values mean "none" except
// where noted.
type Service struct {
	// Unit is the unit name, from [ServiceName].
	Unit string
	// Description names the service for systemctl and the journal.
	Description string
	// Argv is the command; Argv[0] is an absolute path. For a jailed
	// service it is the launcher's stage command, which execs bwrap.
	Argv []string
	// Env is the complete environment, as KEY=value entries. The user
	// manager's environment is not inherited beyond what systemd itself
	// always sets (HOME, USER, PATH…); put what the command needs here.
	Env []string
	// Dir is the working directory, an absolute path; required.
	Dir string
	// MaxRuntime is the runtime cap (RuntimeMaxSec=): past it, systemd
	// stops the service and records the result "timeout". Required: a
	// headless service always has a cap.
	MaxRuntime time.Duration
	// RestartOnFailure restarts the command when it fails (Restart=
	// on-failure). Each run gets MaxRuntime; the supervisor ([Watch])
	// stops a service whose runs together outlast its cap.
	RestartOnFailure bool
	// Output is the file that stdout and stderr are appended to (the
	// transcript), an absolute path. Create it before starting (the user
	// manager would create it too, but with its umask, not O_EXCL).
	Output string
	// Limits are resource limits, as for a scope.
	Limits Limits
	// Collect unloads the unit as soon as it ends, failed or not
	// (CollectMode=inactive-or-failed), so that a service stopped at its
	// cap or killed leaves no failed unit behind ("systemctl --user
	// is-system-running" stays "running"). Its result can then no longer
	// be read: the service's own wrapper records its end.
	Collect bool
}

// validate checks what systemd would otherwise reject with a less direct
// message, or accept and do something else.
func (s Service) validate() error {
	switch {
	case !strings.HasSuffix(s.Unit, serviceSuffix):
		return fmt.Errorf("service unit %q: the name does not end in %s", s.Unit, serviceSuffix)
	case len(s.Argv) == 0:
		return errors.New("no command")
	case !filepath.IsAbs(s.Argv[0]):
		return fmt.Errorf("command %q: not an absolute path", s.Argv[0])
	case !filepath.IsAbs(s.Dir):
		return fmt.Errorf("working directory %q: not an absolute path", s.Dir)
	case s.MaxRuntime <= 0:
		return fmt.Errorf("runtime cap %v: a headless service needs a positive cap (default %v)", s.MaxRuntime, DefaultMaxRuntime)
	case !filepath.IsAbs(s.Output):
		return fmt.Errorf("output file %q: not an absolute path", s.Output)
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("environment entry %q: want KEY=value", kv)
		}
	}
	return nil
}

// properties returns the transient unit's properties, in a fixed order.
func (s Service) properties() []sd.Property {
	restart := "no"
	if s.RestartOnFailure {
		restart = "on-failure"
	}
	props := []sd.Property{
		sd.PropDescription(s.Description),
		// exec: the start job waits for execve, so a missing binary
		// fails StartService instead of a later, silent unit failure.
		sd.PropType("exec"),
		// The flag is systemd's "ignore failure" (the "-" prefix in unit
		// files), whatever go-systemd calls it: false, so that a failing
		// command fails the unit.
		sd.PropExecStart(s.Argv, false),
		{Name: "WorkingDirectory", Value: dbus.MakeVariant(s.Dir)},
		{Name: "Environment", Value: dbus.MakeVariant(append([]string{}, s.Env...))},
		{Name: "StandardInput", Value: dbus.MakeVariant("null")},
		{Name: "StandardOutputFileToAppend", Value: dbus.MakeVariant(s.Output)},
		{Name: "StandardErrorFileToAppend", Value: dbus.MakeVariant(s.Output)},
		{Name: "RuntimeMaxUSec", Value: dbus.MakeVariant(uint64(s.MaxRuntime / time.Microsecond))},
		{Name: "TimeoutStopUSec", Value: dbus.MakeVariant(uint64(serviceStopTimeout / time.Microsecond))},
		{Name: "Restart", Value: dbus.MakeVariant(restart)},
	}
	if s.Collect {
		props = append(props, sd.Property{Name: "CollectMode", Value: dbus.MakeVariant("inactive-or-failed")})
	}
	return append(props, s.Limits.properties()...)
}

// StartService starts s as a transient service unit and waits until its
// command has been executed (Type=exec). The unit ends when the command
// exits or the runtime cap is reached; a failed unit keeps its name (so
// that its result can be read) until it is reset, which StartService does
// by itself when the name is reused. If a live unit holds the name, the
// error wraps [ErrUnitExists].
func (m *Manager) StartService(ctx context.Context, s Service) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("starting service %s: %w", s.Unit, err)
	}
	return m.startTransient(ctx, s.Unit, s.properties(), 0)
}

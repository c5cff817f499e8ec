package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// A headless service is an ordinary deny-list launch (`aisan run`) that
// systemd starts as the main process of a transient service unit. These
// variables, set only in that unit's environment, tell the launch that it
// is one; they are removed before the jail's environment is built.
const (
	envServiceName       = "AISAN_SERVICE_NAME"
	envServiceUnit       = "AISAN_SERVICE_UNIT"
	envServiceMaxRuntime = "AISAN_SERVICE_MAX_RUNTIME"
	// envServiceSpawned is when spawn-service started the unit. A
	// restarted service's slot keeps it as its start, so the runtime cap
	// bounds the whole service, not each run.
	envServiceSpawned = "AISAN_SERVICE_SPAWNED"
)

// ServiceRequest is what `aisan spawn-service` asks for.
type ServiceRequest struct {
	// Name names the service; the slot and the unit are named after it.
	Name string
	// Command is the command to run in the jail.
	Command []string
	// MaxRuntime caps the service's runtime; systemd stops it then.
	MaxRuntime time.Duration
	// RestartOnFailure restarts the command when it fails.
	RestartOnFailure bool
	// Limits are resource caps for the unit.
	Limits jail.Limits
}

// serviceSpec is a launch's service identity, read from its environment.
type serviceSpec struct {
	name, unit string
	maxRuntime time.Duration
	spawned    time.Time
}

func serviceFromEnv(env []string) *serviceSpec {
	look := jail.Host{Env: env}.LookupEnv
	name, ok := look(envServiceName)
	if !ok || name == "" {
		return nil
	}
	unit, _ := look(envServiceUnit)
	max, _ := look(envServiceMaxRuntime)
	d, _ := time.ParseDuration(max)
	spawnedText, _ := look(envServiceSpawned)
	spawned, _ := time.Parse(time.RFC3339Nano, spawnedText)
	return &serviceSpec{name: name, unit: unit, maxRuntime: d, spawned: spawned}
}

// withoutServiceEnv drops the service markers from an environment.
func withoutServiceEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		for _, k := range []string{envServiceName, envServiceUnit, envServiceMaxRuntime, envServiceSpawned} {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
}

// SpawnService starts req as a transient service unit of the user manager:
// a deny-list jail with no terminal, its output in the slot's transcript,
// stopped by systemd at its runtime cap. It returns the unit's name once
// systemd has started it.
func SpawnService(ctx context.Context, req ServiceRequest) (string, error) {
	if !slot.ValidName(req.Name) {
		return "", fmt.Errorf("invalid service name %q: use letters, digits, '.', '_' and '-'", req.Name)
	}
	if len(req.Command) == 0 {
		return "", errors.New("no command given for the service")
	}
	if req.MaxRuntime <= 0 {
		req.MaxRuntime = systemd.DefaultMaxRuntime
	}
	h, err := jail.GatherHost()
	if err != nil {
		return "", err
	}
	reg, err := slot.Open(h.AisanHome)
	if err != nil {
		return "", err
	}
	if e, err := reg.Lookup(req.Name); err == nil && e.State != slot.Exited {
		return "", fmt.Errorf("a slot named %q is %s; 'aisan kill %s' ends it", req.Name, e.State, req.Name)
	}
	getenv := managerEnv(h)
	m, err := systemd.Connect(ctx, getenv)
	if err != nil {
		// The manager's own hints stay on the chain.
		return "", fmt.Errorf("headless services run as systemd units: %w", err)
	}
	defer m.Close()
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding aisan's own binary: %w", err)
	}
	unit := systemd.ServiceName(req.Name)
	logDir := h.AisanHome + "/services"
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", logDir, err)
	}
	spawned := time.Now()
	env := append(withoutServiceEnv(h.Env),
		envServiceName+"="+req.Name,
		envServiceUnit+"="+unit,
		envServiceMaxRuntime+"="+req.MaxRuntime.String(),
		envServiceSpawned+"="+spawned.Format(time.RFC3339Nano),
		// The unit is the jail's cgroup; no scope inside it.
		EnvNoScope+"=1",
	)
	svc := systemd.Service{
		Unit:             unit,
		Description:      "aisan service " + req.Name,
		Argv:             append([]string{self, "run", "--"}, req.Command...),
		Env:              env,
		Dir:              h.Cwd,
		MaxRuntime:       req.MaxRuntime,
		RestartOnFailure: req.RestartOnFailure,
		// aisan's own messages; the command's output goes to the
		// slot's transcript.
		Output: logDir + "/" + req.Name + ".log",
		Limits: systemd.Limits(req.Limits),
		// At its cap or killed, a service fails; it must not stay
		// behind as a failed unit. Its wrapper records the end.
		Collect: true,
	}
	if err := m.StartService(ctx, svc); err != nil {
		return "", err
	}
	// Return once the service's slot is registered, so that 'aisan list'
	// right after shows it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if e, err := reg.Lookup(req.Name); err == nil && e.Unit == unit && e.Start.Equal(spawned) {
			return unit, nil
		}
		if st, err := m.Status(ctx, unit); err == nil && !st.Active() {
			return "", fmt.Errorf("service %s ended at once (result %q); see %s and 'journalctl --user -u %s'", unit, st.Result, svc.Output, unit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return unit, nil
}

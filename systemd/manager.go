package systemd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// Timeouts for talking to the manager. The manager answers in
// milliseconds; these only bound a wedged manager or bus.
const (
	// probeTimeout bounds connecting and the first call.
	probeTimeout = 2 * time.Second
	// jobTimeout bounds the wait for a start job's result.
	jobTimeout = 10 * time.Second
	// pollInterval is how often WaitInactive asks for the unit's state.
	pollInterval = 20 * time.Millisecond
)

// D-Bus error names we branch on.
const (
	errUnitExists = "org.freedesktop.systemd1.UnitExists"
	errNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"
	errNotLoaded  = "org.freedesktop.systemd1.LoadFailed"
)

// ErrUnitExists is wrapped by the error from starting a unit whose name
// is taken by a unit that is still loaded and not failed (a live slot of
// the same name, usually).
var ErrUnitExists = errors.New("unit name in use")

// ErrNoSuchUnit is wrapped by the error from acting on a unit that is not
// loaded: the scope is gone, or the slot ran without one.
var ErrNoSuchUnit = errors.New("no such unit")

// Manager is a connection to the calling user's systemd manager. Its
// methods are safe for concurrent use. Close it when done.
//
// A launch needs one call of it (StartTransientUnit) and its job's end, so
// that much travels over one connection of our own: over the manager's
// private socket every client gets the manager's signals, with no match
// rule and no subscription to set up. The rest (unit properties, stop,
// kill, unit files) goes through go-systemd, whose pair of connections is
// opened on first use: a launch never pays for it.
type Manager struct {
	// calls is our connection, authenticated (and registered, on a bus).
	calls *dbus.Conn
	// obj is the manager object on calls.
	obj dbus.BusObject
	// jobs routes JobRemoved signals to the starts waiting for them.
	jobs jobWaiters
	// dial opens another connection like calls, for go-systemd.
	dial func() (*dbus.Conn, error)
	// sdOnce guards sdConn, go-systemd's connection pair.
	sdOnce sync.Once
	sdConn *sd.Conn
	sdErr  error
	// via says how we reached the manager, for diagnostics.
	via string
}

// jobWaiters hands each job's result to the start waiting for it. The
// lock is held from the start call until its waiter is registered, so a
// job that ends before the reply has been read is not missed.
type jobWaiters struct {
	mu      sync.Mutex
	waiting map[dbus.ObjectPath]chan string
}

func (j *jobWaiters) deliver(sig *dbus.Signal) {
	if sig.Name != "org.freedesktop.systemd1.Manager.JobRemoved" || len(sig.Body) < 4 {
		return
	}
	job, ok1 := sig.Body[1].(dbus.ObjectPath)
	res, ok2 := sig.Body[3].(string)
	if !ok1 || !ok2 {
		return
	}
	j.mu.Lock()
	ch := j.waiting[job]
	delete(j.waiting, job)
	j.mu.Unlock()
	if ch != nil {
		ch <- res
	}
}

// sd returns go-systemd's connection to the same manager, opening it on
// first use.
func (m *Manager) sd() (*sd.Conn, error) {
	m.sdOnce.Do(func() {
		m.sdConn, m.sdErr = sd.NewConnection(m.dial)
		if m.sdErr != nil {
			m.sdErr = fmt.Errorf("connecting to the user manager (%s): %w", m.via, m.sdErr)
		}
	})
	return m.sdConn, m.sdErr
}

// Connect connects to the calling user's systemd manager: over its private
// socket $XDG_RUNTIME_DIR/systemd/private (what systemctl --user and
// systemd-run --user use; no bus daemon involved), else over the session
// bus, and checks that it answers. getenv is os.Getenv outside tests.
//
// When there is no manager to reach, the error is a *[NoManagerError].
// Connect never changes the process environment (godbus's own session bus
// lookup would set DBUS_SESSION_BUS_ADDRESS).
func Connect(ctx context.Context, getenv func(string) string) (*Manager, error) {
	addr, err := findManager(getenv)
	if err != nil {
		return nil, err
	}
	var first error
	if addr.private != "" {
		m, err := dial(ctx, "unix:path="+dbus.EscapeBusAddressValue(addr.private), false)
		if err == nil {
			m.via = addr.private
			return m, nil
		}
		first = fmt.Errorf("connecting to %s: %w", addr.private, err)
	}
	if addr.bus != "" {
		m, err := dial(ctx, addr.bus, true)
		if err == nil {
			m.via = "session bus " + addr.bus
			return m, nil
		}
		if first == nil {
			first = fmt.Errorf("reaching org.freedesktop.systemd1 on the session bus %s: %w", addr.bus, err)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &NoManagerError{Reason: first.Error(), Err: first, Booted: isBooted()}
}

// dial opens a connection to address, authenticates as our uid with
// EXTERNAL, says Hello when it is a bus (not the manager's private socket)
// and gets the manager's job signals on it. Over a bus it also checks that
// the manager answers there (the private socket is the manager's own).
func dial(ctx context.Context, address string, bus bool) (*Manager, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	open := func(ctx context.Context) (*dbus.Conn, error) {
		c, err := dbus.Dial(address)
		if err != nil {
			return nil, err
		}
		// The connection's own context would close it when ctx ends;
		// only the handshake is bounded by ctx.
		stop := context.AfterFunc(ctx, func() { c.Close() })
		err = c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))})
		if err == nil && bus {
			err = c.Hello()
		}
		if !stop() {
			// ctx ended mid-handshake and closed c; say so rather than
			// report the read on a closed connection.
			c.Close()
			return nil, fmt.Errorf("no answer within %v", probeTimeout)
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	calls, err := open(ctx)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		calls: calls,
		obj:   calls.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1"),
		jobs:  jobWaiters{waiting: map[dbus.ObjectPath]chan string{}},
		dial: func() (*dbus.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			defer cancel()
			return open(ctx)
		},
	}
	sigs := make(chan *dbus.Signal, 16)
	calls.Signal(sigs)
	go func() {
		for sig := range sigs {
			m.jobs.deliver(sig)
		}
	}()
	if bus {
		// Over a bus the manager's signals come only through a match
		// rule, and it emits JobRemoved only while some client is
		// subscribed. The subscription is also the check that the
		// manager is on this bus at all.
		rule := "type='signal',sender='org.freedesktop.systemd1',interface='org.freedesktop.systemd1.Manager',member='JobRemoved'"
		if err := calls.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.AddMatch", 0, rule).Err; err != nil {
			calls.Close()
			return nil, fmt.Errorf("subscribing to job signals: %w", err)
		}
		if err := m.obj.CallWithContext(ctx, "org.freedesktop.systemd1.Manager.Subscribe", 0).Err; err != nil {
			calls.Close()
			return nil, fmt.Errorf("subscribing to job signals: %w", err)
		}
	}
	return m, nil
}

// Close closes the connections.
func (m *Manager) Close() {
	m.calls.Close()
	// After Close, sd() opens nothing.
	m.sdOnce.Do(func() { m.sdErr = errors.New("the connection to the user manager is closed") })
	if m.sdConn != nil {
		m.sdConn.Close()
	}
}

// Via says how the manager was reached: the private socket's path, or
// "session bus <address>".
func (m *Manager) Via() string { return m.via }

// managerProperty reads a property of org.freedesktop.systemd1.Manager.
func (m *Manager) managerProperty(ctx context.Context, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := m.obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0,
		"org.freedesktop.systemd1.Manager", name).Store(&v)
	return v, err
}

// Version returns the manager's version, such as "252.39-1~deb12u2".
func (m *Manager) Version(ctx context.Context) (string, error) {
	v, err := m.managerProperty(ctx, "Version")
	if err != nil {
		return "", fmt.Errorf("reading the user manager's version: %w", err)
	}
	s, _ := v.Value().(string)
	return s, nil
}

// StartScope creates the transient scope unit around the running
// processes pids and waits until systemd has moved them into it.
// description names the slot ("aisan jail for slot myrepo-3f9c2a1b"); l
// sets its limits.
//
// Only the processes named move: children they forked before the call
// stay where they are. A launcher therefore names every process that
// exists and holds them (on a pipe) before any of them forks or execs
// what it must not run outside the scope; it releases them once
// StartScope returned. Everything they fork afterwards is born in the
// scope.
//
// If a failed unit of the same name is left over, StartScope resets it and
// tries once more; if a live one holds the name, the error wraps
// [ErrUnitExists]. On any error the caller must assume each process may
// or may not be in the scope, and kill them rather than run the jail.
func (m *Manager) StartScope(ctx context.Context, unit, description string, pids []int, l Limits) error {
	if !strings.HasSuffix(unit, scopeSuffix) {
		return fmt.Errorf("starting scope %q: the name does not end in %s", unit, scopeSuffix)
	}
	if len(pids) == 0 {
		return fmt.Errorf("starting scope %s: no process to put in it", unit)
	}
	ids := make([]uint32, len(pids))
	for i, pid := range pids {
		if pid <= 0 {
			return fmt.Errorf("starting scope %s: invalid pid %d", unit, pid)
		}
		ids[i] = uint32(pid)
	}
	props := []sd.Property{
		sd.PropDescription(description),
		sd.PropPids(ids...),
	}
	props = append(props, l.properties()...)
	return m.startTransient(ctx, unit, props, pids[0])
}

// startTransient starts a transient unit with mode "fail" (what
// systemd-run uses) and waits for the job. pid is the (first) process a
// scope adopts, 0 for a service; it only improves error messages.
func (m *Manager) startTransient(ctx context.Context, unit string, props []sd.Property, pid int) error {
	for retried := false; ; retried = true {
		ch, err := m.startJob(ctx, unit, props)
		if isDBusError(err, errUnitExists) {
			if !retried {
				// A failed unit keeps its name until reset. Resetting
				// a unit that is not failed is a no-op, so a live one
				// still collides on the retry.
				if err := m.resetFailed(ctx, unit); err != nil && !isDBusError(err, errNoSuchUnit) {
					return fmt.Errorf("resetting the failed unit %s before reuse: %w", unit, err)
				}
				continue
			}
			st, _ := m.Status(ctx, unit)
			return fmt.Errorf("starting %s: a unit of that name is %s: %w", unit, st.describe(), ErrUnitExists)
		}
		if err != nil {
			return fmt.Errorf("starting %s: %w", unit, err)
		}
		res, err := waitJob(ctx, ch, jobTimeout)
		if err != nil {
			return fmt.Errorf("starting %s: %w", unit, err)
		}
		if res != "done" {
			return m.startFailed(ctx, unit, res, pid)
		}
		return nil
	}
}

// startJob calls StartTransientUnit (mode "fail", no auxiliary units) on
// our own connection and returns the channel the job's result arrives on.
func (m *Manager) startJob(ctx context.Context, unit string, props []sd.Property) (<-chan string, error) {
	ch := make(chan string, 1)
	m.jobs.mu.Lock()
	defer m.jobs.mu.Unlock()
	var job dbus.ObjectPath
	aux := []struct {
		Name  string
		Props []sd.Property
	}{}
	err := m.obj.CallWithContext(ctx, "org.freedesktop.systemd1.Manager.StartTransientUnit", 0, unit, "fail", props, aux).Store(&job)
	if err != nil {
		return nil, err
	}
	m.jobs.waiting[job] = ch
	return ch, nil
}

// resetFailed calls ResetFailedUnit on our own connection.
func (m *Manager) resetFailed(ctx context.Context, unit string) error {
	return m.obj.CallWithContext(ctx, "org.freedesktop.systemd1.Manager.ResetFailedUnit", 0, unit).Err
}

// waitJob waits for a job's result, at most timeout (if positive) and no
// longer than ctx allows.
func waitJob(ctx context.Context, ch <-chan string, timeout time.Duration) (string, error) {
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	select {
	case res := <-ch:
		return res, nil
	case <-expire:
		return "", fmt.Errorf("the job did not finish within %v", timeout)
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for the job: %w", ctx.Err())
	}
}

// startFailed explains a start job whose result was not "done", then resets
// the unit so that its name can be used again.
func (m *Manager) startFailed(ctx context.Context, unit, res string, pid int) error {
	st, _ := m.Status(ctx, unit)
	_ = m.resetFailed(ctx, unit)
	msg := fmt.Sprintf("starting %s: job %s", unit, res)
	if st.Result != "" && st.Result != "success" {
		msg += fmt.Sprintf(" (unit result %q", st.Result)
		if st.ExecMainStatus != 0 {
			msg += fmt.Sprintf(", exit status %d", st.ExecMainStatus)
		}
		msg += ")"
	}
	switch {
	case st.Result == "resources" && pid > 0:
		// The manager moves pid by writing to cgroup.procs, which needs
		// write access to the common parent of both cgroups.
		msg += fmt.Sprintf(": systemd could not move pid %d out of cgroup %s; start aisan from inside your user session's cgroup tree (a login session or a unit of your user manager), not from a system service or another user's cgroup", pid, procCgroup(pid))
	case strings.HasSuffix(unit, serviceSuffix):
		msg += fmt.Sprintf(": see journalctl --user -u %s", unit)
	}
	return errors.New(msg)
}

// procCgroup returns pid's cgroup v2 path, or "(unknown)".
func procCgroup(pid int) string {
	p, err := ProcCgroup(pid)
	if err != nil {
		return "(unknown)"
	}
	return p
}

// KillUnit sends sig to every process of unit (systemd's KillUnit with
// whom "all"). It returns at once; use [Manager.WaitInactive] to wait for
// the unit to end. When the unit is not loaded, the error wraps
// [ErrNoSuchUnit].
func (m *Manager) KillUnit(ctx context.Context, unit string, sig syscall.Signal) error {
	conn, err := m.sd()
	if err != nil {
		return err
	}
	err = conn.KillUnitWithTarget(ctx, unit, sd.All, int32(sig))
	if isDBusError(err, errNoSuchUnit) || isDBusError(err, errNotLoaded) {
		return fmt.Errorf("killing %s: %w", unit, ErrNoSuchUnit)
	}
	if err != nil {
		return fmt.Errorf("killing %s: %w", unit, err)
	}
	return nil
}

// StopUnit stops unit (SIGTERM to its processes, SIGKILL after its stop
// timeout) and waits for the stop job, as long as ctx allows. A stopped
// service is not restarted by Restart=. Stopping a unit that is not loaded
// succeeds.
func (m *Manager) StopUnit(ctx context.Context, unit string) error {
	conn, err := m.sd()
	if err != nil {
		return err
	}
	ch := make(chan string, 1)
	_, err = conn.StopUnitContext(ctx, unit, "replace", ch)
	if isDBusError(err, errNoSuchUnit) || isDBusError(err, errNotLoaded) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stopping %s: %w", unit, err)
	}
	res, err := waitJob(ctx, ch, 0)
	if err != nil {
		return fmt.Errorf("stopping %s: %w", unit, err)
	}
	if res != "done" {
		return fmt.Errorf("stopping %s: job %s", unit, res)
	}
	return nil
}

// ResetFailed forgets that unit failed, freeing its name. A unit that is
// not loaded or not failed is left alone.
func (m *Manager) ResetFailed(ctx context.Context, unit string) error {
	conn, err := m.sd()
	if err != nil {
		return err
	}
	err = conn.ResetFailedUnitContext(ctx, unit)
	if err != nil && !isDBusError(err, errNoSuchUnit) {
		return fmt.Errorf("resetting failed unit %s: %w", unit, err)
	}
	return nil
}

// UnitStatus is what the manager says about one unit.
type UnitStatus struct {
	// Name is the unit's name.
	Name string
	// LoadState is "loaded", or "not-found" once a transient unit is gone.
	LoadState string
	// ActiveState is "active", "activating", "deactivating",
	// "inactive" or "failed".
	ActiveState string
	// SubState is the type-specific state: "running", "dead", "exited"…
	SubState string
	// Result is how the unit last ended: "success", "timeout" (a service
	// stopped at RuntimeMaxSec=), "exit-code", "signal", "resources"…
	Result string
	// ExecMainStatus is a service's main process's exit status or signal
	// number; 0 for scopes.
	ExecMainStatus int
	// ControlGroup is the unit's cgroup path below the cgroup2 root, ""
	// when it has none.
	ControlGroup string
}

// Active reports whether the unit runs, or is starting or stopping.
func (s UnitStatus) Active() bool {
	switch s.ActiveState {
	case "active", "activating", "deactivating", "reloading", "refreshing":
		return true
	}
	return false
}

func (s UnitStatus) describe() string {
	if s.ActiveState == "" {
		return "in an unknown state"
	}
	return s.ActiveState + " (" + s.SubState + ")"
}

// Status reads unit's state. A unit that is not loaded (a transient unit
// that ended) reads as LoadState "not-found", ActiveState "inactive".
func (m *Manager) Status(ctx context.Context, unit string) (UnitStatus, error) {
	conn, err := m.sd()
	if err != nil {
		return UnitStatus{}, err
	}
	st := UnitStatus{Name: unit}
	props, err := conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return st, fmt.Errorf("reading the state of %s: %w", unit, err)
	}
	st.LoadState, _ = props["LoadState"].(string)
	st.ActiveState, _ = props["ActiveState"].(string)
	st.SubState, _ = props["SubState"].(string)
	typ := ""
	switch {
	case strings.HasSuffix(unit, scopeSuffix):
		typ = "Scope"
	case strings.HasSuffix(unit, serviceSuffix):
		typ = "Service"
	}
	if typ == "" || st.LoadState != "loaded" {
		return st, nil
	}
	tprops, err := conn.GetUnitTypePropertiesContext(ctx, unit, typ)
	if err != nil {
		return st, fmt.Errorf("reading the state of %s: %w", unit, err)
	}
	st.Result, _ = tprops["Result"].(string)
	st.ControlGroup, _ = tprops["ControlGroup"].(string)
	if v, ok := tprops["ExecMainStatus"].(int32); ok {
		st.ExecMainStatus = int(v)
	}
	return st, nil
}

// WaitInactive waits until unit is no longer active (after KillUnit, the
// scope ends a moment later, once its cgroup is empty), polling its state.
// Bound the wait with ctx.
func (m *Manager) WaitInactive(ctx context.Context, unit string) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		st, err := m.Status(ctx, unit)
		if err != nil {
			return err
		}
		if !st.Active() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to end (it is %s): %w", unit, st.describe(), ctx.Err())
		case <-t.C:
		}
	}
}

// UnitProperty reads one property of unit's org.freedesktop.systemd1.Unit
// interface ("Description", "UnitFileState"…), as its Go value.
func (m *Manager) UnitProperty(ctx context.Context, unit, name string) (any, error) {
	conn, err := m.sd()
	if err != nil {
		return nil, err
	}
	p, err := conn.GetUnitPropertyContext(ctx, unit, name)
	if err != nil {
		return nil, fmt.Errorf("reading %s of %s: %w", name, unit, err)
	}
	return p.Value.Value(), nil
}

// UnitTypeProperty reads one property of unit's type-specific interface,
// typ being "Scope" or "Service" ("MemoryMax", "Environment"…).
func (m *Manager) UnitTypeProperty(ctx context.Context, unit, typ, name string) (any, error) {
	conn, err := m.sd()
	if err != nil {
		return nil, err
	}
	p, err := conn.GetUnitTypePropertyContext(ctx, unit, typ, name)
	if err != nil {
		return nil, fmt.Errorf("reading %s.%s of %s: %w", typ, name, unit, err)
	}
	return p.Value.Value(), nil
}

// isDBusError reports whether err is a D-Bus error reply named name.
func isDBusError(err error, name string) bool {
	var de dbus.Error
	if errors.As(err, &de) {
		return de.Name == name
	}
	var dep *dbus.Error
	return errors.As(err, &dep) && dep.Name == name
}

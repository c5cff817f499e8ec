package preflight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/shared/distro"
	"github.com/aisan-dev/aisan/systemd"
)

// EnvTestBreak is a test seam: set to one of [Breaks], it removes that
// denial from the probe jail's Spec before it is compiled, so a test can
// watch the matching live check report FAIL. It never weakens a real
// agent's jail: only preflight's own probe jail reads it.
const EnvTestBreak = "AISAN_PREFLIGHT_TEST_BREAK"

// Breaks are the values [EnvTestBreak] accepts, one per denial.
var Breaks = []string{
	// pid drops the jail's fresh /proc, so the host's procfs (part of the
	// recursive root bind) shows through: foreign PIDs become visible.
	// The PID namespace itself stays: without it, bwrap refuses
	// --as-pid-1 and the launcher's init cannot run.
	"pid",
	// cgroup drops the read-only bind over /sys/fs/cgroup.
	"cgroup",
	// bus drops the masks and the proxy socket over the session bus and
	// gives the jail the host's DBUS_SESSION_BUS_ADDRESS back.
	"bus",
	// systemd drops the tmpfs over $XDG_RUNTIME_DIR/systemd.
	"systemd",
}

// Env is what the checks know about the host, and the probes they share.
// Every probe runs at most once, for whichever check asks first.
type Env struct {
	// Getenv reads the environment: os.Getenv outside tests.
	Getenv func(string) string
	// Self is the aisan binary; the probe jail runs it again inside.
	Self string
	// Cwd is the real working directory, "" when it no longer exists.
	Cwd string
	// Home is the user's home directory.
	Home string
	// UID and Euid are the real and effective user IDs.
	UID, Euid int
	// Family is the host's distribution family, for fix commands.
	Family distro.Family
	// Break is the value of [EnvTestBreak].
	Break string

	bwrap   lazy[bwrapInfo]
	userns  lazy[usernsResult]
	manager lazy[managerResult]
	plan    lazy[planResult]
	hostBus lazy[hostBusResult]
	live    lazy[liveResult]
}

// NewEnv gathers the facts checks start from. It fails only on a test
// seam it does not know, which would otherwise pass silently.
func NewEnv() (*Env, error) {
	e := &Env{
		Getenv: os.Getenv,
		UID:    os.Getuid(),
		Euid:   os.Geteuid(),
		Family: distro.Detect(),
		Break:  os.Getenv(EnvTestBreak),
	}
	if e.Break != "" && !slices.Contains(Breaks, e.Break) {
		return nil, fmt.Errorf("%s=%q: want one of %s", EnvTestBreak, e.Break, strings.Join(Breaks, ", "))
	}
	if self, err := os.Executable(); err == nil {
		e.Self = self
	}
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			e.Cwd = real
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		e.Home = h
	}
	return e, nil
}

// Close releases what the probes hold open (the user manager
// connection). Call it once the checks have returned.
func (e *Env) Close() {
	// Claiming a probe that never ran keeps any late caller from opening
	// a connection nobody closes.
	e.manager.once.Do(func() {})
	if m := e.manager.v.m; m != nil {
		m.Close()
	}
}

// lazy holds a probe's result, computed once.
type lazy[T any] struct {
	once sync.Once
	v    T
}

func (l *lazy[T]) get(f func() T) T {
	l.once.Do(func() { l.v = f() })
	return l.v
}

// managerResult is the user manager probe: a connection or why not.
type managerResult struct {
	m   *systemd.Manager
	err error
}

// managerProbe connects to the user manager exactly as a launch does.
func (e *Env) managerProbe(ctx context.Context) managerResult {
	return e.manager.get(func() managerResult {
		m, err := systemd.Connect(ctx, e.Getenv)
		return managerResult{m: m, err: err}
	})
}

// runtimeDirs are the places the user's runtime directory may be: the
// one $XDG_RUNTIME_DIR names, and /run/user/UID, which an agent can name
// by itself even when the variable is unset or points elsewhere.
func (e *Env) runtimeDirs() []string {
	var out []string
	if rt := e.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		out = append(out, filepath.Clean(rt))
	}
	std := "/run/user/" + strconv.Itoa(e.UID)
	if !slices.Contains(out, std) {
		if fi, err := os.Stat(std); err == nil && fi.IsDir() {
			out = append(out, std)
		}
	}
	return out
}

// tilde shortens a path under the home directory to ~/..., as the user
// types it.
func (e *Env) tilde(p string) string {
	if e.Home == "" || e.Home == "/" {
		return p
	}
	if p == e.Home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, e.Home+"/"); ok {
		return "~/" + rest
	}
	return p
}

package systemd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/godbus/dbus/v5"
)

// EnvRequireScope names the environment variable that, set to "1", makes a
// launch without a scope an error instead of a warning.
const EnvRequireScope = "AISAN_REQUIRE_SCOPE"

// ScopeRequired reports whether getenv says AISAN_REQUIRE_SCOPE=1.
func ScopeRequired(getenv func(string) string) bool {
	return getenv(EnvRequireScope) == "1"
}

// The hints a user without a manager needs, verbatim.
const (
	hintLinger = "to get a user manager that outlives your logins (SSH included), run: loginctl enable-linger $USER"
	hintXDG    = "if your user manager runs but this shell lost its address (su, sudo, cron), run: export XDG_RUNTIME_DIR=/run/user/$(id -u)"
	hintNoInit = "nothing to do on this host: jails run without a scope (no limits) and 'aisan kill <slot>' works through the PID namespace"
)

// NoManagerError says that no systemd user manager could be reached, why,
// and what the user can do about it. A launcher that gets it runs the jail
// without a scope (or refuses under AISAN_REQUIRE_SCOPE=1) and prints the
// error and its hints once.
type NoManagerError struct {
	// Reason says what was missing or failed, in words for the user:
	// "XDG_RUNTIME_DIR is not set".
	Reason string
	// Err is the underlying error, if any.
	Err error
	// Booted reports whether the host runs systemd as its init
	// (/run/systemd/system exists); when it does not, no command can give
	// the user a manager and the hints say so.
	Booted bool
}

func (e *NoManagerError) Error() string {
	return "no systemd user manager: " + e.Reason
}

func (e *NoManagerError) Unwrap() error { return e.Err }

// Hints returns the lines that tell the user how to get a user manager,
// most likely remedy first.
func (e *NoManagerError) Hints() []string {
	if !e.Booted {
		return []string{hintNoInit}
	}
	return []string{hintLinger, hintXDG}
}

// Detect reports whether the calling user's systemd manager is reachable,
// by connecting to it exactly as [Connect] does: nil if it is, a
// *[NoManagerError] if there is none. Any other error means a manager
// exists but misbehaves.
//
// A launcher should call [Connect] instead and keep the connection; Detect
// is for preflight and test gating.
func Detect(ctx context.Context, getenv func(string) string) error {
	m, err := Connect(ctx, getenv)
	if err != nil {
		return err
	}
	m.Close()
	return nil
}

// managerAddress is where a user manager listens, as found by the cheap
// (no connection) half of detection.
type managerAddress struct {
	private string // path of $XDG_RUNTIME_DIR/systemd/private, "" if not a socket
	bus     string // D-Bus address of the session bus, "" if none
}

// findManager does the checks that need no connection, cheapest first: is
// XDG_RUNTIME_DIR set, is $XDG_RUNTIME_DIR/systemd/private a socket, is
// there a session bus to fall back to. It fails only when no address is
// left to try.
func findManager(getenv func(string) string) (managerAddress, error) {
	booted := isBooted()
	rt := getenv("XDG_RUNTIME_DIR")
	if rt == "" {
		// Without it we do not guess /run/user/UID: DBUS_SESSION_BUS_ADDRESS
		// left over from su or sudo may name another user's bus, and
		// systemd-run --user refuses the same way.
		return managerAddress{}, &NoManagerError{Reason: "XDG_RUNTIME_DIR is not set", Booted: booted}
	}
	if !filepath.IsAbs(rt) {
		return managerAddress{}, &NoManagerError{Reason: fmt.Sprintf("XDG_RUNTIME_DIR=%q is not an absolute path", rt), Booted: booted}
	}
	var addr managerAddress
	priv := filepath.Join(rt, "systemd", "private")
	privErr := isSocket(priv)
	if privErr == nil {
		addr.private = priv
	}
	addr.bus = getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr.bus == "" {
		if bus := filepath.Join(rt, "bus"); isSocket(bus) == nil {
			addr.bus = "unix:path=" + dbus.EscapeBusAddressValue(bus)
		}
	}
	if addr.private == "" && addr.bus == "" {
		return managerAddress{}, &NoManagerError{
			Reason: fmt.Sprintf("no user manager listens at %s and there is no session bus", priv),
			Err:    privErr,
			Booted: booted,
		}
	}
	return addr, nil
}

// isSocket returns nil if path is a Unix socket.
func isSocket(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s is not a socket", path)
	}
	return nil
}

// isBooted is sd_booted(): the host's init is systemd.
func isBooted() bool {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// IsNoManager reports whether err says that there is no user manager.
func IsNoManager(err error) bool {
	var nm *NoManagerError
	return errors.As(err, &nm)
}

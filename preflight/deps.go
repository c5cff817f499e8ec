package preflight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/shared/distro"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
	"github.com/aisan-dev/aisan/systemd"
)

// commandTimeout bounds each helper command preflight runs (bwrap
// --version, the user namespace probe). They answer in milliseconds; the
// bound only keeps a wedged host from hanging preflight.
const commandTimeout = 3 * time.Second

// bwrapInfo is the bwrap the launcher would run.
type bwrapInfo struct {
	Path    string // absolute
	Err     error  // from the PATH lookup
	Version string // "bubblewrap 0.8.0", "" when --version failed
	Setuid  bool   // setuid root
	// Choice is how the launcher chose it (see package hostprog).
	Choice hostprog.Choice
}

func (e *Env) bwrapProbe(ctx context.Context) bwrapInfo {
	return e.bwrap.get(func() bwrapInfo {
		// The launcher's own choice, so that preflight probes, and
		// vouches for, the bwrap a launch runs.
		c := hostprog.Find("bwrap", e.Getenv("PATH"))
		if !c.Found() {
			return bwrapInfo{Err: exec.ErrNotFound}
		}
		abs := c.Path
		info := bwrapInfo{Path: abs, Choice: c}
		if fi, err := os.Stat(abs); err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			info.Setuid = fi.Mode()&os.ModeSetuid != 0 && ok && st.Uid == 0
		}
		info.Version = versionLine(ctx, abs)
		return info
	})
}

// versionLine is the first line bin prints for --version, "" when it
// fails or does not answer within commandTimeout.
func versionLine(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// install is the command that installs tool here.
func (e *Env) install(tool string) string { return distro.InstallCommand(e.Family, tool) }

func checkBwrap(ctx context.Context, e *Env) Finding {
	bw := e.bwrapProbe(ctx)
	if bw.Err != nil {
		return Finding{Status: Fail, Detail: "not installed (not found in PATH): aisan cannot build a jail", Fix: e.install("bwrap")}
	}
	v := bw.Version
	if v == "" {
		v = "version unknown: bwrap --version failed"
	}
	if bw.Setuid {
		v += ", setuid root"
	}
	return e.withRisk(Finding{Detail: fmt.Sprintf("%s (%s)", bw.Path, v)}, "bwrap", bw.Choice)
}

// withRisk adds to f, the finding of the program name that a launch
// runs outside every jail, what a jail could do about it, as a warning:
// the files of that name passed over on PATH (some jail may have planted
// them; you might still run one by hand), or the chosen file itself,
// when PATH has none that a jail could not change. Not as root, to whom
// every file is the jail's to write: the root check says so.
func (e *Env) withRisk(f Finding, name string, c hostprog.Choice) Finding {
	if e.Euid == 0 {
		return f
	}
	return programRisk(f, name, c, e.tilde, e.install(name))
}

// programRisk is [Env.withRisk]'s decision; install is how to get a
// name no jail can change.
func programRisk(f Finding, name string, c hostprog.Choice, tilde func(string) string, install string) Finding {
	if len(c.Passed) > 0 {
		var paths, rm []string
		for _, p := range c.Passed {
			paths = append(paths, tilde(p.Path))
			rm = append(rm, p.Path)
		}
		f.Status = Warn
		f.Detail += fmt.Sprintf("; passed over %s, earlier on PATH: a jail could have put it there (it can write %s), so launches do not run it",
			strings.Join(paths, " and "), tilde(c.Passed[0].Open))
		f.Fix = "ls -l " + strings.Join(rm, " ") + "   # remove what you did not install"
		return f
	}
	if c.Open != "" {
		f.Status = Warn
		f.Detail += fmt.Sprintf("; a jail could replace it (it can write %s), and launches run it outside the jail: it is read-only in jails, but a %s put earlier on PATH would be run instead", tilde(c.Open), name)
		f.Fix = install
	}
	return f
}

func checkProxy(ctx context.Context, e *Env) Finding {
	if c := hostprog.Find(busproxy.ProxyName, e.Getenv("PATH")); c.Found() {
		return e.withRisk(proxyFound(c.Path, versionLine(ctx, c.Path)), busproxy.ProxyName, c)
	}
	if e.Getenv(busproxy.EnvNoProxy) == "1" {
		return Finding{Detail: "not installed; " + busproxy.EnvNoProxy + "=1 masks the session bus in jails anyway"}
	}
	return Finding{
		Status: Warn,
		Detail: "not installed: jails get a masked session bus (no keyring, notifications or portals inside)",
		Fix:    e.install(busproxy.ProxyName),
	}
}

// proxyFound is the finding for the xdg-dbus-proxy at path, which
// answered version to --version ("" when it did not).
func proxyFound(path, version string) Finding {
	if version == "" {
		return Finding{Detail: path + " (version unknown: --version failed)"}
	}
	return Finding{Detail: fmt.Sprintf("%s (%s)", path, version)}
}

func checkGit(ctx context.Context, e *Env) Finding {
	p, err := exec.LookPath("git")
	if err != nil {
		return Finding{Status: Warn, Detail: "not installed: agents use it for worktrees, diffs and commits", Fix: e.install("git")}
	}
	abs, _ := filepath.Abs(p)
	return Finding{Detail: abs}
}

// Fix lines for a missing user manager, verbatim.
const (
	fixLinger = "loginctl enable-linger $USER"
	fixXDG    = "export XDG_RUNTIME_DIR=/run/user/$(id -u)"
)

func checkUserManager(ctx context.Context, e *Env) Finding {
	r := e.managerProbe(ctx)
	if r.err == nil {
		detail := "reachable at " + e.tilde(r.m.Via())
		if v, err := r.m.Version(ctx); err == nil && v != "" {
			detail += " (systemd " + v + ")"
		}
		return Finding{Detail: detail}
	}
	var nm *systemd.NoManagerError
	if !errors.As(r.err, &nm) {
		return Finding{
			Status: Warn,
			Detail: fmt.Sprintf("the user manager does not answer: %v; jails run without a scope (no resource limits)", r.err),
			Fix:    "systemctl --user status",
		}
	}
	if !nm.Booted {
		return Finding{Detail: "none: this host's init is not systemd, so jails run without a scope (no resource limits); aisan kill works through the PID namespace"}
	}
	return Finding{
		Status: Warn,
		Detail: "none: " + nm.Reason + "; jails run without a scope (no resource limits)",
		Fix:    strings.Join(e.managerFixes(), "\n"),
	}
}

// managerFixes orders the two remedies for a missing user manager by what
// the host shows: a runtime directory with a manager in it means this
// shell only lost its address (su, sudo, cron); none means nothing keeps
// a manager for this user (SSH without linger).
func (e *Env) managerFixes() []string {
	if e.Getenv("XDG_RUNTIME_DIR") == "" {
		std := fmt.Sprintf("/run/user/%d", e.UID)
		if isSocket(filepath.Join(std, "systemd", "private")) || isSocket(filepath.Join(std, "bus")) {
			return []string{fixXDG}
		}
		return []string{fixLinger, fixXDG}
	}
	return []string{fixLinger}
}

func isSocket(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().Type() == os.ModeSocket
}

package jail

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/config"
	"github.com/aisan-dev/aisan/jail/history"
	"github.com/aisan-dev/aisan/jail/shared/distro"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
	"github.com/aisan-dev/aisan/jail/shared/userunit"
	"github.com/aisan-dev/aisan/jail/slot"
)

// Host is what a launch needs to know about the machine and the user,
// gathered once by [GatherHost]. Tests build it by hand.
type Host struct {
	// Bwrap is the path of bwrap.
	Bwrap string
	// Cwd is the real path of the working directory.
	Cwd string
	// Wd is the working directory as the caller's $PWD names it (through
	// a symbolic link, say) when that names Cwd; Cwd otherwise. A
	// deny-list jail starts there: bwrap sets PWD to the directory it
	// changes to, and a shell's pwd and cd .. follow PWD.
	Wd string
	// Env is the process environment.
	Env []string
	// Home is the user's home directory.
	Home string
	// AisanHome is the state directory.
	AisanHome string
	// RuntimeDir is $XDG_RUNTIME_DIR, or when that is unset (after su or
	// sudo, say) /run/user/UID if it exists and is ours: the user manager
	// and the bus still listen there, and the jail must hide them.
	RuntimeDir string
	// BwrapVersion is bwrap's version as [major, minor, patch] (overlay
	// mounts depend on it).
	BwrapVersion [3]int
	// Bus is what the bus decision needs: xdg-dbus-proxy's path and the
	// bus sockets that exist (its SlotDir is the planner's to fill in).
	Bus busproxy.HostFacts
	// RuntimeSystemd is set when $XDG_RUNTIME_DIR/systemd exists.
	RuntimeSystemd bool
	// StdManagerDir and StdBusSocket are the user manager's directory and
	// the bus socket under /run/user/UID, when $XDG_RUNTIME_DIR points
	// elsewhere and they exist: the manager listens there all the same.
	StdManagerDir, StdBusSocket string
	// StdRunDir is aisan's run directory under /run/user/UID in the same
	// case: the launches, supervisor and locks of aisan processes that
	// took the standard runtime directory (a user service's) are there.
	StdRunDir string
	// StateDirs are aisan's own directories that exist, by their real
	// paths (see [Host.GatherStateDirs]).
	StateDirs []string
	// OwnFiles are aisan's installed programs that this user could
	// replace, the files a symlinked configuration file leads to, and
	// the supervisor unit's file and drop-in directories, by real path;
	// Renamable the directories above them and
	// above StateDirs that this user could rename, shallowest first (see
	// ownfiles.go).
	OwnFiles, Renamable []string
	// Dev is what of /dev a deny-list jail gets back ([GatherDev]).
	Dev []DevEntry
}

// MissingError is a dependency that is not installed.
type MissingError struct {
	Tool string
	Err  error
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s is not installed (not found in PATH)", e.Tool)
}

func (e *MissingError) Unwrap() error { return e.Err }

// Hints names the command that installs the tool on this distribution.
func (e *MissingError) Hints() []string {
	return []string{"install it: " + distro.InstallCommand(distro.Detect(), e.Tool)}
}

// ErrNoCwd is returned when the working directory no longer exists.
var ErrNoCwd = errors.New("the current directory no longer exists")

// GatherHost reads the host facts a launch depends on and checks the
// state directory. It is the only place the planners' facts come from:
// [Plan] and the presets decide from the Host alone.
func GatherHost() (Host, error) {
	bwrap, err := FindBwrap()
	if err != nil {
		return Host{}, err
	}
	cwd, err := realCwd()
	if err != nil {
		return Host{}, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		// HOME unset (cron, some sudo setups): the agents themselves
		// fall back to the password database, and so do we.
		u, uerr := user.Current()
		if uerr != nil || u.HomeDir == "" {
			return Host{}, fmt.Errorf("finding the home directory: %w; set HOME", err)
		}
		home = u.HomeDir
	}
	ah, err := slot.Home()
	if err != nil {
		return Host{}, err
	}
	// A state dir inside the project (claude typed in ~ when ~ is a
	// dotfiles repository, or AISAN_HOME=./.aisan) is no risk to the
	// registry, which is read-only in every jail; it is not refused.
	// preflight still points it out.
	h := Host{
		Bwrap:      bwrap,
		Cwd:        cwd,
		Wd:         logicalWd(cwd),
		Env:        os.Environ(),
		Home:       home,
		AisanHome:  ah,
		RuntimeDir: RuntimeDir(os.Getenv),
	}
	if err := h.GatherFacts(); err != nil {
		return Host{}, err
	}
	return h, nil
}

// FindBwrap is the bwrap on PATH that every launch runs (a
// *[MissingError] when there is none): the first that no jail could have
// put there or changed, before one in a directory of the user's, which
// any deny-list jail can write (see package hostprog). A launch looks for
// it first, to start its stage before it gathers the rest.
func FindBwrap() (string, error) {
	c := hostprog.Find("bwrap", os.Getenv("PATH"))
	if !c.Found() {
		return "", &MissingError{Tool: "bwrap", Err: exec.ErrNotFound}
	}
	return c.Path, nil
}

// GatherFacts reads what the planners decide from, for the identity h
// already has (Bwrap, Env, Home, AisanHome, RuntimeDir): bwrap's version,
// the bus facts, the user manager's directories and aisan's own dirs.
// Callers that build a Host themselves (preflight's probe jail) call it
// too, so that no plan is made from facts nobody read.
func (h *Host) GatherFacts() error {
	h.Bus = busproxy.Gather(busLookup(*h), "")
	h.RuntimeSystemd = h.RuntimeDir != "" && isDir(filepath.Join(h.RuntimeDir, "systemd"))
	h.StdManagerDir, h.StdBusSocket, h.StdRunDir = "", "", ""
	if std := RuntimeDir(func(string) string { return "" }); std != "" && std != h.RuntimeDir {
		if d := filepath.Join(std, "systemd"); isDir(d) {
			h.StdManagerDir = d
		}
		if d := rundir.Aisan(std); isDir(d) {
			h.StdRunDir = d
		}
		sock := filepath.Join(std, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			h.StdBusSocket = sock
		}
	}
	h.GatherStateDirs()
	if self, err := os.Executable(); err == nil {
		h.OwnFiles = gatherOwnFiles(self)
	}
	h.OwnFiles = append(h.OwnFiles, linkedConfigs(h.StateDirs, h.configDirs()...)...)
	h.OwnFiles = append(h.OwnFiles, watchUnitFiles(h.StateDirs, userunit.Dirs(h.Getenv, h.Home)...)...)
	h.OwnFiles = append(h.OwnFiles, openPrograms(h.Bwrap, h.Bus.ProxyPath)...)
	h.Renamable = renamableAbove(append(slices.Clone(h.StateDirs), h.OwnFiles...), parentWritable)
	h.Dev = GatherDev("/dev")
	// A bwrap that cannot say its version leaves it unknown (zero): only
	// an overlay needs it, and Compile says so then. The launch itself
	// reports what is wrong with bwrap far better.
	if h.Bwrap != "" {
		h.BwrapVersion = cachedBwrapVersion(h.Bwrap, h.RunDir())
	}
	return nil
}

// busLookup is the environment the bus decision reads: the host's, with
// the runtime directory aisan settled on.
func busLookup(h Host) func(string) (string, bool) {
	env := lookupFunc(h.Env)
	return func(k string) (string, bool) {
		if k == "XDG_RUNTIME_DIR" && h.RuntimeDir != "" {
			return h.RuntimeDir, true
		}
		return env(k)
	}
}

// GatherStateDirs finds aisan's own directories (the state dir, the run
// dir, the configuration dir), by their real paths. Only those
// that exist are bound: a launch creates its state dir and runtime dir
// before it plans the jail, and a jail that is not a launch (preflight's
// probe, explain) has nothing of its own there.
func (h *Host) GatherStateDirs() {
	var dirs []string
	add := func(p string) {
		if p == "" || !isDir(p) {
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		for _, d := range dirs {
			if d == p || strings.HasPrefix(p, d+"/") {
				return
			}
		}
		dirs = append(dirs, p)
	}
	add(h.AisanHome)
	if h.RuntimeDir != "" {
		add(filepath.Join(h.RuntimeDir, "aisan"))
	}
	// Another state dir of the user's (AISAN_HOME set for this launch
	// only): its records are acted on by other invocations.
	if def := filepath.Join(h.Home, ".aisan"); def != h.AisanHome && isDir(def) {
		add(def)
	}
	// The configuration sets the next launch's options (strict, binds,
	// egress sockets): a jail that could write it would choose how the
	// next box is built.
	for _, d := range h.configDirs() {
		add(d)
	}
	h.StateDirs = dirs
}

// configDirs are where this launch reads the configuration, and where an
// aisan started without XDG_CONFIG_HOME would.
func (h Host) configDirs() []string {
	dirs := []string{config.Dir(h.Getenv, h.Home)}
	if h.Home != "" {
		dirs = append(dirs, config.DefaultDir(h.Home))
	}
	return dirs
}

// SlotDir is the slot's private run directory, for its sockets. Its name
// is a hash, so no project text reaches the proxy's command line.
func (h Host) SlotDir(slotName string) string {
	sum := sha256.Sum256([]byte(h.AisanHome + "\x00" + h.Cwd + "\x00" + slotName))
	return filepath.Join(h.RunDir(), hex.EncodeToString(sum[:8]))
}

// RunDir is aisan's run directory: the slots' run directories and the
// tools' version caches live there.
func (h Host) RunDir() string { return RunDir(h.RuntimeDir, h.AisanHome) }

// existingRunDir is [Host.RunDir] by its real path when it exists, ""
// otherwise.
func (h Host) existingRunDir() string {
	d := h.RunDir()
	if !isDir(d) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d
}

// stateRunDirs are aisan's run directories in this launch's state
// directory and in the default one (~/.aisan), by their real paths, that
// exist and are not [Host.existingRunDir]: the locks of an aisan without
// /run/user/UID are there (see jail/shared/rundir's LockDir).
func (h Host) stateRunDirs() []string {
	var out []string
	skip := h.existingRunDir()
	for _, d := range []string{h.AisanHome, filepath.Join(h.Home, ".aisan")} {
		if d == "" || (d != h.AisanHome && !filepath.IsAbs(h.Home)) {
			continue
		}
		r := rundir.StateRun(d)
		if !isDir(r) {
			continue
		}
		if e, err := filepath.EvalSymlinks(r); err == nil {
			r = e
		}
		if r != skip && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// stateSubdirs are the directories named name in the state directory and
// in ~/.aisan that exist, by their real paths.
func (h Host) stateSubdirs(name string) []string {
	var out []string
	for _, d := range []string{h.AisanHome, filepath.Join(h.Home, ".aisan")} {
		if d == "" || (d != h.AisanHome && !filepath.IsAbs(h.Home)) {
			continue
		}
		r := filepath.Join(d, name)
		if !isDir(r) {
			continue
		}
		if e, err := filepath.EvalSymlinks(r); err == nil {
			r = e
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// AisanRunDirs are aisan's run directories that exist, by their real
// paths: this launch's ([Host.RunDir]), /run/user/UID's when that is
// another, and the state directories' ([Host.stateRunDirs]). Every lock
// aisan takes is in one of them.
func (h Host) AisanRunDirs() []string {
	var out []string
	for _, d := range append([]string{h.existingRunDir(), h.StdRunDir}, h.stateRunDirs()...) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// UserRunDir is [RunDir] for this process's environment, "" when
// neither directory can be named.
func UserRunDir() string {
	if rt := RuntimeDir(os.Getenv); rt != "" {
		return RunDir(rt, "")
	}
	home, err := slot.Home()
	if err != nil {
		return ""
	}
	return RunDir("", home)
}

// RunDir is aisan's run directory for a runtime directory and a state
// directory: "aisan" in the runtime directory, or "run" in the state
// directory when there is no runtime directory (root on a server, a
// login without a session). Both are read-only in every jail.
func RunDir(runtimeDir, aisanHome string) string {
	if runtimeDir != "" {
		return rundir.Aisan(runtimeDir)
	}
	return rundir.StateRun(aisanHome)
}

func realCwd() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCwd, err)
	}
	if _, err := os.Stat(wd); err != nil {
		return "", fmt.Errorf("%w: %s", ErrNoCwd, wd)
	}
	real, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCwd, err)
	}
	return real, nil
}

// logicalWd is os.Getwd's answer, which is $PWD when that is absolute
// and names the working directory, if it leads to real; else real.
func logicalWd(real string) string {
	wd, err := os.Getwd()
	if err != nil || wd == real {
		return real
	}
	if r, err := filepath.EvalSymlinks(wd); err != nil || r != real {
		return real
	}
	return wd
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// LookupEnv is the host environment's value of key; the last entry
// wins, as in the process that inherits it.
func (h Host) LookupEnv(key string) (string, bool) { return lookupFunc(h.Env)(key) }

// Getenv is [Host.LookupEnv] without the flag: unset is "".
func (h Host) Getenv(key string) string {
	v, _ := h.LookupEnv(key)
	return v
}

// HistoryDirs are the agents' configuration directories as the agents in
// the jail will resolve them (the jail inherits the environment).
func (h Host) HistoryDirs() history.Dirs { return history.DirsFor(h.Home, h.Getenv) }

func lookupFunc(env []string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if len(env[i]) > len(key) && env[i][len(key)] == '=' && env[i][:len(key)] == key {
				return env[i][len(key)+1:], true
			}
		}
		return "", false
	}
}

// RuntimeDir is the user's runtime directory ([rundir.RuntimeDir]).
func RuntimeDir(getenv func(string) string) string { return rundir.RuntimeDir(getenv) }

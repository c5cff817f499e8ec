package jail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/aisan-dev/aisan/jail/agent"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/distro"
	"github.com/aisan-dev/aisan/jail/history"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/transcript"
	"golang.org/x/sys/unix"
)

// Request is what the user asked for: which agent, with which arguments.
type Request struct {
	// Kind selects the preset.
	Kind Kind
	// Args are the agent's arguments, or the whole command for KindRun.
	Args []string
	// Limits are resource caps for the jail's scope.
	Limits Limits
	// KindEnv, when set, gives the variables the agent kind adds to the
	// jail's environment, from the user's home, the working directory
	// and the host environment (opencode's OPENCODE_PERMISSION).
	KindEnv func(home, cwd string, getenv func(string) string) ([]string, error)
	// Strict, when set, asks for a strict (allow-list) box.
	Strict *StrictRequest
}

// Command returns the argv a request runs.
func (r Request) Command() ([]string, error) {
	switch r.Kind {
	case KindRun, KindService:
		if len(r.Args) == 0 {
			return nil, errors.New("no command given to run")
		}
		return slices.Clone(r.Args), nil
	case KindClaude, KindCodex, KindOpencode:
		return append([]string{string(r.Kind)}, r.Args...), nil
	}
	return nil, fmt.Errorf("unknown agent kind %q", r.Kind)
}

// Host is what a launch needs to know about the machine and the user,
// gathered once by [GatherHost]. Tests build it by hand.
type Host struct {
	// Bwrap is the path of bwrap.
	Bwrap string
	// Cwd is the real path of the working directory.
	Cwd string
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
	// StateDirs are aisan's own directories that exist, by their real
	// paths (see [Host.GatherStateDirs]).
	StateDirs []string
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
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return Host{}, &MissingError{Tool: "bwrap", Err: err}
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

// GatherFacts reads what the planners decide from, for the identity h
// already has (Bwrap, Env, Home, AisanHome, RuntimeDir): bwrap's version,
// the bus facts, the user manager's directories and aisan's own dirs.
// Callers that build a Host themselves (preflight's probe jail) call it
// too, so that no plan is made from facts nobody read.
func (h *Host) GatherFacts() error {
	h.Bus = busproxy.Gather(busLookup(*h), "")
	h.RuntimeSystemd = h.RuntimeDir != "" && isDir(filepath.Join(h.RuntimeDir, "systemd"))
	h.StdManagerDir, h.StdBusSocket = "", ""
	if std := RuntimeDir(func(string) string { return "" }); std != "" && std != h.RuntimeDir {
		if d := filepath.Join(std, "systemd"); isDir(d) {
			h.StdManagerDir = d
		}
		sock := filepath.Join(std, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			h.StdBusSocket = sock
		}
	}
	h.GatherStateDirs()
	// A bwrap that cannot say its version leaves it unknown (zero): only
	// an overlay needs it, and Compile says so then. The launch itself
	// reports what is wrong with bwrap far better.
	if h.Bwrap != "" {
		h.BwrapVersion = cachedBwrapVersion(h.Bwrap, h.RuntimeDir)
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

// Session is one jailed launch, resolved: the slot, the Spec and the argv
// that will run. Explain and Run use the same value.
type Session struct {
	Request  Request
	Host     Host
	Slot     string
	SlotDir  string // the slot's private runtime directory (no project text in its name)
	Spec     Spec
	Compiled Compiled
	Warnings []string
	// Strict is what planning a strict box found; nil for a deny-list
	// jail.
	Strict *StrictPlan
}

// Prepared is what a launch made ready for the jail before planning it:
// the per-slot history copies and the per-launch directories over the
// agents' PID-keyed ones. Explain passes what a launch would make.
type Prepared struct {
	History []history.Bind
	PIDDirs []Mount
}

// Plan resolves a request for the slot name given, from h alone: it
// reads nothing from the host.
func Plan(req Request, h Host, slotName string, prep Prepared) (*Session, error) {
	if req.Strict != nil {
		return planStrict(req, h, slotName)
	}
	command, err := req.Command()
	if err != nil {
		return nil, err
	}
	slotDir := slotRuntimeDir(h, slotName)
	facts := h.Bus
	facts.SlotDir = slotDir
	bus, err := busproxy.Decide(busLookup(h), facts)
	if err != nil {
		return nil, err
	}
	extra, err := extraEnv(req, h)
	if err != nil {
		return nil, err
	}
	var hist []Mount
	for _, b := range prep.History {
		hist = append(hist, Mount{Kind: Bind, Src: b.Src, Dst: b.Dst})
	}
	otherDirs, otherSockets := otherRuntimeDir(h, bus)
	spec := DenyList(DenyOptions{
		Kind:             req.Kind,
		Slot:             slotName,
		Command:          command,
		Cwd:              h.Cwd,
		Env:              h.Env,
		RuntimeDir:       h.RuntimeDir,
		RuntimeSystemd:   h.RuntimeSystemd,
		OtherManagerDirs: otherDirs,
		OtherBusSockets:  otherSockets,
		Bus:              bus,
		MaskFile:         filepath.Join(slotDir, "masked-bus"),
		History:          hist,
		ExtraEnv:         extra,
		Limits:           req.Limits,
		StateDirs:        h.StateDirs,
		PIDDirs:          prep.PIDDirs,
	})
	compiled, err := Compile(spec, h)
	if err != nil {
		return nil, err
	}
	return &Session{
		Request: req, Host: h, Slot: slotName, SlotDir: slotDir,
		Spec: spec, Compiled: compiled, Warnings: bus.Warnings,
	}, nil
}

// Explain resolves req as a launch would, without taking a slot, and
// prints the result.
func Explain(w io.Writer, req Request) error {
	h, err := GatherHost()
	if err != nil {
		return err
	}
	name, err := slot.BaseName(h.Cwd, string(req.Kind))
	if err != nil {
		return err
	}
	s, err := Plan(req, h, name, Prepared{History: previewHistory(h, name, req.Kind), PIDDirs: previewPIDDirs(h, name)})
	if err != nil {
		return err
	}
	if s.Strict != nil {
		ExplainStrict(w, s)
		return nil
	}
	ExplainSpec(w, s.Spec, s.Compiled, s.Slot)
	return nil
}

// previewHistory names the history binds a launch would make, without
// creating anything.
func previewHistory(h Host, name string, kind Kind) []history.Bind {
	return history.Paths(h.AisanHome, name, string(kind), historyDirs(h))
}

// historyDirs are the agents' configuration directories as the agents in
// the jail will resolve them (the jail inherits the environment).
func historyDirs(h Host) history.Dirs {
	look := lookupFunc(h.Env)
	return history.DirsFor(h.Home, func(k string) string { v, _ := look(k); return v })
}

// Stdio are the user's streams.
type Stdio struct {
	In, Out, Err *os.File
	// Quiet sends the agent's output to the transcript only; Err then
	// carries only aisan's own messages.
	Quiet bool
}

// Launch takes a slot for req, starts what the jail needs (the bus proxy,
// the transcript, the scope) and runs it. It returns the agent's status.
func Launch(ctx context.Context, req Request, stdio Stdio) (int, error) {
	trace("start")
	if name, ok := lookupFunc(os.Environ())("AISAN_JAIL"); ok && name != "" {
		// aisan's state is read-only in here: a launch could not record
		// a slot the host can list or kill.
		return 0, fmt.Errorf("refusing to launch from inside the jail of slot %s: aisan's state is read-only here, so a new jail could not be listed or killed from the host; start it from a shell outside the jail", name)
	}
	h, err := GatherHost()
	if err != nil {
		return 0, err
	}
	trace("host facts")
	command, err := req.Command()
	if err != nil {
		return 0, err
	}
	if err := findCommand(command[0], req.Kind, h.Env); err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding aisan's own binary: %w", err)
	}
	svc := serviceFromEnv(h.Env)
	h.Env = withoutServiceEnv(h.Env)
	if svc != nil {
		// systemd started us as a service's main process. Headless: the
		// output goes to the transcript only.
		req.Kind = KindService
		devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return 0, err
		}
		defer devnull.Close()
		stdio = Stdio{In: devnull, Out: devnull, Err: stdio.Err, Quiet: true}
	}
	agentErr := stdio.Err
	if stdio.Quiet {
		agentErr = stdio.Out
	}
	l := &Launcher{
		Bwrap: h.Bwrap, Self: InitBinary(self),
		Stdin: stdio.In, Stdout: stdio.Out, Stderr: agentErr,
		lateTranscript: true,
		// As unjailed, the caller's open descriptors reach the agent;
		// a strict box starts from nothing of the host's.
		PassFDs: req.Strict == nil,
	}
	// The stage process starts now and initialises while we take the slot
	// and plan the jail; it waits at its gate until then. Even forking it
	// takes a while (until it has exec'd), so that overlaps the slot too.
	type started struct {
		st  *Stage
		err error
	}
	stagec := make(chan started, 1)
	go func() {
		st, err := l.Start()
		stagec <- started{st, err}
	}()
	// So does connecting to the user manager.
	conn := connectManager(ctx, h, req.Limits)
	defer conn.discard()
	reg, err := slot.Open(h.AisanHome)
	var sl *slot.Slot
	if err == nil {
		if svc != nil {
			sl, err = reg.AcquireNamed(svc.name, string(KindService), h.Cwd)
		} else {
			sl, err = reg.Acquire(h.Cwd, string(req.Kind))
		}
	}
	if errors.Is(err, syscall.EROFS) {
		err = fmt.Errorf("refusing to launch: the state dir %s is read-only here, as it is inside every aisan jail, so a new jail could not be listed or killed from the host (%w)", h.AisanHome, err)
	}
	sc := <-stagec
	if sc.err != nil {
		if sl != nil {
			sl.Abandon()
		}
		return 0, sc.err
	}
	st := sc.st
	defer st.StopSignals()
	defer st.Abort()
	if err != nil {
		return 0, err
	}
	if svc != nil {
		err = sl.Update(func(r *slot.Record) {
			r.Unit = svc.unit
			r.MaxRuntime = svc.maxRuntime
			if !svc.spawned.IsZero() {
				r.Start = svc.spawned
			}
		})
		if err != nil {
			sl.Abandon()
			return 0, err
		}
	}
	trace("slot acquired")
	status, kept, err := launchSlot(ctx, req, h, sl, stdio, l, st, conn)
	trace("jail ended")
	if err != nil {
		sl.Abandon()
		return status, err
	}
	if kept {
		// The keeper holds the slot now (its copy of the lock), and
		// records the end when the jail's last process is gone.
		sl.Release()
		noteKept(stdio.Err, sl.Name())
		pruneState(h, stdio.Err)
		return status, nil
	}
	if ferr := sl.Finish(status); ferr != nil {
		fmt.Fprintf(stdio.Err, "aisan: warning: recording the end of slot %s: %v\n", sl.Name(), ferr)
	}
	sl.Release()
	pruneState(h, stdio.Err)
	trace("end recorded")
	return status, nil
}

// launchSlot runs the jail in slot sl. kept says that the agent exited
// with processes left in the jail, and a keeper holds the slot now.
func launchSlot(ctx context.Context, req Request, h Host, sl *slot.Slot, stdio Stdio, l *Launcher, st *Stage, conn *managerConn) (status int, kept bool, err error) {
	// The systemd scope is the slowest step (the manager runs a job); the
	// stage is already waiting at its gate, so place it now, while the
	// rest of the launch is prepared.
	type placed struct {
		sc  *scoper
		err error
	}
	placement := make(chan placed, 1)
	go func() {
		sc, err := conn.wait()
		if err == nil && sc == nil && req.Limits != (Limits{}) {
			fmt.Fprintln(conn.warnings, "aisan: warning: the resource limits are not applied: this jail has no systemd scope")
		}
		if err == nil && sc != nil {
			if err = sc.place(ctx, sl, st.cmd.Process.Pid, conn.warnings); err != nil {
				sc.close()
				sc = nil
			}
		}
		placement <- placed{sc, err}
	}()
	var place *placed
	waitPlaced := func() error {
		if place == nil {
			p := <-placement
			place = &p
			stdio.Err.Write(conn.warnings.Bytes())
		}
		return place.err
	}
	defer func() {
		// Never leave with the placement still running.
		waitPlaced()
		place.sc.close()
	}()

	// aisan's runtime directory exists before the jail is planned, so
	// that the jail gets it read-only (see Host.GatherStateDirs).
	if err := privateDir(filepath.Dir(slotRuntimeDir(h, sl.Name()))); err != nil {
		return 0, false, err
	}
	var binds []history.Bind
	var pidDirs []Mount
	if req.Strict == nil {
		// A strict box keeps its history in its own state directory.
		if binds, err = history.Prepare(h.AisanHome, sl.Name(), string(req.Kind), h.Cwd, historyDirs(h)); err != nil {
			return 0, false, err
		}
		if pidDirs, err = preparePIDDirs(h, sl.Name()); err != nil {
			return 0, false, err
		}
	}
	if req.Strict == nil {
		defer func() {
			if err := history.MergeBack(h.AisanHome, sl.Name(), string(req.Kind), historyDirs(h)); err != nil {
				fmt.Fprintf(stdio.Err, "aisan: warning: %v\n", err)
			}
		}()
	}
	trace("history prepared")
	// The state and runtime dirs exist now, made by this launch.
	h.GatherStateDirs()
	s, err := Plan(req, h, sl.Name(), Prepared{History: binds, PIDDirs: pidDirs})
	if err != nil {
		return 0, false, err
	}
	trace("planned")
	// We hold the slot's name, so whatever is here was left by a wrapper
	// that died: start clean.
	os.RemoveAll(s.SlotDir)
	if err := os.Mkdir(s.SlotDir, 0o700); err != nil {
		return 0, false, fmt.Errorf("creating the slot's runtime directory %s: %w", s.SlotDir, err)
	}
	defer func() {
		if !kept {
			os.RemoveAll(s.SlotDir)
		}
	}()
	if err := os.WriteFile(filepath.Join(s.SlotDir, "masked-bus"), nil, 0o400); err != nil {
		return 0, false, fmt.Errorf("creating the bus mask file: %w", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(stdio.Err, "aisan: warning: %s\n", w)
	}
	if s.Strict != nil {
		after, err := prepareStrict(ctx, s, stdio.Err)
		if err != nil {
			return 0, false, err
		}
		defer after()
	}
	// A deny-list session's jail may outlive its agent, under a keeper
	// (see keeper.go). A strict box's host services (egress proxies,
	// relays, MCP) run in this process, so its agent's exit ends it; a
	// service's unit ends with its main process, this one.
	keepable := req.Strict == nil && req.Kind != KindService
	var held []*os.File
	if s.Spec.Bus.Mode == busproxy.Filtered {
		start := busproxy.Start
		if keepable {
			start = busproxy.StartKeepable
		}
		proxy, err := start(ctx, s.Spec.Bus)
		if err != nil {
			return 0, false, err
		}
		held = proxy.Lifelines()
		// Closing the readiness pipe ends the proxy (if we die, the
		// kernel closes it for us); reaping it need not hold up the end
		// of the launch. A keeper's copy keeps it for the jail.
		defer func() {
			if !kept {
				go proxy.Close()
			}
		}()
	}
	trace("proxy ready")
	tr, err := transcript.Open(sl.TranscriptPath())
	if err != nil {
		return 0, false, err
	}
	defer tr.Close()
	transcript.NoteSize(tr, stdio.In)

	l.Transcript = tr
	l.Place = func(context.Context, int) error {
		err := waitPlaced()
		trace("placed in scope")
		return err
	}
	l.Started = func(info Info) {
		// Recorded before anything else: until the record names the
		// jail's init, nothing could find or kill the jail if this
		// process died. The jail starts up meanwhile.
		if err := sl.Update(func(r *slot.Record) {
			r.InitPID = info.InitPID
			r.PidNSInode = info.PIDNamespace
			if req.Strict != nil {
				r.Mode = "strict"
			}
		}); err != nil {
			fmt.Fprintf(stdio.Err, "aisan: warning: recording slot %s: %v\n", sl.Name(), err)
		}
	}
	if keepable {
		l.Keep = func(ho Handoff) (func(), error) {
			release, err := startKeeper(sl, h.AisanHome, s.SlotDir, ho, held)
			kept = err == nil
			return release, err
		}
	}
	status, err = st.Run(ctx, s.Compiled)
	return status, kept, err
}

// GatherStateDirs finds aisan's own directories, by their real paths. Only those
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
	h.StateDirs = dirs
}

// slotRuntimeDir is the slot's private directory for sockets. Its name is
// a hash, so no project text reaches the proxy's command line.
func slotRuntimeDir(h Host, slotName string) string {
	sum := sha256.Sum256([]byte(h.AisanHome + "\x00" + h.Cwd + "\x00" + slotName))
	id := hex.EncodeToString(sum[:8])
	if h.RuntimeDir != "" {
		return filepath.Join(h.RuntimeDir, "aisan", id)
	}
	return filepath.Join(h.AisanHome, "run", id)
}

// extraEnv is what the request's kind adds to the environment (for
// opencode, which has no command hooks, its permission rules carry the
// kill guard); the command layer supplies the function, so that the jail
// does not depend on the hooks package.
func extraEnv(req Request, h Host) ([]string, error) {
	if req.KindEnv == nil {
		return nil, nil
	}
	look := lookupFunc(h.Env)
	getenv := func(k string) string { v, _ := look(k); return v }
	home := getenv("HOME")
	if home == "" {
		home = h.Home
	}
	return req.KindEnv(home, h.Cwd, getenv)
}

// privateDir makes sure dir is a directory of ours that nobody else can
// enter, creating it (and its parents) when missing. A symlink or a
// directory of someone else's is refused: the slots' sockets live there.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating aisan's runtime directory %s: %w", dir, err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("checking aisan's runtime directory %s: %w", dir, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || st == nil || int(st.Uid) != os.Getuid() {
		return &PinError{Path: dir, Why: "it is not a directory of yours"}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("making %s private: %w", dir, err)
		}
	}
	return nil
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

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

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

// lockedBuffer collects messages from a goroutine, to print them in order.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// RuntimeDir is $XDG_RUNTIME_DIR, or /run/user/UID when the variable is
// unset and that directory exists and belongs to us: the user manager and
// the bus listen there all the same, and a jail must hide them.
//
// A directory that is not ours is not used: after a plain `su` or
// `sudo -E`, XDG_RUNTIME_DIR still names the other user's, and neither its
// user manager nor a directory of ours inside it would work.
func RuntimeDir(getenv func(string) string) string {
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && ownDir(rt) {
		return rt
	}
	p := fmt.Sprintf("/run/user/%d", os.Getuid())
	if ownDir(p) {
		return p
	}
	return ""
}

// ownDir reports whether p is a directory owned by this process's user.
func ownDir(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// NotFoundError is a command that is not installed. The jail sees the
// host's files and PATH, so what is missing here is missing there: say so
// before taking a slot.
type NotFoundError struct {
	Name string
	Kind Kind
	// Why, for a path, is what the shell would say: "no such file or
	// directory", "is a directory", "permission denied".
	Why string
}

func (e *NotFoundError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("cannot run %q: %s", e.Name, e.Why)
	}
	return fmt.Sprintf("cannot run %q: not found in PATH", e.Name)
}

// Code is the shell's status: 127 for a command not found, 126 for one
// found that cannot be executed.
func (e *NotFoundError) Code() int {
	if e.Why != "" && e.Why != "no such file or directory" {
		return 126
	}
	return 127
}

// Hints says how to install an agent.
func (e *NotFoundError) Hints() []string {
	if e.Why == "permission denied" {
		return []string{"make it executable (chmod +x " + e.Name + "), or run it through its interpreter"}
	}
	if e.Why == "is a directory" {
		return []string{"name the program inside it"}
	}
	if a, ok := agent.ByKind(string(e.Kind)); ok {
		return []string{"install " + a.Name + ": " + a.InstallHint}
	}
	return []string{"check the command's name, or give its path"}
}

// findCommand checks that name resolves the way the in-jail init will
// resolve it: through the environment's PATH, or as a path.
func findCommand(name string, kind Kind, env []string) error {
	if strings.Contains(name, "/") {
		fi, err := os.Stat(name)
		switch {
		case err != nil:
			return &NotFoundError{Name: name, Kind: kind, Why: "no such file or directory"}
		case fi.IsDir():
			return &NotFoundError{Name: name, Kind: kind, Why: "is a directory"}
		case unix.Access(name, unix.X_OK) != nil:
			return &NotFoundError{Name: name, Kind: kind, Why: "permission denied"}
		}
		return nil
	}
	path, _ := lookupFunc(env)("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return &NotFoundError{Name: name, Kind: kind}
}

// otherRuntimeDir finds /run/user/UID's user manager directory and bus
// socket when $XDG_RUNTIME_DIR points somewhere else: they answer all the
// same, so the jail hides them too.
func otherRuntimeDir(h Host, bus busproxy.Plan) (dirs, sockets []string) {
	if h.StdManagerDir != "" {
		dirs = append(dirs, h.StdManagerDir)
	}
	if sock := h.StdBusSocket; sock != "" && !slices.Contains(bus.HostSockets, sock) && sock != bus.JailSocket {
		sockets = append(sockets, sock)
	}
	return dirs, sockets
}

// managerConn is a connection to the user manager being made in the
// background.
type managerConn struct {
	done     chan struct{}
	sc       *scoper
	err      error
	taken    bool
	warnings *lockedBuffer
}

// connectManager starts connecting to the user manager (or deciding that
// there is none) for a launch on host h.
func connectManager(ctx context.Context, h Host, limits Limits) *managerConn {
	getenv := managerEnv(h)
	c := &managerConn{done: make(chan struct{}), warnings: &lockedBuffer{}}
	go func() {
		defer close(c.done)
		c.sc, c.err = newScoper(ctx, getenv, limits, c.warnings)
	}()
	return c
}

// wait returns the connection; the caller owns it from then on.
func (c *managerConn) wait() (*scoper, error) {
	<-c.done
	c.taken = true
	return c.sc, c.err
}

// discard closes a connection nobody took (a launch that failed early).
func (c *managerConn) discard() {
	<-c.done
	if !c.taken {
		c.sc.close()
	}
}

// managerEnv is the environment through which the user manager is found:
// the host's, except that an XDG_RUNTIME_DIR that is not ours (su,
// sudo -E) names no manager of ours. Unset stays unset, as for
// systemctl --user.
func managerEnv(h Host) func(string) string {
	look := lookupFunc(h.Env)
	return func(k string) string {
		v, _ := look(k)
		if k == "XDG_RUNTIME_DIR" && v != "" && !ownDir(v) {
			return ""
		}
		return v
	}
}

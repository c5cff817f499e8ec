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
	"syscall"
	"time"

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
	// Say takes the warnings and notes a launch has for the user (the
	// command layer prints them); nil drops them.
	Say Say
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
//
// A launch is a sequence of phases, each a method below with its inputs
// in the launch value and its outputs added to it:
//
//	resolve         host facts, the command, service mode
//	takeSlot        the slot, while the stage starts and the manager
//	                connection opens (both in parallel)
//	prepareFiles    runtime dirs, history copies, PID dirs; the plan
//	startServices   strict host services, the bus proxy, the transcript
//	startJail       the stage loaded, placed in its scope and released;
//	                the jail's init recorded
//	runSession      the agent runs; a keeper takes a jail its agent left
//	recordEnd       the record's end, the lock, pruning
//
// Whatever a phase sets up that must be undone is pushed on l.undo,
// which runs in reverse when the launch returns.
func Launch(ctx context.Context, req Request, stdio Stdio) (int, error) {
	trace("start")
	l := &launch{ctx: ctx, req: req, stdio: stdio, say: req.Say}
	if l.say == nil {
		l.say = discard
	}
	defer l.unwind(0)
	var err error
	for _, step := range []func() error{l.resolve, l.takeSlot, l.prepareFiles, l.startServices, l.startJail, l.runSession} {
		if err = step(); err != nil {
			break
		}
	}
	// The session's own undo (the terminal, the jail's files and
	// services, the placement) comes before the record's end and the
	// slot's release: the next launch in this worktree may take the name
	// as soon as it is free.
	l.unwind(l.session)
	if l.sl == nil {
		return l.status, err
	}
	if err != nil {
		l.sl.Abandon()
		return l.status, err
	}
	return l.status, l.recordEnd()
}

// launch is one launch's state, filled in phase by phase.
type launch struct {
	ctx   context.Context
	req   Request
	stdio Stdio
	say   Say
	undo  []func()
	// session is where the session's part of undo starts: it is undone
	// before the slot's end is recorded, the rest after.
	session int

	// resolve
	h    Host
	self string // aisan's own binary
	svc  *serviceSpec
	lr   *Launcher
	// takeSlot
	sl         *slot.Slot
	st         *Stage
	waitPlaced func() placed
	// prepareFiles
	s *Session
	// startServices
	tr       *transcript.Writer
	held     []*os.File
	keepable bool
	strict   *strictHost
	// runSession
	status int
	kept   bool
	// drain ends the wrapper's own egress service of a kept strict box.
	drain func(context.Context)
}

// placed is the outcome of putting the stage in its scope.
type placed struct {
	sc  *scoper
	err error
}

func (l *launch) defer_(f func()) { l.undo = append(l.undo, f) }

// unwind runs the undo stack down to its first n entries.
func (l *launch) unwind(n int) {
	for len(l.undo) > n {
		f := l.undo[len(l.undo)-1]
		l.undo = l.undo[:len(l.undo)-1]
		f()
	}
}

// resolve gathers the host facts, checks the command, and turns a launch
// started by systemd as a service's main process into a headless one.
func (l *launch) resolve() error {
	if name, ok := lookupFunc(os.Environ())("AISAN_JAIL"); ok && name != "" {
		// aisan's state is read-only in here: a launch could not record
		// a slot the host can list or kill.
		return fmt.Errorf("refusing to launch from inside the jail of slot %s: aisan's state is read-only here, so a new jail could not be listed or killed from the host; start it from a shell outside the jail", name)
	}
	h, err := GatherHost()
	if err != nil {
		return err
	}
	trace("host facts")
	command, err := l.req.Command()
	if err != nil {
		return err
	}
	if err := findCommand(command[0], l.req.Kind, h.Env); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding aisan's own binary: %w", err)
	}
	l.svc = serviceFromEnv(h.Env)
	h.Env = withoutServiceEnv(h.Env)
	if l.svc != nil {
		// systemd started us as a service's main process. Headless: the
		// output goes to the transcript only.
		l.req.Kind = KindService
		devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		l.defer_(func() { devnull.Close() })
		l.stdio = Stdio{In: devnull, Out: devnull, Err: l.stdio.Err, Quiet: true}
	}
	agentErr := l.stdio.Err
	if l.stdio.Quiet {
		agentErr = l.stdio.Out
	}
	l.h, l.self = h, self
	l.lr = &Launcher{
		Bwrap: h.Bwrap, Self: InitBinary(self),
		Stdin: l.stdio.In, Stdout: l.stdio.Out, Stderr: agentErr,
		Tee: true,
		// As unjailed, the caller's open descriptors reach the agent;
		// a strict box starts from nothing of the host's.
		PassFDs: l.req.Strict == nil,
	}
	return nil
}

// takeSlot acquires the slot while the stage process starts (it
// initialises and waits at its gate; even forking it takes a while) and
// the connection to the user manager opens. Once both the stage and the
// slot are there, the placement in the scope starts: it is the slowest
// step (the manager runs a job), and runs while the jail is prepared.
func (l *launch) takeSlot() error {
	h, req := l.h, l.req
	type started struct {
		st  *Stage
		err error
	}
	stagec := make(chan started, 1)
	go func() {
		st, err := l.lr.Start()
		stagec <- started{st, err}
	}()
	conn := connectManager(l.ctx, h, req.Limits)
	l.defer_(conn.discard)
	reg, err := slot.Open(h.AisanHome)
	var sl *slot.Slot
	if err == nil {
		if l.svc != nil {
			sl, err = reg.AcquireNamed(l.svc.name, string(KindService), h.Cwd)
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
		return sc.err
	}
	l.st = sc.st
	// Signals stay caught until the end is recorded: one that arrives
	// meanwhile must not cut that short.
	l.defer_(l.st.StopSignals)
	l.session = len(l.undo)
	l.defer_(l.st.Close)
	l.defer_(l.st.Abort)
	if err != nil {
		return err
	}
	l.sl = sl
	if svc := l.svc; svc != nil {
		err = sl.Update(func(r *slot.Record) {
			r.Unit = svc.unit
			r.MaxRuntime = svc.maxRuntime
			if !svc.spawned.IsZero() {
				r.Start = svc.spawned
			}
		})
		if err != nil {
			return err
		}
	}
	trace("slot acquired")
	placement := make(chan placed, 1)
	pid := l.st.PID()
	go func() {
		sc, err := conn.wait()
		if err == nil && sc == nil && req.Limits != (Limits{}) {
			conn.said.say(Warning, "the resource limits are not applied: this jail has no systemd scope")
		}
		if err == nil && sc != nil {
			if err = sc.place(l.ctx, sl, pid, conn.said.say); err != nil {
				sc.close()
				sc = nil
			}
		}
		placement <- placed{sc: sc, err: err}
	}()
	var done *placed
	l.waitPlaced = func() placed {
		if done == nil {
			p := <-placement
			done = &p
			conn.said.replay(l.say)
		}
		return *done
	}
	// Never leave with the placement still running.
	l.defer_(func() { l.waitPlaced().sc.close() })
	return nil
}

// prepareFiles makes what the jail is planned from: aisan's runtime
// directory (so that the jail gets it read-only), the per-slot history
// copies and PID directories of a deny-list jail, the plan itself, and the
// slot's runtime directory with the bus mask.
func (l *launch) prepareFiles() error {
	h, req, sl := l.h, l.req, l.sl
	if err := privateDir(filepath.Dir(slotRuntimeDir(h, sl.Name()))); err != nil {
		return err
	}
	var prep Prepared
	if req.Strict == nil {
		// A strict box keeps its history in its own state directory.
		var err error
		if prep.History, err = history.Prepare(h.AisanHome, sl.Name(), string(req.Kind), h.Cwd, historyDirs(h)); err != nil {
			return err
		}
		l.defer_(func() {
			if err := history.MergeBack(h.AisanHome, sl.Name(), string(req.Kind), historyDirs(h)); err != nil {
				l.say(Warning, err.Error())
			}
		})
		if prep.PIDDirs, err = preparePIDDirs(h, sl.Name()); err != nil {
			return err
		}
	}
	trace("history prepared")
	// The state and runtime dirs exist now, made by this launch.
	h.GatherStateDirs()
	s, err := Plan(req, h, sl.Name(), prep)
	if err != nil {
		return err
	}
	l.s = s
	trace("planned")
	// We hold the slot's name, so whatever is here was left by a wrapper
	// that died: start clean.
	os.RemoveAll(s.SlotDir)
	if err := os.Mkdir(s.SlotDir, 0o700); err != nil {
		return fmt.Errorf("creating the slot's runtime directory %s: %w", s.SlotDir, err)
	}
	l.defer_(func() {
		if !l.kept {
			os.RemoveAll(s.SlotDir)
		}
	})
	if err := os.WriteFile(filepath.Join(s.SlotDir, "masked-bus"), nil, 0o400); err != nil {
		return fmt.Errorf("creating the bus mask file: %w", err)
	}
	for _, w := range s.Warnings {
		l.say(Warning, w)
	}
	return nil
}

// startServices starts what serves the jail from the host: a strict
// box's egress proxies, relays and MCP servers, the bus proxy, and the
// transcript.
func (l *launch) startServices() error {
	s := l.s
	// A session's jail may outlive its agent, under a keeper (see
	// keeper.go), which takes a strict box's egress services over; a
	// service's unit ends with its main process, this one.
	l.keepable = l.req.Kind != KindService
	if s.Strict != nil {
		host, err := prepareStrict(l.ctx, s, l.say)
		if err != nil {
			return err
		}
		l.strict = host
		l.keepable = l.keepable && host.keepable()
		l.defer_(func() {
			if l.kept {
				l.drainEgress()
				return
			}
			host.end()
		})
	}
	if s.Spec.Bus.Mode == busproxy.Filtered {
		start := busproxy.Start
		if l.keepable {
			start = busproxy.StartKeepable
		}
		proxy, err := start(l.ctx, s.Spec.Bus)
		if err != nil {
			return err
		}
		l.held = proxy.Lifelines()
		// Closing the readiness pipe ends the proxy (if we die, the
		// kernel closes it for us); reaping it need not hold up the end
		// of the launch. A keeper's copy keeps it for the jail.
		l.defer_(func() {
			if !l.kept {
				go proxy.Close()
			}
		})
	}
	trace("proxy ready")
	tr, err := transcript.Open(l.sl.TranscriptPath())
	if err != nil {
		return err
	}
	l.defer_(func() { tr.Close() })
	transcript.NoteSize(tr, l.stdio.In)
	l.tr = tr
	return nil
}

// startJail loads the stage, waits for its placement in the scope,
// releases it, and records the jail's init as soon as bwrap reports it:
// until the record names the init, nothing could find or kill the jail if
// this process died.
func (l *launch) startJail() error {
	st := l.st
	if err := st.Load(l.s.Compiled, l.tr, l.keepable); err != nil {
		return err
	}
	p := l.waitPlaced()
	trace("placed in scope")
	if p.err != nil {
		st.Abort()
		st.copies.Wait()
		return p.err
	}
	if err := st.Release(); err != nil {
		return err
	}
	if info, ok := st.Started(); ok {
		l.recordInit(info)
	}
	return nil
}

func (l *launch) recordInit(info Info) {
	if err := l.sl.Update(func(r *slot.Record) {
		r.InitPID = info.InitPID
		r.PidNSInode = info.PIDNamespace
		r.InitStart = slot.InitStart(info.InitPID)
		if l.req.Strict != nil {
			r.Mode = "strict"
		}
	}); err != nil {
		l.say(Warning, fmt.Sprintf("recording slot %s: %v", l.sl.Name(), err))
	}
}

// runSession waits for the agent. When it exits leaving processes in the
// jail, a keeper takes the slot and the agent's status is returned at
// once; without a keeper the jail's last process is waited for.
func (l *launch) runSession() error {
	for {
		out, err := l.st.Wait()
		l.status = out.Status
		if err != nil || out.Left == nil {
			trace("jail ended")
			return err
		}
		release, err := l.startKeeper(out.Left)
		if err != nil {
			trace("no keeper: " + err.Error())
			continue
		}
		l.st.HandOff(out.Left, release)
		l.kept = true
		return nil
	}
}

// startKeeper hands the slot, and a strict box's host services, to a
// keeper.
func (l *launch) startKeeper(h *Handoff) (func(), error) {
	if l.strict == nil {
		return startKeeper(l.self, l.sl, l.h.AisanHome, l.s.SlotDir, *h, l.held, nil, nil)
	}
	ks, files, drain, err := l.strict.handover()
	if err != nil {
		return nil, err
	}
	release, err := startKeeper(l.self, l.sl, l.h.AisanHome, l.s.SlotDir, *h, l.held, ks, files)
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		// The keeper stopped short of serving: we still do, and wait.
		return nil, err
	}
	l.drain = drain
	return release, nil
}

// keepDrainGrace bounds how long a wrapper whose box a keeper took over
// goes on answering requests that were in flight (the keeper answers the
// new ones): the shell's prompt waits for it.
const keepDrainGrace = time.Second

// drainEgress ends the wrapper's egress service of a kept box.
func (l *launch) drainEgress() {
	if l.drain == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), keepDrainGrace)
	defer cancel()
	l.drain(ctx)
	trace("egress drained")
}

// recordEnd records the agent's end (or, for a kept jail, leaves that to
// the keeper), lets go of the slot and prunes old state.
func (l *launch) recordEnd() error {
	sl := l.sl
	if l.kept {
		// The keeper holds the slot now (its copy of the lock), and
		// records the end when the jail's last process is gone.
		sl.Release()
		noteKept(l.say, l.stdio.Err, sl.Name())
		pruneState(l.h, l.say)
		return nil
	}
	if err := sl.Finish(l.status); err != nil {
		l.say(Warning, fmt.Sprintf("recording the end of slot %s: %v", sl.Name(), err))
	}
	sl.Release()
	pruneState(l.h, l.say)
	trace("end recorded")
	return nil
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
	done  chan struct{}
	sc    *scoper
	err   error
	taken bool
	said  *sayBuffer
}

// connectManager starts connecting to the user manager (or deciding that
// there is none) for a launch on host h.
func connectManager(ctx context.Context, h Host, limits Limits) *managerConn {
	getenv := managerEnv(h)
	c := &managerConn{done: make(chan struct{}), said: &sayBuffer{}}
	go func() {
		defer close(c.done)
		c.sc, c.err = newScoper(ctx, getenv, limits, c.said.say)
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

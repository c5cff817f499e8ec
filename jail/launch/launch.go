package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/config"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/transcript"
	"golang.org/x/sys/unix"
)

// Explain resolves req in mode as a launch would, without taking a slot
// or making anything, and prints the result.
func Explain(w io.Writer, req jail.Request, mode Mode) error {
	if req.Say == nil {
		req.Say = discard
	}
	h, err := jail.GatherHost()
	if err != nil {
		return err
	}
	name, err := slot.BaseName(h.Cwd, string(req.Kind))
	if err != nil {
		return err
	}
	prep, _, err := mode.Prepare(req, h, name, true)
	if err != nil {
		return err
	}
	s, err := jail.Plan(req, h, name, prep)
	if err != nil {
		return err
	}
	jail.Explain(w, s)
	return nil
}

// Stdio are the user's streams.
type Stdio struct {
	In, Out, Err *os.File
	// Quiet sends the agent's output to the transcript only; Err then
	// carries only aisan's own messages.
	Quiet bool
}

// Launch takes a slot for req, starts what the jail needs in its mode (a
// filtered bus's gate, or a strict box's host side; the transcript, the
// scope) and runs it. It returns the agent's status.
//
// A launch is a sequence of phases, each a method below with its inputs
// in the run value and its outputs added to it:
//
//	resolve         the jail's descriptors and the manager connection
//	                (both in the background); host facts, the command,
//	                service mode
//	takeSlot        the slot
//	prepareFiles    runtime dirs, what the mode prepares; the plan
//	startServices   the mode's host services, the transcript
//	startJail       the stage loaded and released (bwrap starts); the
//	                jail's processes placed in its scope while bwrap sets
//	                it up; the agent
//	                admitted and the jail's init recorded
//	runAgent        the agent runs; a keeper takes a jail its agent left
//	recordEnd       the record's end, the lock, pruning
//
// Whatever a phase sets up that must be undone is pushed on l.undo (atEnd),
// which runs in reverse when the launch returns.
func Launch(ctx context.Context, req jail.Request, mode Mode, stdio Stdio) (int, error) {
	trace("start")
	// The slot's record codec is built beside the host facts, not when
	// the slot is taken (see slot.Warm).
	go slot.Warm()
	if req.Say == nil {
		req.Say = discard
	}
	l := &run{ctx: ctx, req: req, mode: mode, stdio: stdio, say: req.Say}
	defer l.unwind(0)
	var err error
	for _, step := range []func() error{l.resolve, l.takeSlot, l.prepareFiles, l.startServices, l.startJail, l.runAgent} {
		if err = step(); err != nil {
			break
		}
	}
	// The jail's own undo (the terminal, the jail's files and services,
	// the placement) comes before the record's end and the slot's
	// release: the next launch in this worktree may take the name as
	// soon as it is free.
	l.unwind(l.jailUndo)
	if l.sl == nil {
		return l.status, err
	}
	if err != nil {
		l.sl.Abandon()
		return l.status, err
	}
	return l.status, l.recordEnd()
}

// run is one launch's state, filled in phase by phase.
type run struct {
	ctx   context.Context
	req   jail.Request
	mode  Mode
	stdio Stdio
	say   jail.Say
	undo  []func()
	// jailUndo is where the jail's part of undo starts: it is undone
	// before the slot's end is recorded, the rest after.
	jailUndo int

	// resolve
	h     jail.Host
	self  string // aisan's own binary
	svc   *serviceSpec
	lr    *Launcher
	stage *stageStart
	conn  *managerConn
	// takeSlot
	sl *slot.Slot
	st *Stage
	// prepareFiles
	s *jail.Session
	// startServices
	tr       *transcript.Writer
	keepable bool
	services Services
	// runAgent
	status int
	kept   bool
	// finished is the record's end, when the init reported the agent's
	// status before the jail was down (finishEarly).
	finished chan error
}

// atEnd pushes f on the undo stack.
func (l *run) atEnd(f func()) { l.undo = append(l.undo, f) }

// unwind runs the undo stack down to its first n entries.
func (l *run) unwind(n int) {
	for len(l.undo) > n {
		f := l.undo[len(l.undo)-1]
		l.undo = l.undo[:len(l.undo)-1]
		f()
	}
}

// resolve starts making the jail's descriptors and the connection to the
// user manager, which take a while and need nothing of the plan, gathers the host facts,
// checks the command, and turns a launch started by systemd as a
// service's main process into a headless one.
func (l *run) resolve() error {
	env := jail.Host{Env: os.Environ()}
	if name, ok := env.LookupEnv("AISAN_JAIL"); ok && name != "" {
		// aisan's state is read-only in here: a launch could not record
		// a slot the host can list or kill.
		return fmt.Errorf("refusing to launch from inside the jail of slot %s: aisan's state is read-only here, so a new jail could not be listed or killed from the host; start it from a shell outside the jail", name)
	}
	bwrap, err := jail.FindBwrap()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding aisan's own binary: %w", err)
	}
	l.svc = serviceFromEnv(env.Env)
	if l.svc != nil {
		// systemd started us as a service's main process. Headless: the
		// output goes to the transcript only.
		l.req.Kind = jail.KindService
		devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		l.atEnd(func() { devnull.Close() })
		l.stdio = Stdio{In: devnull, Out: devnull, Err: l.stdio.Err, Quiet: true}
	}
	agentErr := l.stdio.Err
	if l.stdio.Quiet {
		agentErr = l.stdio.Out
	}
	l.self = self
	l.lr = &Launcher{
		Bwrap: bwrap, Self: InitBinary(self),
		Stdin: l.stdio.In, Stdout: l.stdio.Out, Stderr: agentErr,
		Tee:    true,
		TeeAll: l.req.Kind == jail.KindService,
		// As unjailed, the caller's open descriptors reach the agent
		// (a strict box starts from nothing of the host's).
		PassFDs: l.mode.PassFDs(),
	}
	// The stage's descriptors and the manager's connection are made
	// beside everything up to the release.
	l.stage = startStage(l.lr)
	l.atEnd(l.stage.discard)
	l.conn = connectManager(l.ctx, env, l.req.Limits)
	l.atEnd(l.conn.discard)
	h, err := jail.GatherHost()
	if err != nil {
		return err
	}
	trace("host facts")
	h.Env = withoutServiceEnv(h.Env)
	command, err := l.req.Command()
	if err != nil {
		return err
	}
	if err := l.mode.CheckCommand(command[0], l.req.Kind, h); err != nil {
		return err
	}
	l.h = h
	return nil
}

// takeSlot acquires the slot, while resolve's goroutine makes the jail's
// descriptors.
func (l *run) takeSlot() error {
	h, req := l.h, l.req
	reg, err := slot.Open(h.AisanHome)
	var sl *slot.Slot
	if err == nil {
		if l.svc != nil {
			sl, err = reg.AcquireNamed(l.svc.name, string(jail.KindService), h.Cwd)
		} else {
			sl, err = reg.Acquire(h.Cwd, string(req.Kind))
		}
	}
	if errors.Is(err, syscall.EROFS) {
		err = fmt.Errorf("refusing to launch: the state dir %s is read-only here, as it is inside every aisan jail, so a new jail could not be listed or killed from the host (%w)", h.AisanHome, err)
	}
	trace("slot acquired")
	st, serr := l.stage.wait()
	if serr != nil {
		if sl != nil {
			sl.Abandon()
		}
		return serr
	}
	l.st = st
	// Signals stay caught until the end is recorded: one that arrives
	// meanwhile must not cut that short.
	l.atEnd(l.st.StopSignals)
	l.jailUndo = len(l.undo)
	l.atEnd(l.st.Close)
	l.atEnd(l.st.Abort)
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
	return nil
}

// stageStart is a stage being made in the background.
type stageStart struct {
	done  chan struct{}
	st    *Stage
	err   error
	taken bool
}

// startStage makes lr's stage in the background.
func startStage(lr *Launcher) *stageStart {
	s := &stageStart{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.st, s.err = lr.Start()
	}()
	return s
}

// wait returns the stage; the caller owns it from then on.
func (s *stageStart) wait() (*Stage, error) {
	<-s.done
	s.taken = true
	return s.st, s.err
}

// discard gives up a stage nobody took (a launch that failed early).
func (s *stageStart) discard() {
	<-s.done
	if !s.taken && s.st != nil {
		s.st.Abort()
		s.st.Close()
	}
}

// prepareFiles makes what the jail is planned from: aisan's runtime
// directory (so that the jail gets it read-only) and what the mode
// prepares; then the plan itself, and the slot's runtime directory with
// the bus mask.
func (l *run) prepareFiles() error {
	h, req, sl := l.h, l.req, l.sl
	if err := privateDir(filepath.Dir(h.SlotDir(sl.Name()))); err != nil {
		return err
	}
	// The default state dir is bound read-only into every jail when it
	// exists, and is made when this launch keeps its state elsewhere
	// (AISAN_HOME): an aisan started without that variable acts on the
	// records there, and a jail that made it could plant a copy of a
	// neighbour's record for that aisan to kill. Where we cannot make it,
	// neither can a jail, which runs as us.
	states := []string{h.AisanHome}
	if def := filepath.Join(h.Home, ".aisan"); filepath.IsAbs(h.Home) && def != h.AisanHome {
		_ = os.Mkdir(def, 0o700)
		states = append(states, def)
	}
	// aisan's run directory in each state dir holds the locks of an aisan
	// that has no /run/user/UID (cron, a plain su): every jail gets it
	// empty, and a box that a bind spec shows it, but only when it exists
	// when the mode plans, so it is made first, before a lock there could
	// show through a read-only bind of the state dir.
	for _, d := range states {
		_ = os.Mkdir(rundir.StateRun(d), 0o700)
	}
	prep, undo, err := l.mode.Prepare(req, h, sl.Name(), false)
	if undo != nil {
		l.atEnd(undo)
	}
	if err != nil {
		return err
	}
	trace("mode prepared")
	// aisan's configuration dirs are bound read-only into the jail only
	// when they exist: made now when missing, so that no jail can create
	// a configuration the next launch would read. Both of them: this
	// launch's, and ~/.config/aisan, which an aisan started without
	// XDG_CONFIG_HOME (another terminal, an editor, a timer) reads.
	cfgDirs := []string{config.Dir(h.Getenv, h.Home)}
	if filepath.IsAbs(h.Home) {
		cfgDirs = append(cfgDirs, config.DefaultDir(h.Home))
	}
	for _, d := range cfgDirs {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating aisan's configuration dir %s (every jail gets it read-only): %w", d, err)
		}
	}
	// The state, runtime and configuration dirs exist now.
	h.GatherStateDirs()
	s, err := jail.Plan(req, h, sl.Name(), prep)
	if err != nil {
		return err
	}
	s.Launched = sl.Record().Start
	l.s = s
	trace("planned")
	// We hold the slot's name, so whatever is there was left by a wrapper
	// that died: MakeSlotDir starts clean.
	l.atEnd(func() {
		if !l.kept {
			os.RemoveAll(s.SlotDir)
		}
	})
	if err := MakeSlotDir(s); err != nil {
		return err
	}
	for _, w := range s.Warnings {
		l.say(jail.Warning, w)
	}
	return nil
}

// MakeSlotDir makes the slot's run directory of s afresh (whatever is
// there is removed), with what every plan binds from it: the empty file
// that masks bus sockets.
func MakeSlotDir(s *jail.Session) error {
	os.RemoveAll(s.SlotDir)
	if err := os.MkdirAll(s.SlotDir, 0o700); err != nil {
		return fmt.Errorf("creating the slot's runtime directory %s: %w", s.SlotDir, err)
	}
	if err := os.WriteFile(s.MaskFile(), nil, 0o400); err != nil {
		return fmt.Errorf("creating the bus mask file: %w", err)
	}
	return nil
}

// startServices starts what serves the jail from the host (the mode's
// services, whose variables go to the box's environment file) and the
// transcript.
func (l *run) startServices() error {
	s := l.s
	// A session's jail may outlive its agent, under a keeper (see
	// keeper.go), which takes the services over; a service's unit ends
	// with its main process, this one.
	l.keepable = l.req.Kind != jail.KindService
	svc, err := l.mode.Serve(l.ctx, s, l.keepable)
	if err != nil {
		return err
	}
	l.services = svc
	l.atEnd(func() {
		if l.kept {
			l.drainServices()
			return
		}
		svc.Stop()
	})
	if s.Spec.EnvFile != "" {
		if err := writeEnvFile(s.Spec.EnvFile, svc.Env()); err != nil {
			return err
		}
	}
	trace("services ready")
	tr, err := transcript.Open(l.sl.TranscriptPath())
	if err != nil {
		return err
	}
	l.atEnd(func() { tr.Close() })
	transcript.NoteSize(tr, l.stdio.In)
	l.tr = tr
	return nil
}

// startJail loads the stage and releases it. bwrap sets the jail up
// while the user manager places it in its scope: the scope's job no longer
// waits for bwrap, nor bwrap for the job. Only the agent waits: the init
// holds it until bwrap and the init are both in the scope, so
// that everything the agent starts is born there. Without a scope the
// agent is admitted as soon as bwrap runs and the services are ready for
// it ([Services.Admitting]). The jail's init is recorded as soon as it is
// admitted: until the record names it, nothing could find or kill the
// jail if this process died (before, the jail dies with us).
func (l *run) startJail() error {
	st := l.st
	if err := st.Load(l.s.Compiled, l.tr, l.keepable); err != nil {
		return err
	}
	sc, err := l.conn.wait()
	l.conn.said.replay(l.say)
	if err != nil {
		st.Abort()
		return err
	}
	if sc == nil {
		if l.req.Limits != (jail.Limits{}) {
			l.say(jail.Warning, "the resource limits are not applied: this jail has no systemd scope")
		}
	} else {
		l.atEnd(sc.close)
	}
	if err := st.Release(); err != nil {
		return err
	}
	if sc == nil {
		// The services' last step before the agent runs beside bwrap's
		// setup.
		if err := l.admit(); err != nil {
			return err
		}
	}
	info, ok := st.Started()
	if !ok {
		// bwrap failed; Wait says how.
		return nil
	}
	if sc == nil {
		l.recordInit(info, "")
		return nil
	}
	return l.place(sc, info)
}

// place puts the released jail's processes in its scope, then admits the
// agent. A jail that could not be placed is killed before its agent ran.
func (l *run) place(sc *scoper, info Info) error {
	st := l.st
	pids, err := st.Held()
	unit := ""
	if err == nil {
		unit, err = sc.place(l.ctx, l.sl, pids)
	}
	if err == nil {
		err = inScope(unit, pids)
	}
	if err == nil && !st.StillHeld() {
		err = errors.New("placing the jail in a systemd scope: a process of the jail ended while it was placed")
	}
	if err != nil {
		st.Kill()
		st.Wait()
		return err
	}
	// The record names the init and its scope together; a jail whose
	// wrapper died before this point ended with it (its init got no
	// payload).
	if err := l.admit(); err != nil {
		return err
	}
	l.recordInit(info, unit)
	sc.checkLimits(l.ctx, l.say)
	return nil
}

// admit lets the released jail's agent start once the services are ready
// for it ([Services.Admitting]). A signal meant for the launch that came
// before or while they get ready (they may take a while: a strict box
// waits there for git's view of a large repository) ends the launch
// instead, as one before the release does: the services give up their
// wait, the jail is killed and no agent ever ran.
func (l *run) admit() error {
	st := l.st
	ctx, cancel := context.WithCancel(l.ctx)
	ready := make(chan struct{})
	go func() {
		defer close(ready)
		l.services.Admitting(ctx)
	}()
	// A signal queued before is taken as one that comes meanwhile.
	err := st.InterruptedBefore(ready)
	// Admitting returns at once when cancelled, and owns the services
	// until it does.
	cancel()
	<-ready
	if err != nil {
		st.Kill()
		st.Wait()
		return err
	}
	st.Admit()
	return nil
}

// recordInit records the jail's init, and the scope it is in when unit
// is not "".
func (l *run) recordInit(info Info, unit string) {
	if err := l.sl.Update(func(r *slot.Record) {
		if unit != "" {
			r.Unit = unit
		}
		r.InitPID = info.InitPID
		r.PidNSInode = info.PIDNamespace
		r.InitStart = slot.InitStart(info.InitPID)
		r.Mode = l.mode.Name()
		if command, err := l.req.Command(); err == nil {
			r.Command = filepath.Base(command[0])
		}
	}); err != nil {
		l.say(jail.Warning, fmt.Sprintf("recording slot %s: %v", l.sl.Name(), err))
	}
}

// runAgent waits for the agent. When it exits leaving processes in the
// jail, a keeper takes the slot and the agent's status is returned at
// once; without a keeper the jail's last process is waited for.
func (l *run) runAgent() error {
	l.st.AgentEnded = l.finishEarly
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

// finishEarly records the agent's end as soon as the init reports it,
// beside the jail's teardown and bwrap's exit.
func (l *run) finishEarly(status int) {
	// The init of a keepable jail reports the end only once the jail's
	// last process is gone (MsgDone); any other only that the agent has.
	l.services.Ended(l.keepable)
	done := make(chan error, 1)
	l.finished = done
	go func() { done <- l.sl.Finish(status) }()
}

// startKeeper hands the slot, and the jail's host services, to a
// keeper.
func (l *run) startKeeper(h *Handoff) (func(), error) {
	k, err := l.services.Keep()
	if err != nil {
		return nil, err
	}
	release, err := startKeeper(l.self, l.sl, l.h.AisanHome, l.s.SlotDir, *h, k)
	for _, f := range k.Files {
		f.Close()
	}
	// On error the keeper stopped short of serving: we still do, and wait.
	if err != nil && k.Undo != nil {
		k.Undo()
	}
	return release, err
}

// keepDrainGrace bounds how long a wrapper whose jail a keeper took over
// goes on answering requests that were in flight (the keeper answers the
// new ones): the shell's prompt waits for it.
const keepDrainGrace = time.Second

// drainServices ends the wrapper's share of a kept jail's services.
func (l *run) drainServices() {
	ctx, cancel := context.WithTimeout(context.Background(), keepDrainGrace)
	defer cancel()
	l.services.Drain(ctx)
	trace("services drained")
}

// writeEnvFile writes the box's environment file: KEY=VALUE lines, 0600,
// through the atomic writer.
func writeEnvFile(path string, env []string) error {
	var b strings.Builder
	for _, kv := range env {
		if strings.ContainsAny(kv, "\n\x00") {
			return fmt.Errorf("a host service gave an environment entry with a newline")
		}
		b.WriteString(kv + "\n")
	}
	return atomicfile.Write(path, []byte(b.String()), atomicfile.Options{Mode: 0o600})
}

// recordEnd records the agent's end (or, for a kept jail, leaves that to
// the keeper), lets go of the slot and prunes old state.
func (l *run) recordEnd() error {
	sl := l.sl
	if line, ok := sl.TakeKillNote(); ok {
		l.say(jail.Plain, line)
	}
	if l.kept {
		// The keeper holds the slot now (its copy of the lock), and
		// records the end when the jail's last process is gone.
		sl.Release()
		noteKept(l.say, l.stdio.Err, sl.Name())
		pruneState(l.h, l.say)
		return nil
	}
	var err error
	if l.finished != nil {
		err = <-l.finished
	} else {
		err = sl.Finish(l.status)
	}
	if err != nil {
		l.say(jail.Warning, fmt.Sprintf("recording the end of slot %s: %v", sl.Name(), err))
	}
	sl.Release()
	pruneState(l.h, l.say)
	trace("end recorded")
	return nil
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

// findCommand checks that name resolves the way the in-jail init will
// resolve it: through the environment's PATH, or as a path.
func findCommand(name string, kind jail.Kind, env []string) error {
	if strings.Contains(name, "/") {
		fi, err := os.Stat(name)
		switch {
		case err != nil:
			return &jail.NotFoundError{Name: name, Kind: kind, Why: "no such file or directory"}
		case fi.IsDir():
			return &jail.NotFoundError{Name: name, Kind: kind, Why: "is a directory"}
		case unix.Access(name, unix.X_OK) != nil:
			return &jail.NotFoundError{Name: name, Kind: kind, Why: "permission denied"}
		}
		return nil
	}
	path := jail.Host{Env: env}.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return &jail.NotFoundError{Name: name, Kind: kind}
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
// there is none) for a launch with the environment of h.
func connectManager(ctx context.Context, h jail.Host, limits jail.Limits) *managerConn {
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
func managerEnv(h jail.Host) func(string) string {
	return func(k string) string {
		v := h.Getenv(k)
		if k == "XDG_RUNTIME_DIR" && v != "" && !ownedDir(v, true) {
			return ""
		}
		return v
	}
}

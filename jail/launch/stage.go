package launch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/boxinit"

	"github.com/aisan-dev/aisan/jail/transcript"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Info is what bwrap reports about a started jail.
type Info struct {
	// InitPID is the host PID of the jail's init (PID 1 inside).
	InitPID int `json:"child-pid"`
	// PIDNamespace is the inode of the jail's PID namespace.
	PIDNamespace uint64 `json:"pid-namespace"`
	// MountNamespace is the inode of the jail's mount namespace.
	MountNamespace uint64 `json:"mnt-namespace"`
}

// Launcher runs compiled jails. The zero value is not usable: Bwrap and
// Self are required.
type Launcher struct {
	// Bwrap is the path of the bwrap binary.
	Bwrap string
	// Self is the binary bwrap runs, through a descriptor, as the
	// in-jail init: aisan-init when installed (see [InitBinary]), or aisan
	// itself.
	Self string
	// Stdin, Stdout and Stderr are the user's streams.
	Stdin, Stdout, Stderr *os.File
	// NoPTY keeps the user's streams even when stdin is a terminal.
	NoPTY bool
	// PassFDs hands the caller's own open descriptors (those not
	// close-on-exec) to the agent at the same numbers, as unjailed.
	// Strict boxes get none.
	PassFDs bool
	// Tee copies the jail's output that goes to a pipe or a socket
	// through pipes of ours, so that Load's transcript gets it too.
	// Terminals (the pty is recorded instead), files and devices are
	// handed to the jail as they are.
	Tee bool
	// TeeAll copies files and devices too, which are otherwise handed
	// to the jail as they are: a service's output, on /dev/null, goes
	// nowhere but the transcript.
	TeeAll bool
}

// StartError is a jail that bwrap could not set up.
type StartError struct {
	// Status is bwrap's exit status.
	Status int
	// Stderr is what bwrap printed, when it was captured.
	Stderr string
}

func (e *StartError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("bwrap could not start the jail (exit status %d)", e.Status)
	}
	return fmt.Sprintf("bwrap could not start the jail: %s", lastLine(msg))
}

// Hints returns the likely fixes for the failure.
func (e *StartError) Hints() []string {
	s := e.Stderr
	switch {
	case strings.Contains(s, "setting up uid map"), strings.Contains(s, "No permissions to create new namespace"),
		strings.Contains(s, "Creating new namespace failed"), strings.Contains(s, "Operation not permitted"):
		return []string{
			"unprivileged user namespaces look restricted on this host; on Ubuntu 24.04+ (kernel.apparmor_restrict_unprivileged_userns=1) run the distro's /usr/bin/bwrap, whose AppArmor profile grants userns",
			"check sysctl kernel.unprivileged_userns_clone and user.max_user_namespaces, then run 'aisan preflight'",
		}
	}
	return []string{"run 'aisan preflight' to see what this host is missing"}
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// InterruptedError is a launch that a signal ended before the jail
// started: nothing ran.
type InterruptedError struct {
	Signal syscall.Signal
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted by %v before the jail started", e.Signal)
}

// Code is the shell's status for death by that signal.
func (e *InterruptedError) Code() int { return 128 + int(e.Signal) }

// Stage is a jail being staged: its descriptors are made ahead, while
// the wrapper takes the slot and plans the jail; [Stage.Load] fills them
// with the compiled jail and [Stage.Release] starts bwrap on them. The
// jail's init then holds the agent until [Stage.Admit].
//
// bwrap is the wrapper's own child, started only at the release. (It
// used to be started by a stage process of its own, a second Go start
// meant to run beside the planning; on two cores that start was still
// going on when the plan was ready.)
type Stage struct {
	l *Launcher
	// cmd is bwrap's command, made by Start and started by Release.
	cmd    *bwrapCmd
	usePTY bool
	// inW feeds the user's terminal input to a jail without a pty.
	inW *os.File
	// restoreTerm undoes raw mode on the user's terminal (pty sessions).
	restoreTerm func()
	// inherit are the numbers of the caller's descriptors passed on.
	inherit []int

	argsFile      *os.File // bwrap's options, filled by Load
	payloadW      *os.File // the payload pipe's write end, until Admit
	killed        bool     // Kill was called: the agent is never admitted
	infoR, readyR *os.File
	ptmx          *os.File
	outR, errR    *os.File // tee pipes' read ends; errR nil when shared with outR
	// bwrap's descriptors from FDArgs up to FDFirstPin, and the caller's
	// own that follow the pins; theirs holds every descriptor that is
	// bwrap's alone, closed here once it has started (or is abandoned).
	fixed, inherited []*os.File
	theirs           []io.Closer
	early            *headBuffer
	sigs             chan os.Signal
	// caught is closed once sigs receives the forwarded signals.
	caught chan struct{}
	done   bool
	// AgentEnded, when set before Wait, is called (on Wait's goroutine)
	// as soon as the init reports the agent's status, before the jail
	// has been taken down; not for a jail its agent left to a keeper.
	AgentEnded func(status int)

	// Set by Load.
	transcript io.Writer
	keepable   bool
	pins       []jail.Pin
	payload    []byte
	copies     sync.WaitGroup
	// Set by Release, for Wait.
	winch     chan os.Signal
	stopRelay chan struct{}
	infoc     chan Info
	readyc    chan bool
	stopc     chan struct{}
	exitedc   chan int
	donec     chan int      // the agent's status, MsgDone's
	readDone  chan struct{} // closed when FDReady has nothing more
	agentEnd  int           // what donec gave, or -1
	waited    chan int      // bwrap's status
	info      Info
	pidfd     int
	bwrapPID  int // set by Release
	bwrapfd   int // set by Release
	ready     bool
	pending   []syscall.Signal
}

// Start creates the descriptors a jail needs and bwrap's command. Call
// [Stage.Load] or [Stage.Abort] next. From now on the forwarded signals
// are caught: before the agent starts they cancel the launch, after it
// they go to the agent.
func (l *Launcher) Start() (*Stage, error) {
	st := &Stage{l: l, early: &headBuffer{limit: 8 << 10}, pidfd: -1, bwrapfd: -1, agentEnd: -1}
	st.sigs = make(chan os.Signal, 32)
	// The runtime takes a round trip to its signal thread for each
	// signal it is told to catch, a millisecond or two for all of them:
	// that runs beside the planning, and whatever reads st.sigs (or
	// stops them) waits for it first.
	st.caught = make(chan struct{})
	boxinit.KeepBackgroundIgnores()
	go func() {
		signal.Notify(st.sigs, boxinit.Notifiable()...)
		close(st.caught)
	}()
	inTerm, outTerm, errTerm := isTerminal(l.Stdin), isTerminal(l.Stdout), isTerminal(l.Stderr)
	// A pty only for a real terminal session (both directions): a
	// redirected stream must stay what it is, byte for byte.
	st.usePTY = !l.NoPTY && inTerm && outTerm

	// bwrap's copies of its descriptors, which the release closes once
	// it has started; all of them are closed here on any error.
	var theirs []io.Closer
	ok := false
	defer func() {
		if !ok {
			for _, c := range theirs {
				c.Close()
			}
			st.stopSignals()
			st.closeOurs()
		}
	}()
	var err error
	if st.argsFile, err = memfile("args", nil); err != nil {
		return nil, err
	}
	self, err := os.Open(l.Self)
	if err != nil {
		return nil, fmt.Errorf("opening aisan's own binary %s: %w", l.Self, err)
	}
	theirs = append(theirs, self)
	pipe := func(what string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("creating the %s pipe: %w", what, err)
		}
		return r, w, nil
	}
	infoR, infoW, err := pipe("info")
	if err != nil {
		return nil, err
	}
	st.infoR = infoR
	theirs = append(theirs, infoW)
	// The init reads the agent's command from this pipe to its end: only
	// we hold the write end, and close it in Admit (a wrapper that dies
	// first gives the init an empty payload, and no agent runs).
	payloadR, payloadW, err := pipe("payload")
	if err != nil {
		return nil, err
	}
	st.payloadW = payloadW
	theirs = append(theirs, payloadR)
	readyR, readyW, err := pipe("readiness")
	if err != nil {
		return nil, err
	}
	st.readyR = readyR
	theirs = append(theirs, readyW)

	if l.PassFDs {
		st.inherited, st.inherit = callerFiles()
		for _, f := range st.inherited {
			theirs = append(theirs, f)
		}
	} else if err := keepCallerFiles(); err != nil {
		// fork+exec closes only what is close-on-exec: without this,
		// bwrap, the init and the agent would inherit the caller's.
		return nil, err
	}
	// bwrap runs the init through the descriptor of the file opened
	// above, whatever happens to its path meanwhile.
	cmd := &bwrapCmd{Path: l.Bwrap, Args: []string{l.Bwrap, "--args", strconv.Itoa(boxinit.FDArgs), "--", boxinit.InitArgv0}}
	if st.fixed, err = boxinit.AtFDs(map[int]*os.File{
		boxinit.FDArgs: st.argsFile, boxinit.FDInit: self, boxinit.FDPayload: payloadR,
		boxinit.FDInfo: infoW, boxinit.FDReady: readyW,
	}); err != nil {
		return nil, err
	}
	if len(st.fixed) != boxinit.FDFirstPin-3 {
		return nil, fmt.Errorf("bug: bwrap's descriptors end at %d, not before the first pin (%d)", 3+len(st.fixed), boxinit.FDFirstPin)
	}
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = l.Stdin, l.Stdout, l.Stderr
	tee := l.Tee
	handOver := func(f *os.File) bool { return !l.TeeAll && isFileOrDevice(f) }
	teePipe := func() (*os.File, error) {
		r, w, err := pipe("output")
		if err != nil {
			return nil, err
		}
		theirs = append(theirs, w)
		if st.outR == nil {
			st.outR = r
		} else {
			st.errR = r
		}
		return w, nil
	}
	if st.usePTY {
		ptmx, tty, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("opening a pty: %w", err)
		}
		st.ptmx = ptmx
		theirs = append(theirs, tty)
		_ = pty.InheritSize(l.Stdin, ptmx)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		if !errTerm && tee && !handOver(l.Stderr) {
			// stderr redirected: it stays apart from the terminal.
			st.outR = nil
			w, err := teePipe()
			if err != nil {
				return nil, err
			}
			st.errR, st.outR = st.outR, nil
			cmd.Stderr = w
		} else if !errTerm {
			cmd.Stderr = l.Stderr
		}
		cmd.SysProcAttr.Setsid = true
		cmd.SysProcAttr.Setctty = true
		cmd.SysProcAttr.Ctty = 0
	} else {
		// A session of its own, with no controlling terminal: a ^C meant
		// for us reaches the agent through the init (and does not kill
		// bwrap on the way), and nothing in the jail can make the user's
		// terminal type for it (TIOCSTI needs it to be the caller's
		// controlling terminal) or take it over as a job.
		cmd.SysProcAttr.Setsid = true
		if inTerm {
			// The terminal's input reaches the jail through a pipe, and
			// only while we are its foreground job: a jail in the
			// background never reads the user's keystrokes.
			r, w, err := pipe("input")
			if err != nil {
				return nil, err
			}
			theirs = append(theirs, r)
			cmd.Stdin = r
			st.inW = w
		}
		// Streams that are terminals pass through as they are (the agent
		// must see a terminal there), and so do files and devices (the
		// agent must be able to seek, append, see /dev/null, and hear of
		// a full disk; the file holds the output already); pipes and
		// sockets are copied to the transcript too. stdout and stderr
		// that are one pipe share one copy, so their order survives.
		if tee && !outTerm && !handOver(l.Stdout) {
			w, err := teePipe()
			if err != nil {
				return nil, err
			}
			cmd.Stdout = w
			if !errTerm && sameFile(l.Stdout, l.Stderr) {
				cmd.Stderr = w
			}
		}
		if tee && !errTerm && !handOver(l.Stderr) && cmd.Stderr == l.Stderr {
			if st.outR == nil {
				// Keep outR for stdout; stderr gets errR.
				r, w, err := pipe("output")
				if err != nil {
					return nil, err
				}
				theirs = append(theirs, w)
				st.errR = r
				cmd.Stderr = w
			} else {
				w, err := teePipe()
				if err != nil {
					return nil, err
				}
				cmd.Stderr = w
			}
		}
		// A terminal passed through is the caller's own descriptor, open
		// for reading too, and a process with no controlling terminal
		// reads a terminal freely: one the agent leaves behind would get
		// what the user types at the shell once we have returned. The
		// jail gets the terminal for writing only.
		// A terminal this user may not open again (another user's,
		// after su) goes as it came, as it did unjailed.
		var outW *os.File
		if outTerm && cmd.Stdout == l.Stdout {
			if outW = writeOnly(l.Stdout); outW != nil {
				theirs = append(theirs, outW)
				cmd.Stdout = outW
			}
		}
		if errTerm && cmd.Stderr == l.Stderr {
			if outW != nil && sameFile(l.Stdout, l.Stderr) {
				cmd.Stderr = outW
			} else if w := writeOnly(l.Stderr); w != nil {
				theirs = append(theirs, w)
				cmd.Stderr = w
			}
		}
	}
	st.cmd = cmd
	st.theirs = theirs
	ok = true
	return st, nil
}

// closeTheirs closes our copies of what only bwrap may hold: once it
// has them, or when it never will.
func (st *Stage) closeTheirs() {
	for _, c := range st.theirs {
		c.Close()
	}
	st.theirs = nil
}

// closeOurs closes the wrapper's ends of the jail's descriptors.
func (st *Stage) closeOurs() {
	for _, f := range []*os.File{st.argsFile, st.payloadW, st.infoR, st.readyR, st.ptmx, st.outR, st.errR, st.inW} {
		if f != nil {
			f.Close()
		}
	}
}

// Abort gives up a jail that was not released: nothing was started.
func (st *Stage) Abort() {
	if st == nil || st.done {
		return
	}
	st.abortStage()
	st.closeOurs()
	st.stopSignals()
}

// StopSignals ends the catching of forwarded signals that Start began.
// Call it when the launch's bookkeeping is done: a signal that arrives
// while the end is recorded must not cut that short.
func (st *Stage) StopSignals() {
	if st != nil {
		st.stopSignals()
	}
}

func (st *Stage) stopSignals() {
	<-st.caught
	signal.Stop(st.sigs)
}

// InterruptedBefore waits for done or a signal meant for the launch,
// whichever comes first, and reports the signal as [Stage.Interrupted]
// does (one that came with done is reported too).
func (st *Stage) InterruptedBefore(done <-chan struct{}) error {
	<-st.caught
	select {
	case s := <-st.sigs:
		return &InterruptedError{Signal: s.(syscall.Signal)}
	case <-done:
		return st.Interrupted()
	}
}

// Interrupted reports a signal that arrived while the launch was being
// prepared, without waiting (but for Start's catching of them).
func (st *Stage) Interrupted() error {
	<-st.caught
	select {
	case s := <-st.sigs:
		return &InterruptedError{Signal: s.(syscall.Signal)}
	default:
		return nil
	}
}

// The phases of a jail's run, in order, each called by the launcher with
// what the previous ones produced:
//
//	Launcher.Start   the jail's descriptors and bwrap's command are made
//	Stage.Load       the compiled jail goes into bwrap's descriptors,
//	                 the payload is made ready; the output copies start
//	Stage.Release    bwrap starts and sets the jail up; its init holds
//	                 the agent
//	Stage.Started    bwrap's report: the init's PID and namespaces
//	  (the caller records them, and places Held's processes in the
//	  jail's scope)
//	Stage.Admit      the init gets the payload and starts the agent
//	                 (without a scope, the caller admits before Release)
//	Stage.Wait       signals go to the agent until the jail ends, or
//	                 until its agent exits leaving processes (Outcome.Left)
//	Stage.HandOff    the jail's output goes to a keeper, after Left
//	Stage.Close      the terminal and our descriptors are put back
//
// Abort, at any point before Release, gives the jail up; Kill, after
// Release and before Admit, ends the jail before its agent ever ran.

// Outcome is how Wait ended.
type Outcome struct {
	// Status is the agent's exit status (128+N when signal N ended it).
	Status int
	// Left is set when the agent exited and processes remain in the jail
	// (only for a jail loaded as keepable): the caller hands it to a
	// keeper and calls HandOff, or calls Wait again to wait for the last
	// process itself.
	Left *Handoff
}

// Load fills the jail's descriptors with the compiled jail: bwrap's
// options go into the descriptor it reads them from, the init's payload
// is kept for [Stage.Admit], and the copies of the jail's output (to the
// user and to tr, when not nil) start. keepable makes the init report an
// agent that exits with processes left behind (see [Outcome.Left])
// instead of ending the jail.
func (st *Stage) Load(c jail.Compiled, tr io.Writer, keepable bool) error {
	st.transcript, st.keepable, st.pins = tr, keepable, c.Pins
	// On our pty the agent is the foreground job: keyboard signals and
	// SIGWINCH go to it, and it may read. Without one the jail has no
	// controlling terminal at all.
	pl := c.Payload(st.usePTY, 0)
	pl.Keep = keepable
	if len(st.inherit) > 0 {
		pl.Inherit, pl.InheritAt = st.inherit, boxinit.FDFirstPin+len(c.Pins)
	}
	payload, err := pl.Encode()
	if err != nil {
		st.abortStage()
		return fmt.Errorf("encoding the jail payload: %w", err)
	}
	// bwrap gets the same open file: what we write here, rewound, is
	// what it reads.
	if err := fill(st.argsFile, []byte(strings.Join(c.Options, "\x00")+"\x00")); err != nil {
		st.abortStage()
		return err
	}
	st.payload = payload
	if st.outR != nil {
		st.copyOut(st.outR, st.l.Stdout, false)
	}
	if st.errR != nil {
		st.copyOut(st.errR, st.l.Stderr, false)
	}
	return nil
}

// PID is bwrap's process ID, once Release has started it (0 before).
func (st *Stage) PID() int { return st.bwrapPID }

// Admit lets the agent start: the init, which bwrap has started in the
// jail, reads the payload to its end and runs the agent's command. A
// jail that has a scope is admitted once its processes are in it; one
// without, as soon as Release started bwrap (the init waits for the
// payload meanwhile). Admit after Load; a second call does nothing.
func (st *Stage) Admit() {
	w := st.payloadW
	if w == nil || st.killed {
		return
	}
	st.payloadW = nil
	p := st.payload
	// A payload larger than the pipe holds is read by an init that may
	// not run yet.
	go func() {
		w.Write(p)
		w.Close()
	}()
	trace("admitted")
}

// Kill ends a released jail whose agent was not admitted: nothing of the
// agent's ever ran. Wait then returns bwrap's status.
func (st *Stage) Kill() {
	for _, fd := range []int{st.pidfd, st.bwrapfd} {
		if fd >= 0 {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
	}
	// The payload's pipe stays open until Close: an init that read its
	// end before the kill reached it (through bwrap's end, when its own
	// PID is not known yet) would complain of a payload that never came.
	st.killed = true
}

// Release lets the loaded jail start: a signal that came while the launch
// was prepared cancels it instead (nothing has run yet). It puts the
// user's terminal in raw mode for a pty session, starts bwrap with the
// pinned mount sources, and starts relaying the user's input. The agent
// starts once admitted.
func (st *Stage) Release() error {
	l := st.l
	if err := st.Interrupted(); err != nil {
		st.abortStage()
		st.copies.Wait()
		return err
	}
	if st.usePTY {
		st.winch = make(chan os.Signal, 4)
		signal.Notify(st.winch, syscall.SIGWINCH)
		restore, err := makeRaw(l.Stdin)
		if err != nil {
			st.abortStage()
			return fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		st.restoreTerm = restore
	}
	pins, err := OpenPins(st.pins)
	if err != nil {
		st.abortStage()
		return err
	}
	// bwrap finds the pins at FDFirstPin and up, and the caller's own
	// after them (the init moves those back to their numbers for the
	// agent).
	st.cmd.ExtraFiles = slices.Concat(st.fixed, pins, st.inherited)
	st.bwrapPID, st.bwrapfd, err = st.cmd.start()
	for _, p := range pins {
		p.Close()
	}
	if err != nil {
		st.abortStage()
		return fmt.Errorf("starting %s: %w", l.Bwrap, err)
	}
	// bwrap holds them now; our copies would hold the pipes open past
	// its end.
	st.closeTheirs()
	trace("released")
	// The jail runs: from here on only its end ends it.
	st.done = true

	st.infoc = make(chan Info, 1)
	go func() {
		defer close(st.infoc)
		var info Info
		if err := json.NewDecoder(st.infoR).Decode(&info); err == nil && info.InitPID > 0 {
			st.infoc <- info
		}
	}()
	st.readyc = make(chan bool, 1)
	st.stopc = make(chan struct{}, 1)
	st.exitedc = make(chan int, 1)
	st.donec = make(chan int, 1)
	st.readDone = make(chan struct{})
	go func() {
		defer close(st.readDone)
		var b [1]byte
		n, _ := st.readyR.Read(b[:])
		st.readyc <- n == 1
		// Then MsgStopped for each time the agent stops; MsgLeft with
		// its status when it has exited and processes remain, or
		// MsgDone with it when the init is about to exit.
		for n == 1 {
			if n, _ = st.readyR.Read(b[:]); n == 1 && b[0] == boxinit.MsgStopped {
				st.stopc <- struct{}{}
			} else if n == 1 && (b[0] == boxinit.MsgLeft || b[0] == boxinit.MsgDone) {
				to := st.exitedc
				if b[0] == boxinit.MsgDone {
					to = st.donec
				}
				if n, _ = st.readyR.Read(b[:]); n == 1 {
					to <- int(b[0])
				}
			}
		}
	}()
	if st.usePTY {
		st.copyOut(st.ptmx, l.Stdout, true)
		go io.Copy(st.ptmx, l.Stdin)
	}
	if st.inW != nil {
		st.stopRelay = make(chan struct{})
		// A read that races with our going to the background gets EIO
		// instead of stopping us.
		signal.Ignore(syscall.SIGTTIN)
		w := st.inW
		st.inW = nil
		go relayTerminal(l.Stdin, w, st.stopRelay)
	}
	st.waited = make(chan int, 1)
	go func() {
		status, err := boxinit.WaitExit(st.bwrapPID)
		if err != nil {
			status = 125
		}
		st.waited <- status
	}()
	return nil
}

// Started waits for bwrap's report of the jail. ok is false when bwrap
// ended without one (it failed; Wait says how).
func (st *Stage) Started() (info Info, ok bool) {
	if st.infoc != nil {
		st.noteInfo(<-st.infoc)
	}
	return st.info, st.info.InitPID > 0
}

// Held are the processes of a started jail that hold its agent: bwrap
// and the init, which is bwrap's only child and starts nothing before it
// is admitted. Placing all of them in a scope before
// [Stage.Admit] puts every process of the jail's agent there from its
// birth. [Stage.StillHeld] then tells whether each still runs, so that
// none of the PIDs can have named another process meanwhile.
func (st *Stage) Held() ([]int, error) {
	if st.info.InitPID <= 0 || st.pidfd < 0 {
		return nil, errors.New("bwrap reported no jail")
	}
	bwrap, init := st.PID(), st.info.InitPID
	up, err := parentOf(init)
	if err == nil && up != bwrap {
		err = fmt.Errorf("its parent is PID %d, not bwrap (PID %d)", up, bwrap)
	}
	if err != nil {
		return nil, fmt.Errorf("checking the jail's init (PID %d): %w", init, err)
	}
	return []int{bwrap, init}, nil
}

// StillHeld reports whether the processes [Stage.Held] named all still
// run. (bwrap's pidfd comes with its start, before anything may reap it,
// and the init's as soon as bwrap reports it.)
func (st *Stage) StillHeld() bool {
	return st.bwrapfd >= 0 && !exited(st.bwrapfd) && st.pidfd >= 0 && !exited(st.pidfd)
}

// parentOf is the parent PID of pid, from /proc/PID/stat.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// "pid (comm) state ppid …": comm may hold anything but its ")" is
	// the last one.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	return strconv.Atoi(f[1])
}

// exited reports whether the process behind pidfd has exited.
func exited(pidfd int) bool {
	p := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return err != nil || n > 0
}

// noteInfo takes bwrap's report (zero when there was none).
func (st *Stage) noteInfo(i Info) {
	st.infoc = nil
	if i.InitPID <= 0 {
		return
	}
	st.info = i
	trace("jail started")
	// Pinned, so a signal never reaches a process that reused the PID
	// after the init was reaped.
	if fd, err := unix.PidfdOpen(i.InitPID, 0); err == nil {
		st.pidfd = fd
	}
	st.flush()
}

// deliver sends s to the jail's init, or queues it until the init handles
// signals (a namespace's PID 1 drops those it has no handler for).
func (st *Stage) deliver(s syscall.Signal) {
	if !st.ready || st.info.InitPID <= 0 {
		st.pending = append(st.pending, s)
		return
	}
	if st.pidfd >= 0 {
		unix.PidfdSendSignal(st.pidfd, s, nil, 0)
	} else {
		unix.Kill(st.info.InitPID, s)
	}
}

func (st *Stage) flush() {
	if st.ready && st.info.InitPID > 0 {
		p := st.pending
		st.pending = nil
		for _, s := range p {
			st.deliver(s)
		}
	}
}

// Wait forwards signals, stops and window sizes to the agent until the
// jail ends, and returns the agent's status; or, for a keepable jail,
// until the agent exits with processes left ([Outcome.Left]).
func (st *Stage) Wait() (Outcome, error) {
	l := st.l
	for {
		select {
		case i, ok := <-st.infoc:
			if ok {
				st.noteInfo(i)
			} else {
				st.infoc = nil
			}
		case r := <-st.readyc:
			st.readyc = nil
			st.ready = r
			trace("init ready")
			st.flush()
		case sig := <-st.sigs:
			st.deliver(sig.(syscall.Signal))
		case <-st.stopc:
			st.suspend()
			st.deliver(syscall.SIGCONT)
		case <-st.winch:
			_ = pty.InheritSize(l.Stdin, st.ptmx)
			transcript.NoteSize(st.transcript, st.ptmx)
		case status := <-st.donec:
			st.donec = nil
			st.agentEnd = status
			trace("agent exited")
			if st.AgentEnded != nil {
				st.AgentEnded(status)
			}
		case status := <-st.exitedc:
			trace("agent exited, processes remain")
			if st.infoc != nil {
				st.noteInfo(<-st.infoc)
			}
			if st.keepable && st.pidfd >= 0 {
				return Outcome{Status: status, Left: st.handoff(status)}, nil
			}
		case status := <-st.waited:
			trace("bwrap exited")
			// The pipes reach EOF when the jail's last process is gone;
			// a pty's master reads EIO then.
			st.copies.Wait()
			trace("output drained")
			if st.usePTY && status > 128 {
				// A killed TUI never undid what it set up; leave the
				// user's terminal as a shell expects it.
				l.Stdout.Write([]byte(terminalReset))
			}
			if st.infoc != nil {
				st.noteInfo(<-st.infoc)
			}
			if st.readyc != nil {
				// Every holder of the pipe is gone now: this does not
				// wait.
				st.ready = <-st.readyc
				st.readyc = nil
			}
			<-st.readDone // nor does this
			if st.donec != nil {
				select {
				case st.agentEnd = <-st.donec:
				default:
				}
			}
			if st.agentEnd >= 0 {
				// The init's word: it exited with that status, which
				// bwrap passes on unless something killed it since.
				status = st.agentEnd
			}
			killed := st.info.InitPID > 0 && status > 128
			if !st.ready && status != 0 && !killed {
				// The init never ran: bwrap failed, before or after it
				// reported the jail. (A jail killed from outside before
				// its init was up did start; its status is the kill's.)
				return Outcome{Status: status}, &StartError{Status: status, Stderr: st.early.String()}
			}
			return Outcome{Status: status}, nil
		}
	}
}

// Close puts the user's terminal back, stops relaying its input and
// closes our descriptors. Call it last (it is safe after Abort).
func (st *Stage) Close() {
	if st == nil {
		return
	}
	if st.winch != nil {
		signal.Stop(st.winch)
	}
	if st.restoreTerm != nil {
		st.restoreTerm()
		st.restoreTerm = nil
	}
	if st.stopRelay != nil {
		close(st.stopRelay)
		st.stopRelay = nil
		signal.Reset(syscall.SIGTTIN)
	}
	for _, fd := range []*int{&st.pidfd, &st.bwrapfd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	st.closeOurs()
}

// terminalReset undoes what full-screen agents set on the terminal: the
// alternate screen, a hidden cursor, mouse tracking (all modes) and
// bracketed paste. Each sequence is harmless when the mode is off.
const terminalReset = "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"

// suspend follows the agent into a stop, as a job would: when we are a
// terminal's foreground job, the terminal gets its modes back and we stop
// (the shell sees the job stopped); the caller resumes the agent once we
// are continued (fg). Without job control it returns at once.
func (st *Stage) suspend() {
	l := st.l
	interactive := false
	for _, f := range []*os.File{l.Stdin, l.Stdout, l.Stderr} {
		if isTerminal(f) && foregroundJob(int(f.Fd())) {
			interactive = true
		}
	}
	if !interactive {
		return
	}
	if st.usePTY && st.restoreTerm != nil {
		st.restoreTerm()
	}
	// SIGSTOP, not SIGTSTP: we catch that one to forward it, and Go
	// cannot put its default action back reliably for a moment. The shell
	// then reports the job stopped (status 147 rather than 148). The stop
	// reaches every thread a moment after kill returns, so wait for the
	// SIGCONT of fg rather than take kill's return for it.
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	unix.Kill(unix.Getpid(), unix.SIGSTOP)
	<-cont
	signal.Stop(cont)
	if st.usePTY {
		if restore, err := makeRaw(l.Stdin); err == nil {
			st.restoreTerm = restore
		}
		_ = pty.InheritSize(l.Stdin, st.ptmx)
	}
}

// foregroundJob reports whether fd is our controlling terminal and we are
// its foreground job.
func foregroundJob(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// abortStage gives up a jail that has not been released.
func (st *Stage) abortStage() {
	if st.done {
		return
	}
	st.done = true
	st.closeTheirs()
}

// fill replaces the content of an in-memory file and rewinds it.
func fill(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("resetting the in-memory %s file: %w", f.Name(), err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("writing the in-memory %s file: %w", f.Name(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewinding the in-memory %s file: %w", f.Name(), err)
	}
	return nil
}

// copyOut copies the jail's output r to the user's w and the transcript
// until r ends. When the user's side fails (a closed pipe: `| head`), a
// pipe is closed so the agent gets EPIPE/SIGPIPE as it would without aisan;
// a pty is drained into the transcript alone, so the agent never blocks.
func (st *Stage) copyOut(r *os.File, w io.Writer, isPTY bool) {
	early, tr := st.early, st.transcript
	st.copies.Add(1)
	go func() {
		defer st.copies.Done()
		buf := make([]byte, 32<<10)
		userOK := true
		for {
			n, err := r.Read(buf)
			if n > 0 {
				p := buf[:n]
				early.Write(p)
				if tr != nil {
					tr.Write(p)
				}
				if userOK {
					if _, werr := w.Write(p); werr != nil {
						userOK = false
						if !isPTY {
							r.Close()
							return
						}
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
}

// relayTerminal copies the user's terminal input to the jail's stdin
// until the terminal's end of file, the jail's stdin closing, or stop. It
// reads only while this process is the terminal's foreground job (or the
// terminal is not our controlling one, where no job owns it), so a jail
// launched in the background cannot read what the user types for others.
func relayTerminal(tty, w *os.File, stop <-chan struct{}) {
	defer w.Close()
	fd := int(tty.Fd())
	buf := make([]byte, 4096)
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !foreground(fd) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(pfd, 100); n <= 0 || err != nil {
			continue
		}
		if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 && pfd[0].Revents&unix.POLLIN == 0 {
			return // the terminal went away
		}
		if !foreground(fd) {
			continue
		}
		n, err := unix.Read(fd, buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			continue
		}
		if n == 0 && err == nil {
			return // ^D: end of file for the jail too
		}
		if errors.Is(err, unix.EIO) {
			// Read from the background after all (the race above).
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return
		}
	}
}

// foreground reports whether we may read terminal fd: we are its
// foreground job, or it is not our controlling terminal.
func foreground(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err != nil || pgrp == unix.Getpgrp()
}

// sameFile reports whether two streams are one open file (2>&1).
func sameFile(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	if a == nil || b == nil || unix.Fstat(int(a.Fd()), &sa) != nil || unix.Fstat(int(b.Fd()), &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino && sa.Rdev == sb.Rdev
}

// headBuffer keeps the first bytes written to it, for error reports.
type headBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.limit - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

// memfile returns an anonymous in-memory file holding data, positioned at
// its start. Nothing of it shows in any path or command line.
func memfile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating an in-memory file for %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the in-memory %s file: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("rewinding the in-memory %s file: %w", name, err)
	}
	return f, nil
}

// isFileOrDevice reports whether f is a regular file or a device (not a
// pipe, socket or FIFO): a stream that stays what it is in the jail.
func isFileOrDevice(f *os.File) bool {
	var st unix.Stat_t
	if f == nil || unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFCHR, unix.S_IFBLK:
		return true
	}
	return false
}

// writeOnly opens the terminal f is open on anew, for writing only, or
// returns nil when it cannot.
func writeOnly(f *os.File) *os.File {
	p := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	w, err := os.OpenFile(p, os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	return w
}

func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// makeRaw puts the terminal in raw mode and returns the function that
// restores it; the agent's own pty does the line discipline.
func makeRaw(f *os.File) (func(), error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) })
	}, nil
}

// PinError is a mount source that is not what aisan made: a symlink, a
// FIFO, a device, or a file of another user's.
type PinError struct {
	Path string
	Why  string
}

func (e *PinError) Error() string {
	return fmt.Sprintf("refusing to bind %s into the jail: %s", e.Path, e.Why)
}

// Hints says what to do.
func (e *PinError) Hints() []string {
	return []string{"something replaced a file in aisan's state; move it away (aisan recreates what it needs) and launch again"}
}

// OpenPins opens each pinned source without following a symlink at any
// step of the last component and checks it: a directory where one is
// wanted, else a regular file or a socket, owned by us. bwrap then binds
// the descriptors, so what is mounted is what was checked.
func OpenPins(pins []jail.Pin) ([]*os.File, error) {
	var out []*os.File
	fail := func(err error) ([]*os.File, error) {
		for _, f := range out {
			f.Close()
		}
		return nil, err
	}
	for _, p := range pins {
		fd, err := unix.Open(p.Path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(&PinError{Path: p.Path, Why: err.Error()})
		}
		f := os.NewFile(uintptr(fd), p.Path)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			f.Close()
			return fail(&PinError{Path: p.Path, Why: err.Error()})
		}
		typ := st.Mode & unix.S_IFMT
		want := map[jail.PinType]uint32{jail.PinDir: unix.S_IFDIR, jail.PinFile: unix.S_IFREG, jail.PinSocket: unix.S_IFSOCK}[p.Type]
		var why string
		switch {
		case p.Ino != 0 && (st.Dev != p.Dev || st.Ino != p.Ino):
			why = "it is no longer the file that was checked (something on its path was replaced since)"
		case p.Ino == 0 && int(st.Uid) != os.Getuid():
			why = fmt.Sprintf("it belongs to uid %d, not to you", st.Uid)
		case typ != want:
			why = fmt.Sprintf("it is a %s, not a %s", fileType(typ), p.Type)
		}
		if why != "" {
			f.Close()
			return fail(&PinError{Path: p.Path, Why: why})
		}
		out = append(out, f)
	}
	return out, nil
}

func fileType(typ uint32) string {
	switch typ {
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFREG:
		return "regular file"
	case unix.S_IFSOCK:
		return "socket"
	}
	return "special file"
}

// keepCallerFiles makes the descriptors this process inherited open
// without close-on-exec close-on-exec, so that no child of ours (bwrap,
// and through it the box) inherits them: a mode without PassFDs starts
// from nothing of the caller's, whatever the caller leaked to us (an
// IDE's or a multiplexer's socket, a file of the user's).
func keepCallerFiles() error {
	nums, err := inheritedFDs()
	if err != nil {
		return fmt.Errorf("listing the caller's descriptors: %w", err)
	}
	for _, n := range nums {
		// EBADF: closed since it was listed (by another goroutine of
		// ours), so nothing the box could inherit.
		if _, err := unix.FcntlInt(uintptr(n), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("closing the caller's descriptor %d to the box: %w", n, err)
		}
	}
	return nil
}

// inheritedFDs are the descriptors this process holds open without
// close-on-exec, from 3 up, in order: the caller's own (everything
// aisan opens is close-on-exec).
func inheritedFDs() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 3 {
			continue
		}
		// The directory's own descriptor is close-on-exec (and closed
		// by now).
		flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	return nums, nil
}

// callerFiles returns the descriptors this process inherited open without
// close-on-exec, from 3 up, which an agent run without aisan would have
// inherited.
func callerFiles() ([]*os.File, []int) {
	nums, err := inheritedFDs()
	if err != nil {
		return nil, nil
	}
	files := make([]*os.File, len(nums))
	for i, n := range nums {
		// Not os.NewFile: its finalizer would close the caller's
		// descriptor; a duplicate is ours to lose.
		d, err := unix.FcntlInt(uintptr(n), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return nil, nil
		}
		files[i] = os.NewFile(uintptr(d), "inherited")
	}
	return files, nums
}

// bwrapCmd is bwrap's command, as Start makes it and Release starts it.
type bwrapCmd struct {
	Path                  string
	Args, Env             []string
	Stdin, Stdout, Stderr *os.File // nil is /dev/null
	ExtraFiles            []*os.File
	SysProcAttr           *syscall.SysProcAttr
}

// start starts the command and returns its PID and a pidfd of it. It is
// what os/exec does, through boxinit.Spawn, but the pidfd comes from the
// clone itself (CLONE_PIDFD), so no wait can reap bwrap before it is
// pinned, and there is no probe of the kernel's pidfd support in front
// of bwrap (see boxinit.Spawn).
func (c *bwrapCmd) start() (pid, pidfd int, err error) {
	files := make([]int, 0, 3+len(c.ExtraFiles))
	for _, f := range []*os.File{c.Stdin, c.Stdout, c.Stderr} {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return 0, -1, err
			}
			defer null.Close()
			f = null
		}
		files = append(files, int(f.Fd()))
	}
	for _, f := range c.ExtraFiles {
		files = append(files, int(f.Fd()))
	}
	sys := *c.SysProcAttr
	pidfd = -1
	sys.PidFD = &pidfd
	if pid, err = boxinit.Spawn(c.Path, c.Args, c.Env, files, &sys); err != nil {
		return 0, -1, err
	}
	return pid, pidfd, nil
}

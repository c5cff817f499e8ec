package jail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// StageCommand is the hidden subcommand that runs [RunStage].
const StageCommand = "__stage"

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
	// Self is the path of the aisan binary, run as the stage and, through
	// a descriptor, as the in-jail init.
	Self string
	// Stdin, Stdout and Stderr are the user's streams.
	Stdin, Stdout, Stderr *os.File
	// Transcript, when set, receives a copy of everything the agent
	// prints.
	Transcript io.Writer
	// NoPTY keeps the user's streams even when stdin is a terminal.
	NoPTY bool
	// Place is called with the stage's PID before the jail may start; it
	// is where the jail is put into its systemd scope.
	Place func(ctx context.Context, stagePID int) error
	// Started is called once bwrap has reported the jail's init.
	Started func(Info)
	// lateTranscript says that Transcript will be set between Start and
	// Run, so that Start prepares the pipes the copy needs.
	lateTranscript bool
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

// Run starts the jail described by c and waits for it. It returns the
// agent's exit status (128+N when it died of signal N). Signals sent to
// this process are forwarded to the agent; on a terminal, the agent runs
// on its own pty whose size follows the user's.
func (l *Launcher) Run(ctx context.Context, c Compiled) (int, error) {
	st, err := l.Start()
	if err != nil {
		return 0, err
	}
	return st.Run(ctx, c)
}

// Stage is a jail's stage process, started ahead of the jail: it
// initialises while the wrapper takes the slot and plans the jail, then
// waits at its gate until [Stage.Run] hands it the compiled jail.
type Stage struct {
	l      *Launcher
	cmd    *exec.Cmd
	usePTY bool

	argsFile, payloadFile *os.File // shared with the stage, filled by Run
	infoR, gateW          *os.File
	ptmx                  *os.File
	outR, errR            *os.File // tee pipes' read ends (no pty)
	early                 *headBuffer
	done                  bool
}

// Start creates the descriptors a jail needs and starts its stage, which
// waits at the gate. Call [Stage.Run] or [Stage.Abort] next.
func (l *Launcher) Start() (st *Stage, err error) {
	st = &Stage{l: l, usePTY: !l.NoPTY && isTerminal(l.Stdin), early: &headBuffer{limit: 8 << 10}}
	// The stage's copies of its descriptors; ours of them are closed once
	// it has started, and on any error.
	var theirs []io.Closer
	defer func() {
		for _, c := range theirs {
			c.Close()
		}
		if err != nil {
			st.closeOurs()
		}
	}()
	if st.argsFile, err = memfile("args", nil); err != nil {
		return nil, err
	}
	if st.payloadFile, err = memfile("payload", nil); err != nil {
		return nil, err
	}
	self, err := os.Open(l.Self)
	if err != nil {
		return nil, fmt.Errorf("opening aisan's own binary %s: %w", l.Self, err)
	}
	theirs = append(theirs, self)
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the info pipe: %w", err)
	}
	st.infoR = infoR
	theirs = append(theirs, infoW)
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the gate pipe: %w", err)
	}
	st.gateW = gateW
	theirs = append(theirs, gateR)

	cmd := exec.Command(l.Self, StageCommand, l.Bwrap)
	cmd.ExtraFiles = []*os.File{st.argsFile, self, st.payloadFile, infoW, gateR}
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if st.usePTY {
		ptmx, tty, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("opening a pty: %w", err)
		}
		st.ptmx = ptmx
		theirs = append(theirs, tty)
		_ = pty.InheritSize(l.Stdin, ptmx)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr.Setsid = true
		cmd.SysProcAttr.Setctty = true
		cmd.SysProcAttr.Ctty = 0
	} else {
		// Our own process group, so that a ^C meant for us reaches the
		// agent through the init and does not kill bwrap on the way.
		cmd.SysProcAttr.Setpgid = true
		cmd.Stdin = l.Stdin
		cmd.Stdout, cmd.Stderr = l.Stdout, l.Stderr
		if l.Transcript != nil || l.lateTranscript {
			// Pipes now, copies in Run: nothing is written before the
			// gate opens.
			outR, outW, err := os.Pipe()
			if err != nil {
				return nil, fmt.Errorf("creating an output pipe: %w", err)
			}
			st.outR = outR
			theirs = append(theirs, outW)
			errR, errW, err := os.Pipe()
			if err != nil {
				return nil, fmt.Errorf("creating an output pipe: %w", err)
			}
			st.errR = errR
			theirs = append(theirs, errW)
			cmd.Stdout, cmd.Stderr = outW, errW
		}
	}
	trace("stage starting")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the jail stage %s: %w", l.Self, err)
	}
	st.cmd = cmd
	return st, nil
}

// closeOurs closes the wrapper's ends of the stage's descriptors.
func (st *Stage) closeOurs() {
	for _, f := range []*os.File{st.argsFile, st.payloadFile, st.infoR, st.gateW, st.ptmx, st.outR, st.errR} {
		if f != nil {
			f.Close()
		}
	}
}

// Abort sends the waiting stage away without starting a jail.
func (st *Stage) Abort() {
	if st == nil || st.done {
		return
	}
	st.done = true
	st.gateW.Close()
	st.cmd.Process.Kill()
	st.cmd.Wait()
	st.closeOurs()
}

// Run hands the stage the compiled jail, places it (the scope), opens the
// gate and waits for the jail to end.
func (st *Stage) Run(ctx context.Context, c Compiled) (int, error) {
	l := st.l
	st.done = true
	defer st.closeOurs()
	payload, err := json.Marshal(Payload{Argv: c.Command, Foreground: st.usePTY})
	if err != nil {
		st.abortStage()
		return 0, fmt.Errorf("encoding the jail payload: %w", err)
	}
	// The stage holds the same open files: what we write here, rewound,
	// is what bwrap and the init read.
	if err := fill(st.argsFile, []byte(strings.Join(c.Options, "\x00")+"\x00")); err != nil {
		st.abortStage()
		return 0, err
	}
	if err := fill(st.payloadFile, payload); err != nil {
		st.abortStage()
		return 0, err
	}

	var copies sync.WaitGroup
	if st.outR != nil {
		l.teeFrom(&copies, st.outR, l.Stdout, st.early)
		l.teeFrom(&copies, st.errR, l.Stderr, st.early)
	}
	if l.Place != nil {
		if err := l.Place(ctx, st.cmd.Process.Pid); err != nil {
			st.abortStage()
			copies.Wait()
			return 0, err
		}
	}

	// Signals: forwarded to the init once we know its host PID.
	sigs := make(chan os.Signal, 32)
	notify := append([]os.Signal(nil), forwarded...)
	if st.usePTY {
		notify = append(notify, syscall.SIGWINCH)
	}
	signal.Notify(sigs, notify...)
	defer signal.Stop(sigs)

	if st.usePTY {
		restore, err := makeRaw(l.Stdin)
		if err != nil {
			st.abortStage()
			return 0, fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		defer restore()
	}

	trace("placed")
	if _, err := st.gateW.Write([]byte{'x'}); err != nil {
		st.abortStage()
		return 0, fmt.Errorf("releasing the jail stage: %w", err)
	}
	st.gateW.Close()

	infoc := make(chan Info, 1)
	go func() {
		defer close(infoc)
		var info Info
		if err := json.NewDecoder(st.infoR).Decode(&info); err == nil && info.InitPID > 0 {
			infoc <- info
		}
	}()

	if st.usePTY {
		copies.Add(1)
		go func() {
			defer copies.Done()
			var w io.Writer = l.Stdout
			if l.Transcript != nil {
				w = io.MultiWriter(l.Stdout, l.Transcript)
			}
			io.Copy(w, st.ptmx)
		}()
		go io.Copy(st.ptmx, l.Stdin)
	}

	waited := make(chan error, 1)
	go func() { waited <- st.cmd.Wait() }()

	var (
		info    Info
		pending []syscall.Signal
		started bool
	)
	deliver := func(s syscall.Signal) {
		if info.InitPID > 0 {
			unix.Kill(info.InitPID, s)
		} else {
			pending = append(pending, s)
		}
	}
	for {
		select {
		case i, ok := <-infoc:
			infoc = nil
			if ok {
				info, started = i, true
				trace("jail started")
				if l.Started != nil {
					l.Started(info)
				}
				for _, s := range pending {
					deliver(s)
				}
				pending = nil
			}
		case sig := <-sigs:
			if sig == syscall.SIGWINCH {
				_ = pty.InheritSize(l.Stdin, st.ptmx)
				continue
			}
			deliver(sig.(syscall.Signal))
		case err := <-waited:
			trace("stage exited")
			status := exitCode(err)
			// Without a pty the pipes reach EOF when the jail's last
			// process is gone; a pty's master reads EIO then.
			copies.Wait()
			trace("output drained")
			if !started && infoc != nil {
				if i, ok := <-infoc; ok {
					info, started = i, true
					if l.Started != nil {
						l.Started(info)
					}
				}
			}
			if !started && status != 0 {
				return status, &StartError{Status: status, Stderr: st.early.String()}
			}
			return status, nil
		}
	}
}

// abortStage ends the stage from inside Run.
func (st *Stage) abortStage() {
	st.gateW.Close()
	st.cmd.Process.Kill()
	st.cmd.Wait()
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

// teeFrom copies r to w and to the transcript until r ends.
func (l *Launcher) teeFrom(wg *sync.WaitGroup, r *os.File, w io.Writer, early *headBuffer) {
	dst := io.MultiWriter(w, early)
	if l.Transcript != nil {
		dst = io.MultiWriter(w, l.Transcript, early)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(dst, r)
	}()
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

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 125
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

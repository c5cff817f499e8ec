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
	usePTY := !l.NoPTY && isTerminal(l.Stdin)
	payload, err := json.Marshal(Payload{Argv: c.Command, Foreground: usePTY})
	if err != nil {
		return 0, fmt.Errorf("encoding the jail payload: %w", err)
	}
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
		closers = nil
	}
	defer closeAll()

	argsFile, err := memfile("args", []byte(strings.Join(c.Options, "\x00")+"\x00"))
	if err != nil {
		return 0, err
	}
	closers = append(closers, argsFile)
	payloadFile, err := memfile("payload", payload)
	if err != nil {
		return 0, err
	}
	closers = append(closers, payloadFile)
	self, err := os.Open(l.Self)
	if err != nil {
		return 0, fmt.Errorf("opening aisan's own binary %s: %w", l.Self, err)
	}
	closers = append(closers, self)
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("creating the info pipe: %w", err)
	}
	closers = append(closers, infoW)
	defer infoR.Close()
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("creating the gate pipe: %w", err)
	}
	closers = append(closers, gateR)
	defer gateW.Close()

	stage := exec.Command(l.Self, StageCommand, l.Bwrap)
	stage.ExtraFiles = []*os.File{argsFile, self, payloadFile, infoW, gateR}
	stage.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	stage.SysProcAttr = &syscall.SysProcAttr{}

	var (
		copies   sync.WaitGroup
		ptmx     *os.File
		restore  func()
		early    = &headBuffer{limit: 8 << 10}
		earlyOut io.Writer
	)
	if usePTY {
		var tty *os.File
		ptmx, tty, err = pty.Open()
		if err != nil {
			return 0, fmt.Errorf("opening a pty: %w", err)
		}
		defer ptmx.Close()
		closers = append(closers, tty)
		_ = pty.InheritSize(l.Stdin, ptmx)
		stage.Stdin, stage.Stdout, stage.Stderr = tty, tty, tty
		stage.SysProcAttr.Setsid = true
		stage.SysProcAttr.Setctty = true
		stage.SysProcAttr.Ctty = 0
		restore, err = makeRaw(l.Stdin)
		if err != nil {
			return 0, fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		defer restore()
	} else {
		// Our own process group, so that a ^C meant for us reaches the
		// agent through the init and does not kill bwrap on the way.
		stage.SysProcAttr.Setpgid = true
		stage.Stdin = l.Stdin
		if l.Transcript != nil {
			out, err := l.tee(&copies, l.Stdout, early)
			if err != nil {
				return 0, err
			}
			closers = append(closers, out)
			errw, err := l.tee(&copies, l.Stderr, early)
			if err != nil {
				return 0, err
			}
			closers = append(closers, errw)
			stage.Stdout, stage.Stderr = out, errw
		} else {
			stage.Stdout, stage.Stderr = l.Stdout, l.Stderr
		}
	}
	earlyOut = early

	trace("stage starting")
	if err := stage.Start(); err != nil {
		return 0, fmt.Errorf("starting the jail stage %s: %w", l.Self, err)
	}
	closeAll()

	if l.Place != nil {
		if err := l.Place(ctx, stage.Process.Pid); err != nil {
			gateW.Close()
			stage.Process.Kill()
			stage.Wait()
			copies.Wait()
			return 0, err
		}
	}

	// Signals: forwarded to the init once we know its host PID.
	sigs := make(chan os.Signal, 32)
	notify := append([]os.Signal(nil), forwarded...)
	if usePTY {
		notify = append(notify, syscall.SIGWINCH)
	}
	signal.Notify(sigs, notify...)
	defer signal.Stop(sigs)

	trace("placed")
	if _, err := gateW.Write([]byte{'x'}); err != nil {
		stage.Process.Kill()
		stage.Wait()
		return 0, fmt.Errorf("releasing the jail stage: %w", err)
	}
	gateW.Close()

	infoc := make(chan Info, 1)
	go func() {
		defer close(infoc)
		var info Info
		if err := json.NewDecoder(infoR).Decode(&info); err == nil && info.InitPID > 0 {
			infoc <- info
		}
	}()

	if usePTY {
		copies.Add(1)
		go func() {
			defer copies.Done()
			var w io.Writer = l.Stdout
			if l.Transcript != nil {
				w = io.MultiWriter(l.Stdout, l.Transcript)
			}
			io.Copy(w, ptmx)
		}()
		go io.Copy(ptmx, l.Stdin)
	}

	waited := make(chan error, 1)
	go func() { waited <- stage.Wait() }()

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
				trace("start recorded")
				for _, s := range pending {
					deliver(s)
				}
				pending = nil
			}
		case sig := <-sigs:
			if sig == syscall.SIGWINCH {
				_ = pty.InheritSize(l.Stdin, ptmx)
				continue
			}
			deliver(sig.(syscall.Signal))
		case err := <-waited:
			trace("stage exited")
			status := exitCode(err)
			if usePTY {
				// The pty reads EIO once every holder of the slave is
				// gone; the copy then ends.
				copies.Wait()
			} else {
				copies.Wait()
			}
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
				_ = earlyOut
				return status, &StartError{Status: status, Stderr: early.String()}
			}
			return status, nil
		}
	}
}

// tee returns the write end of a pipe whose content is copied to w and to
// the transcript.
func (l *Launcher) tee(wg *sync.WaitGroup, w io.Writer, early *headBuffer) (*os.File, error) {
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating an output pipe: %w", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer r.Close()
		io.Copy(io.MultiWriter(w, l.Transcript, early), r)
	}()
	return pw, nil
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

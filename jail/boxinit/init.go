package boxinit

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/errwrap"
)

// Payload is what the wrapper hands the in-jail init through FDPayload,
// in the wire form of payload.go.
type Payload struct {
	// Argv is the agent's command, as bytes: arguments need not be UTF-8,
	// and must arrive exactly as given.
	Argv [][]byte
	// Foreground makes the agent the terminal's foreground job, so that
	// keyboard signals and SIGWINCH reach the agent and not bwrap, and so
	// that it may read the terminal.
	Foreground bool
	// Ctty is the descriptor (0, 1 or 2) that is the terminal, with
	// Foreground.
	Ctty int
	// Relays are the egress listeners to start before the agent.
	Relays []PayloadRelay
	// EnvFile is read into the agent's environment (see [Spec.EnvFile]).
	EnvFile string
	// NewSessionKeyring: see [Spec.NewSessionKeyring].
	NewSessionKeyring bool
	// Inherit are the caller's own descriptors (deny-list jails): the
	// numbers the agent must find them at, as unjailed. The init finds
	// them at InheritAt and up, in that order, past the descriptors of
	// aisan's own protocol.
	Inherit   []int
	InheritAt int
	// Keep asks the init to outlive an agent that leaves processes
	// behind: it reports the agent's status on FDReady and stays until
	// the last of them is gone (see [RunInit]).
	Keep bool
}

// PayloadRelay is one loopback port and the socket it relays to.
type PayloadRelay struct {
	Port   int
	Socket string
	// Pass hands connections over to the socket's server (aisan's own
	// egress) instead of copying them (jail/relay).
	Pass bool
}

// NewPayload builds the payload for argv.
func NewPayload(argv []string, foreground bool, ctty int) Payload {
	p := Payload{Foreground: foreground, Ctty: ctty}
	for _, a := range argv {
		p.Argv = append(p.Argv, []byte(a))
	}
	return p
}

// InitArgv0 is how the init appears in the jail's process list: its
// executable at FDInit (a constant, so that no start pays for building it;
// TestInitArgv0 holds the two together).
const InitArgv0 = "/proc/self/fd/4"

// IsInit reports whether this process was started by bwrap as the jail's
// init. bwrap runs our binary through its descriptor, so argv is exactly
// that path.
func IsInit(args []string) bool {
	return len(args) == 1 && args[0] == InitArgv0 && os.Getpid() == 1
}

// forwarded are the signals the wrapper and the init pass on to the
// agent's process group. SIGCHLD is the init's own business.
var forwarded = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2,
	// Job control: a ^Z (or kill -TSTP) on the wrapper stops the agent,
	// and the shell's SIGCONT at fg resumes it.
	syscall.SIGTSTP, syscall.SIGCONT,
}

// KeepBackgroundIgnores ignores SIGQUIT again when SIGINT came ignored.
// A shell starts a script's background job with both ignored, and the
// Go runtime keeps an inherited SIG_IGN only for SIGINT and SIGHUP: each
// Go process on the way (the wrapper, the init) would otherwise hand the
// agent SIGQUIT's default. Other inherited ignores (a script's trap ”
// TERM) cannot be seen from Go and reach the agent as defaults. Call it
// before starting the next process.
func KeepBackgroundIgnores() {
	if signal.Ignored(syscall.SIGINT) {
		signal.Ignore(syscall.SIGQUIT)
	}
}

// Notifiable returns the forwarded signals this process does not ignore.
// A signal the caller ignored (nohup, a script's background job) stays
// ignored all the way down to the agent, as it would without aisan:
// handling it here would reset it to the default in the agent.
func Notifiable() []os.Signal {
	var out []os.Signal
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// RunInit is the jail's PID 1: it starts the agent, forwards signals sent
// from outside to it, reaps orphans, and exits with the agent's status.
// When it exits the kernel kills whatever else is left in the jail.
//
// With Payload.Keep, an agent that exits while other processes remain
// (`setsid nohup server &`) does not end the jail: the init writes
// MsgLeft and the status byte on FDReady, so that the wrapper can return the
// status to the shell and hand the slot to its keeper, and then goes on
// reaping, forwarding each signal to every process left, until none is;
// then it exits with the agent's status.
func RunInit() int {
	// First of all, before the agent (or anything else in the jail)
	// exists: see [sealInit].
	if err := sealInit(); err != nil {
		complain("jail init: " + err.Error())
		return 125
	}
	nameInit()
	// PID 1 ignores signals it has no handler for, even SIGTERM from
	// outside; registering them is what lets them through. The runtime
	// takes a round trip to its signal thread for each one, about a
	// millisecond for all of them here, so that runs beside the payload's
	// read and the agent's start. The wrapper sends none before the byte
	// on FDReady, which follows; a SIGCHLD that comes before is not
	// lost either: the loop below reaps once as soon as it begins.
	KeepBackgroundIgnores()
	sigs := make(chan os.Signal, 32)
	notified := make(chan struct{})
	go func() {
		signal.Notify(sigs, append([]os.Signal{syscall.SIGCHLD}, Notifiable()...)...)
		close(notified)
	}()
	// The readiness pipe stays open: a stopped agent is reported on it
	// (MsgStopped), so that the wrapper can stop too and hand the terminal back
	// to the shell, as a stopped job does.
	ready := os.NewFile(FDReady, "ready")
	if ready != nil {
		// Ours, not the agent's: it must not inherit it.
		syscall.CloseOnExec(FDReady)
	}
	p, agent, code := startAgent()
	// Now that signals reach us, the wrapper may send them: it hears so
	// before anything else on FDReady, and before any status of ours, a
	// failure's too (a status without it means the jail never started).
	<-notified
	if ready != nil && !tell(ready, MsgReady) {
		ready.Close()
		ready = nil
	}
	if agent < 0 {
		return code
	}
	// What the agent did before the handlers were in place.
	sigs <- syscall.SIGCHLD
	// status is the agent's, once it has exited; reported says the
	// wrapper has been told that others remain.
	status, reported := -1, false
	// end returns the agent's status for the init's own exit, and tells
	// the wrapper first, unless a keeper has the jail: it records the end
	// while the kernel takes the jail down.
	end := func() int {
		if !reported {
			tell(ready, MsgDone, byte(status))
		}
		return status
	}
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			s := sig.(syscall.Signal)
			if status >= 0 {
				// The agent is gone: the signal is for what is left.
				// From PID 1 of the namespace, -1 is all of it but us.
				syscall.Kill(-1, s)
				continue
			}
			if syscall.Kill(-agent, s) != nil {
				syscall.Kill(agent, s)
			}
			continue
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WUNTRACED, nil)
			if status >= 0 && errors.Is(err, syscall.ECHILD) {
				// The jail's last process is gone.
				return end()
			}
			if pid <= 0 || err != nil {
				if status >= 0 && !reported {
					// Processes remain (every one of them is our child
					// or its descendant now).
					if !p.Keep || !tell(ready, MsgLeft, byte(status)) {
						return end()
					}
					reported = true
				}
				break
			}
			if pid != agent {
				continue
			}
			if ws.Stopped() {
				// The wrapper decides: it stops as a job (and forwards
				// the SIGCONT of fg), or resumes the agent at once when
				// there is no job control. Without a wrapper to tell,
				// a stop is a pause of no length.
				if !tell(ready, MsgStopped) {
					syscall.Kill(-agent, syscall.SIGCONT)
				}
				continue
			}
			status = statusCode(ws)
			if !p.Keep {
				return end()
			}
		}
	}
	return 125
}

// startAgent reads the payload, prepares the box and starts the agent.
// On failure it says why and returns agent -1 and the exit code.
func startAgent() (p Payload, agent, code int) {
	p, err := readPayload()
	if err != nil {
		complain("jail init: " + err.Error())
		return p, -1, 125
	}
	if p.NewSessionKeyring {
		// The session keyring prepareBox joins is the joining thread's,
		// and the agent inherits the keyrings of the thread that forks
		// it: both must be this one, whatever the runtime does meanwhile
		// (a syscall that loses its processor may resume the goroutine
		// on another thread). Only a strict box joins one; locking costs
		// the others a thread hand-over.
		runtime.LockOSThread()
	}
	env, err := prepareBox(p)
	if err != nil {
		complain("jail init: " + err.Error())
		return p, -1, 125
	}
	argv := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		argv[i] = string(a)
	}
	path, err := lookPath(argv[0])
	if err != nil {
		complain("cannot run " + strconv.Quote(argv[0]) + " in the jail: " + err.Error())
		return p, -1, 127
	}
	attr := &syscall.SysProcAttr{
		Setpgid:    true,
		Foreground: p.Foreground,
		Ctty:       p.Ctty,
	}
	agent, err = Spawn(path, argv, env, agentFiles(p), attr)
	if errors.Is(err, syscall.ENOEXEC) {
		// An executable without a #! line: the shell that typed it, and
		// execvp(3) under env, nohup or xargs, run it with /bin/sh, and
		// so does the jail.
		agent, err = Spawn(shPath, shArgv(path, argv), env, agentFiles(p), attr)
	}
	if err != nil {
		complain("cannot run " + strconv.Quote(argv[0]) + " in the jail: " + err.Error())
		return p, -1, 126
	}
	return p, agent, 0
}

// complain writes an "aisan: error:" line for msg on standard error.
// (Not fmt: see [errwrap].)
func complain(msg string) {
	os.Stderr.WriteString("aisan: error: " + msg + "\n")
}

// tell writes a message to the wrapper on the readiness pipe, reporting
// whether it got there (false without a pipe).
func tell(ready *os.File, msg ...byte) bool {
	if ready == nil {
		return false
	}
	_, err := ready.Write(msg)
	return err == nil
}

func readPayload() (Payload, error) {
	f := os.NewFile(FDPayload, "payload")
	if f == nil {
		return Payload{}, errors.New("no payload descriptor " + strconv.Itoa(FDPayload))
	}
	data, err := io.ReadAll(io.LimitReader(f, 256<<20))
	f.Close()
	syscall.Close(FDInit)
	if err != nil {
		return Payload{}, errwrap.Wrap("reading payload", err)
	}
	p, err := DecodePayload(data)
	if err != nil {
		return Payload{}, errwrap.Wrap("decoding payload", err)
	}
	if len(p.Argv) == 0 {
		return Payload{}, errors.New("payload has no command")
	}
	return p, nil
}

// agentFiles is the agent's descriptors for [spawn]: the init's 0, 1
// and 2, and the caller's own at the numbers they had outside; every
// other number from 3 up to the highest is closed in the agent. Their
// copies at InheritAt are close-on-exec, so the agent has each once.
func agentFiles(p Payload) []int {
	top := 2
	for _, n := range p.Inherit {
		top = max(top, n)
	}
	files := []int{0, 1, 2}
	for range top - 2 {
		files = append(files, closed)
	}
	for i, n := range p.Inherit {
		if n < 3 {
			continue
		}
		fd := p.InheritAt + i
		syscall.CloseOnExec(fd)
		files[n] = fd
	}
	return files
}

package jail

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Payload is what the wrapper hands the in-jail init through FDPayload.
type Payload struct {
	// Argv is the agent's command.
	Argv []string `json:"argv"`
	// Foreground makes the agent the terminal's foreground job, so that
	// keyboard signals and SIGWINCH reach the agent and not bwrap.
	Foreground bool `json:"foreground,omitempty"`
}

// initArgv0 is how the init appears in the jail's process list.
var initArgv0 = "/proc/self/fd/" + strconv.Itoa(FDInit)

// IsInit reports whether this process was started by bwrap as the jail's
// init. bwrap runs our binary through its descriptor, so argv is exactly
// that path.
func IsInit(args []string) bool {
	return len(args) == 1 && args[0] == initArgv0 && os.Getpid() == 1
}

// forwarded are the signals the init passes on to the agent's process
// group. SIGCHLD is the init's own business.
var forwarded = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2,
}

// RunInit is the jail's PID 1: it starts the agent, forwards signals sent
// from outside to it, reaps orphans, and exits with the agent's status.
// When it exits the kernel kills whatever else is left in the jail.
func RunInit() int {
	p, err := readPayload()
	if err != nil {
		fmt.Fprintf(os.Stderr, "aisan: error: jail init: %v\n", err)
		return 125
	}
	sigs := make(chan os.Signal, 32)
	// PID 1 ignores signals it has no handler for, even SIGTERM from
	// outside; registering them is what lets them through.
	signal.Notify(sigs, append([]os.Signal{syscall.SIGCHLD}, forwarded...)...)

	path, err := exec.LookPath(p.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "aisan: error: cannot run %q in the jail: %v\n", p.Argv[0], err)
		return 127
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   p.Argv,
		Env:    os.Environ(),
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Foreground: p.Foreground,
			Ctty:       0,
		},
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "aisan: error: cannot run %q in the jail: %v\n", p.Argv[0], err)
		return 126
	}
	agent := cmd.Process.Pid
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			s := sig.(syscall.Signal)
			if unix.Kill(-agent, s) != nil {
				unix.Kill(agent, s)
			}
			continue
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
			if pid == agent {
				return statusCode(ws)
			}
		}
	}
	return 125
}

func readPayload() (Payload, error) {
	f := os.NewFile(FDPayload, "payload")
	if f == nil {
		return Payload{}, fmt.Errorf("no payload descriptor %d", FDPayload)
	}
	data, err := io.ReadAll(io.LimitReader(f, 256<<20))
	f.Close()
	unix.Close(FDInit)
	if err != nil {
		return Payload{}, fmt.Errorf("reading payload: %w", err)
	}
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Payload{}, fmt.Errorf("decoding payload: %w", err)
	}
	if len(p.Argv) == 0 {
		return Payload{}, fmt.Errorf("payload has no command")
	}
	return p, nil
}

// statusCode maps a wait status to a shell-style exit code.
func statusCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

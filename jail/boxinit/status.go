package boxinit

import (
	"errors"
	"syscall"
)

// The one mapping from how a process ended to the status a shell would
// report, used by the init (the agent's status) and the wrapper
// (bwrap's): the exit code, or 128+N when signal N ended it.

// statusCode maps a wait status.
func statusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// ExitCode maps what [os/exec.Cmd.Wait] returned: 0 for nil, the process's
// status for an exit, 125 (the shell's "could not run") for anything else.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return statusCode(ws)
		}
		return ee.ExitCode()
	}
	return 125
}

// exitError is what [ExitCode] needs of an [os/exec.ExitError], the one
// error that has these methods (through its [os.ProcessState]). Matching
// the methods instead of the type keeps os/exec out of the init, which
// links this package and starts on every launch.
type exitError interface {
	error
	Sys() any
	ExitCode() int
}

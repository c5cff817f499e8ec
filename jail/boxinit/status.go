package boxinit

import "syscall"

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

package jail

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// fdGate is the stage's end of the pipe the wrapper releases it with.
const fdGate = 8

// RunStage is the process between the wrapper and bwrap. It exists so
// that the jail can be placed in a systemd scope before anything in it can
// fork (the stage blocks on the gate until the wrapper says go), and so
// that the jail's life is tied to the stage, not to the wrapper: a wrapper
// that dies leaves an orphan that `aisan kill --orphans` can find, instead
// of a half-dead terminal.
//
// args is [bwrap path].
func RunStage(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "aisan: error: internal stage started without a bwrap path")
		return 125
	}
	// bwrap's --die-with-parent watches the thread that forked it; keep
	// that thread alive for the stage's whole life.
	runtime.LockOSThread()

	gate := os.NewFile(fdGate, "gate")
	var b [1]byte
	n, _ := gate.Read(b[:])
	gate.Close()
	if n != 1 {
		// The wrapper gave up (placement failed, or it died).
		return 125
	}
	files := make([]*os.File, 0, 5)
	for _, fd := range []int{FDArgs, FDInit, FDPayload, FDInfo, FDReady} {
		files = append(files, os.NewFile(uintptr(fd), "fd"+strconv.Itoa(fd)))
	}
	cmd := exec.Command(args[0], "--args", strconv.Itoa(FDArgs), "--", initArgv0)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = files
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "aisan: error: starting %s: %v\n", args[0], err)
		return 127
	}
	for _, f := range files {
		f.Close()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 125
	}
	return 0
}

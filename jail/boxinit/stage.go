package boxinit

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// StageCommand is the argument that makes a process the stage ([RunStage]).
const StageCommand = "__stage"

// MaxPins bounds the descriptors one gate message may carry.
const MaxPins = 200

// RunStage is the process between the wrapper and bwrap. It exists so
// that the jail's life is tied to the stage, not to the wrapper: a wrapper
// that dies leaves an orphan that `aisan kill --orphans` can find, instead
// of a half-dead terminal; and so that it is started, ready to run bwrap,
// while the wrapper plans the jail (it blocks on the gate until the
// wrapper says go). The wrapper places it, bwrap and the init in the
// jail's scope before the init starts the agent (fds.go).
//
// args is [bwrap path].
func RunStage(args []string) int {
	if len(args) != 2 {
		complain("internal stage started without a bwrap path and a descriptor count")
		return 125
	}
	inherited, err := strconv.Atoi(args[1])
	if err != nil || inherited < 0 {
		complain("internal stage: bad descriptor count")
		return 125
	}
	// bwrap's --die-with-parent watches the thread that forked it; keep
	// that thread alive for the stage's whole life.
	runtime.LockOSThread()

	pins, ok := waitGate()
	if !ok {
		// The wrapper gave up (placement failed, or it died).
		return 125
	}
	// bwrap gets the stage's descriptors below the pins at the same
	// numbers.
	files := make([]int, 0, FDFirstPin+len(pins)+inherited)
	for fd := range FDFirstPin {
		files = append(files, fd)
	}
	// bwrap finds them at FDFirstPin and up, and the caller's own after
	// them (the init moves those back to their numbers for the agent).
	files = append(files, pins...)
	for i := range inherited {
		files = append(files, FDStageInherited+i)
	}
	argv := []string{args[0], "--args", strconv.Itoa(FDArgs), "--", InitArgv0}
	pid, err := spawn(args[0], argv, os.Environ(), files, nil)
	if err != nil {
		complain("starting " + args[0] + ": " + err.Error())
		return 127
	}
	// bwrap holds them now; the stage keeping them would hold the pipes
	// open past bwrap's end.
	for _, fd := range files[3:] {
		syscall.Close(fd)
	}
	status, err := waitExit(pid)
	if err != nil {
		complain("internal stage: waiting for " + args[0] + ": " + err.Error())
		return 125
	}
	return status
}

// waitGate blocks until the wrapper releases the stage and returns the
// pinned mount sources it sent along. ok is false when the wrapper closed
// the gate instead.
func waitGate() (pins []int, ok bool) {
	var b [1]byte
	oob := make([]byte, syscall.CmsgSpace(MaxPins*4))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(FDGate, b[:], oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		syscall.Close(FDGate)
		if err != nil || n != 1 || b[0] != MsgGo {
			return nil, false
		}
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, false
		}
		for _, m := range msgs {
			fds, err := syscall.ParseUnixRights(&m)
			if err != nil {
				return nil, false
			}
			pins = append(pins, fds...)
		}
		return pins, true
	}
}

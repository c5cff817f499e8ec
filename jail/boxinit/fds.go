package boxinit

import (
	"errors"
	"os"
	"strconv"
)

// Descriptor numbers the launcher (package jail/launch) uses to hand things to
// bwrap and to the in-jail init. They are fixed so that
// presets can name them and explain shows the numbers a launch uses.
const (
	// FDArgs carries bwrap's options (NUL-separated) for --args.
	FDArgs = 3
	// FDInit is the init's executable (aisan-init, or aisan itself),
	// which bwrap runs inside the jail as /proc/self/fd/4.
	FDInit = 4
	// FDPayload carries the agent's command to the in-jail init: the
	// read end of a pipe whose only write end the wrapper holds. The init
	// reads it to its end before it starts the agent, so the pipe is also
	// the agent's gate: the wrapper writes and closes it once the jail's
	// processes are in their scope (at once when there is none), and a
	// wrapper that dies first leaves the init an empty payload, so no
	// agent ever runs outside its scope.
	FDPayload = 5
	// FDInfo receives bwrap's --info-fd JSON.
	FDInfo = 6
	// FDReady carries one byte from the in-jail init once it handles
	// signals: the wrapper forwards none before, since a namespace's PID 1
	// drops signals it has no handler for.
	FDReady = 7
	// FDFirstPin is the first of the pinned mount sources (Compiled.Pins,
	// in order), which bwrap binds with --bind-fd and closes: they never
	// reach the init or the agent. The caller's own descriptors (a
	// deny-list jail passes them on, as unjailed) follow the pins, and
	// the init moves them back to their numbers for the agent.
	FDFirstPin = 8
)

// The messages, one byte each (runc's syncType, smaller).
const (
	// MsgReady, on FDReady, init → wrapper, first and once: the init
	// handles signals, so the wrapper may forward them.
	MsgReady byte = 'r'
	// MsgStopped, on FDReady: the agent stopped (^Z); the wrapper stops
	// as a job would, and resumes the agent when it is continued.
	MsgStopped byte = 'z'
	// MsgLeft, on FDReady, then one byte of the agent's status: the agent
	// exited and processes remain (a keepable jail only).
	MsgLeft byte = 'e'
	// MsgDone, on FDReady, then one byte of the agent's status: the init
	// is about to exit with it, and the jail with it (never after
	// MsgLeft).
	MsgDone byte = 'd'
)

// AtFDs is a child's ExtraFiles with each file at its descriptor number
// (ExtraFiles[i] becomes descriptor 3+i): the order of a child's
// descriptors follows from the constants, never from a list that must
// match them. A number below the highest that has no file is a bug.
func AtFDs(files map[int]*os.File) ([]*os.File, error) {
	top := 2
	for fd := range files {
		top = max(top, fd)
	}
	out := make([]*os.File, top-2)
	for fd, f := range files {
		if fd < 3 || f == nil {
			return nil, errors.New("descriptor " + strconv.Itoa(fd) + ": no file")
		}
		out[fd-3] = f
	}
	for i, f := range out {
		if f == nil {
			return nil, errors.New("descriptor " + strconv.Itoa(i+3) + ": no file")
		}
	}
	return out, nil
}

// The descriptors and messages, from the wrapper down (numbers as each
// process sees them):
//
//	wrapper ──fork, once the jail is planned──▶ bwrap --args 3
//	   │                 │                    3 args   (memfd, NUL-separated)
//	   │                 │                    4 init   (aisan-init, or aisan)
//	   │                 │                    5 payload (pipe ← wrapper, payload.go)
//	   │                 │                    6 info   (pipe → wrapper)
//	   │                 │                    7 ready  (pipe → wrapper)
//	   │                 │                    8… pins  (O_PATH, consumed by bwrap),
//	   │                 │                       then the caller's own
//	   │                 ▼
//	   │              init = /proc/self/fd/4 (PID 1): reads 5 to its end
//	   │                 │   (the wrapper writes the payload and closes it
//	   │                 │   once bwrap's report (6) let it place bwrap and
//	   │                 │   the init in the jail's scope; without a scope,
//	   │                 │   before bwrap starts), closes 4, starts the
//	   │                 │   agent, and writes MsgReady on 7 once its
//	   │                 │   signal handlers are set (first, whatever
//	   │                 │   follows); then MsgStopped on 7 when the agent
//	   │                 │   stops, MsgLeft and its status when it exits
//	   │                 │   leaving processes, or MsgDone and its status
//	   │                 │   just before the init's own exit
//	   │                 ▼
//	   └─ signals ──▶ agent (none of the descriptors above)
//
// Only the init writes 7 inside the jail: the agent never holds it, and
// the init makes itself undumpable before anything else runs, so that no
// process in the jail (all of them the init's own user) can reach it, or
// anything else of the init's, through /proc/1/fd, /proc/1/mem or ptrace
// (seal.go). The wrapper therefore believes what arrives on 7.

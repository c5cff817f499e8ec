package launch

import (
	"os"

	"github.com/aisan-dev/aisan/jail/boxinit"
)

// The keeper's descriptors, as `aisan __keep` sees them. The wrapper
// builds its child's list from these numbers (keepFiles), and the keeper
// finds each there:
//
//	wrapper ──exec──▶ aisan __keep (its own session)
//	   3 spec    memfd: keepSpec, JSON (names the slot: never an argv)
//	   4 ready   pipe → wrapper: keepMsgTaken once the slot is the keeper's
//	   5 go      pipe ← wrapper: closed once the wrapper stops reading the
//	             jail's output; the keeper reads it from then on
//	   6 lock    the slot's lock (the locks belong to the open file, so
//	             the slot stays held)
//	   7 init    pidfd of the jail's init: readable when the jail ends
//	   8…        the jail's output (pty master, or the stdout and stderr
//	             pipes): keepSpec.Outputs of them
//	   then      what the mode's Services.Keep handed over (listening
//	             sockets, the bus relay's lifeline): keepSpec.Kept of them
const (
	keepFDSpec = 3 + iota
	keepFDReady
	keepFDGo
	keepFDLock
	keepFDInit
	keepFDOutput
)

// keepMsgTaken is the one byte a keeper writes on keepFDReady once it
// holds the slot and serves the jail's host side.
const keepMsgTaken = 'k'

// keepFDKept is the descriptor of the i-th file the mode handed over,
// after the outputs.
func keepFDKept(outputs, i int) int { return keepFDOutput + outputs + i }

// keepFiles is the keeper's ExtraFiles: each fixed descriptor at its
// number, then the outputs and the mode's files.
func keepFiles(spec, ready, goR, lock, init *os.File, outputs, kept []*os.File) ([]*os.File, error) {
	files, err := boxinit.AtFDs(map[int]*os.File{keepFDSpec: spec, keepFDReady: ready, keepFDGo: goR, keepFDLock: lock, keepFDInit: init})
	if err != nil {
		return nil, err
	}
	// keepFDOutput follows keepFDInit: outputs and kept files take the
	// numbers from there.
	return append(append(files, outputs...), kept...), nil
}

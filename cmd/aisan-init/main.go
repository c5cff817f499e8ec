// Command aisan-init is the small binary bwrap runs as each jail's PID 1.
// The init also lives in the aisan binary, which is used when this one is
// not installed next to it; this one exists because every launch starts
// it, and a process of the full aisan binary costs several milliseconds
// more to start (it links the egress proxies, HTTP/2, TOML and a terminal
// emulator, and initialises all of them).
//
// It is not meant to be run by hand.
package main

import (
	"os"

	"github.com/aisan-dev/aisan/jail/boxinit"
)

const usage = `aisan-init: aisan's in-jail init. It is started by aisan itself
(aisan run, aisan claude, ...) and does nothing useful when run by hand.
`

func main() {
	if boxinit.IsInit(os.Args) {
		os.Exit(boxinit.RunInit())
	}
	// Written directly: aisan-init links no fmt (TestInitLinks in
	// cmd/aisan), as every start pays for what the binary links.
	if len(os.Args) == 2 && (os.Args[1] == "--help" || os.Args[1] == "-h") {
		os.Stdout.WriteString(usage)
		return
	}
	os.Stderr.WriteString(usage)
	os.Exit(2)
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// aisan is built twice from this package (see the Makefile):
//
//	aisan       the front (build tag aisanfront): the deny-list launchers,
//	            list's neighbours that start often (kill, prune, version,
//	            completion, shell-init), the stage and the keeper. It links
//	            no proxy, no terminal emulator and no TLS, so that every
//	            launch and every shell-function call starts a small Go
//	            program (issue 27).
//	aisan-full  everything, strict boxes included. The front hands a
//	            command it does not link to it by exec'ing it with the
//	            same arguments and environment (front.go): one process, as
//	            if aisan-full had been called.
//
// A plain 'go build ./cmd/aisan' makes the full binary, which needs no
// front and works on its own under any name.

// fullBinary is the full build's name, beside the front.
const fullBinary = "aisan-full"

// errHandOver is what a command the front does not link returns; main
// then execs the full binary with the same arguments. The full build
// never returns it.
var errHandOver = errors.New("handed over to " + fullBinary)

// execFull replaces this process by the full binary beside it, with args
// and the same environment. It returns only on failure.
func execFull(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding aisan's own binary, to run %s beside it: %w", fullBinary, err)
	}
	full := filepath.Join(filepath.Dir(self), fullBinary)
	err = syscall.Exec(full, append([]string{os.Args[0]}, args...), os.Environ())
	return withHint(fmt.Errorf("this command is in %s, which could not be run: %w", full, err),
		"install aisan with 'make install' (it installs aisan and "+fullBinary+" side by side), or build it: go build -o "+full+" ./cmd/aisan")
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/sibling"
)

// aisan is built twice from this package (see the Makefile):
//
//	aisan       the front (build tag aisanfront): the deny-list launchers,
//	            the keeper, and the commands that link
//	            nothing more; front.go lists those it hands over. It links
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
const fullBinary = sibling.FullName

// errHandOver is what a command the front does not link returns; main
// then execs the full binary with the same arguments. The full build
// never returns it.
var errHandOver = errors.New("handed over to " + fullBinary)

// execFull replaces this process by the full binary beside it, with args
// and the same environment. It returns only on failure. The full binary
// must be as hard to swap as this one (package sibling's rule): the front
// runs it for every strict launch.
func execFull(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding aisan's own binary, to run %s beside it: %w", fullBinary, err)
	}
	hint := "install aisan with 'make install' (it installs aisan and " + fullBinary + " side by side), or build it: go build -o " +
		filepath.Join(filepath.Dir(self), fullBinary) + " ./cmd/aisan"
	full, err := sibling.Binary(self, fullBinary)
	if err != nil {
		return withHint(fmt.Errorf("this command is in %s, which aisan will not run: %w", fullBinary, err), hint)
	}
	if full == "" {
		return withHint(fmt.Errorf("this command is in %s, which is not installed beside %s", fullBinary, self), hint)
	}
	err = syscall.Exec(full, append([]string{os.Args[0]}, args...), os.Environ())
	return withHint(fmt.Errorf("this command is in %s, which could not be run: %w", full, err), hint)
}

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
)

// openRegistry opens the registry in the state dir the environment names.
func openRegistry() (*slot.Registry, error) {
	home, err := slot.Home()
	if err != nil {
		return nil, err
	}
	reg, err := slot.Open(home)
	if err != nil {
		return nil, err
	}
	reg.Killer = launch.Killer(context.Background())
	return reg, nil
}

// warn prints problems that did not stop the command.
func warn(problems []error) {
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "aisan: warning: %v\n", p)
	}
}

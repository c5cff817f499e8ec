package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'shell-init'.
func runShellInit(ctx context.Context, args []string) error {
	return errors.New("shell-init: not implemented yet")
}

package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'kill'.
func runKill(ctx context.Context, args []string) error {
	return errors.New("kill: not implemented yet")
}

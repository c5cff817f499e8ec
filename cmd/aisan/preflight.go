package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'preflight'.
func runPreflight(ctx context.Context, args []string) error {
	return errors.New("preflight: not implemented yet")
}

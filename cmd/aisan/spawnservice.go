package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'spawn-service'.
func runSpawnService(ctx context.Context, args []string) error {
	return errors.New("spawn-service: not implemented yet")
}

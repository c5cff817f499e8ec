package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'watch'.
func runWatch(ctx context.Context, args []string) error {
	return errors.New("watch: not implemented yet")
}

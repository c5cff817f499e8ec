package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'list'.
func runList(ctx context.Context, args []string) error {
	return errors.New("list: not implemented yet")
}

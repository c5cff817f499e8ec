package main

import (
	"context"
	"errors"
)

// TODO: replaced by the issue that owns 'logs'.
func runLogs(ctx context.Context, args []string) error {
	return errors.New("logs: not implemented yet")
}

package errwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// TestWrapAsErrorf: the text and the chain are those of fmt.Errorf's %w.
func TestWrapAsErrorf(t *testing.T) {
	inner := &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}
	got := Wrap("reading the payload", inner)
	want := fmt.Errorf("reading the payload: %w", inner)
	if got.Error() != want.Error() {
		t.Errorf("%q, want %q", got, want)
	}
	var pe *fs.PathError
	if !errors.Is(got, fs.ErrNotExist) || !errors.As(got, &pe) || pe != inner {
		t.Errorf("%v does not reach its cause", got)
	}
	if Wrap("x", nil) != nil {
		t.Error("a nil error was wrapped")
	}
}

// Package errwrap is fmt.Errorf's "%w" for the programs that start on
// every launch and must not link fmt (the jail's init, cmd/aisan-init): an error that says what failed, on what, in front of
// the error that made it fail, which errors.Is and errors.As still reach.
//
// It is a leaf of jail/shared, and imports nothing at all.
package errwrap

// Error is what failed (Msg) and why (Err), printed "Msg: Err" as
// fmt.Errorf("%s: %w") prints it.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err behind msg. A nil err stays nil, so that a caller
// may wrap what a call returned without testing it first.
func Wrap(msg string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Msg: msg, Err: err}
}

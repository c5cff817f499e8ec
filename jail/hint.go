package jail

// HintedError is an error with fix-it lines, which the command layer
// prints as "aisan: hint:" lines under the error. It is the one way errors
// in aisan carry hints: any error in a chain with a Hints method is
// printed the same way, so packages with their own error types (a missing
// tool, a manager that is not running) only need that method.
type HintedError struct {
	Err   error
	Lines []string
}

// WithHints wraps err with fix-it lines.
func WithHints(err error, lines ...string) error {
	return &HintedError{Err: err, Lines: lines}
}

func (e *HintedError) Error() string   { return e.Err.Error() }
func (e *HintedError) Unwrap() error   { return e.Err }
func (e *HintedError) Hints() []string { return e.Lines }

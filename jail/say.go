package jail

// Level is what kind of line a message for the user is.
type Level string

// The levels of messages.
const (
	Warning Level = "warning"
	Note    Level = "note"
	Hint    Level = "hint"
	// Plain is a line that is neither ("aisan: <text>").
	Plain Level = ""
)

// Say takes a message for the user. The jail never prints aisan's own
// lines itself: it hands each to the Say the command layer gave it (see
// [Request.Say]), which alone decides how it looks and where it goes.
type Say func(level Level, text string)

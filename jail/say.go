package jail

import "sync"

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

// discard is the Say of a request that gave none.
func discard(Level, string) {}

// sayBuffer keeps what a goroutine said until the launch can say it in
// its place (the scope's placement runs beside the rest of the launch).
type sayBuffer struct {
	mu   sync.Mutex
	msgs []said
}

type said struct {
	level Level
	text  string
}

func (b *sayBuffer) say(level Level, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, said{level, text})
}

// replay says what was kept, in order, and forgets it.
func (b *sayBuffer) replay(to Say) {
	b.mu.Lock()
	msgs := b.msgs
	b.msgs = nil
	b.mu.Unlock()
	for _, m := range msgs {
		to(m.level, m.text)
	}
}

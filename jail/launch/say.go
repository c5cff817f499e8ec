package launch

import (
	"sync"

	"github.com/aisan-dev/aisan/jail"
)

// discard is the Say of a request that gave none.
func discard(jail.Level, string) {}

// sayBuffer keeps what a goroutine said until the launch can say it in
// its place (the scope's placement runs beside the rest of the launch).
type sayBuffer struct {
	mu   sync.Mutex
	msgs []said
}

type said struct {
	level jail.Level
	text  string
}

func (b *sayBuffer) say(level jail.Level, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, said{level, text})
}

// replay says what was kept, in order, and forgets it.
func (b *sayBuffer) replay(to jail.Say) {
	b.mu.Lock()
	msgs := b.msgs
	b.msgs = nil
	b.mu.Unlock()
	for _, m := range msgs {
		to(m.level, m.text)
	}
}

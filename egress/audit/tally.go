package audit

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aisan-dev/aisan/jail/shared/inert"
)

// Tally counts a launch's refused requests as they are logged, for the
// one line the launch prints when it ends: how many, the commonest
// reason, and where the whole log is.
type Tally struct {
	mu      sync.Mutex
	slot    string
	n       int
	reasons map[string]int
	first   map[string]int // order of first sight, to break ties stably
}

// Wrap returns a sink that logs to s and counts the refusals of the slot.
func (t *Tally) Wrap(slot string, s Sink) Sink {
	t.mu.Lock()
	t.slot = slot
	t.mu.Unlock()
	return tallied{t, s}
}

type tallied struct {
	t *Tally
	s Sink
}

func (w tallied) Log(e Entry) {
	w.s.Log(e)
	if e.Refused != "" {
		w.t.count(e.Refused)
	}
}

// indexes are the list positions of a JSON path ("messages[3]"), which
// differ between requests refused for one reason.
var indexes = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[[0-9]+\]`) })

func (t *Tally) count(reason string) {
	r := indexes().ReplaceAllString(reason, "[]")
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reasons == nil {
		t.reasons, t.first = map[string]int{}, map[string]int{}
	}
	t.n++
	if _, ok := t.first[r]; !ok {
		t.first[r] = len(t.first)
	}
	t.reasons[r]++
}

// Summary is the line for the end of the launch, "" when nothing was
// refused.
func (t *Tally) Summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return ""
	}
	best, bestN := "", 0
	for r, n := range t.reasons {
		if n > bestN || n == bestN && t.first[r] < t.first[best] {
			best, bestN = r, n
		}
	}
	best = strings.TrimPrefix(best, "aisan strict mode refused this request: ")
	best = strings.TrimPrefix(best, "aisan strict mode: ")
	best = inert.Text(best) // what the box sent, on the user's terminal
	if len(best) > 240 {
		cut := 240
		for cut > 0 && !utf8.RuneStart(best[cut]) {
			cut--
		}
		best = best[:cut] + "…"
	}
	req := "requests"
	if t.n == 1 {
		req = "request"
	}
	return fmt.Sprintf("strict mode refused %d %s of this box's; the commonest (%d): %s; the whole list: aisan logs --egress %s", t.n, req, bestN, best, t.slot)
}

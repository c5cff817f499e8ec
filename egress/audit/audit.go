// Package audit writes the per-slot egress log: one JSON object a line for
// every request or stream a backend answered or refused. Nothing secret is
// ever a field: the entry has no header or body, only what a user needs to
// see what the box asked for.
package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Entry is one line of the log. Path includes the query string.
type Entry struct {
	Time      time.Time `json:"time"`
	Backend   string    `json:"backend"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Status    int       `json:"status"`
	BytesUp   int64     `json:"bytes_up"`
	BytesDown int64     `json:"bytes_down"`
	MS        float64   `json:"ms"`
	Refused   string    `json:"refused"`
	// Tokens are what a model call used, as its API reported them; nil
	// when the answer reported none (or the request is no model call).
	Tokens *Tokens `json:"tokens,omitempty"`
	// Note says what changed from outside the box (a host granted,
	// lapsed or denied; the budget or the rate set) or what happened to
	// a connection besides its status (cut when its grant ended).
	Note string `json:"note,omitempty"`
}

// Tokens are the tokens one model call used, or a sum of calls'. Input
// is what the model read afresh; prompt tokens served from the
// provider's cache are CacheRead, and those written to it
// CacheCreation, so that the four add up to everything the call was
// billed for.
type Tokens struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheRead     int64 `json:"cache_read,omitempty"`
	CacheCreation int64 `json:"cache_creation,omitempty"`
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheCreation }

// Add is t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.CacheRead + u.CacheRead, t.CacheCreation + u.CacheCreation}
}

// Sub is t minus u.
func (t Tokens) Sub(u Tokens) Tokens {
	return Tokens{t.Input - u.Input, t.Output - u.Output, t.CacheRead - u.CacheRead, t.CacheCreation - u.CacheCreation}
}

// Max is the larger of t and u in each count: what a call used, when
// its answer reports running totals (a stream's events do).
func (t Tokens) Max(u Tokens) Tokens {
	return Tokens{max(t.Input, u.Input), max(t.Output, u.Output), max(t.CacheRead, u.CacheRead), max(t.CacheCreation, u.CacheCreation)}
}

// Sink receives entries. Backends take a Sink, not a file, so tests can
// collect entries and a box without a slot can discard them.
type Sink interface {
	Log(Entry)
}

// Discard drops every entry.
var Discard Sink = discard{}

type discard struct{}

func (discard) Log(Entry) {}

// DefaultMax is the size at which a log is rotated to path + ".1".
const DefaultMax = 8 << 20

// File appends entries to a log file, rotating it once it passes Max bytes
// so a long session cannot fill the disk: the previous generation is kept
// as path.1, older ones are dropped.
type File struct {
	Path string
	Max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
	err  error
}

// Open opens (creating 0600) the log at path. It refuses a path that is a
// symlink or not a regular file: the state dir is ours, but a planted link
// must never make us append to something else.
func Open(path string) (*File, error) {
	l := &File{Path: path, Max: DefaultMax}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) open() error {
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("egress audit log %s: %w", l.Path, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("egress audit log %s: not a regular file", l.Path)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Log appends e. A write error is remembered (see Err) rather than
// returned: a request must not fail because its log line could not be
// written.
func (l *File) Log(e Entry) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(InertJSON(b), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if l.Max > 0 && l.size+int64(len(b)) > l.Max {
		l.rotate()
		if l.f == nil {
			return
		}
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	if err != nil && l.err == nil {
		l.err = err
	}
}

func (l *File) rotate() {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.Path, l.Path+".1"); err != nil && l.err == nil {
		l.err = err
	}
	if err := l.open(); err != nil && l.err == nil {
		l.err = err
	}
}

// Err reports the first write or rotation error, if any.
func (l *File) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// InertJSON escapes the C1 control characters encoding/json leaves raw
// in a string (U+0080 to U+009F; U+009B is CSI on some terminals) as
// \u00XX: a log line holds what a box sent, and `aisan logs --egress
// --json` prints it. The bytes C2 80 to C2 9F occur in valid UTF-8 only
// as those characters, and JSON's own syntax is ASCII, so the result is
// the same JSON.
func InertJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte{0xc2}) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); i++ {
		if b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] < 0xa0 {
			out = fmt.Appendf(out, `\u%04x`, b[i+1])
			i++
			continue
		}
		out = append(out, b[i])
	}
	return out
}

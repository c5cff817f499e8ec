// Package boxstate reads a strict box's state file for listings: where
// it is, when the box's latest launch started serving, its token budget
// and the tokens each backend counted, and the file's JSON as written.
//
// Package strictbox writes the file (its steering keeps it current while
// the box runs) from its State; this reader links none of the egress
// machinery behind that, so that 'aisan list' runs in the front, which
// starts on every launch (see cmd/aisan's TestFrontLinks). strictbox's
// tests hold the two to the same JSON.
package boxstate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/slot"
)

// maxFile bounds what is read of a state file: a box's hosts and
// backends, a few kilobytes.
const maxFile = 1 << 20

// Path is where slot's state file is: in the state dir, which no box can
// write.
func Path(slotName string) (string, error) {
	home, err := slot.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "egress", slotName+".state.json"), nil
}

// Tokens are one backend's counted tokens, as the file spells them.
type Tokens struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheRead     int64 `json:"cache_read"`
	CacheCreation int64 `json:"cache_creation"`
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheCreation }

// Summary is what a listing shows of a state file.
type Summary struct {
	// Start is when the box's host side started serving it.
	Start time.Time `json:"start"`
	// Budget is the box's token budget, 0 for none.
	Budget int64 `json:"budget"`
	// Backends are the tokens counted, per backend.
	Backends map[string]Backend `json:"backends"`
	// Raw is the file's JSON object, as written.
	Raw json.RawMessage `json:"-"`
}

// Backend is what a listing shows of one backend's spending.
type Backend struct {
	Tokens Tokens `json:"tokens"`
}

// Spent is every token counted, over all backends.
func (s Summary) Spent() int64 {
	var n int64
	for _, b := range s.Backends {
		n += b.Tokens.Total()
	}
	return n
}

// Read reads slot's state file; a missing one is fs.ErrNotExist.
func Read(slotName string) (Summary, error) {
	p, err := Path(slotName)
	if err != nil {
		return Summary{}, err
	}
	data, err := regfile.Read(p, maxFile)
	if err != nil {
		return Summary{}, err
	}
	s, err := Parse(data)
	if err != nil {
		return Summary{}, fmt.Errorf("the state file %s: %w", p, err)
	}
	return s, nil
}

// Parse reads a state file's content.
func Parse(data []byte) (Summary, error) {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return Summary{}, err
	}
	s.Raw = data
	return s, nil
}

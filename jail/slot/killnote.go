package slot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A kill note tells a wrapper who ended its agent: 'aisan kill' leaves
// one beside the slot's record before it signals a running or background
// slot, and the wrapper, when its agent has ended, reads it (for its own
// launch only), removes it and says so in one line on its terminal; a
// background slot's keeper reads it for the launch's receipt. The note
// lives in the state dir, which no jail can write, so no agent can forge
// one.

// killNote is the file slots/<slot>.kill.
type killNote struct {
	// Start is the killed launch's start: a note meets only its launch.
	Start  time.Time `json:"start"`
	By     string    `json:"by"`
	Signal string    `json:"signal"`
	At     time.Time `json:"at"`
}

func (r *Registry) killNotePath(name string) string {
	return filepath.Join(r.home, "slots", name+".kill")
}

// leaveKillNote records, before the signal, that r.By ends e's launch
// with sig. A note that cannot be written changes nothing else.
func (r *Registry) leaveKillNote(e Entry, sig syscall.Signal) {
	if e.State != Running && e.State != Background {
		return // an orphaned jail has no one to read it
	}
	by := r.By
	if by == "" {
		by = "'aisan kill'"
	}
	n := killNote{Start: e.Start, By: by, Signal: unix.SignalName(sig), At: time.Now()}
	if old, ok := r.readKillNote(e.Slot); ok && old.Start.Equal(e.Start) && old.Signal != n.Signal {
		// The grace ran out: say both.
		n.Signal = old.Signal + ", then " + n.Signal
	}
	data, err := json.Marshal(n)
	if err != nil {
		return
	}
	writeFileAtomic(r.killNotePath(e.Slot), append(data, '\n'))
}

func (r *Registry) readKillNote(name string) (killNote, bool) {
	var buf []byte
	data, err := readFile(r.killNotePath(name), &buf)
	if err != nil {
		return killNote{}, false
	}
	var n killNote
	if json.Unmarshal(data, &n) != nil || n.By == "" {
		return killNote{}, false
	}
	return n, true
}

// KillNote says who ended the launch of slot name that started at start,
// and with what signal, when 'aisan kill' left a note for it.
func (r *Registry) KillNote(name string, start time.Time) (by, signal string, ok bool) {
	n, ok := r.readKillNote(name)
	if !ok || !n.Start.Equal(start) {
		return "", "", false
	}
	return n.By, n.Signal, true
}

// TakeKillNote returns the line that says who ended this launch, when
// 'aisan kill' left a note for it, and removes the note (a note of an
// earlier launch is removed too, unsaid).
func (s *Slot) TakeKillNote() (string, bool) {
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	n, ok := s.reg.readKillNote(rec.Slot)
	if err := os.Remove(s.reg.killNotePath(rec.Slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if !ok || !n.Start.Equal(rec.Start) {
		return "", false
	}
	sig := n.Signal
	if sig == "" {
		sig = "a signal"
	}
	return fmt.Sprintf("slot %s was ended by %s with %s", rec.Slot, Printable(n.By), Printable(sig)), true
}

package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/aisan-dev/aisan/jail/transcript"
)

// PrunePolicy bounds what the state dir keeps of slots that have ended.
type PrunePolicy struct {
	// MaxAge removes an ended slot (record, lock, transcripts) this long
	// after its end.
	MaxAge time.Duration
	// MaxSlots keeps at most this many ended slots, the latest ended.
	MaxSlots int
	// MaxLaunches keeps at most this many transcripts per ended slot.
	MaxLaunches int
}

// DefaultPrune is what every launch applies.
var DefaultPrune = PrunePolicy{MaxAge: 30 * 24 * time.Hour, MaxSlots: 200, MaxLaunches: 10}

// Prune applies p to the registry and returns the names of the slots that
// are live (running or orphaned), which it leaves alone entirely, for the
// caller's own pruning (history copies). A slot is removed only while its
// lock is held here and its record, read again under the lock, still
// shows it ended: a launch that takes the name meanwhile keeps it.
func (r *Registry) Prune(p PrunePolicy, now time.Time) (live []string, errs []error) {
	_, live, errs = r.PruneNow(p, now)
	return live, errs
}

// PruneNow is [Registry.Prune] that also returns the ended slots it
// removed ('aisan prune').
func (r *Registry) PruneNow(p PrunePolicy, now time.Time) (removed, live []string, errs []error) {
	entries, problems := r.List()
	errs = append(errs, problems...)
	var ended []Entry
	for _, e := range entries {
		if e.State != Exited {
			live = append(live, e.Slot)
			continue
		}
		ended = append(ended, e)
	}
	endOf := func(e Entry) time.Time {
		if e.End.IsZero() {
			return e.Start
		}
		return e.End
	}
	sort.Slice(ended, func(i, j int) bool { return endOf(ended[i]).After(endOf(ended[j])) })
	for i, e := range ended {
		var err error
		if i >= p.MaxSlots || now.Sub(endOf(e)) > p.MaxAge {
			var gone bool
			gone, err = r.removeEnded(e)
			if gone {
				removed = append(removed, e.Slot)
			}
		} else {
			err = r.trimLaunches(e, p.MaxLaunches)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, live, errs
}

// underLock runs fn with the slot's lock held and its record re-read,
// if the slot is still the ended launch e; otherwise it does nothing.
// ran says whether fn was called.
func (r *Registry) underLock(e Entry, fn func() error) (ran bool, err error) {
	lock, err := r.tryLock(e.Slot)
	if errors.Is(err, errLocked) {
		return false, nil // being launched right now
	}
	if err != nil {
		return false, err
	}
	defer lock.Close()
	rec, err := readRecord(r.recordPath(e.Slot), e.Slot)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	now, err := r.entry(rec, time.Now())
	if err != nil || now.State != Exited || !now.Start.Equal(e.Start) {
		return false, err
	}
	return true, fn()
}

// removeEnded removes an ended slot: transcripts, record, lock file.
func (r *Registry) removeEnded(e Entry) (bool, error) {
	return r.underLock(e, func() error {
		if err := os.RemoveAll(filepath.Join(r.home, "transcripts", e.Slot)); err != nil {
			return fmt.Errorf("pruning transcripts of slot %q: %w", e.Slot, err)
		}
		if err := os.Remove(r.recordPath(e.Slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pruning record of slot %q: %w", e.Slot, err)
		}
		os.Remove(r.killNotePath(e.Slot))
		// Removed while held: a launch that opened it before gets
		// no lock on it and moves on to another name. A lock file an
		// older aisan left beside the record goes too.
		if p, err := r.lockPath(e.Slot); err == nil {
			os.Remove(p)
		}
		os.Remove(r.oldLockPath(e.Slot))
		return nil
	})
}

// trimLaunches removes an ended slot's oldest transcripts beyond max.
func (r *Registry) trimLaunches(e Entry, max int) error {
	// Their names say which are oldest: nothing else is read.
	ls, err := launchFiles(filepath.Join(r.home, "transcripts", e.Slot))
	if err != nil || len(ls) <= max {
		return nil
	}
	_, err = r.underLock(e, func() error { return removeLaunches(ls[:len(ls)-max], e.Transcript) })
	return err
}

// removeLaunches removes the launches ls (transcript segments, size
// records, launch info), except the one whose transcript is current.
func removeLaunches(ls []Launch, current string) error {
	for _, l := range ls {
		if l.Path == current {
			continue
		}
		for _, p := range []string{l.Path, l.Path + ".1", transcript.SizesPath(l.Path), transcript.SizesPath(l.Path + ".1"), launchInfoPath(l.Path)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("pruning transcript %s: %w", p, err)
			}
		}
	}
	return nil
}

// trimOwnLaunches removes the slot's oldest launches beyond max, never
// this one's, so that a slot keeps what help promises whenever pruning
// last ran. The caller holds the slot.
func (s *Slot) trimOwnLaunches(max int) error {
	// It runs as every launch ends, while the shell waits: the names
	// alone say which are oldest.
	ls, err := launchFiles(filepath.Dir(s.rec.Transcript))
	if err != nil || len(ls) <= max {
		return nil
	}
	return removeLaunches(ls[:len(ls)-max], s.rec.Transcript)
}

package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Abandon undoes a launch that never started (bwrap failed, the jail
// could not be placed): it removes the slot's record, transcript and lock
// file, then releases the lock, so a failed launch leaves nothing behind
// in "aisan list". Use it instead of Finish and Release.
func (s *Slot) Abandon() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return fmt.Errorf("abandoning slot %q after it was released", s.rec.Slot)
	}
	var errs []error
	for _, p := range []string{s.reg.recordPath(s.rec.Slot), s.rec.Transcript} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// The transcript directory goes too when this launch was its only
	// one; Remove refuses a directory that is not empty.
	os.Remove(filepath.Dir(s.rec.Transcript))
	// The lock file last, while still locked. A racing launch that opened
	// it just before sees, once it has the lock, that the path no longer
	// names its file, and moves on (see tryLock).
	if err := os.Remove(s.reg.lockPath(s.rec.Slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	errs = append(errs, s.lock.Close())
	s.lock = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("abandoning slot %q: %w", s.rec.Slot, err)
	}
	return nil
}

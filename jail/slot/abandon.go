package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Abandon undoes a launch that never started (bwrap failed, the jail
// could not be placed), then releases the lock, so a failed launch leaves
// the registry as it found it: its transcript goes, and the slot's record
// is what it was before — the previous launch's record put back byte for
// byte, or no record (and no lock file) when the name was new. "aisan
// list" then shows the previous launch as it ended, or nothing. Use it
// instead of Finish and Release.
func (s *Slot) Abandon() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return fmt.Errorf("abandoning slot %q after it was released", s.rec.Slot)
	}
	var errs []error
	if s.prev != nil {
		// Atomically, like every record write: a reader sees this
		// launch's record or the previous one, never neither.
		if err := writeFileAtomic(s.reg.recordPath(s.rec.Slot), s.prev); err != nil {
			errs = append(errs, fmt.Errorf("putting back the previous record: %w", err))
		}
	} else if err := os.Remove(s.reg.recordPath(s.rec.Slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := os.Remove(s.rec.Transcript); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	// The transcript directory goes too when this launch was its only
	// one; Remove refuses a directory that is not empty.
	os.Remove(filepath.Dir(s.rec.Transcript))
	// With a record put back, the lock file stays, as after any launch
	// that ended. Without one, the lock file goes last, while still
	// locked. A racing launch that opened it just before sees, once it
	// has the lock, that the path no longer names its file, and moves on
	// (see tryLock).
	if s.prev == nil {
		p, err := s.reg.lockPath(s.rec.Slot)
		if err == nil {
			err = os.Remove(p)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.lock.Close())
	s.lock = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("abandoning slot %q: %w", s.rec.Slot, err)
	}
	return nil
}

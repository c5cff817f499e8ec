package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Abandon undoes a launch that never started: it removes the slot's
// record, transcript and lock file, then releases the lock, so a failed
// launch leaves nothing behind.
func (s *Slot) Abandon() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return fmt.Errorf("abandoning slot %q after it was released", s.rec.Slot)
	}
	var errs []error
	for _, p := range []string{s.reg.recordPath(s.rec.Slot), s.rec.Transcript, s.reg.lockPath(s.rec.Slot)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.lock.Close()
	s.lock = nil
	return errors.Join(errs...)
}

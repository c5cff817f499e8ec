package slot

import (
	"errors"
	"fmt"
	"time"
)

// AcquireNamed takes the slot called name, for launches whose name the
// user chose (headless services). Unlike [Registry.Acquire] it never picks
// another name: a name in use is an error that says so.
func (r *Registry) AcquireNamed(name, kind, worktree string) (*Slot, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("invalid slot name %q: use letters, digits, '.', '_' and '-'", name)
	}
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	real, err := realPath(worktree)
	if err != nil {
		return nil, fmt.Errorf("resolving worktree %q: %w", worktree, err)
	}
	if err := r.makeDirs(); err != nil {
		return nil, err
	}
	s, err := r.claim(name, kind, real)
	switch {
	case errors.Is(err, errLocked):
		return nil, fmt.Errorf("slot %q is in use by a running launch; 'aisan kill %s' ends it", name, name)
	case errors.Is(err, errOrphanAlive):
		return nil, fmt.Errorf("slot %q still has a live jail whose wrapper died; 'aisan kill %s' ends it", name, name)
	case err != nil:
		return nil, err
	}
	return s, nil
}

// RecordEnd records how a slot that nobody holds ended, for a supervisor
// that learnt it from elsewhere (systemd stopped a service whose wrapper
// could not record it). It takes the slot's lock while it writes, and
// leaves a record that already has its end alone.
func (r *Registry) RecordEnd(name string, status int, at time.Time) error {
	lock, err := r.tryLock(name)
	if errors.Is(err, errLocked) {
		return fmt.Errorf("slot %q is held by a running launch; it records its own end", name)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	rec, err := readRecord(r.recordPath(name), name)
	if err != nil {
		return err
	}
	if !rec.End.IsZero() {
		return nil
	}
	if r.holderLives(rec) {
		// Its lock file was replaced, or an older aisan holds it beside
		// the record.
		return fmt.Errorf("slot %q is held by a running launch; it records its own end", name)
	}
	rec.End = at
	rec.ExitStatus = &status
	if err := writeRecord(r.recordPath(name), rec); err != nil {
		return fmt.Errorf("recording the end of slot %q: %w", name, err)
	}
	return nil
}

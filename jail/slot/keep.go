package slot

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// LockFile is the open lock of a held slot, for handing the slot to
// another process of ours (the background keeper, see [Registry.Adopt]):
// the locks belong to the open file description, so a copy of the
// descriptor in that process keeps the slot held after this one exits.
// Nil once the slot is released.
func (s *Slot) LockFile() *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lock
}

// Adopt takes over the slot called name from the wrapper that launched
// it, when its agent has exited with processes left in the jail. lock is
// the wrapper's lock descriptor, inherited; start identifies the launch
// (the record's Start), so a record that another launch has written since
// is never taken over. The record is rewritten to name this process as
// the holder (PID and start time: the orphan check asks the holder) and
// to carry the agent's end and status, which makes the slot show as
// [Background]. The caller finishes and releases the slot as a wrapper
// would, once the jail has ended.
func (r *Registry) Adopt(name string, lock *os.File, start time.Time, agentStatus int, agentEnd time.Time) (*Slot, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("adopting slot %q: not a slot name", name)
	}
	var held, now unix.Stat_t
	if err := unix.Fstat(int(lock.Fd()), &held); err != nil {
		return nil, fmt.Errorf("adopting slot %q: the inherited lock: %w", name, err)
	}
	// The slot's lock, or, from a wrapper of an older aisan, its lock
	// beside the record.
	same := func(p string) bool {
		return unix.Stat(p, &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev
	}
	if p, err := r.lockPath(name); (err != nil || !same(p)) && !same(r.oldLockPath(name)) {
		return nil, fmt.Errorf("adopting slot %q: the inherited descriptor is not the slot's lock file", name)
	}
	rec, prev, err := readRecordBytes(r.recordPath(name), name)
	if err != nil {
		return nil, fmt.Errorf("adopting slot %q: %w", name, err)
	}
	if !rec.Start.Equal(start) || !rec.End.IsZero() {
		return nil, errors.New("adopting slot " + name + ": its record is no longer that launch's")
	}
	s := &Slot{reg: r, lock: lock, rec: rec, prev: prev}
	err = s.Update(func(rec *Record) {
		rec.WrapperPID = os.Getpid()
		rec.WrapperStart = selfStart()
		rec.AgentEnd = agentEnd
		rec.AgentStatus = &agentStatus
	})
	if err != nil {
		// Not ours to close: the caller decides what becomes of the lock.
		s.lock = nil
		return nil, err
	}
	return s, nil
}

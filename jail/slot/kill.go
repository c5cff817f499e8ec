package slot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrJailGone means the jail a record names had already ended (or its PID
// now belongs to another process), so nothing was signalled.
var ErrJailGone = errors.New("the jail has already ended")

// errNoJail means the record has no jail yet: the launch is still starting.
var errNoJail = errors.New("no jail is recorded yet (the slot is still starting); retry in a moment")

// pollEvery is how often kills poll for the jail's death and the lock.
const pollEvery = 10 * time.Millisecond

// busyWait is how long [Registry.KillOrphan] retries a lock that is held
// before it calls the slot busy.
const busyWait = 100 * time.Millisecond

// ownPidNS is the inode of the PID namespace aisan itself runs in. A record
// naming it does not describe a jail, and is never acted on: signalling its
// "init" would hit an unrelated host process.
var ownPidNS = sync.OnceValues(func() (uint64, error) { return nsInode("self") })

// nsInode returns the inode of /proc/<pid>/ns/pid.
func nsInode(pid string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+pid+"/ns/pid", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// jailAlive reports whether the jail rec describes still exists: its init
// PID is alive and in the recorded PID namespace. A PID that was reused
// lives in another namespace, so it does not count.
func jailAlive(rec Record) bool {
	if rec.InitPID <= 0 || rec.PidNSInode == 0 {
		return false
	}
	if own, err := ownPidNS(); err != nil || own == rec.PidNSInode {
		return false
	}
	// No process has the PID: the common answer for an old record, and a
	// signal-less kill says so without a path walk through /proc (listing
	// a thousand ended slots asks it a thousand times). Any other answer,
	// EPERM included, is settled by the namespace below.
	// (A number past a pid_t is no process's: the kernel would read it
	// truncated, perhaps as -1, "every process".)
	if rec.InitPID > math.MaxInt32 || errors.Is(unix.Kill(rec.InitPID, 0), unix.ESRCH) {
		return false
	}
	pid := strconv.Itoa(rec.InitPID)
	ino, err := nsInode(pid)
	return err == nil && ino == rec.PidNSInode && !zombie(pid)
}

// zombie reports whether pid has exited but not been reaped. A zombie
// init still shows its namespace in /proc, yet everything in the namespace
// is already dead: the kernel kills and reaps the rest before init exits.
func zombie(pid string) bool {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain ") ".
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z' || data[i+2] == 'X'
}

// KillPidNS sends sig to the init of the jail rec describes. With SIGKILL
// the kernel then kills every process in that PID namespace. The PID is
// pinned with a pidfd before its namespace is checked, and signalled
// through the pidfd, so if the init had died and its PID been reused, the
// check fails or the signal goes nowhere: a stranger is never hit (see
// [PinInit]). It returns [ErrJailGone] when there was no such jail.
func KillPidNS(rec Record, sig syscall.Signal) error {
	in, err := PinInit(rec)
	if err != nil {
		return err
	}
	defer in.Close()
	return in.Signal(sig)
}

func (r *Registry) killer() Killer {
	if r.Killer != nil {
		return r.Killer
	}
	return KillPidNS
}

// ErrBusy is wrapped by the error from [Registry.KillOrphan] when another
// aisan holds the slot's lock: a wrapper is alive, so the slot is no
// orphan (or is being launched or reaped right now). Nothing was killed.
var ErrBusy = errors.New("another aisan holds the slot")

// Kill ends the jail of the slot called name with sig (use SIGKILL: only
// that is sure to end every process in it). The wrapper is spared: it sees
// the jail end, records the exit and releases the lock, and with SIGKILL
// Kill waits a few seconds for that, so a "list" right after shows the
// slot exited. An orphan is reaped with [Registry.KillOrphan], which
// records its end.
//
// Errors: [*UnknownSlotError] for a name with no record, [*NotRunningError]
// for a slot that has exited.
func (r *Registry) Kill(name string, sig syscall.Signal) error {
	e, err := r.Lookup(name)
	if err != nil {
		return err
	}
	return r.kill(e, sig)
}

func (r *Registry) kill(e Entry, sig syscall.Signal) error {
	e = r.waitStarted(e)
	switch e.State {
	case Orphaned:
		return r.KillOrphan(e.Slot, sig)
	case Running, Background:
	default:
		return &NotRunningError{Name: e.Slot, End: e.End}
	}
	// The Killer gets the record as it was read. If that launch has
	// ended and a new one taken the name meanwhile, the recorded init is
	// gone: the Killer, which verifies it before acting on anything,
	// says ErrJailGone rather than hit the new jail.
	r.leaveKillNote(e, sig)
	err := r.nameOwner(r.killer()(e.Record, sig), e.Record)
	if errors.Is(err, ErrJailGone) {
		return &NotRunningError{Name: e.Slot}
	}
	if err != nil {
		return fmt.Errorf("killing slot %q: %w", e.Slot, err)
	}
	if sig != syscall.SIGKILL {
		return nil
	}
	if err := r.waitDead(e.Record); err != nil {
		return err
	}
	// The wrapper records the end and lets go; not waiting for it is
	// harmless, but waiting makes "kill; list" show what happened.
	r.poll(func() bool {
		held, err := r.lockHeld(e.Slot)
		return err != nil || !held
	})
	return nil
}

// KillOrphan kills the jail of the orphaned slot called name (its wrapper
// died, its jail did not) with sig and, for SIGKILL, records its end. It
// takes the slot's lock first and holds it throughout, so that no launch
// can take the name and no other reaper can act while it works: if a
// wrapper holds the lock, the slot is not an orphan, and KillOrphan kills
// nothing and returns an error wrapping [ErrBusy]. Under the lock it
// re-reads the record and acts only if the jail it names is still alive
// ([*NotRunningError] otherwise).
func (r *Registry) KillOrphan(name string, sig syscall.Signal) error {
	if !ValidName(name) {
		return &UnknownSlotError{Name: name, Live: r.liveNames()}
	}
	if _, err := os.Lstat(r.recordPath(name)); errors.Is(err, fs.ErrNotExist) {
		// Do not create a lock file for a name that has no record.
		return &UnknownSlotError{Name: name, Live: r.liveNames()}
	}
	lock, err := r.tryLock(name)
	// A launch probing names holds the lock of an orphan's name for a
	// moment (it finds the jail alive and moves on); a wrapper holds it
	// for good. Only the latter is busy.
	for deadline := time.Now().Add(busyWait); errors.Is(err, errLocked) && time.Now().Before(deadline); {
		time.Sleep(pollEvery)
		lock, err = r.tryLock(name)
	}
	if errors.Is(err, errLocked) {
		return fmt.Errorf("slot %q is busy (%w now); it is not an orphan, so nothing was killed; run 'aisan list' and retry", name, ErrBusy)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	rec, err := readRecord(r.recordPath(name), name)
	if errors.Is(err, fs.ErrNotExist) {
		// Abandoned meanwhile, and our lock file may be a new one: take
		// it away again, while locked (see tryLock).
		if p, err := r.lockPath(name); err == nil {
			os.Remove(p)
		}
		return &UnknownSlotError{Name: name, Live: r.liveNames()}
	}
	if err != nil {
		return fmt.Errorf("re-reading slot %q: %w", name, err)
	}
	if r.holderLives(rec) {
		return fmt.Errorf("slot %q is busy (%w: its holder, PID %d, is alive although its lock is free); it is not an orphan, so nothing was killed", name, ErrBusy, rec.WrapperPID)
	}
	if !jailAlive(rec) {
		return &NotRunningError{Name: name, End: rec.End}
	}
	err = r.nameOwner(r.killer()(rec, sig), rec)
	if errors.Is(err, ErrJailGone) {
		return &NotRunningError{Name: name}
	}
	if err != nil {
		return fmt.Errorf("killing orphaned slot %q: %w", name, err)
	}
	if sig != syscall.SIGKILL {
		return nil
	}
	if err := r.waitDead(rec); err != nil {
		return err
	}
	status := 128 + int(sig)
	rec.End = time.Now()
	rec.ExitStatus = &status
	if err := writeRecord(r.recordPath(name), rec); err != nil {
		return fmt.Errorf("recording the end of slot %q: %w", name, err)
	}
	return nil
}

// nameOwner completes a proof's refusal of rec with the slot whose jail
// the record named instead, when the registry has that slot: the record
// of a live slot with the same init (PID, namespace and start time).
func (r *Registry) nameOwner(err error, rec Record) error {
	var pe *ProofError
	if !errors.As(err, &pe) || pe.Owner != "" {
		return err
	}
	start := procStart(strconv.Itoa(pe.PID))
	entries, _ := r.List()
	for _, e := range entries {
		if e.Slot != rec.Slot && e.InitPID == pe.PID && e.PidNSInode == rec.PidNSInode && e.InitStart == start && start != 0 {
			pe.Owner = e.Slot
		}
	}
	return err
}

// waitDead waits for rec's jail to disappear.
func (r *Registry) waitDead(rec Record) error {
	if !r.poll(func() bool { return !jailAlive(rec) }) {
		return fmt.Errorf("slot %q: its jail (init PID %d) is still alive %v after SIGKILL", rec.Slot, rec.InitPID, r.settle)
	}
	return nil
}

// poll calls done until it returns true or the settle time passes.
func (r *Registry) poll(done func() bool) bool {
	deadline := time.Now().Add(r.settle)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// KillAll kills every running and orphaned slot. It returns the slots it
// killed, and the problems met on the way: [*CorruptError]s for files it
// skipped, and errors for slots it could not kill. A slot that ended by
// itself meanwhile is neither.
func (r *Registry) KillAll(sig syscall.Signal) (killed []string, problems []error) {
	return r.killWhere(sig, func(s State) bool { return s != Exited })
}

// KillOrphans kills every orphaned slot (its wrapper died, its jail did
// not) with [Registry.KillOrphan], which holds the slot's lock while it
// works and records the end, with the same results as [Registry.KillAll].
// A slot that a new launch took since it was listed is left alone.
func (r *Registry) KillOrphans(sig syscall.Signal) (killed []string, problems []error) {
	return r.killWhere(sig, func(s State) bool { return s == Orphaned })
}

func (r *Registry) killWhere(sig syscall.Signal, want func(State) bool) ([]string, []error) {
	entries, problems := r.List()
	var killed []string
	for _, e := range entries {
		if !want(e.State) {
			continue
		}
		err := r.kill(e, sig)
		var nr *NotRunningError
		switch {
		case err == nil:
			killed = append(killed, e.Slot)
		case errors.As(err, &nr):
		default:
			problems = append(problems, err)
		}
	}
	return killed, problems
}

// DefaultGrace is how long [Registry.Stop] waits between SIGTERM and
// SIGKILL.
const DefaultGrace = 5 * time.Second

// Stop ends the slot called name the way a user would: SIGTERM to the
// agent (through the jail's init, which forwards it), up to grace for it
// to exit, then SIGKILL to the whole jail (see [Registry.Kill]) if any of
// it is left. A service is stopped through systemd, which does the same.
// It reports whether SIGKILL was needed.
func (r *Registry) Stop(name string, grace time.Duration) (killed bool, err error) {
	e, err := r.Lookup(name)
	if err != nil {
		return false, err
	}
	e = r.waitStarted(e)
	switch e.State {
	case Running, Background:
	case Orphaned:
		return r.stopOrphan(name, grace)
	default:
		return false, &NotRunningError{Name: e.Slot, End: e.End}
	}
	if e.Kind == "service" {
		return false, r.kill(e, syscall.SIGTERM)
	}
	in, err := PinInit(e.Record)
	err = r.nameOwner(err, e.Record)
	if errors.Is(err, ErrJailGone) {
		return false, &NotRunningError{Name: e.Slot}
	}
	if err != nil {
		return false, fmt.Errorf("stopping slot %q: %w", e.Slot, err)
	}
	r.leaveKillNote(e, syscall.SIGTERM)
	err = in.Signal(syscall.SIGTERM)
	in.Close()
	if errors.Is(err, ErrJailGone) {
		return false, &NotRunningError{Name: e.Slot}
	}
	if err != nil {
		return false, fmt.Errorf("stopping slot %q: %w", e.Slot, err)
	}
	if r.pollFor(grace, func() bool { return !jailAlive(e.Record) }) {
		r.poll(func() bool {
			held, err := r.lockHeld(e.Slot)
			return err != nil || !held
		})
		return false, nil
	}
	err = r.kill(e, syscall.SIGKILL)
	var nr *NotRunningError
	if errors.As(err, &nr) {
		// It ended just as the grace ran out.
		return false, nil
	}
	return err == nil, err
}

// stopOrphan is Stop for an orphan: under the slot's lock, SIGTERM, the
// grace, then SIGKILL, and the end recorded either way.
func (r *Registry) stopOrphan(name string, grace time.Duration) (bool, error) {
	err := r.KillOrphan(name, syscall.SIGTERM)
	if err != nil {
		return false, err
	}
	e, lerr := r.Lookup(name)
	if lerr == nil && r.pollFor(grace, func() bool { return !jailAlive(e.Record) }) {
		return false, r.recordOrphanEnd(name, 128+int(syscall.SIGTERM))
	}
	err = r.KillOrphan(name, syscall.SIGKILL)
	var nr *NotRunningError
	if errors.As(err, &nr) {
		return false, r.recordOrphanEnd(name, 128+int(syscall.SIGTERM))
	}
	return err == nil, err
}

// recordOrphanEnd records the end of an orphan whose jail has died, under
// the slot's lock, unless an end is recorded already or a holder lives.
func (r *Registry) recordOrphanEnd(name string, status int) error {
	lock, err := r.tryLock(name)
	if err != nil {
		return nil // someone else has it now: theirs to record
	}
	defer lock.Close()
	rec, err := readRecord(r.recordPath(name), name)
	if err != nil || !rec.End.IsZero() || r.holderLives(rec) || jailAlive(rec) {
		return nil
	}
	rec.End = time.Now()
	rec.ExitStatus = &status
	if err := writeRecord(r.recordPath(name), rec); err != nil {
		return fmt.Errorf("recording the end of slot %q: %w", name, err)
	}
	return nil
}

// pollFor calls done until it returns true or d passes.
func (r *Registry) pollFor(d time.Duration, done func() bool) bool {
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// StopAll stops every running and orphaned slot, as [Registry.KillAll]
// kills them.
func (r *Registry) StopAll(grace time.Duration, orphansOnly bool) (stopped []string, problems []error) {
	entries, problems := r.List()
	for _, e := range entries {
		if e.State == Exited || orphansOnly && e.State != Orphaned {
			continue
		}
		_, err := r.Stop(e.Slot, grace)
		var nr *NotRunningError
		switch {
		case err == nil:
			stopped = append(stopped, e.Slot)
		case errors.As(err, &nr):
		default:
			problems = append(problems, err)
		}
	}
	return stopped, problems
}

// waitStarted gives a running slot whose jail is not recorded yet (a
// launch, or a service, still starting) a moment to record it, so that a
// kill right after a launch is not refused.
func (r *Registry) waitStarted(e Entry) Entry {
	if e.State != Running || e.InitPID > 0 {
		return e
	}
	r.pollFor(startupWait, func() bool {
		n, err := r.Lookup(e.Slot)
		if err != nil || !n.Start.Equal(e.Start) {
			return true
		}
		e = n
		return e.State != Running || e.InitPID > 0
	})
	return e
}

package slot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Init is the init process of a live jail (PID 1 of its namespace, seen
// from the host), held through a pidfd, as [PinInit] returns it.
//
// A pidfd names one process, not a PID: a signal sent through it reaches
// that process or, once it has died, nobody. It does not stop the kernel
// from handing the PID number to a new process after the init is reaped,
// so whatever is read from /proc/PID is only known to be the init's if the
// init is still alive after the read; [Init.InUnit] checks that.
type Init struct {
	pid int
	// pidfd is -1 on kernels without pidfd_open (before 5.3): there the
	// checks and the signal go by PID, and the window between them is
	// tiny but real.
	pidfd int
}

// PinInit opens the init of the jail rec describes and checks that it is
// in the recorded PID namespace. It returns [ErrJailGone] when there is no
// such jail any more (the PID is gone or now names a process outside that
// namespace), an error when rec records no jail yet or names aisan's own
// namespace (a forged or corrupt record), and otherwise an *Init to Close.
func PinInit(rec Record) (*Init, error) {
	if rec.InitPID <= 0 || rec.PidNSInode == 0 {
		return nil, errNoJail
	}
	own, err := ownPidNS()
	if err != nil {
		return nil, fmt.Errorf("reading aisan's own PID namespace: %w", err)
	}
	if own == rec.PidNSInode {
		return nil, fmt.Errorf("refusing to signal PID %d: the recorded PID namespace is aisan's own, so it is no jail", rec.InitPID)
	}
	in := &Init{pid: rec.InitPID, pidfd: -1}
	pidfd, err := unix.PidfdOpen(rec.InitPID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil, ErrJailGone
	case errors.Is(err, unix.ENOSYS):
		// Kernels before 5.3: check, then act; the window is tiny.
	case err != nil:
		return nil, fmt.Errorf("opening PID %d: %w", rec.InitPID, err)
	default:
		in.pidfd = pidfd
	}
	// Checked after the pidfd is open: if the PID was reused before, the
	// namespace differs; the namespace of a dead jail holds no process.
	ino, err := nsInode(strconv.Itoa(rec.InitPID))
	if err != nil || ino != rec.PidNSInode {
		in.Close()
		return nil, ErrJailGone
	}
	prove := in.proveStart
	if rec.InitStart == 0 {
		// A record from before start times were kept.
		prove = in.proveSlot
	}
	if err := prove(rec); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// proveStart checks that the pinned init is the very process the slot's
// launch recorded: same PID, namespace and start time, which only the
// kernel sets. A jail cannot change any of them, nor make a record say
// another jail's (the state is read-only in every jail), so a record
// that names another process is caught here.
func (in *Init) proveStart(rec Record) error {
	start := procStart(strconv.Itoa(in.pid))
	if !in.alive() {
		return ErrJailGone
	}
	if start != rec.InitStart {
		return &ProofError{Slot: rec.Slot, PID: in.pid, Reason: fmt.Sprintf("it started at tick %d, not at the recorded %d", start, rec.InitStart)}
	}
	return nil
}

// InitStart returns the start time of the jail's init, for
// [Record.InitStart], or 0 when it cannot be read (the init is gone).
func InitStart(pid int) uint64 { return procStart(strconv.Itoa(pid)) }

// testOnlyAcceptUnnamedInit lets the package's stand-in jails, which are
// started before their slot has a name, pass proveSlot without an
// AISAN_JAIL. Set only by tests; a mismatching name is refused regardless.
var testOnlyAcceptUnnamedInit bool

// ProofError is a record whose jail is not the slot's: its init is alive
// in the recorded namespace, but it is another slot's jail, or no aisan
// jail at all. Such a record is forged or corrupt, and nothing is
// signalled.
type ProofError struct {
	Slot string
	PID  int
	// Owner is the slot the init belongs to, "" when it is no aisan jail
	// or unknown.
	Owner string
	// Reason says what else disproved it, when not the owner.
	Reason string
}

func (e *ProofError) Error() string {
	if e.Reason != "" && e.Owner == "" {
		return fmt.Sprintf("refusing to signal PID %d for slot %q: %s; the record is not to be trusted", e.PID, e.Slot, e.Reason)
	}
	if e.Owner == "" {
		return fmt.Sprintf("refusing to signal PID %d for slot %q: it is not an aisan jail (no AISAN_JAIL in its environment); the record is not to be trusted", e.PID, e.Slot)
	}
	return fmt.Sprintf("refusing to signal PID %d for slot %q: it is the jail of slot %q; the record is not to be trusted", e.PID, e.Slot, e.Owner)
}

// proveSlot is the proof for records that have no start time (written
// by an aisan from before start times were kept, whose init is
// dumpable): the init is started with AISAN_JAIL=<slot> in its
// environment, which nothing in another jail can change (it cannot even
// see that process), so a record that borrows a neighbour's init and
// namespace is caught here. An init of today's is not dumpable, and its
// environment is closed to the host's same user too.
//
// bwrap reports the init's PID before that process has set up the jail
// and exec'd our init; until then it is a copy of bwrap with bwrap's own
// environment. A jail caught that early is waited for, briefly.
func (in *Init) proveSlot(rec Record) error {
	slot := rec.Slot
	proc := "/proc/" + strconv.Itoa(in.pid)
	for deadline := time.Now().Add(startupWait); ; {
		data, err := os.ReadFile(proc + "/environ")
		if err != nil {
			if !in.alive() {
				return ErrJailGone
			}
			return fmt.Errorf("reading the environment of the jail's init (PID %d) to prove it is slot %q's: %w", in.pid, slot, err)
		}
		owner, found := "", false
		for kv := range strings.SplitSeq(string(data), "\x00") {
			if v, ok := strings.CutPrefix(kv, "AISAN_JAIL="); ok {
				owner, found = v, true
			}
		}
		if !in.alive() {
			return ErrJailGone
		}
		switch {
		case found && owner == slot:
			return nil
		case found:
			return &ProofError{Slot: slot, PID: in.pid, Owner: owner}
		case testOnlyAcceptUnnamedInit:
			return nil
		}
		argv0, _, _ := strings.Cut(readString(proc+"/cmdline"), "\x00")
		if filepath.Base(argv0) != "bwrap" || time.Now().After(deadline) {
			return &ProofError{Slot: slot, PID: in.pid}
		}
		time.Sleep(pollEvery)
	}
}

// startupWait bounds how long a kill waits for a jail that is still being
// set up to exec its init.
const startupWait = 3 * time.Second

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// PID returns the init's host PID.
func (in *Init) PID() int { return in.pid }

// Close lets go of the init.
func (in *Init) Close() error {
	if in.pidfd < 0 {
		return nil
	}
	err := unix.Close(in.pidfd)
	in.pidfd = -1
	return err
}

// alive reports whether the pinned init has not exited: it can still be
// signalled and is no zombie. Reads of /proc/PID made before alive says
// yes were reads of the init.
func (in *Init) alive() bool {
	pid := strconv.Itoa(in.pid)
	if zombie(pid) {
		return false
	}
	var err error
	if in.pidfd >= 0 {
		err = unix.PidfdSendSignal(in.pidfd, 0, nil, 0)
	} else {
		err = unix.Kill(in.pid, 0)
	}
	return err == nil
}

// InUnit reports whether the init is in the cgroup of the systemd unit
// called unit: whether the unified-hierarchy ("0::") line of
// /proc/PID/cgroup ends in "/" + unit. A scope's or service's processes
// sit directly in its cgroup, so a jail placed in aisan-<slot>.scope has
// its init there, and a jail whose scope ended (and whose name a new
// launch may have taken since) does not. It returns [ErrJailGone] when the
// init has died meanwhile, and false (no error) on hosts with no unified
// cgroup hierarchy, where it cannot tell.
func (in *Init) InUnit(unit string) (bool, error) {
	if unit == "" || strings.Contains(unit, "/") {
		return false, nil
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(in.pid) + "/cgroup")
	if err != nil {
		if !in.alive() {
			return false, ErrJailGone
		}
		return false, fmt.Errorf("reading the cgroup of the jail's init (PID %d): %w", in.pid, err)
	}
	if !in.alive() {
		return false, ErrJailGone
	}
	for line := range strings.Lines(string(data)) {
		if p, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "0::"); ok {
			return strings.HasSuffix(p, "/"+unit), nil
		}
	}
	return false, ErrNoUnifiedCgroup
}

// ErrNoUnifiedCgroup means the host has no unified cgroup hierarchy, so
// [Init.InUnit] cannot tell which unit a process is in.
var ErrNoUnifiedCgroup = errors.New("no unified cgroup hierarchy to tell the unit by")

// Signal sends sig to the init (with SIGKILL, the kernel then kills every
// process in its namespace). It returns [ErrJailGone] when the init has
// died, in which case nobody was signalled.
func (in *Init) Signal(sig syscall.Signal) error {
	var err error
	if in.pidfd >= 0 {
		err = unix.PidfdSendSignal(in.pidfd, sig, nil, 0)
	} else {
		err = unix.Kill(in.pid, sig)
	}
	if errors.Is(err, unix.ESRCH) {
		return ErrJailGone
	}
	if err != nil {
		return fmt.Errorf("signalling the jail's init (PID %d): %w", in.pid, err)
	}
	return nil
}

package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/lockfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"

	"golang.org/x/sys/unix"
)

// Registry is the set of slots recorded under one state directory.
type Registry struct {
	home string

	// rt is the lock directory the slots' locks are kept in
	// (rundir.LockDir), "" for none: then each lock is beside its record.
	rt string
	// locks is the directory of the slots' lock files, once known for
	// good (see lockDir).
	locksMu sync.Mutex
	locks   string

	// Killer ends a live slot's jail. Nil means [KillPidNS]. A replacement
	// (say, stop the slot's systemd scope, then fall back to KillPidNS) is
	// called only for a slot the registry has found live, and must return
	// [ErrJailGone] when the jail had already ended. The record it gets
	// may be stale by then (that launch ended, the next one took the
	// name) or forged: it must act only on what it has verified against
	// the recorded init, as [PinInit] lets it.
	Killer Killer

	// By says who ends slots through this registry (say "'aisan kill'
	// (PID 4242 on /dev/pts/3)"), for the note a killed launch's wrapper
	// prints on its terminal. Empty means "'aisan kill'".
	By string

	// settle bounds how long a kill waits for the jail to die and for the
	// wrapper to record the end. Tests shorten it.
	settle time.Duration
}

// Killer ends the jail recorded in rec with sig.
type Killer func(rec Record, sig syscall.Signal) error

// State is a slot's liveness, as decided by its lock and its jail.
type State string

const (
	// Running: the wrapper holds the slot's lock and has not recorded
	// the end.
	Running State = "running"
	// Background: the agent has exited and its wrapper returned, but
	// processes it left keep the jail alive; a keeper holds the lock
	// until the last of them ends.
	Background State = "background"
	// Orphaned: the lock is free, but the jail's PID namespace lives on.
	Orphaned State = "orphaned"
	// Exited: the launch is over; nothing of it is alive.
	Exited State = "exited"
)

// Entry is a record with its liveness, as "aisan list" shows it.
type Entry struct {
	Record
	State State
	// Idle is the time since the transcript last grew (since Start when
	// there is no transcript); zero for an exited slot.
	Idle time.Duration
}

// UnknownSlotError is returned for a name with no record. Live lists the
// running and orphaned slots, so the message can offer them.
type UnknownSlotError struct {
	Name string
	Live []string
}

func (e *UnknownSlotError) Error() string {
	if len(e.Live) == 0 {
		return fmt.Sprintf("no slot named %q, and no slot is live", e.Name)
	}
	return fmt.Sprintf("no slot named %q; live slots: %s", e.Name, strings.Join(e.Live, ", "))
}

// NotRunningError is returned when asked to kill a slot that has exited.
type NotRunningError struct {
	Name string
	End  time.Time
}

func (e *NotRunningError) Error() string {
	if e.End.IsZero() {
		return fmt.Sprintf("slot %q is not running", e.Name)
	}
	return fmt.Sprintf("slot %q is not running; it ended at %s", e.Name, e.End.Local().Format("2006-01-02 15:04:05"))
}

// Open returns the registry under home (see [Home]). It creates nothing:
// listing a state dir that does not exist yet shows no slots, and a
// read-only one can still be listed.
func Open(home string) (*Registry, error) {
	if !filepath.IsAbs(home) {
		return nil, fmt.Errorf("state dir %q is not an absolute path", home)
	}
	fi, err := os.Stat(home)
	if err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("state dir %q is not a directory; remove it or set AISAN_HOME elsewhere", home)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("opening state dir %q: %w; set AISAN_HOME to a directory you own", home, err)
	}
	home = filepath.Clean(home)
	return &Registry{home: home, rt: rundir.LockDir(home), settle: 5 * time.Second}, nil
}

// Home returns the registry's state directory.
func (r *Registry) Home() string { return r.home }

func (r *Registry) slotsDir() string {
	return filepath.Join(r.home, "slots")
}

func (r *Registry) recordPath(name string) string {
	return filepath.Join(r.home, "slots", name+".json")
}

// lockDir is the directory of the slots' lock files: in aisan's lock
// directory, which no jail or box can reach (see jail/shared/lockfile).
// It is named for the slots directory's real path, which is
// known for good once that directory exists.
func (r *Registry) lockDir() (string, error) {
	r.locksMu.Lock()
	defer r.locksMu.Unlock()
	if r.locks != "" {
		return r.locks, nil
	}
	d, err := lockfile.DirFor(r.slotsDir(), r.rt)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(r.slotsDir()); err == nil {
		r.locks = d
	}
	return d, nil
}

// lockPath is the lock file of the slot called name.
func (r *Registry) lockPath(name string) (string, error) {
	d, err := r.lockDir()
	if err != nil {
		return "", fmt.Errorf("slot %q's lock: %w", name, err)
	}
	return filepath.Join(d, name+".lock"), nil
}

// oldLockPath is where an aisan that kept the slots' locks beside their
// records (in the state directory, where a jail could take them) kept
// the lock of the slot called name.
func (r *Registry) oldLockPath(name string) string {
	return filepath.Join(r.slotsDir(), name+".lock")
}

// tryLock takes the lock of the slot called name (see [tryLock]).
func (r *Registry) tryLock(name string) (*os.File, error) {
	p, err := r.lockPath(name)
	if err != nil {
		return nil, err
	}
	return tryLock(p)
}

// lockHeld reports whether the lock of the slot called name is held (see
// [lockHeld]). Inside a jail, where aisan's lock directory is read-only
// and empty, it cannot tell, and says held, as [lockHeld] does there.
func (r *Registry) lockHeld(name string) (bool, error) {
	p, err := r.lockPath(name)
	if errors.Is(err, syscall.EROFS) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return lockHeld(p)
}

// holderLives reports whether rec's launch, not ended, has a holder alive
// whatever the lock aisan now tests says: the holder it names (PID and
// start time) lives. A record from before start times were kept names no
// holder exactly; its holder is an older aisan, whose lock is beside the
// record, and that lock speaks for it.
func (r *Registry) holderLives(rec Record) bool {
	if !rec.End.IsZero() {
		return false
	}
	if rec.WrapperStart != 0 {
		return holderAlive(rec)
	}
	if r.rt == "" {
		return false // that lock is the one tested already
	}
	held, err := lockHeld(r.oldLockPath(rec.Slot))
	return err == nil && held
}

// Acquire picks a free name for a slot of kind in worktree, takes its lock
// and writes the initial record. The lock is held until [Slot.Release] (or
// [Slot.Abandon]) or until the process dies, whichever comes first: the
// wrapper should hold the Slot for its whole life.
//
// A name is free when nobody holds its lock, its record (if any) parses,
// and the jail it records is dead: an orphan's name stays taken until the
// orphan is reaped, or its record would be lost. Taking the lock is the
// atomic step, so racing launches in one worktree get distinct names.
func (r *Registry) Acquire(worktree, kind string) (*Slot, error) {
	base, err := BaseName(worktree, kind)
	if err != nil {
		return nil, err
	}
	real, err := realPath(worktree)
	if err != nil {
		return nil, fmt.Errorf("resolving worktree %q: %w", worktree, err)
	}
	if err := r.makeDirs(); err != nil {
		return nil, err
	}
	for i := 1; i <= maxSuffix; i++ {
		s, err := r.claim(candidate(base, i), kind, real)
		var corrupt *CorruptError
		switch {
		case errors.Is(err, errLocked), errors.Is(err, errOrphanAlive), errors.As(err, &corrupt):
			// Taken, or left for a human: the next name will do.
			continue
		case err != nil:
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("no free slot name for %s after %d tries; see 'aisan list' and end some slots", base, maxSuffix)
}

// start writes the first record of a slot whose lock is held.
func (r *Registry) start(name, kind, worktree string, lock *os.File) (*Slot, error) {
	now := time.Now()
	tr, err := r.newTranscriptPath(name, now)
	if err != nil {
		return nil, err
	}
	rec := Record{
		Slot:         name,
		Kind:         kind,
		Worktree:     worktree,
		WrapperPID:   os.Getpid(),
		WrapperStart: selfStart(),
		Start:        now,
		Transcript:   tr,
	}
	if err := writeRecord(r.recordPath(name), rec); err != nil {
		return nil, fmt.Errorf("recording slot %q: %w", name, err)
	}
	return &Slot{reg: r, lock: lock, rec: rec}, nil
}

// newTranscriptPath returns a transcript path for a launch of name that
// does not exist yet. One file per launch, so a new launch never
// overwrites the last one's output and the file can be created O_EXCL.
// Only the holder of the slot's lock calls this, so checking then creating
// is not a race.
func (r *Registry) newTranscriptPath(name string, now time.Time) (string, error) {
	dir := filepath.Join(r.home, "transcripts", name)
	stamp := now.UTC().Format("20060102T150405Z")
	exists := func(i int) (bool, error) {
		_, err := os.Lstat(filepath.Join(dir, candidate(stamp, i)+".log"))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("choosing a transcript path: %w", err)
		}
		return true, nil
	}
	// Launches of one second are numbered in order; pruning may have
	// removed the first of them, and a new one must still sort last.
	first, err := exists(1)
	if err != nil {
		return "", err
	}
	second, err := exists(2)
	if err != nil {
		return "", err
	}
	if !first && !second {
		return filepath.Join(dir, candidate(stamp, 1)+".log"), nil
	}
	next := 2
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if t, i, ok := parseLaunchName(de.Name()); ok && t.Format(stampLayout) == stamp {
			next = max(next, i+1)
		}
	}
	if next > maxSuffix {
		return "", fmt.Errorf("no free transcript name in %q", dir)
	}
	return filepath.Join(dir, candidate(stamp, next)+".log"), nil
}

// List returns every slot, sorted by name. Files that cannot be used come
// back as errors (each a [*CorruptError] naming the file, or an I/O error)
// and are skipped; the rest are listed.
//
// Each slot costs a few system calls (read the record, test the lock,
// stat the transcript), so with many slots the work is spread over one
// goroutine per CPU: "aisan list" over 1,000 slots must stay fast enough
// for a prompt or status line.
func (r *Registry) List() ([]Entry, []error) {
	fns, err := readNames(r.slotsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("reading registry %q: %w", r.slotsDir(), err)}
	}
	var names []string
	var problems []error
	for _, fn := range fns {
		name, ok := strings.CutSuffix(fn, ".json")
		if !ok || strings.HasPrefix(fn, ".") {
			continue
		}
		if !ValidName(name) {
			problems = append(problems, &CorruptError{Path: filepath.Join(r.slotsDir(), fn), Err: errors.New("its name is not a slot name")})
			continue
		}
		names = append(names, name)
	}
	now := time.Now()
	entries := make([]Entry, len(names))
	errs := make([]error, len(names))
	workers := min(runtime.GOMAXPROCS(0), len(names)/64+1)
	var wg sync.WaitGroup
	// Each worker takes a contiguous run of names, so that no two write
	// the same cache line of entries or errs.
	per := (len(names) + workers - 1) / workers
	for w := range workers {
		wg.Go(func() {
			var rr recordReader
			for i := w * per; i < min((w+1)*per, len(names)); i++ {
				err := rr.read(r.recordPath(names[i]), names[i], &entries[i].Record)
				if err == nil {
					entries[i], err = r.entry(entries[i].Record, now)
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	// Kept in place: a list of a thousand slots allocates no second copy.
	kept := entries[:0]
	for i, err := range errs {
		switch {
		case err == nil:
			kept = append(kept, entries[i])
		case errors.Is(err, fs.ErrNotExist):
			// Abandoned while we listed.
		default:
			problems = append(problems, err)
		}
	}
	entries = kept
	// readNames sorts by file name, and "<slot>.json" sorts like "<slot>"
	// except where a name continues with a character below '.'; sort
	// anyway so the promise holds.
	sort.Slice(entries, func(i, j int) bool { return entries[i].Slot < entries[j].Slot })
	return entries, problems
}

// readNames returns the names in dir, sorted. Names are all a list needs
// of the directory: os.ReadDir's entry per name was a seventh of what
// listing a thousand slots allocated.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// entry decides rec's state and idle age.
//
// A record that has its end is over: the wrapper writes the end only after
// the jail is gone, and a new launch of the name rewrites the record before
// it starts anything. Its lock is not consulted — whoever holds it now is a
// new launch that has not written its record yet — which also keeps a
// registry of many old slots cheap to list. Its namespace still is: a jail
// that is somehow alive must remain visible and killable.
func (r *Registry) entry(rec Record, now time.Time) (Entry, error) {
	e := Entry{Record: rec, State: Exited}
	if rec.End.IsZero() {
		held, err := r.lockHeld(rec.Slot)
		if err != nil {
			return Entry{}, fmt.Errorf("slot %q: %w", rec.Slot, err)
		}
		// A holder that is alive holds the slot even when its lock file
		// was removed or replaced, or is one an older aisan took: never
		// call its jail an orphan.
		if held || r.holderLives(rec) {
			e.State = Running
			if !rec.AgentEnd.IsZero() {
				e.State = Background
			}
		}
	}
	if e.State == Exited && jailAlive(rec) {
		e.State = Orphaned
	}
	if e.State == Exited {
		return e, nil
	}
	last := rec.Start
	var st unix.Stat_t
	if rec.Transcript != "" && unix.Stat(rec.Transcript, &st) == nil {
		if mt := time.Unix(st.Mtim.Unix()); mt.After(last) {
			last = mt
		}
	}
	e.Idle = max(now.Sub(last), 0)
	return e, nil
}

// Over reports whether the launch of the slot called name that started
// at since is over, nothing of it alive, and by when: its recorded end,
// zero when none was recorded. A record of a later launch says so too,
// by its start: a launch takes a name only once nothing of the one
// before is alive (a held lock or a live jail keeps it). A slot without
// a record is over unless its lock is held: a record goes only once it
// is. One whose record cannot be read, or that is running, background
// or orphaned, is not.
func (r *Registry) Over(name string, since time.Time) (time.Time, bool) {
	e, err := r.Lookup(name)
	var unknown *UnknownSlotError
	switch {
	case errors.As(err, &unknown):
		if !ValidName(name) {
			return time.Time{}, false
		}
		held, err := r.lockHeld(name)
		return time.Time{}, err == nil && !held
	case err != nil:
		return time.Time{}, false
	case e.Start.After(since):
		return e.Start, true
	}
	return e.End, e.State == Exited
}

// Lookup returns the slot called name, or an [*UnknownSlotError].
func (r *Registry) Lookup(name string) (Entry, error) {
	if ValidName(name) {
		rec, err := readRecord(r.recordPath(name), name)
		if err == nil {
			return r.entry(rec, time.Now())
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Entry{}, err
		}
	}
	return Entry{}, &UnknownSlotError{Name: name, Live: r.liveNames()}
}

// liveNames lists running and orphaned slots, for error messages.
func (r *Registry) liveNames() []string {
	entries, _ := r.List()
	var live []string
	for _, e := range entries {
		if e.State != Exited {
			live = append(live, e.Slot)
		}
	}
	return live
}

// SameRun reports whether e's launch is still running: its slot is running
// (or kept in the background) and has not been re-acquired since e was
// read. "aisan logs -f" polls it.
func (r *Registry) SameRun(e Entry) bool {
	now, err := r.Lookup(e.Slot)
	return err == nil && (now.State == Running || now.State == Background) && now.Start.Equal(e.Start)
}

// Slot is a slot held by this process: its lock is held until Release.
type Slot struct {
	reg  *Registry
	mu   sync.Mutex
	lock *os.File
	rec  Record
	// prev is the record of the name's previous launch as it was on disk
	// when this one took the name; nil when there was none.
	prev []byte
}

// Name returns the slot's name.
func (s *Slot) Name() string { return s.rec.Slot }

// TranscriptPath is where this launch's transcript goes; it does not exist
// yet (see package transcript's Open).
func (s *Slot) TranscriptPath() string { return s.rec.Transcript }

// Record returns a copy of the slot's current record.
func (s *Slot) Record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneRecord(s.rec)
}

// Update changes the record with fn and writes it atomically. fn must not
// change the slot's name.
func (s *Slot) Update(fn func(*Record)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return fmt.Errorf("updating slot %q after it was released", s.rec.Slot)
	}
	rec := cloneRecord(s.rec)
	fn(&rec)
	if rec.Slot != s.rec.Slot {
		return fmt.Errorf("updating slot %q: the name cannot change (to %q)", s.rec.Slot, rec.Slot)
	}
	if err := writeRecord(s.reg.recordPath(rec.Slot), rec); err != nil {
		return fmt.Errorf("updating slot %q: %w", rec.Slot, err)
	}
	s.rec = rec
	return nil
}

// Finish records that the agent ended now with status (128+signal when a
// signal ended it), and trims the slot's kept launches to
// [DefaultPrune]'s. Release the slot afterwards.
func (s *Slot) Finish(status int) error {
	err := s.Update(func(r *Record) {
		r.End = time.Now()
		r.ExitStatus = &status
	})
	if err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		err = s.trimOwnLaunches(DefaultPrune.MaxLaunches)
	}
	return err
}

// Release lets go of the slot's lock. The record stays, for "aisan list"
// and "aisan logs"; the name becomes free for the next launch.
func (s *Slot) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	if err != nil {
		return fmt.Errorf("releasing slot %q: %w", s.rec.Slot, err)
	}
	return nil
}

func cloneRecord(r Record) Record {
	if r.ExitStatus != nil {
		st := *r.ExitStatus
		r.ExitStatus = &st
	}
	if r.AgentStatus != nil {
		st := *r.AgentStatus
		r.AgentStatus = &st
	}
	return r
}

// makeDirs creates the state directory's layout, private to the user.
func (r *Registry) makeDirs() error {
	for _, d := range []string{r.home, r.slotsDir(), filepath.Join(r.home, "transcripts")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating state dir %q: %w; make it writable or set AISAN_HOME to a writable directory", d, err)
		}
	}
	return nil
}

// errOrphanAlive means a name's record describes a jail that is still
// alive although nobody holds the lock: an orphan keeps its name until it
// is reaped, or its record would be lost.
var errOrphanAlive = errors.New("an orphaned jail still holds the name")

// claim takes the slot called name if it is free: its lock is ours, its
// record (if any) parses and describes no live jail. It returns errLocked,
// errOrphanAlive or a *CorruptError when the name is taken.
func (r *Registry) claim(name, kind, worktree string) (*Slot, error) {
	lock, err := r.tryLock(name)
	if err != nil {
		return nil, err
	}
	old, prev, err := readRecordBytes(r.recordPath(name), name)
	var corrupt *CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &corrupt):
		lock.Close()
		return nil, err
	case err != nil:
		lock.Close()
		return nil, fmt.Errorf("reading record of slot %q: %w", name, err)
	case r.holderLives(old):
		// The lock file was replaced under a live holder, or the holder
		// is an older aisan with its lock beside the record.
		lock.Close()
		return nil, errLocked
	case jailAlive(old):
		lock.Close()
		return nil, errOrphanAlive
	}
	s, err := r.start(name, kind, worktree, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	// The previous launch's record, exactly as it was, for Abandon to
	// put back.
	s.prev = prev
	return s, nil
}

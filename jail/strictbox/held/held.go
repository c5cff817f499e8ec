// Package held keeps what a strict box changed in the paths a host tool
// runs (jail/protect's plan) aside for the user's review, instead of
// losing it or letting it reach the repository.
//
// # Protocol
//
//	launch   Prepare, under the store's lock: for each protected path, a
//	         copy in the set's directory (base/N, the host's at launch;
//	         work/N, the box's, bound read-write over the path); an
//	         empty work/N for what does not exist; then, after every
//	         copy, the manifest naming the mount points it plans, the
//	         set listed as open, a mount point in the repository for
//	         each of those, and the manifest again with what was made.
//	         A set left without a manifest (a launch killed while
//	         copying) is removed by the next sweep of the whole store;
//	         one killed later is open, and collected as a box's
//	box      edits work/N only
//	end      Collect (the wrapper, or the keeper of a kept box), once,
//	         under the store's lock: mount points made for the run
//	         removed (or left to another box still running there), what
//	         must not appear swept into swept/N (its origin written
//	         first, as swept/N.from), what the sweep could not read or
//	         reach recorded as unchecked, changes listed; a set with
//	         none and nothing unchecked is removed, any other is held;
//	         last, the set leaves the open index. A collection killed
//	         half-way leaves the set open and indexed, and the next one
//	         (a stale sweep) takes up its moves from the .from files
//	review   Changes shows base against work; Apply writes the box's
//	         version where the repository still holds base's, else
//	         refuses naming both; Discard drops the set
//
// A set lives in aisan's state, $AISAN_HOME/held/SLOT/ID, which is
// read-only in every box, and survives until reviewed.
//
// # Rules
//
//   - What the box wrote is never trusted: it is read without following a
//     symlink and never as a FIFO (jail/regfile), and a symlink is held as
//     a link, shown with its target.
//   - Applying writes under the repository's real path, resolving each
//     directory without following a symlink (openat2 RESOLVE_BENEATH and
//     RESOLVE_NO_SYMLINKS), each file through a new file renamed into
//     place.
//   - Applying never clobbers: every change is checked against the
//     repository first, and one that the host changed since the launch
//     refuses the whole set.
package held

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/lockfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"golang.org/x/sys/unix"
)

// Dir is the held store's directory under $AISAN_HOME.
func Dir(aisanHome string) string { return filepath.Join(aisanHome, "held") }

// NewSetDir names a new set's directory for slot: its launch's time and
// a random suffix.
func NewSetDir(aisanHome, slot string, now time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return filepath.Join(Dir(aisanHome), slot, now.UTC().Format("20060102T150405Z")+"-"+hex.EncodeToString(b[:]))
}

// Work is the box's copy of item n of a set.
func Work(set string, n int) string { return filepath.Join(set, "work", strconv.Itoa(n)) }

func base(set string, n int) string  { return filepath.Join(set, "base", strconv.Itoa(n)) }
func swept(set string, n int) string { return filepath.Join(set, "swept", strconv.Itoa(n)) }

// sweptFrom names the file that records where swept/N came from.
func sweptFrom(set string, n int) string { return swept(set, n) + ".from" }

// States of a set.
const (
	// Open: the box has not ended yet, or nothing collected it.
	Open = "open"
	// Held: the box's changes await review.
	Held = "held"
	// Unreadable: a set whose manifest exists but cannot be read back
	// (larger than maxManifest: the box planted more than that names).
	// It is listed, never shown or applied, and can be discarded.
	Unreadable = "unreadable"
)

// Manifest is a set's record, manifest.json in its directory.
type Manifest struct {
	Slot  string    `json:"slot"`
	Kind  string    `json:"kind"`
	Repo  string    `json:"repo"`
	Start time.Time `json:"start"`
	State string    `json:"state"`
	// Launch is the start the slot's record gave the launch that made
	// the set: it tells that launch from a later one of the same slot
	// (a set made by an older aisan has none).
	Launch time.Time `json:"launch,omitzero"`
	// Items are the plan's protections, numbered as work/N and base/N.
	Items []protect.Item `json:"items"`
	// Created are the mount points made for the run, in creation order.
	Created []Created `json:"created,omitempty"`
	// Known, Watch and the git dirs feed the end's sweep.
	Known []string `json:"known,omitempty"`
	Watch []string `json:"watch,omitempty"`
	// Modules are the directories whose new importable Python entries
	// the end sweeps (protect.SweepModules).
	Modules   []protect.ModuleDir `json:"modules,omitempty"`
	GitDir    string              `json:"git_dir,omitempty"`
	CommonDir string              `json:"common_dir,omitempty"`
	// Swept are what the end moved out of the repository, as swept/N.
	Swept []string `json:"swept,omitempty"`
	// Ended is when the box ended, as its end's sweep took it: what
	// changed in the repository after it is the user's.
	Ended time.Time `json:"ended,omitzero"`
	// Unchecked are what the end's sweep could not check or hold.
	Unchecked []Unchecked `json:"unchecked,omitempty"`
	// Exclude are patterns added to both copies of the git dir's
	// info/exclude (the item at CommonDir/info): the empty files made as
	// mount points at the repository's root, which the box's own git
	// would otherwise offer to commit.
	Exclude []string `json:"exclude,omitempty"`
	// Index says whether the git index was copied at launch (index.go).
	Index string `json:"index,omitempty"`
	// Head is the commit the repository's HEAD named at launch (head.go).
	Head string `json:"head,omitempty"`
	// Refs are the repository's branches, remote-tracking branches,
	// tags, stash and replace refs at launch (refs.go); RefsUnread says they could not be read.
	Refs       map[string]string `json:"refs"`
	RefsUnread bool              `json:"refs_unread,omitempty"`
	// TodoExecs are the exec lines of the operation in progress at
	// launch, by todo file (sequencer.go).
	TodoExecs map[string][]string `json:"todo_execs,omitempty"`
	// NestedIndex are the repositories nested in Repo, whose indexes are
	// kept as its own is.
	NestedIndex []NestedIndex `json:"nested_index,omitempty"`
}

// Created is a mount point made for a box's run.
type Created struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// manifestName is a set's manifest, in its directory.
const manifestName = "manifest.json"

// maxManifest caps a manifest read back.
const maxManifest = 4 << 20

// ReadManifest reads set's manifest.
func ReadManifest(set string) (Manifest, error) {
	var m Manifest
	data, err := regfile.Read(filepath.Join(set, manifestName), maxManifest)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s/manifest.json does not parse: %w", set, err)
	}
	return m, nil
}

func writeManifest(set string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(set, manifestName), data, atomicfile.Options{Mode: 0o600})
}

// Prepare makes set for m's items: the copies, the empty copies and their
// mount points. On an error nothing it made is left.
func Prepare(set string, m Manifest) (err error) {
	if err := os.MkdirAll(filepath.Dir(set), 0o700); err != nil {
		return fmt.Errorf("creating the held store: %w", err)
	}
	// Under the store's lock: a box ending meanwhile in the same
	// repository sees this one and leaves its mount points to it.
	unlock, err := lockStore(filepath.Dir(filepath.Dir(set)))
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Mkdir(set, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", set, err)
	}
	defer func() {
		if err != nil {
			undoCreated(m.Created)
			os.RemoveAll(set)
			unmarkOpen(set, m.Repo)
		}
	}()
	for _, d := range []string{"base", "work"} {
		if err := os.Mkdir(filepath.Join(set, d), 0o700); err != nil {
			return err
		}
	}
	if err := saveIndexes(set, &m); err != nil {
		return err
	}
	m.State = Open
	for n, it := range m.Items {
		switch it.How {
		case protect.Copy:
			for _, dst := range []string{base(set, n), Work(set, n)} {
				if err := copyTree(it.Path, dst); err != nil {
					return fmt.Errorf("copying %s for the box: %w", it.Path, err)
				}
			}
		case protect.Create, protect.Shadow:
			if err := makeEmpty(base(set, n), it.Dir); err != nil {
				return err
			}
			if err := makeEmpty(Work(set, n), it.Dir); err != nil {
				return err
			}
		}
		if len(m.Exclude) > 0 && m.CommonDir != "" && it.Path == filepath.Join(m.CommonDir, "info") && it.Held() {
			for _, dst := range []string{base(set, n), Work(set, n)} {
				if err := addExclude(filepath.Join(dst, "exclude"), m.Exclude); err != nil {
					return err
				}
			}
		}
	}
	// The mount points last, after every copy (no item lies in another's
	// copied tree, so the order changes no copy), and named in the
	// manifest, and the set listed as open, before the first is made: a
	// launch killed (SIGKILL) while it makes them leaves a set that the
	// next sweep finds and collects, not files in the repository that
	// nothing names.
	planned := plannedMountPoints(m.Items)
	if len(planned) > 0 {
		m.Created = planned
		err := writeManifest(set, m)
		if err == nil {
			err = markOpen(set, m.Repo)
		}
		m.Created = nil
		if err != nil {
			return err
		}
	}
	for _, c := range planned {
		made, err := makeMountPoint(c)
		if err != nil {
			if !errors.Is(err, fs.ErrExist) {
				// Made, or half: the undo takes it as planned.
				m.Created = append(m.Created, made)
			}
			return fmt.Errorf("making the mount point %s: %w", c.Path, err)
		}
		m.Created = append(m.Created, made)
	}
	if err := writeManifest(set, m); err != nil {
		return err
	}
	return markOpen(set, m.Repo)
}

// addExclude appends patterns to a copy of info/exclude.
func addExclude(p string, patterns []string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString("# aisan: empty mount points for this box's run, gone after it\n" + strings.Join(patterns, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func makeEmpty(p string, dir bool) error {
	if dir {
		return os.Mkdir(p, 0o755)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// makeMountPoint makes the planned mount point c, empty, and records
// what it made.
func makeMountPoint(c Created) (Created, error) {
	if err := makeEmpty(c.Path, c.Dir); err != nil {
		return c, err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(c.Path, &st); err != nil {
		return c, err
	}
	c.Dev, c.Ino = uint64(st.Dev), st.Ino
	return c, nil
}

// planned tells whether c was recorded before it was made (its identity
// unknown): see [plannedMountPoints].
func (c Created) planned() bool { return c.Ino == 0 }

// plannedMountPoints are the mount points to make for items' Create
// entries, each preceded by the parents it lacks, as Created entries
// without an identity. The manifest names them before any is made, so
// that a launch killed (SIGKILL) while it makes them leaves a set that
// says where they are; their collection takes what it finds there when
// it is empty and of the planned kind.
func plannedMountPoints(items []protect.Item) []Created {
	var out []Created
	made := map[string]bool{}
	for _, it := range items {
		if it.How != protect.Create {
			continue
		}
		var missing []string
		for q := filepath.Dir(it.Path); !made[q]; q = filepath.Dir(q) {
			if _, err := os.Lstat(q); err == nil || q == "/" {
				break
			}
			missing = append([]string{q}, missing...)
		}
		for _, q := range missing {
			made[q] = true
			out = append(out, Created{Path: q, Dir: true})
		}
		made[it.Path] = true
		out = append(out, Created{Path: it.Path, Dir: it.Dir})
	}
	return out
}

// is tells whether st, what is at c's path, is c: the same entry, or
// for a planned one (never identified), an entry of its kind.
func (c Created) is(st *syscall.Stat_t) bool {
	if c.planned() {
		kind := uint32(syscall.S_IFREG)
		if c.Dir {
			kind = syscall.S_IFDIR
		}
		return st.Mode&syscall.S_IFMT == kind
	}
	return uint64(st.Dev) == c.Dev && st.Ino == c.Ino
}

// pristine tells whether c is still the mount point made for the run, as
// made: the same entry, and a file still empty.
func (c Created) pristine() bool {
	var st syscall.Stat_t
	if c.planned() || syscall.Lstat(c.Path, &st) != nil || !c.is(&st) {
		return false
	}
	return c.Dir || st.Size == 0
}

// undoCreated removes the mount points made for a run, deepest first,
// where each is still the one made and empty. It says which stay.
func undoCreated(cs []Created) []string {
	var kept []string
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		var st syscall.Stat_t
		if err := syscall.Lstat(c.Path, &st); err != nil {
			continue
		}
		if !c.is(&st) {
			kept = append(kept, c.Path)
			continue
		}
		var err error
		if c.Dir {
			err = syscall.Rmdir(c.Path)
		} else if st.Size == 0 {
			err = syscall.Unlink(c.Path)
		} else {
			err = errors.New("written to")
		}
		if err != nil {
			kept = append(kept, c.Path)
		}
	}
	return kept
}

// maxTreeEntries bounds a copy made at launch (the plan keeps larger
// trees read-only) and what is compared after the box.
const maxTreeEntries = 100_000

// copyTree copies src (a regular file, a symlink, or a directory of
// them) to dst, without following a symlink. Other entries are left out.
func copyTree(src, dst string) error {
	n := 0
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxTreeEntries {
			return fmt.Errorf("more than %d entries", maxTreeEntries)
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.Mkdir(to, fi.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, to)
		case d.Type().IsRegular():
			return regfile.Copy(p, to)
		}
		return nil
	})
}

// Result is what collecting a set found.
type Result struct {
	// Set is the set's directory; "" when nothing was held.
	Set string
	// Repo is the set's repository.
	Repo string
	// Files are the repository paths the box changed or planted.
	Files []string
	// Kept are mount points that could not be removed (the host wrote
	// there during the run).
	Kept []string
	// Unchecked are what the sweep could not check or hold: planted
	// files may lie there still.
	Unchecked []Unchecked
	// Unstaged are the held paths whose index entries the end put back
	// as they were at launch: the box had staged its own version.
	Unstaged []string
	// Committed are the held paths the box's commits changed: the
	// branch holds its version (head.go).
	Committed []string
	// Branches are the other branches, tags, remote-tracking branches
	// and the stash the box made or moved that hold its version of held
	// paths (refs.go).
	Branches []BranchChange
	// Replaced are the replace refs the box made, changed or removed,
	// put back as they were at launch (refs.go).
	Replaced []string
	// RestoredObjects are the objects the end found rewritten (their
	// files swept into the set) and wrote back from the working tree;
	// MissingObjects those it could not (objects.go).
	RestoredObjects, MissingObjects []string
	// Unshadowed are the refs the box made or moved that hid others
	// from the names a user types, put back as they were at launch
	// (refs.go).
	Unshadowed []string
	// Locks are the index locks left in the repositories' git dirs.
	Locks []string
	// AddedExecs are the exec lines the box added to the todo of the
	// operation the user had in progress (sequencer.go).
	AddedExecs []AddedExec
}

// withoutSet is r for a set that held nothing and is gone: what the end
// did and found in the repository, without the set's own findings.
func (r Result) withoutSet() Result {
	return Result{Repo: r.Repo, Kept: r.Kept, Unstaged: r.Unstaged, Committed: r.Committed, Branches: r.Branches,
		Replaced: r.Replaced, Unshadowed: r.Unshadowed, AddedExecs: r.AddedExecs, Locks: r.Locks,
		RestoredObjects: r.RestoredObjects, MissingObjects: r.MissingObjects}
}

// Unchecked is a repository path the end's sweep could not check or hold,
// and why: what the box planted there may be there still.
type Unchecked struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Parked is where an unreadable directory was renamed aside to, in
	// its own parent: host tools no longer reach what it holds under
	// its name, and the store could not take it without a change of its
	// mode (a directory moved to another parent must be writable).
	Parked string `json:"parked,omitempty"`
}

// Collect ends a set once its box has ended: the run's mount points go,
// the paths in sweep (protect.NewSince's) and planted watched files are
// moved into the set, and the changes are listed. A set with nothing to
// hold is removed.
func Collect(set string, sweep []string) (Result, error) {
	return collect(set, protect.Since{Paths: sweep}, time.Now())
}

// collect is Collect with the whole of the sweep's findings. Once it has
// read the manifest it does not stop half-way: what it cannot move or
// read it records in the set (which is then held, never removed) and
// goes on, so the set reaches its final state in this one call and no
// later sweep (which could take what the user made since) runs for it.
//
// It runs under the store's lock, so that one set is collected once: a
// box's own end and a stale sweep ('aisan kill', 'aisan review') may
// reach it at the same moment, and two sweeps of one set would move two
// paths to one name in it.
func collect(set string, s protect.Since, ended time.Time) (Result, error) {
	unlock, err := lockStore(filepath.Dir(filepath.Dir(set)))
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	m, err := ReadManifest(set)
	if err != nil {
		return Result{}, err
	}
	if m.State != Open {
		return Result{}, &CollectedError{Set: set, State: m.State}
	}
	r := Result{Set: set, Repo: m.Repo}
	resumeSweep(set, &m)
	others, oms := openIn(set, m.Repo)
	if err := handOver(&m, others, oms); err != nil {
		return r, err
	}
	m.Ended = ended
	r.Kept = undoCreated(m.Created)
	m.Created = nil
	// Another box's mount point made while this one ran is new to its
	// sweep, but it is that box's to remove: moving it would detach the
	// box's mount on it, and what the box wrote there next would land
	// in the repository.
	sweep := slices.DeleteFunc(slices.Clone(s.Paths), func(p string) bool { return madeFor(oms, p) })
	for _, w := range m.Watch {
		if _, err := os.Lstat(w); err == nil {
			sweep = append(sweep, w)
		}
	}
	run := protect.Span{Start: m.Start, End: ended}
	for _, d := range gitDirs(m) {
		sweep = append(sweep, plantedRootRefs(d, run)...)
	}
	if len(sweep) > 0 || len(s.Unreadable) > 0 {
		if err := os.MkdirAll(filepath.Join(set, "swept"), 0o700); err != nil {
			return r, err
		}
	}
	moved := map[string]bool{}
	for _, p := range sweep {
		link, mine := linkAbove(p, protect.Span{Start: m.Start, End: ended})
		switch {
		case link == "":
		case !mine:
			// Made after the box: the user's, and so is what lies
			// beyond it.
			continue
		default:
			// The box made the link: what the sweep found beyond it is
			// wherever the link leads, maybe the user's other work;
			// the link is what the box planted, and what is moved.
			p = link
		}
		if moved[p] {
			continue
		}
		moved[p] = true
		err := sweepOut(set, &m, p, moveOut)
		if errors.Is(err, fs.ErrPermission) {
			// The box can take write permission away from the directory
			// it planted in (chmod 555): the user owns it, so lend it
			// back for the move.
			err = withWritableParent(p, func() error { return sweepOut(set, &m, p, moveOut) })
		}
		if err != nil {
			m.Unchecked = append(m.Unchecked, parkAside(p, fmt.Sprintf("the box planted it, and it could not be moved out of the repository (%v)", err)))
		}
	}
	for _, u := range s.Unreadable {
		m.Unchecked = append(m.Unchecked, holdUnreadable(set, &m, u))
	}
	// The object stores once the sweep took what could steer git
	// elsewhere (a planted commondir); then the user's objects are
	// written back where the working tree has them.
	objs := checkObjects(set, m, run)
	for _, c := range objs {
		for _, p := range c.bad {
			err := os.MkdirAll(filepath.Join(set, "swept"), 0o700)
			if err == nil {
				err = sweepOut(set, &m, p, moveOut)
			}
			if err != nil {
				m.Unchecked = append(m.Unchecked, Unchecked{Path: p, Why: fmt.Sprintf("the box rewrote this object file, and it could not be moved out of the store (%v): git would read the box's content under its name", err)})
			}
		}
	}
	for _, c := range objs {
		restored, missing := restoreObjects(c)
		r.RestoredObjects = append(r.RestoredObjects, restored...)
		r.MissingObjects = append(r.MissingObjects, missing...)
		if c.unchecked != "" {
			m.Unchecked = append(m.Unchecked, Unchecked{Path: filepath.Join(cmp.Or(c.r.commonDir, c.r.gitDir), "objects"), Why: c.unchecked + ": the box may have put its own content under the names of your objects; git fsck --full checks them all"})
		}
	}
	m.Unchecked = append(m.Unchecked, restoreIndexes(set, m, &r)...)
	// After the sweep, which took an operation the box started.
	r.AddedExecs = addedExecs(m)
	for _, d := range s.Unread {
		m.Unchecked = append(m.Unchecked, Unchecked{Path: d, Why: fmt.Sprintf("not looked into: the repository held more than %d entries after the box", protect.MaxEntries)})
	}
	changes, err := changes(set, m)
	if err != nil {
		// changes reads what it can and marks the rest; this is the
		// store itself failing. Hold the set all the same.
		m.Unchecked = append(m.Unchecked, Unchecked{Path: set, Why: fmt.Sprintf("what the set holds could not be listed (%v)", err)})
	}
	r.Unchecked = m.Unchecked
	if len(changes) == 0 && len(m.Unchecked) == 0 {
		if err := os.RemoveAll(set); err != nil {
			return r.withoutSet(), err
		}
		return r.withoutSet(), unmarkOpen(set, m.Repo)
	}
	r.Files = files(changes)
	m.State = Held
	if err := writeManifest(set, m); err != nil {
		return r, err
	}
	// Last, so that a collection cut short before here leaves the set
	// where the next sweep of its repository finds it.
	return r, unmarkOpen(set, m.Repo)
}

// gitDirs are the git dirs of m's repositories, common dirs included,
// each once.
func gitDirs(m Manifest) []string {
	var out []string
	add := func(d string) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	add(m.GitDir)
	add(m.CommonDir)
	for _, n := range m.NestedIndex {
		add(n.GitDir)
		add(commonOf(n.GitDir))
	}
	return out
}

// linkAbove is the highest symlink on the way to p's directory that is
// new since run.Start, and whether it is older than run.End (the box
// made it), or "". A sweep names paths as the launch saw them: a
// directory the box replaced with a link (node_modules -> the user's
// other project) would have a rename of p move what lies there.
func linkAbove(p string, run protect.Span) (string, bool) {
	var up []string
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		up = append(up, d)
	}
	for i := len(up) - 1; i >= 0; i-- {
		var st unix.Stat_t
		if unix.Lstat(up[i], &st) != nil {
			return "", false
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			continue
		}
		if t := time.Unix(st.Ctim.Unix()); t.After(run.Start) {
			return up[i], !t.After(run.End)
		}
	}
	return "", false
}

// madeFor tells whether p is a mount point one of the sets of ms made for
// its box's run, untouched since.
func madeFor(ms []Manifest, p string) bool {
	for _, m := range ms {
		for _, c := range m.Created {
			if c.Path == p && c.pristine() {
				return true
			}
		}
	}
	return false
}

// sweepOut moves p into the set as its next swept entry, swept/N, by
// move. Where it came from is written first, as swept/N.from: a
// collection cut short (SIGKILL) between its moves and its manifest
// leaves entries the manifest does not name, and the next collection
// finds them by it (resumeSweep) instead of moving onto them.
func sweepOut(set string, m *Manifest, p string, move func(from, to string) error) error {
	n := len(m.Swept)
	from := sweptFrom(set, n)
	f, err := os.OpenFile(from, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = move(p, swept(set, n)); err != nil {
			// A move across file systems that failed half-way leaves
			// a partial copy at swept/N, this call's own (its .from
			// was made exclusively): left there, it would make every
			// later move of this collection fail on it.
			os.RemoveAll(swept(set, n))
		}
	}
	if err != nil {
		os.Remove(from)
		return err
	}
	m.Swept = append(m.Swept, p)
	return nil
}

// resumeSweep adds to m.Swept what a collection of the set that was cut
// short moved into it after its manifest was last written, each under
// the path its swept/N.from names, so that review shows it and the next
// move takes a free name. An entry with no readable origin (an older
// aisan wrote none) is shown under its own name in the store, and said
// to be of unknown origin.
func resumeSweep(set string, m *Manifest) {
	for n := len(m.Swept); ; n++ {
		from, ferr := os.ReadFile(sweptFrom(set, n))
		if _, err := os.Lstat(swept(set, n)); err != nil {
			// Cut short before this move: what it named is still in
			// the repository, for this collection's sweep.
			os.Remove(sweptFrom(set, n))
			return
		}
		p := string(from)
		if ferr != nil || !filepath.IsAbs(p) || filepath.Clean(p) != p {
			p = swept(set, n)
			m.Unchecked = append(m.Unchecked, Unchecked{Path: p, Why: "an earlier collection of this set was cut short after moving it out of the repository, and where it was is not recorded"})
		}
		m.Swept = append(m.Swept, p)
	}
}

// holdUnreadable takes a directory the sweep could not read out of
// host tools' way: into the set when it can be moved there as it is,
// else renamed aside in its own parent (which needs no change of its
// mode). Either way the set says so; what it holds was not looked at.
func holdUnreadable(set string, m *Manifest, u protect.Unreadable) Unchecked {
	why := fmt.Sprintf("the sweep could not read it (%v), so what the box planted in it is not known", u.Err)
	if u.Path == m.Repo {
		return Unchecked{Path: u.Path, Why: why + "; nothing in the repository was checked"}
	}
	if err := sweepOut(set, m, u.Path, renameNoReplace); err == nil {
		return Unchecked{Path: u.Path, Why: why + "; moved into the held set as it is"}
	}
	return parkAside(u.Path, why)
}

// withWritableParent runs fn with p's directory writable by its owner,
// as this user owns it, and gives the directory its mode back after.
func withWritableParent(p string, fn func() error) error {
	dir := filepath.Dir(p)
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Getuid() || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fn()
	}
	mode := st.Mode & 0o7777
	if err := unix.Chmod(dir, mode|0o300); err != nil {
		return err
	}
	defer unix.Chmod(dir, mode)
	return fn()
}

// parkAside renames p aside in its own parent, out of host tools' way
// under its name, when the store could not take it (why says so).
func parkAside(p, why string) Unchecked {
	var b [3]byte
	rand.Read(b[:])
	aside := p + ".aisan-unreadable-" + hex.EncodeToString(b[:])
	if err := os.Rename(p, aside); err != nil {
		return Unchecked{Path: p, Why: fmt.Sprintf("%s; it could not be moved aside either (%v)", why, err)}
	}
	return Unchecked{Path: p, Why: why + "; renamed aside", Parked: aside}
}

// files names the changed paths, an added or removed directory standing
// for what lies in it.
func files(cs []Change) []string {
	var out []string
	for _, c := range cs {
		if n := len(out); n > 0 && strings.HasPrefix(c.Path, out[n-1]+"/") {
			continue
		}
		out = append(out, c.Path)
	}
	return out
}

// handOver leaves the run's mount points to another box still running in
// the same repository, if there is one (sets are the open sets of the
// repository's other boxes, ms their manifests): removing them now would
// detach that box's mounts on them (an unlink in one mount namespace does
// so in every other), and what it then wrote there would land in the
// repository. The last box to end removes them. The caller holds the
// store's lock, so that two ends never hand over to each other. A set
// whose collection was cut short is still open and may receive; its own
// collection hands on or removes what it got. A hand-over such a
// collection already made is not made twice.
func handOver(m *Manifest, sets []string, ms []Manifest) error {
	if len(m.Created) == 0 || len(sets) == 0 {
		return nil
	}
	om := ms[0]
	for _, c := range m.Created {
		if !slices.Contains(om.Created, c) {
			om.Created = append(om.Created, c)
		}
	}
	if err := writeManifest(sets[0], om); err != nil {
		return err
	}
	m.Created = nil
	return nil
}

// CollectedError is the error of collecting a set that is no longer
// open: its box's end, or another sweep, collected it first.
type CollectedError struct {
	Set   string
	State string
}

func (e *CollectedError) Error() string {
	return fmt.Sprintf("%s was collected already (it is %s)", e.Set, e.State)
}

// lockStore takes the held store's lock.
func lockStore(store string) (func(), error) {
	if err := os.MkdirAll(store, 0o700); err != nil {
		return nil, err
	}
	// Where no jail can reach it (see jail/shared/lockfile).
	// The store is "held" in the state directory ([Dir]).
	f, err := lockfile.Open(filepath.Join(store, ".lock"), rundir.LockDir(filepath.Dir(store)))
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// moveOut renames p into the store, or copies it there and removes it
// when the store is on another file system.
func moveOut(p, to string) error {
	err := renameNoReplace(p, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(p, to); err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// renameNoReplace renames p to to, failing when to exists: nothing the
// set holds is ever replaced by a later move.
func renameNoReplace(p, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) {
		// A file system without the flag: the store is aisan's alone
		// and its lock is held, so a look first is as good.
		if _, lerr := os.Lstat(to); lerr == nil {
			err = unix.EEXIST
		} else {
			return os.Rename(p, to)
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: p, New: to, Err: err}
	}
	return nil
}

// Summary is Lines as one text.
func (r Result) Summary(repo, slot string) string { return strings.Join(r.Lines(repo, slot), "\n") }

// Lines are one line naming what a set holds, relative to its
// repository, every name escaped (the box chose them), and one line per
// path the sweep could not check.
func (r Result) Lines(repo, slot string) []string {
	const most = 6
	rel, more := mostNames(repo, r.Files, most)
	var lines []string
	if len(rel) > 0 {
		lines = append(lines, fmt.Sprintf("the box changed what host tools run, held for review, not applied: %s%s; 'aisan review %s' shows it, --apply writes it, --discard drops it", strings.Join(rel, ", "), more, slot))
	}
	if len(r.Unstaged) > 0 {
		names, more := mostNames(repo, r.Unstaged, most)
		lines = append(lines, fmt.Sprintf("the box staged its own version of what host tools run; the index has them as before the box: %s%s", strings.Join(names, ", "), more))
	}
	if len(r.Committed) > 0 {
		names, more := mostNames(repo, r.Committed, most)
		lines = append(lines, fmt.Sprintf("the box committed its own version of what host tools run: %s%s; the working tree and the index keep yours, but git stash, git reset --hard or checking out its commits would put the box's there: look at its commits first (git log -p -- PATH)", strings.Join(names, ", "), more))
	}
	if len(r.Branches) > 0 {
		var refs []string
		for _, b := range r.Branches {
			names, more := mostNames(repo, b.Paths, 3)
			refs = append(refs, fmt.Sprintf("%s (%s%s)", quote(shortRef(b.Ref)), strings.Join(names, ", "), more))
		}
		lines = append(lines, fmt.Sprintf("the box left its own version of what host tools run on branches it made or moved (tags and remote-tracking branches among them): %s; checking one out, merging or rebasing onto it, or git stash pop would put the box's there: look first (git log -p REF -- PATH)", strings.Join(refs, "; ")))
	}
	if len(r.Replaced) > 0 {
		var q []string
		for _, n := range r.Replaced {
			q = append(q, quote(n))
		}
		names, more := first(q, most)
		lines = append(lines, fmt.Sprintf("the box made or changed replace refs, which make git show one object in place of another, with git status clean (checkout, stash and reset would have written the box's version); they are as at launch again: %s%s", strings.Join(names, ", "), more))
	}
	if n := len(r.RestoredObjects) + len(r.MissingObjects); n > 0 {
		line := fmt.Sprintf("the box rewrote %d %s of the repository, so that git would have read its content under names your files have (git status showed nothing; a checkout, git reset --hard or git worktree add would have written it): held for review", n, plural(n, "object", "objects"))
		if k := len(r.RestoredObjects); k > 0 {
			line += fmt.Sprintf("; %d %s written back from your working tree", k, plural(k, "was", "were"))
		}
		if len(r.MissingObjects) > 0 {
			ids, more := first(r.MissingObjects, most)
			line += fmt.Sprintf("; missing now, so git stops rather than write the box's: %s%s (git fsck lists them; take them from another clone)", strings.Join(ids, ", "), more)
		}
		lines = append(lines, line)
	}
	if len(r.Unshadowed) > 0 {
		var q []string
		for _, n := range r.Unshadowed {
			q = append(q, quote(n))
		}
		names, more := first(q, most)
		lines = append(lines, fmt.Sprintf("the box made or moved refs that git would take for others of the same name (git reset --hard, merge or rebase NAME would have used the box's, with no more than a warning that the name is ambiguous); they are as at launch again: %s%s", strings.Join(names, ", "), more))
	}
	if len(r.Locks) > 0 {
		names, more := mostNames(repo, r.Locks, most)
		lines = append(lines, fmt.Sprintf("git's index lock is there after the box: %s%s; a git of the box's that was stopped mid-way leaves it, and git will not change the index while it is: if no git of yours is running in the repository, remove it", strings.Join(names, ", "), more))
	}
	if len(r.AddedExecs) > 0 {
		var ex []string
		for _, e := range r.AddedExecs {
			if e.Unread != nil {
				ex = append(ex, fmt.Sprintf("%s, which could not be read (%s)", quote(relTo(repo, e.Todo)), quote(e.Unread.Error())))
				continue
			}
			ex = append(ex, fmt.Sprintf("%q in %s", e.Line, quote(relTo(repo, e.Todo))))
		}
		names, more := first(ex, most)
		lines = append(lines, fmt.Sprintf("the box added commands to the operation you have in progress: %s%s; git rebase --continue (or cherry-pick --continue) would run them on this machine: look first (git rebase --edit-todo)", strings.Join(names, ", "), more))
	}
	if len(r.Unchecked) > 0 {
		lines = append(lines, UncheckedLines(repo, slot, r.Unchecked)...)
	}
	return lines
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mostNames are the first most of paths, relative to repo and quoted,
// and what says how many more there are.
func mostNames(repo string, paths []string, most int) (names []string, more string) {
	for _, p := range paths {
		names = append(names, quote(relTo(repo, p)))
	}
	return first(names, most)
}

// first are the first most of items, and what says how many more there
// are.
func first(items []string, most int) (shown []string, more string) {
	if len(items) > most {
		return items[:most], fmt.Sprintf(" and %d more", len(items)-most)
	}
	return items, ""
}

// UncheckedLines say, one line each, where the end's sweep could not
// look for what the box planted: files host tools run may lie there.
func UncheckedLines(repo, slot string, us []Unchecked) []string {
	const most = 10
	var out []string
	for i, u := range us {
		if i == most {
			out = append(out, fmt.Sprintf("and %d more paths were not checked; 'aisan review %s' lists them", len(us)-most, slot))
			break
		}
		l := fmt.Sprintf("NOT CHECKED: %s: %s", quote(relTo(repo, u.Path)), quote(u.Why))
		if u.Parked != "" {
			l += " to " + quote(relTo(repo, u.Parked)) + "; look into it before a host tool does (it may hold a git config, hooks or agent settings the box planted), then remove it or rename it back"
		} else {
			l += "; files host tools run (.git, .claude/, .envrc, ...) may lie there: look before running git or an agent there"
		}
		out = append(out, l)
	}
	return out
}

// Set is one held set, as listed.
type Set struct {
	Dir string
	Manifest
	// Files are the changed repository paths (for a held set).
	Files []string
	// Problem is why the manifest of an Unreadable set cannot be read.
	Problem error
}

// List returns the sets under the store, oldest first per slot; slot ""
// lists every slot's. A set whose manifest cannot be read is reported
// and skipped.
func List(aisanHome, slot string) ([]Set, []error) {
	sets, problems := Manifests(aisanHome, slot)
	for i, set := range sets {
		if set.State == Unreadable {
			continue
		}
		if cs, err := changes(set.Dir, set.Manifest); err == nil {
			sets[i].Files = files(cs)
		}
	}
	return sets, problems
}

// setDirs lists the set directories in store of slot, or of every slot
// when slot is "", with what could not be read.
func setDirs(store, slot string) ([]string, []error) {
	slots := []string{slot}
	if slot == "" {
		ents, err := os.ReadDir(store)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, []error{err}
		}
		slots = nil
		for _, e := range ents {
			// A slot's name never starts with '.': the store's own
			// files (.lock, .open) do.
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				slots = append(slots, e.Name())
			}
		}
	}
	var dirs []string
	var problems []error
	for _, s := range slots {
		ents, err := os.ReadDir(filepath.Join(store, s))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, err)
			}
			continue
		}
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(store, s, e.Name()))
			}
		}
	}
	return dirs, problems
}

// Manifests is List without each set's Files. What a set holds is read
// from its copies, file by file: only what shows it needs that, not what
// looks for sets in a state (every box's end, 'aisan list').
func Manifests(aisanHome, slot string) ([]Set, []error) {
	dirs, problems := setDirs(Dir(aisanHome), slot)
	var out []Set
	for _, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil {
			if !hasManifest(dir) {
				problems = append(problems, err)
				continue
			}
			// Listed all the same: a set nothing lists is never
			// dropped, and what it holds stays out of sight.
			m = Manifest{Slot: filepath.Base(filepath.Dir(dir)), State: Unreadable}
			out = append(out, Set{Dir: dir, Manifest: m, Problem: err})
			continue
		}
		out = append(out, Set{Dir: dir, Manifest: m})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		return out[i].Start.Before(out[j].Start)
	})
	return out, problems
}

// hasManifest tells whether set has a manifest, readable or not.
func hasManifest(set string) bool {
	fi, err := os.Lstat(filepath.Join(set, manifestName))
	return err == nil && fi.Mode().IsRegular()
}

// Discard drops a set, also one whose manifest cannot be read.
func Discard(set string) error {
	if _, err := ReadManifest(set); err != nil && !hasManifest(set) {
		return err
	}
	return removeSet(set)
}

// End collects set after its box ended, now: see [EndAt].
func End(set string) (Result, error) { return EndAt(set, time.Now()) }

// EndAt collects set after its box ended at ended: it finds what the
// box planted where nothing was protected while it ran (protected names
// and nested .git entries new since the launch, at any depth, and git
// dirs made of plain directories) and hands that to [Collect]. What
// changed after ended is the user's, never swept. A directory it cannot
// read, or a tree too large to walk, is recorded in the set, which is
// then held, never taken for clean.
func EndAt(set string, ended time.Time) (Result, error) {
	m, err := ReadManifest(set)
	if err != nil {
		return Result{}, err
	}
	if m.State != Open {
		return Result{}, &CollectedError{Set: set, State: m.State}
	}
	known := slices.Clone(m.Known)
	for _, it := range m.Items {
		known = append(known, it.Path)
	}
	for _, c := range m.Created {
		known = append(known, c.Path)
	}
	run := protect.Span{Start: m.Start, End: ended}
	s := protect.NewSince(m.Repo, known, protect.GitFacts{GitDir: m.GitDir, CommonDir: m.CommonDir}, run)
	if len(m.Modules) > 0 {
		s.Paths = append(s.Paths, protect.SweepModules(m.Modules, known, run)...)
		slices.Sort(s.Paths)
		s.Paths = slices.Compact(s.Paths)
	}
	return collect(set, s, ended)
}

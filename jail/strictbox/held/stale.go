package held

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Over tells whether the launch of a slot that started at start (its
// record's start: Manifest.Launch) is over, nothing of it alive, and by
// when (zero when that was not recorded: a wrapper killed, a crash). It must answer false whenever a
// box of that launch may still run: a set collected under a running box
// loses its mount points, and what the box writes there next lands in
// the repository.
type Over func(slot string, start time.Time) (end time.Time, over bool)

// Stale is an open set whose box ended without its wrapper or keeper
// collecting it, as [CollectStale] found it, and what collecting it gave.
type Stale struct {
	Set
	Result Result
	Err    error
}

// CollectStale collects the open sets whose boxes are over (by over) but
// were never collected: a wrapper killed with SIGKILL, a crash. Until
// then the repository keeps the run's mount points, and anything the box
// planted where nothing was mounted, for the host's next step to find. It
// looks at the sets of repo, through the open index, or at every set in
// the store when repo is "".
//
// The sweep keeps what changed after the box's end; a set whose end was
// not recorded, or predates it (the slot's record is a later launch's),
// is swept up to now: more is held for review, nothing is lost.
func CollectStale(aisanHome, repo string, over Over) []Stale {
	var sets []Set
	if repo == "" {
		removeUnprepared(Dir(aisanHome))
		sets, _ = Manifests(aisanHome, "")
	} else {
		sets = openSetsOf(aisanHome, repo)
	}
	var out []Stale
	for _, s := range sets {
		if s.State != Open {
			continue
		}
		since := s.Launch
		if since.IsZero() {
			// An older aisan's set: its launch started before it.
			since = s.Start
		}
		end, ok := over(s.Slot, since)
		if !ok {
			continue
		}
		if end.IsZero() || end.Before(s.Start) {
			end = time.Now()
		}
		r, err := EndAt(s.Dir, end)
		var done *CollectedError
		if errors.As(err, &done) {
			continue // its box's end, or another sweep, was first
		}
		out = append(out, Stale{Set: s, Result: r, Err: err})
	}
	return out
}

// Lines are what to tell the user of s: what its set now holds for
// review, or why it could not be collected.
func (s Stale) Lines() []string {
	if s.Err != nil {
		return []string{fmt.Sprintf("collecting what an earlier box left (%s): %s; 'aisan review' lists it", s.Dir, Quote(s.Err.Error()))}
	}
	return s.Result.Lines(s.Repo, s.Slot)
}

// openSetsOf lists the sets the open index names for repo. The index is a
// hint: a set whose manifest does not say open, for repo, is left out.
func openSetsOf(aisanHome, repo string) []Set {
	var out []Set
	for set := range indexed(indexDir(Dir(aisanHome), repo)) {
		m, err := ReadManifest(set)
		if err != nil || m.State != Open || m.Repo != repo || m.Slot != filepath.Base(filepath.Dir(set)) {
			continue
		}
		out = append(out, Set{Dir: set, Manifest: m})
	}
	return out
}

// removeUnprepared removes the set directories of the store that have no
// manifest: a launch killed (SIGKILL) while it prepared its set, before
// the manifest was written, left its copies there and nothing else (its
// mount points come after the copies and a manifest naming them; see
// [Prepare]), and every review would report the set as unreadable. The
// sweeps of the whole store ('aisan review', and 'kill' or 'watch' once
// they end a box) run it. A preparation holds the store's lock from the
// set's first directory to its manifest, so under the lock a set without
// one is never a preparation under way.
func removeUnprepared(store string) {
	unlock, err := lockStore(store)
	if err != nil {
		return
	}
	defer unlock()
	dirs, _ := setDirs(store, "")
	for _, dir := range dirs {
		if _, err := os.Lstat(filepath.Join(dir, manifestName)); errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(dir)
		}
	}
}

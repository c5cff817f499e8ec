package held

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The open index lists the sets whose boxes may still run, by
// repository, so that a box's end finds the others in its repository
// without reading every set's manifest: the store keeps every set until
// it is reviewed, and reading them all cost each strict launch a
// millisecond per few dozen sets.
//
//	$AISAN_HOME/held/.open/KEY/SLOT+ID    an empty file per open set
//
// KEY is the first 16 hex digits of the SHA-256 of the repository's
// path; SLOT+ID names the set ($AISAN_HOME/held/SLOT/ID: a slot name has
// no '+' and never starts with '.', so neither the index nor its entries
// can be taken for a slot's sets). Entries are made and removed under
// the store's lock. An entry is a hint, never trusted alone: the set's
// manifest must still say open and name the same repository, and an
// entry that does not is removed when it is found. A store without an
// index (an older aisan's) gets one at its next launch, listing the sets
// it finds open then.
const openDir = ".open"

// openEntry is set's entry in the open index.
func openEntry(set, repo string) string {
	return filepath.Join(indexDir(filepath.Dir(filepath.Dir(set)), repo), filepath.Base(filepath.Dir(set))+"+"+filepath.Base(set))
}

// indexDir is the open index's directory for repo's sets in store.
func indexDir(store, repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(store, openDir, hex.EncodeToString(sum[:8]))
}

// markOpen adds set to the open index; the caller holds the store's lock.
// The first one made in a store also lists the sets an aisan from before
// the index left open: their boxes may still run.
func markOpen(set, repo string) error {
	e := openEntry(set, repo)
	index := filepath.Dir(filepath.Dir(e))
	if _, err := os.Lstat(index); errors.Is(err, fs.ErrNotExist) {
		if err := indexOpenSets(index); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(e), 0o700); err != nil {
		return fmt.Errorf("listing %s as open: %w", set, err)
	}
	f, err := os.OpenFile(e, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("listing %s as open: %w", set, err)
	}
	return f.Close()
}

// unmarkOpen removes set from the open index; the caller holds the
// store's lock.
func unmarkOpen(set, repo string) error {
	e := openEntry(set, repo)
	if err := os.Remove(e); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s from the open sets: %w", set, err)
	}
	os.Remove(filepath.Dir(e)) // only when it is empty
	return nil
}

// openIn returns the open sets of repo's other boxes (all but set) and
// their manifests, in the index's order; the caller holds the store's
// lock. A stale entry is dropped on the way.
func openIn(set, repo string) ([]string, []Manifest) {
	var sets []string
	var ms []Manifest
	for o, entry := range indexed(filepath.Dir(openEntry(set, repo))) {
		if o == set {
			continue
		}
		m, err := ReadManifest(o)
		if err != nil || m.State != Open || m.Repo != repo {
			os.Remove(entry)
			continue
		}
		sets = append(sets, o)
		ms = append(ms, m)
	}
	return sets, ms
}

// indexed yields the sets an index directory of the store names, each
// with its entry.
func indexed(dir string) iter.Seq2[string, string] {
	return func(yield func(set, entry string) bool) {
		store := filepath.Dir(filepath.Dir(dir))
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			slot, id, ok := strings.Cut(e.Name(), "+")
			if !ok || !e.Type().IsRegular() {
				continue
			}
			if !yield(filepath.Join(store, slot, id), filepath.Join(dir, e.Name())) {
				return
			}
		}
	}
}

// indexOpenSets makes the open index of a store that has none yet, with
// an entry for each set its manifest says is open.
func indexOpenSets(index string) error {
	store := filepath.Dir(index)
	sets, _ := Manifests(filepath.Dir(store), "")
	if err := os.Mkdir(index, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the open sets' index: %w", err)
	}
	for _, o := range sets {
		if o.State == Open {
			if err := markOpen(o.Dir, o.Repo); err != nil {
				return err
			}
		}
	}
	return nil
}

package held

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// openEntries lists the open index of repo's sets under home.
func openEntries(t testing.TB, home, repo string) []string {
	t.Helper()
	dir := indexDir(Dir(home), repo)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestOpenIndex: a set is listed as open from Prepare to its end, and
// only under its own repository.
func TestOpenIndex(t *testing.T) {
	repo, set := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
	want := "repo-1-claude+" + filepath.Base(set)
	if got := openEntries(t, home, repo); len(got) != 1 || got[0] != want {
		t.Fatalf("open index after Prepare: %q, want [%q]", got, want)
	}
	if got := openEntries(t, home, repo+"-other"); len(got) != 0 {
		t.Fatalf("another repository's index lists %q", got)
	}
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	if got := openEntries(t, home, repo); len(got) != 0 {
		t.Fatalf("open index after the end: %q", got)
	}
	if _, err := os.Stat(filepath.Join(Dir(home), openDir)); err != nil {
		t.Fatalf("the index's directory: %v", err)
	}
	if sets, problems := Manifests(home, ""); len(problems) != 0 || len(sets) != 0 {
		t.Fatalf("the index is taken for a slot: %+v %v", sets, problems)
	}
}

// TestStaleOpenEntryReceivesNothing: an entry whose set was discarded,
// or whose manifest names another repository, is no box to hand the
// mount points to; the last box removes them and the entry goes.
func TestStaleOpenEntryReceivesNothing(t *testing.T) {
	for _, how := range []string{"discarded", "other repository", "held"} {
		t.Run(how, func(t *testing.T) {
			repo, first := fixture(t)
			home := filepath.Dir(filepath.Dir(filepath.Dir(first)))
			second := NewSetDir(home, "repo-2-claude", time.Now())
			if err := Prepare(second, Manifest{Slot: "repo-2-claude", Repo: repo, Items: []protect.Item{
				{Path: filepath.Join(repo, ".claude"), Dir: true, How: protect.Copy},
			}}); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "discarded":
				if err := Discard(second); err != nil {
					t.Fatal(err)
				}
			case "other repository":
				m, _ := ReadManifest(second)
				m.Repo = repo + "-other"
				if err := writeManifest(second, m); err != nil {
					t.Fatal(err)
				}
			case "held":
				m, _ := ReadManifest(second)
				m.State = Held
				if err := writeManifest(second, m); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := End(first); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{".envrc", "deep"} {
				if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s handed to a set whose box is gone: %v", p, err)
				}
			}
			if got := openEntries(t, home, repo); len(got) != 0 {
				t.Errorf("stale entries left: %q", got)
			}
		})
	}
}

// TestEndingSetReceivesNothing: once a box's end has begun it is out of
// the index, so a second box ending after it removes what it made
// instead of handing it to a set whose collection would write over the
// hand-over.
func TestEndingSetReceivesNothing(t *testing.T) {
	repo, first := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(first)))
	second := NewSetDir(home, "repo-2-claude", time.Now())
	if err := Prepare(second, Manifest{Slot: "repo-2-claude", Repo: repo, Items: []protect.Item{
		{Path: filepath.Join(repo, ".mise.toml"), How: protect.Create},
	}}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(first)
	if err != nil {
		t.Fatal(err)
	}
	// The first box's end, up to its hand-over: nobody else is open
	// but the second, which takes the first's mount points.
	if err := handOverOrUndo(first, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Created) != 0 {
		t.Fatalf("the first box kept its mount points: %+v", m.Created)
	}
	if got := openEntries(t, home, repo); len(got) != 1 || got[0] != "repo-2-claude+"+filepath.Base(second) {
		t.Fatalf("open index during the first box's end: %q", got)
	}
	if _, err := End(second); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".envrc", "deep", ".mise.toml"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after both ends: %v", p, err)
		}
	}
}

// BenchmarkEndBesideManySlots ends a box's set in a store that holds
// two hundred other slots' sets awaiting review, of other repositories:
// the end reads none of them.
func BenchmarkEndBesideManySlots(b *testing.B) {
	d, _ := filepath.EvalSymlinks(b.TempDir())
	repo, home := filepath.Join(d, "repo"), filepath.Join(d, "home")
	os.MkdirAll(repo, 0o755)
	for i := range 200 {
		other := filepath.Join(d, fmt.Sprintf("other%03d", i))
		os.MkdirAll(other, 0o755)
		set := NewSetDir(home, fmt.Sprintf("other%03d-1-claude", i), time.Now())
		if err := Prepare(set, Manifest{Slot: "o", Repo: other, Items: []protect.Item{{Path: filepath.Join(other, ".envrc"), How: protect.Create}}}); err != nil {
			b.Fatal(err)
		}
		m, _ := ReadManifest(set)
		m.State = Held
		if err := writeManifest(set, m); err != nil {
			b.Fatal(err)
		}
	}
	items := []protect.Item{{Path: filepath.Join(repo, ".envrc"), How: protect.Create}}
	for b.Loop() {
		b.StopTimer()
		set := NewSetDir(home, "repo-1-claude", time.Now())
		if err := Prepare(set, Manifest{Slot: "repo-1-claude", Repo: repo, Items: items}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := End(set); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenSetsFromBeforeTheIndex: a set an older aisan left open (no
// index in the store) is listed when the index is first made, so a box
// ending beside it still leaves it the mount points.
func TestOpenSetsFromBeforeTheIndex(t *testing.T) {
	repo, first := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(first)))
	if err := os.RemoveAll(filepath.Join(Dir(home), openDir)); err != nil {
		t.Fatal(err)
	}
	// The second launch finds what the first made (Known, as a real
	// launch lists it), so its end's sweep takes none of it.
	second := NewSetDir(home, "repo-2-claude", time.Now())
	known := []string{filepath.Join(repo, ".claude"), filepath.Join(repo, ".envrc")}
	if err := Prepare(second, Manifest{Slot: "repo-2-claude", Repo: repo, Known: known, Items: []protect.Item{
		{Path: filepath.Join(repo, ".mise.toml"), How: protect.Create},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := openEntries(t, home, repo); len(got) != 2 {
		t.Fatalf("the new index lists %q, want both open sets", got)
	}
	if _, err := End(second); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".envrc", ".mise.toml"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Errorf("the second box's end removed %s, which the first box stands on: %v", p, err)
		}
	}
	if _, err := End(first); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".envrc", ".mise.toml", "deep"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after both ends: %v", p, err)
		}
	}
}

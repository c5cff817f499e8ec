package held

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestHandOverCutShort: a box's end killed just after it handed its
// mount points to another open set leaves its own set open, in the
// index, still naming them. Whichever of the two sets is collected next,
// the mount points change hands without being doubled, and go with the
// last one.
func TestHandOverCutShort(t *testing.T) {
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
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
			m2, err := ReadManifest(second)
			if err != nil {
				t.Fatal(err)
			}
			made := len(m.Created) + len(m2.Created)
			// The first box's end, up to its hand-over, then killed.
			if err := handOver(&m, []string{second}, []Manifest{m2}); err != nil {
				t.Fatal(err)
			}
			if got := openEntries(t, home, repo); len(got) != 2 {
				t.Fatalf("open index after a cut-short end: %q", got)
			}
			sets := [2]string{first, second}
			if _, err := End(sets[order[0]]); err != nil {
				t.Fatal(err)
			}
			rest, err := ReadManifest(sets[order[1]])
			if err != nil {
				t.Fatal(err)
			}
			seen := map[Created]bool{}
			for _, c := range rest.Created {
				seen[c] = true
			}
			if len(rest.Created) != made || len(seen) != made {
				t.Fatalf("the set left open names %d mount points (%d distinct), want the %d made: %+v", len(rest.Created), len(seen), made, rest.Created)
			}
			for _, p := range []string{".envrc", "deep/er/hooks", ".mise.toml"} {
				if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
					t.Errorf("%s went while a set was open: %v", p, err)
				}
			}
			if _, err := End(sets[order[1]]); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{".envrc", "deep", ".mise.toml"} {
				if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s left after both ends: %v", p, err)
				}
			}
			if got := openEntries(t, home, repo); len(got) != 0 {
				t.Errorf("open index after both ends: %q", got)
			}
		})
	}
}

// TestOtherBoxMountPoint: a box's end leaves alone a mount point another
// box of its repository made while it ran (that box's end removes it),
// unless this box wrote to it: then it is what the box planted, and goes
// to its review.
func TestOtherBoxMountPoint(t *testing.T) {
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprint("written=", written), func(t *testing.T) {
			repo, first := fixture(t)
			home := filepath.Dir(filepath.Dir(filepath.Dir(first)))
			second := NewSetDir(home, "repo-2-claude", time.Now())
			mise := filepath.Join(repo, ".mise.toml")
			if err := Prepare(second, Manifest{Slot: "repo-2-claude", Repo: repo, Items: []protect.Item{
				{Path: mise, How: protect.Create},
			}}); err != nil {
				t.Fatal(err)
			}
			if written {
				// The first box, through the host's entry under the
				// second box's mount.
				os.WriteFile(mise, []byte("[tasks.x]\nrun = 'payload'\n"), 0o644)
			}
			if _, err := End(first); err != nil {
				t.Fatal(err)
			}
			m, err := ReadManifest(first) // gone when it held nothing
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			_, statErr := os.Lstat(mise)
			swept := slices.Contains(m.Swept, mise)
			if written != swept || written == (statErr == nil) {
				t.Errorf("the second box's mount point, written to: %v; swept by the first's end: %v; still there: %v", written, swept, statErr == nil)
			}
		})
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

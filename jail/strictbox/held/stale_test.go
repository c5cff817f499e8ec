package held

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestCollectStale: a set is collected only when its slot's launch is
// over, and a repository's sweep looks at that repository's sets alone.
func TestCollectStale(t *testing.T) {
	repo, set := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
	other := filepath.Join(filepath.Dir(repo), "other")
	os.MkdirAll(other, 0o755)
	otherSet := NewSetDir(home, "other-1-claude", time.Now())
	if err := Prepare(otherSet, Manifest{Slot: "other-1-claude", Repo: other, Items: []protect.Item{
		{Path: filepath.Join(other, ".envrc"), How: protect.Create},
	}}); err != nil {
		t.Fatal(err)
	}
	// What the box wrote through its mount point.
	os.WriteFile(Work(set, 1), []byte("echo box\n"), 0o644)
	running := func(string, time.Time) (time.Time, bool) { return time.Time{}, false }
	if got := CollectStale(home, "", running); len(got) != 0 {
		t.Fatalf("sets of running boxes collected: %+v", got)
	}
	for _, p := range []string{filepath.Join(repo, ".envrc"), filepath.Join(other, ".envrc")} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("a running box's mount point went: %v", err)
		}
	}
	var asked []string
	over := func(slot string, start time.Time) (time.Time, bool) {
		asked = append(asked, slot)
		return time.Now(), true
	}
	got := CollectStale(home, repo, over)
	if len(got) != 1 || got[0].Dir != set || got[0].Err != nil {
		t.Fatalf("CollectStale of %s: %+v", repo, got)
	}
	if len(asked) != 1 || asked[0] != "repo-1-claude" {
		t.Errorf("asked about %q, want only repo-1-claude", asked)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".envrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the ended box's mount point is still there: %v", err)
	}
	if m, err := ReadManifest(set); err != nil || m.State != Held {
		t.Errorf("the ended box's set is %q (%v), want held", m.State, err)
	}
	if _, err := os.Lstat(filepath.Join(other, ".envrc")); err != nil {
		t.Errorf("another repository's set was collected: %v", err)
	}
	if got := CollectStale(home, repo, over); len(got) != 0 {
		t.Errorf("a collected set was collected again: %+v", got)
	}
	if got := CollectStale(home, "", over); len(got) != 1 || got[0].Dir != otherSet {
		t.Errorf("CollectStale of every set: %+v", got)
	}
}

// TestCollectOnce: a box's own end and a stale sweep may reach one set
// together; one of them collects it, the other is told it was first.
func TestCollectOnce(t *testing.T) {
	for round := range 10 {
		repo, set := fixture(t)
		for _, d := range []string{"a", "b", "c", "d"} {
			os.MkdirAll(filepath.Join(repo, d, ".git"), 0o755)
		}
		os.WriteFile(Work(set, 1), []byte("echo box\n"), 0o644)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() { _, errs[i] = EndAt(set, time.Now()) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			var done *CollectedError
			switch {
			case err == nil:
				ok++
			case !errors.As(err, &done):
				t.Errorf("round %d: %v", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d collections of one set, want 1 (%v)", round, ok, errs)
		}
		m, err := ReadManifest(set)
		if err != nil || len(m.Swept) != 4 || len(m.Unchecked) != 0 {
			t.Fatalf("round %d: swept %q, unchecked %+v (%v)", round, m.Swept, m.Unchecked, err)
		}
	}
}

// TestCollectStaleAsksByLaunch: the question is asked of the launch that
// made the set, by its record's start: a set made a moment after its
// launch started, on a clock stepped back meanwhile, must not pass for
// a later launch's. A set from before the field asks by its own start.
func TestCollectStaleAsksByLaunch(t *testing.T) {
	launch := time.Now().Add(-time.Minute).Round(0)
	for _, c := range []struct {
		name   string
		launch time.Time
	}{{"this launch's start", launch}, {"an older aisan's set", time.Time{}}} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := filepath.EvalSymlinks(t.TempDir())
			repo, home := filepath.Join(d, "repo"), filepath.Join(d, "home")
			os.MkdirAll(repo, 0o755)
			start := launch.Add(-time.Second) // the clock stepped back
			set := NewSetDir(home, "repo-1-claude", start)
			if err := Prepare(set, Manifest{Slot: "repo-1-claude", Repo: repo, Start: start, Launch: c.launch, Items: []protect.Item{
				{Path: filepath.Join(repo, ".envrc"), How: protect.Create},
			}}); err != nil {
				t.Fatal(err)
			}
			var asked time.Time
			CollectStale(home, repo, func(_ string, since time.Time) (time.Time, bool) {
				asked = since
				return time.Time{}, false
			})
			want := c.launch
			if want.IsZero() {
				want = start
			}
			if !asked.Equal(want) {
				t.Errorf("asked about the launch of %v, want %v", asked, want)
			}
		})
	}
}

// TestStaleLines: a set that could not be collected is named with the
// reason, escaped (the box chose the names); a collected one says what
// it holds, as the box's own end would.
func TestStaleLines(t *testing.T) {
	failed := Stale{Set: Set{Dir: "/h/held/s/1"}, Err: errors.New("a\x1b[2Jb")}
	if l := failed.Lines(); len(l) != 1 || !strings.Contains(l[0], "/h/held/s/1") || strings.Contains(l[0], "\x1b") || !strings.Contains(l[0], "aisan review") {
		t.Errorf("failed collection: %q", l)
	}
	r := Result{Set: "/h/held/s/2", Files: []string{"/r/.envrc"}}
	done := Stale{Set: Set{Dir: "/h/held/s/2", Manifest: Manifest{Repo: "/r", Slot: "s"}}, Result: r}
	if got, want := done.Lines(), r.Lines("/r", "s"); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("collected set: %q, want %q", got, want)
	}
}

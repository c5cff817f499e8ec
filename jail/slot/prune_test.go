package slot

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestWorktreeRoot(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	linked := filepath.Join(dir, "linked")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b"), filepath.Join(linked, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A linked worktree has a .git file.
	os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	outside := filepath.Join(dir, "plain")
	os.Mkdir(outside, 0o755)
	for _, c := range []struct{ in, want string }{
		{repo, repo},
		{filepath.Join(repo, "a", "b"), repo},
		{filepath.Join(linked, "x"), linked},
		{outside, outside},
	} {
		if got := WorktreeRoot(c.in); got != c.want {
			t.Errorf("WorktreeRoot(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	a, _ := BaseName(filepath.Join(repo, "a", "b"), "claude")
	b, _ := BaseName(repo, "claude")
	if a != b {
		t.Errorf("a subdirectory's slot %s differs from its worktree's %s", a, b)
	}
}

var launchNameTests = []struct {
	name string
	ok   bool
	i    int
}{
	{"20260101T120000Z.log", true, 1},
	{"20260101T120000Z-2.log", true, 2},
	{"20260101T120000Z-10.log", true, 10},
	{"20260101T120000Z.log.1", false, 0},
	{"20260101T120000Z.log.win", false, 0},
	{"20260101T120000Z-1.log", false, 0},
	{"20260101T120000Z-02.log", false, 0},
	{"2026-01-01.log", false, 0},
	{"x.log", false, 0},
	{".log", false, 0},
}

func TestParseLaunchName(t *testing.T) {
	for _, c := range launchNameTests {
		_, i, ok := parseLaunchName(c.name)
		if ok != c.ok || i != c.i {
			t.Errorf("parseLaunchName(%q) = %d, %v; want %d, %v", c.name, i, ok, c.i, c.ok)
		}
	}
}

func FuzzParseLaunchName(f *testing.F) {
	for _, c := range launchNameTests {
		f.Add(c.name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		start, i, ok := parseLaunchName(name)
		if !ok {
			return
		}
		// What parses is exactly what newTranscriptPath makes.
		if back := candidate(start.Format(stampLayout), i) + ".log"; back != name {
			t.Fatalf("%q parses to %v, %d, which names %q", name, start, i, back)
		}
	})
}

// endedSlot records an ended launch of name that ended at end, with the
// given number of transcripts.
func endedSlot(t testing.TB, reg *Registry, name string, end time.Time, launches int) {
	t.Helper()
	dir := filepath.Join(reg.home, "transcripts", name)
	os.MkdirAll(dir, 0o700)
	var last string
	for i := range launches {
		last = filepath.Join(dir, end.Add(time.Duration(i-launches)*time.Minute).UTC().Format(stampLayout)+".log")
		os.WriteFile(last, []byte("launch "+strconv.Itoa(i)), 0o600)
		os.WriteFile(last+".win", []byte("0 80 24\n"), 0o600)
	}
	status := 0
	rec := Record{Slot: name, Kind: "run", Worktree: "/w", WrapperPID: 1, Start: end.Add(-time.Hour), End: end, ExitStatus: &status, Transcript: last}
	os.MkdirAll(reg.slotsDir(), 0o700)
	if err := writeRecord(reg.recordPath(name), rec); err != nil {
		t.Fatal(err)
	}
}

func TestPrune(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	now := time.Now()
	endedSlot(t, reg, "old-run", now.Add(-40*24*time.Hour), 1)
	endedSlot(t, reg, "busy-run", now.Add(-time.Hour), 5)
	endedSlot(t, reg, "a-run", now.Add(-2*time.Hour), 1)
	endedSlot(t, reg, "b-run", now.Add(-3*time.Hour), 1)
	live, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	// A live slot's old record and transcripts are never touched, however
	// old they look.
	liveDir := filepath.Join(home, "transcripts", live.Name())
	os.MkdirAll(liveDir, 0o700)
	os.WriteFile(filepath.Join(liveDir, "20200101T000000Z.log"), nil, 0o600)

	names, errs := reg.Prune(PrunePolicy{MaxAge: 30 * 24 * time.Hour, MaxSlots: 2, MaxLaunches: 3}, now)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(names) != 1 || names[0] != live.Name() {
		t.Errorf("live slots %v, want [%s]", names, live.Name())
	}
	got := listMap(t, reg)
	for name, want := range map[string]bool{"old-run": false, "b-run": false, "a-run": true, "busy-run": true, live.Name(): true} {
		if _, ok := got[name]; ok != want {
			t.Errorf("slot %s kept: %v, want %v", name, ok, want)
		}
		_, err := os.Stat(filepath.Join(home, "transcripts", name))
		if (err == nil) != want {
			t.Errorf("transcripts of %s kept: %v, want %v", name, err == nil, want)
		}
	}
	ls, _ := reg.Launches("busy-run")
	if len(ls) != 3 || ls[2].Path != got["busy-run"].Transcript {
		t.Errorf("busy-run keeps %+v, want its last 3 launches", ls)
	}
	if _, err := os.Stat(filepath.Join(liveDir, "20200101T000000Z.log")); err != nil {
		t.Errorf("a live slot's transcript was pruned: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(home, "transcripts", "busy-run", "*.win")); len(m) != 3 {
		t.Errorf("busy-run keeps size records %v, want those of its 3 launches", m)
	}
}

// BenchmarkPruneNothing is what every launch pays on a state dir of 1,000
// ended slots with nothing to remove.
func BenchmarkPruneNothing(b *testing.B) {
	home := b.TempDir()
	reg, err := Open(home)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for i := range 1000 {
		endedSlot(b, reg, "s"+strconv.Itoa(i)+"-run", now.Add(-time.Hour), 2)
	}
	for b.Loop() {
		if _, errs := reg.Prune(DefaultPrune, now); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}

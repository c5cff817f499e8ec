package held

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// A re-run of this test binary with one of these set does that one thing
// and exits, for a test to kill it part-way: collectEnv names the set it
// collects, prepareEnv the set it prepares, from the manifest in the
// file manifestEnv names.
const (
	collectEnv  = "AISAN_TEST_HELD_COLLECT"
	prepareEnv  = "AISAN_TEST_HELD_PREPARE"
	manifestEnv = "AISAN_TEST_HELD_MANIFEST"
)

func TestMain(m *testing.M) {
	var err error
	switch {
	case os.Getenv(collectEnv) != "":
		_, err = End(os.Getenv(collectEnv))
	case os.Getenv(prepareEnv) != "":
		var b []byte
		var man Manifest
		if b, err = os.ReadFile(os.Getenv(manifestEnv)); err == nil {
			if err = json.Unmarshal(b, &man); err == nil {
				err = Prepare(os.Getenv(prepareEnv), man)
			}
		}
	default:
		os.Exit(m.Run())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// bigCopy is a repository whose .vscode holds n files, under a new
// directory d, for a preparation that takes a while to copy.
func bigCopy(t *testing.T, n int) (d, repo, vscode string) {
	t.Helper()
	d, _ = filepath.EvalSymlinks(t.TempDir())
	repo = filepath.Join(d, "repo")
	vscode = filepath.Join(repo, ".vscode")
	if err := os.MkdirAll(vscode, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(vscode, fmt.Sprintf("f%04d.json", i)), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d, repo, vscode
}

// killPrepare prepares set for m in a re-run of this test binary and
// kills it (SIGKILL) as soon as ready says so; it fails the test when
// the preparation ends first.
func killPrepare(t *testing.T, d, set string, m Manifest, ready func() bool) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(d, "manifest.json")
	if err := os.WriteFile(manifest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), prepareEnv+"="+set, manifestEnv+"="+manifest)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); !ready(); {
		select {
		case err := <-done:
			t.Fatalf("the preparation ended before its kill (%v): give it more to do", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the preparation never reached the point of its kill")
		}
	}
	cmd.Process.Kill()
	<-done
}

// TestPrepareKilledWhileCopying: a launch killed (SIGKILL) while its
// held set copies a protected tree leaves no mount point in the
// repository. Nothing names a mount point until the manifest is
// written, so none may exist before the copies are done: .envrc sorts
// before .vscode, and an empty .envrc left behind would be a file made
// in the user's repository that nothing removes.
func TestPrepareKilledWhileCopying(t *testing.T) {
	d, repo, vscode := bigCopy(t, 1500)
	set := NewSetDir(filepath.Join(d, "home"), "repo-1-claude", time.Now())
	// Killed once the copy of .vscode (item 1) is under way.
	copying := filepath.Join(set, "base", "1")
	killPrepare(t, d, set, Manifest{Slot: "repo-1-claude", Repo: repo, Start: time.Now(), Items: []protect.Item{
		{Path: filepath.Join(repo, ".envrc"), How: protect.Create},
		{Path: vscode, Dir: true, How: protect.Copy},
		{Path: filepath.Join(repo, ".zed"), Dir: true, How: protect.Create},
	}}, func() bool {
		ents, _ := os.ReadDir(copying)
		return len(ents) >= 100
	})
	if _, err := os.Lstat(filepath.Join(set, "manifest.json")); err == nil {
		t.Fatal("the preparation finished before its kill; make the copy larger")
	}
	for _, p := range []string{".envrc", ".zed"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a launch killed while copying left the mount point %s in the repository (%v)", p, err)
		}
	}
	// Its copies stay in the store until a sweep of every set ('aisan
	// kill', 'watch', 'review') removes them; until then every review
	// would call the set unreadable.
	home := filepath.Join(d, "home")
	if _, problems := Manifests(home, ""); len(problems) != 1 {
		t.Fatalf("the killed preparation's set: %d problems, want 1 (%v)", len(problems), problems)
	}
	CollectStale(home, "", func(string, time.Time) (time.Time, bool) { return time.Time{}, false })
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed preparation's set is still in the store (%v)", err)
	}
	if _, problems := Manifests(home, ""); len(problems) != 0 {
		t.Errorf("after the sweep: %v", problems)
	}
}

// TestCollectCutShort: a collection killed (SIGKILL) part-way through its
// moves leaves its set open, in the open index; the next collection
// finishes it. Every git dir the box planted is then out of the
// repository and named in the set once, with what it held, and nothing
// the set holds was replaced or left unnamed.
func TestCollectCutShort(t *testing.T) {
	const planted = 300
	cut := 0
	for round := 0; round < 30 && cut < 4; round++ {
		repo, set := fixture(t)
		home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
		var want []string
		for i := range planted {
			name := fmt.Sprintf("d%03d", i)
			git := filepath.Join(repo, name, ".git")
			os.MkdirAll(git, 0o755)
			os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tfsmonitor = payload-"+name+"\n"), 0o644)
			want = append(want, git)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), collectEnv+"="+set)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Kill once some moves are made: a few more each round.
		after := 1 + 7*round
	wait:
		for {
			select {
			case <-done:
				done <- nil
				break wait
			default:
			}
			if ents, _ := os.ReadDir(filepath.Join(set, "swept")); len(ents) >= after {
				cmd.Process.Kill()
				break
			}
		}
		<-done
		m, err := ReadManifest(set)
		if err != nil {
			t.Fatal(err)
		}
		if m.State != Open {
			continue // it finished first
		}
		cut++
		if got := openEntries(t, home, repo); len(got) != 1 {
			t.Fatalf("round %d: a cut-short set is not in the open index: %q", round, got)
		}
		if _, err := End(set); err != nil {
			t.Fatalf("round %d: collecting again: %v", round, err)
		}
		m, err = ReadManifest(set)
		if err != nil {
			t.Fatal(err)
		}
		if m.State != Held {
			t.Fatalf("round %d: the set is %s, want held", round, m.State)
		}
		if len(m.Unchecked) != 0 {
			t.Fatalf("round %d: %d paths unchecked, the first %+v", round, len(m.Unchecked), m.Unchecked[0])
		}
		if got := slices.Sorted(slices.Values(m.Swept)); !slices.Equal(got, want) {
			t.Fatalf("round %d (cut after %d moves): the set names %d swept entries, want the %d planted git dirs once each:\n%q", round, after, len(got), len(want), got)
		}
		for n, p := range m.Swept {
			b, err := os.ReadFile(filepath.Join(swept(set, n), "config"))
			if err != nil || !strings.Contains(string(b), "payload-"+filepath.Base(filepath.Dir(p))+"\n") {
				t.Fatalf("round %d: swept/%d, named %s, holds %q (%v)", round, n, p, b, err)
			}
			if _, err := os.Lstat(p); err == nil {
				t.Fatalf("round %d: %s is still in the repository", round, p)
			}
		}
		ents, _ := os.ReadDir(filepath.Join(set, "swept"))
		if unnamed := len(ents) - 2*len(m.Swept); unnamed != 0 {
			t.Fatalf("round %d: swept/ holds %d entries the manifest does not name", round, unnamed)
		}
		if got := openEntries(t, home, repo); len(got) != 0 {
			t.Fatalf("round %d: the collected set is still in the open index: %q", round, got)
		}
	}
	if cut == 0 {
		t.Fatal("no collection was cut short: every one finished before its kill")
	}
	t.Logf("%d collections cut short", cut)
}

// TestPrepareKilledMakingMountPoints: a launch killed (SIGKILL) while it
// makes its mount points leaves an open set that names them, and the
// next sweep of the store removes every one, the parents it made
// included; nothing the launch made stays in the repository.
func TestPrepareKilledMakingMountPoints(t *testing.T) {
	// Killed once the first, a directory with its parents, or the 121st
	// mount point exists.
	for _, at := range []string{"m000", "m050/a/b", "m120"} {
		t.Run(strings.ReplaceAll(at, "/", "_"), func(t *testing.T) { prepareKilledAt(t, at) })
	}
}

func prepareKilledAt(t *testing.T, at string) {
	d, repo, vscode := bigCopy(t, 10)
	items := []protect.Item{{Path: vscode, Dir: true, How: protect.Copy}}
	for i := range 1000 {
		p := filepath.Join(repo, fmt.Sprintf("m%03d", i))
		if i%50 == 0 {
			// With parents to make, and a directory.
			items = append(items, protect.Item{Path: filepath.Join(p, "a", "b"), Dir: true, How: protect.Create})
			continue
		}
		items = append(items, protect.Item{Path: p, How: protect.Create})
	}
	home := filepath.Join(d, "home")
	set := NewSetDir(home, "repo-1-claude", time.Now())
	first := filepath.Join(repo, at)
	killPrepare(t, d, set, Manifest{Slot: "repo-1-claude", Repo: repo, Start: time.Now(), Items: items}, func() bool {
		_, err := os.Lstat(first)
		return err == nil
	})
	if _, err := os.Lstat(filepath.Join(repo, "m999")); err == nil {
		t.Fatal("the preparation made every mount point before its kill; make more")
	}
	CollectStale(home, "", func(string, time.Time) (time.Time, bool) { return time.Time{}, true })
	ents, _ := os.ReadDir(repo)
	var left []string
	for _, e := range ents {
		if e.Name() != ".vscode" {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 {
		t.Errorf("after the sweep the repository still holds %d entries the killed launch made: %q", len(left), left[:min(len(left), 5)])
	}
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed launch's set is still in the store (%v)", err)
	}
	if got := openEntries(t, home, repo); len(got) != 0 {
		t.Errorf("open index after the sweep: %q", got)
	}
}

// TestUnpreparedOnlyUnderLock: the sweep of sets without a manifest never
// takes a preparation under way for one (it holds the store's lock until
// its manifest is written).
func TestUnpreparedOnlyUnderLock(t *testing.T) {
	d, repo, vscode := bigCopy(t, 500)
	home := filepath.Join(d, "home")
	set := NewSetDir(home, "repo-1-claude", time.Now())
	done := make(chan error, 1)
	go func() {
		done <- Prepare(set, Manifest{Slot: "repo-1-claude", Repo: repo, Start: time.Now(), Items: []protect.Item{
			{Path: vscode, Dir: true, How: protect.Copy},
		}})
	}()
	for sweeps := 0; ; sweeps++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the preparation failed beside %d sweeps: %v", sweeps, err)
			}
			if _, err := ReadManifest(set); err != nil {
				t.Fatalf("after %d sweeps: %v", sweeps, err)
			}
			if ents, _ := os.ReadDir(Work(set, 0)); len(ents) != 500 {
				t.Fatalf("after %d sweeps the box's copy holds %d files, want 500", sweeps, len(ents))
			}
			return
		default:
			removeUnprepared(Dir(home))
		}
	}
}

// TestPlannedIsMade: every mount point the manifest names before it is
// made, parents included, is made, in that order, and identified once
// made (a planned entry is taken on its kind alone).
func TestPlannedIsMade(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(d, "repo")
	os.MkdirAll(filepath.Join(repo, "x"), 0o755)
	items := []protect.Item{
		{Path: filepath.Join(repo, ".envrc"), How: protect.Create},
		{Path: filepath.Join(repo, "deep/er/hooks"), Dir: true, How: protect.Create},
		{Path: filepath.Join(repo, "deep/er/other"), How: protect.Create},
		{Path: filepath.Join(repo, "x/y/.mcp.json"), How: protect.Create},
	}
	planned := plannedMountPoints(items)
	set := NewSetDir(filepath.Join(d, "home"), "repo-1-claude", time.Now())
	if err := Prepare(set, Manifest{Slot: "repo-1-claude", Repo: repo, Items: items}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(set)
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		path string
		dir  bool
	}
	var want, got []point
	for _, c := range planned {
		want = append(want, point{c.Path, c.Dir})
	}
	for _, c := range m.Created {
		if c.planned() {
			t.Errorf("%s is still only planned after Prepare", c.Path)
		}
		got = append(got, point{c.Path, c.Dir})
	}
	if !slices.Equal(got, want) {
		t.Errorf("made %v, planned %v", got, want)
	}
}

package held

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestSweepThroughBoxLink: the end sweeps names in directories the
// launch saw (node_modules for the packages held code loads, a
// directory a tool looks for its config in). A box that makes such a
// directory a link to the user's other work leaves that work where it
// is: the link is what is swept. A file the box creates by a looked-for
// name in a real directory is swept.
func TestSweepThroughBoxLink(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(d, "repo")
	other := filepath.Join(d, "other")
	write := func(p string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(other, "node_modules/dep/index.js"))
	write(filepath.Join(other, "cfg/.eslintrc.json"))
	os.MkdirAll(filepath.Join(repo, "lint"), 0o755)
	// The kernel dates files from a clock up to a tick behind time.Now.
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	set := NewSetDir(filepath.Join(d, "home"), "repo-1-claude", start)
	m := Manifest{Slot: "repo-1-claude", Repo: repo, Start: start, Modules: protect.ModuleDirs([]protect.ModuleDir{
		{Path: filepath.Join(repo, "node_modules"), Names: []string{"dep"}, Node: true},
		{Path: filepath.Join(repo, "cfg"), Names: []string{".eslintrc.json"}, Files: true},
		{Path: filepath.Join(repo, "lint"), Names: []string{"eslint.config.js"}, Files: true},
	})}
	if err := Prepare(set, m); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	// The box.
	os.Symlink(filepath.Join(other, "node_modules"), filepath.Join(repo, "node_modules"))
	os.Symlink(filepath.Join(other, "cfg"), filepath.Join(repo, "cfg"))
	write(filepath.Join(repo, "lint/eslint.config.js"))

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	for _, p := range []string{"node_modules/dep/index.js", "cfg/.eslintrc.json"} {
		if _, err := os.Lstat(filepath.Join(other, p)); err != nil {
			t.Errorf("the sweep moved the user's %s through the box's link: %v", p, err)
		}
	}
	want := []string{filepath.Join(repo, "cfg"), filepath.Join(repo, "lint/eslint.config.js"), filepath.Join(repo, "node_modules")}
	got := slices.Sorted(slices.Values(r.Files))
	if !slices.Equal(got, want) {
		t.Errorf("held %q, want %q", got, want)
	}
	for _, p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still in the repository", p)
		}
	}
}

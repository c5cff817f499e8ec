package strictbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGoLocalDirs: the local directories a go.mod or go.work names are
// its path replacements (single and in blocks, quoted, with versions) and
// a go.work's use entries; a replacement by a module version is not one.
func TestGoLocalDirs(t *testing.T) {
	mod := `module example.com/app // the app

go 1.21

require example.com/strutil v0.0.0

replace example.com/strutil => ../strutil
replace example.com/pinned v1.2.0 => example.com/fork v1.2.1
replace (
	example.com/a => "./third_party/a"
	example.com/b v1.0.0 => /opt/src/b // absolute
	example.com/c => example.com/c2 v0.1.0
)
`
	got := goLocalDirs("/w/app/go.mod", []byte(mod))
	want := []goLocal{
		{File: "go.mod", What: "replaces example.com/strutil with ../strutil", Dir: "/w/strutil"},
		{File: "go.mod", What: "replaces example.com/a with ./third_party/a", Dir: "/w/app/third_party/a"},
		{File: "go.mod", What: "replaces example.com/b with /opt/src/b", Dir: "/opt/src/b"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("go.mod (-want +got):\n%s", d)
	}
	work := "go 1.22\n\nuse .\nuse (\n\t./tools\n\t../lib\n)\nreplace example.com/x => ../x\n"
	got = goLocalDirs("/w/app/go.work", []byte(work))
	want = []goLocal{
		{File: "go.work", What: "uses .", Dir: "/w/app"},
		{File: "go.work", What: "uses ./tools", Dir: "/w/app/tools"},
		{File: "go.work", What: "uses ../lib", Dir: "/w/lib"},
		{File: "go.work", What: "replaces example.com/x with ../x", Dir: "/w/x"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("go.work (-want +got):\n%s", d)
	}
}

// TestGoLocalNote: a replacement outside what the box shows is named with
// the bind spec line that brings it, from a subdirectory of the module
// too; one inside the repository, one the host lacks, one the box shows,
// and a vendoring module's are not.
func TestGoLocalNote(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "app")
	for _, d := range []string{"app/internal", "app/third_party/a", "strutil", "shown"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/app\n\nreplace example.com/strutil => ../strutil\nreplace example.com/a => ./third_party/a\nreplace example.com/gone => ../gone\nreplace example.com/shown => ../shown\n"), 0o644)
	shows := func(p string) bool { return within(p, repo) || p == filepath.Join(root, "shown") }
	want := "go.mod replaces example.com/strutil with ../strutil, which the box does not show, so go cannot build there; a bind spec with ro = [\"" + filepath.Join(root, "strutil") + "\"] (--binds FILE) brings it read-only"
	for _, cwd := range []string{repo, filepath.Join(repo, "internal")} {
		if got := goLocalNote(cwd, repo, shows); got != want {
			t.Errorf("in %s:\n got %q\nwant %q", cwd, got, want)
		}
	}
	os.MkdirAll(filepath.Join(repo, "vendor"), 0o755)
	os.WriteFile(filepath.Join(repo, "vendor", "modules.txt"), nil, 0o644)
	if got := goLocalNote(repo, repo, shows); got != "" {
		t.Errorf("a vendoring module: %q", got)
	}
	if got := goLocalNote(root, root, func(string) bool { return true }); got != "" || strings.Contains(got, "go.mod") {
		t.Errorf("no go.mod: %q", got)
	}
}

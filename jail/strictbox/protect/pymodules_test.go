package protect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPyModule(t *testing.T) {
	for _, tt := range []struct {
		name      string
		dir, init bool
		mod       string
		ok        bool
	}{
		{"json.py", false, false, "json", true},
		{"gettext.pyc", false, false, "gettext", true},
		{"_speedups.cpython-311-x86_64-linux-gnu.so", false, false, "_speedups", true},
		{"zlib.abi3.so", false, false, "zlib", true},
		{"re", true, true, "re", true},
		{"docs", true, false, "docs", false},
		{"my-tool.py", false, false, "my-tool", false},
		{"README.md", false, false, "", false},
		{"notes.py.txt", false, false, "", false},
	} {
		mod, ok := PyModule(tt.name, tt.dir, tt.init)
		if ok != tt.ok || ok && mod != tt.mod {
			t.Errorf("PyModule(%q, %v, %v) = %q, %v; want %q, %v", tt.name, tt.dir, tt.init, mod, ok, tt.mod, tt.ok)
		}
	}
}

// TestSweepModules: at the end, what Python may import from a module
// directory and was not there at launch is swept (a module, bytecode, an
// extension, a package, a link to one, a directory by a name imported,
// cached bytecode for a name imported); what was there at launch,
// edited or not, and what is no module, stay.
func TestSweepModules(t *testing.T) {
	d := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(d, p)), 0o755)
		if err := os.WriteFile(filepath.Join(d, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.py", "v1\n")
	write("helpers.py", "\n")
	write("README.md", "\n")
	write("lib/__init__.py", "\n")
	write("docs/index.md", "\n")
	write("__pycache__/main.cpython-311.pyc", "")
	ds := []ModuleDir{{Path: d, Names: []string{"helpers", "json", "opt"}}}
	start := time.Now()
	os.Symlink("main.py", filepath.Join(d, "lnk.py"))
	os.Symlink("main.py", filepath.Join(d, "stay.py"))
	launch := ModuleDirs(ds)
	if want := []string{"__pycache__/", "docs/", "helpers.py", "lib", "lnk.py", "main.py", "stay.py"}; !slices.Equal(launch[0].Entries, want) {
		t.Errorf("entries at launch %q, want %q", launch[0].Entries, want)
	}
	write("main.py", "v2\n")
	os.Remove(filepath.Join(d, "lnk.py"))
	os.Symlink("json.py", filepath.Join(d, "lnk.py"))
	write("docs/__init__.py", "\n")
	write("lib/extra.py", "\n")
	write("NEWS.md", "\n")
	write("json.py", "\n")
	write("gettext.pyc", "")
	write("_x.cpython-311-x86_64-linux-gnu.so", "")
	write("re/__init__.py", "\n")
	write("csv/__init__.cpython-311-x86_64-linux-gnu.so", "")
	write("opt/mod.py", "\n")
	write("plain/x.py", "\n")
	write("__pycache__/helpers.cpython-311.pyc", "")
	write("__pycache__/other.cpython-311.pyc", "")
	os.MkdirAll(filepath.Join(d, "elsewhere", "enum"), 0o755)
	write("elsewhere/enum/__init__.py", "\n")
	os.Symlink("elsewhere/enum", filepath.Join(d, "enum"))
	rel := sweptUnder(d, launch, start)
	want := []string{"_x.cpython-311-x86_64-linux-gnu.so", "csv", "docs/__init__.py", "enum", "lnk.py", "gettext.pyc", "json.py", "opt", "re", "__pycache__/helpers.cpython-311.pyc"}
	slices.Sort(want)
	slices.Sort(rel)
	if diff := cmp.Diff(want, rel); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
	if got := SweepModules(launch, nil, Span{Start: start, End: start.Add(-time.Hour)}); len(got) != 0 {
		t.Errorf("what changed after the end is the user's: %q", got)
	}
	if got := SweepModules(launch, []string{filepath.Join(d, "json.py")}, Span{Start: start, End: time.Now().Add(time.Second)}); slices.Contains(got, filepath.Join(d, "json.py")) {
		t.Errorf("a known path is swept: %q", got)
	}
}

// TestSweepSite: in a site-packages, what the box installs is its own;
// only what Python runs as it starts (a new .pth, sitecustomize,
// usercustomize) and a new module of a name the scripts import are
// swept.
func TestSweepSite(t *testing.T) {
	d := t.TempDir()
	write := writer(t, d)
	write("distutils-precedence.pth")
	write("requests/__init__.py")
	ds := []ModuleDir{{Path: d, Names: []string{"requests", "mypkg"}, Site: true}}
	start := time.Now()
	launch := ModuleDirs(ds)
	if want := []string{"distutils-precedence.pth", "requests"}; !slices.Equal(launch[0].Entries, want) {
		t.Errorf("entries at launch %q, want %q", launch[0].Entries, want)
	}
	write("evil.pth")
	write("sitecustomize.py")
	write("usercustomize/__init__.py")
	write("__pycache__/sitecustomize.cpython-311.pyc")
	write("mypkg.py")
	write("numpy/__init__.py")
	write("numpy-2.0.dist-info/METADATA")
	write("six.py")
	write("requests/extra.py")
	rel := sweptUnder(d, launch, start)
	want := []string{"__pycache__/sitecustomize.cpython-311.pyc", "evil.pth", "mypkg.py", "sitecustomize.py", "usercustomize"}
	slices.Sort(rel)
	if diff := cmp.Diff(want, rel); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
}

// TestSweepNode: a node_modules directory (not there at launch) is
// swept for what node's require would take for the names held code
// loads and the launch did not find: a package's directory, scoped or
// not, or a file with the suffixes require tries; not for other names.
func TestSweepNode(t *testing.T) {
	d := filepath.Join(t.TempDir(), "node_modules")
	write := writer(t, d)
	ds := []ModuleDir{{Path: d, Names: []string{"opt", "@s/gone", "native", "kept"}, Node: true}}
	start := time.Now()
	launch := ModuleDirs(ds)
	if len(launch[0].Entries) != 0 {
		t.Errorf("entries at launch %q, want none", launch[0].Entries)
	}
	write("opt/index.js")
	write("@s/gone/package.json")
	write("native.node")
	write("kept.json")
	write("other/index.js")
	write("@s/other/index.js")
	rel := sweptUnder(d, launch, start)
	slices.Sort(rel)
	if diff := cmp.Diff([]string{"@s/gone", "kept.json", "native.node", "opt"}, rel); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
	// What was there at launch is the box's to edit.
	write("kept.js")
	launch = ModuleDirs(ds)
	write("kept.js")
	if got := SweepModules(launch, nil, Span{Start: start, End: time.Now().Add(time.Second)}); slices.ContainsFunc(got, func(p string) bool { return filepath.Base(p) == "kept.js" }) {
		t.Errorf("swept what was there at launch: %q", got)
	}
}

// TestSweepLooked: a directory a held command's tool looks in for
// files by name is swept for those names only, and only for what was
// not there at launch.
func TestSweepLooked(t *testing.T) {
	d := filepath.Join(t.TempDir(), "lint")
	write := writer(t, d)
	write(".eslintrc.json")
	ds := []ModuleDir{{Path: d, Names: []string{"eslint.config.js", ".eslintrc.json", "yarn.lock"}, Files: true}}
	start := time.Now()
	launch := ModuleDirs(ds)
	if !slices.Equal(launch[0].Entries, []string{".eslintrc.json"}) {
		t.Errorf("entries at launch %q, want .eslintrc.json", launch[0].Entries)
	}
	write("eslint.config.js")
	write(".eslintrc.json")
	write("other.js")
	os.Mkdir(filepath.Join(d, "yarn.lock"), 0o755)
	rel := sweptUnder(d, launch, start)
	slices.Sort(rel)
	if diff := cmp.Diff([]string{"eslint.config.js", "yarn.lock"}, rel); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
}

// TestSweepSiteInit: in a site directory, a directory of a name swept
// for that is no package at launch (an empty sitecustomize/) has the
// __init__ the box adds swept.
func TestSweepSiteInit(t *testing.T) {
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "sitecustomize"), 0o755)
	start := time.Now()
	launch := ModuleDirs([]ModuleDir{{Path: d, Site: true}})
	if err := os.WriteFile(filepath.Join(d, "sitecustomize", "__init__.py"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := SweepModules(launch, nil, Span{Start: start, End: time.Now().Add(time.Second)})
	if want := []string{filepath.Join(d, "sitecustomize", "__init__.py")}; !slices.Equal(got, want) {
		t.Errorf("swept %q, want %q", got, want)
	}
}

// writer writes a file of one line at a path relative to d, making its
// directories.
func writer(t *testing.T, d string) func(p string) {
	return func(p string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(d, p)), 0o755)
		if err := os.WriteFile(filepath.Join(d, p), []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sweptUnder is what SweepModules finds of ds now, for a box that
// started at start and has just ended, relative to d and sorted.
func sweptUnder(d string, ds []ModuleDir, start time.Time) []string {
	var rel []string
	for _, p := range SweepModules(ds, nil, Span{Start: start, End: time.Now().Add(time.Second)}) {
		r, _ := filepath.Rel(d, p)
		rel = append(rel, r)
	}
	slices.Sort(rel)
	return rel
}

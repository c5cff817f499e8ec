package projectrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"github.com/google/go-cmp/cmp"
)

// dirsOf lists the directories of fs directly in a directory, as
// Project.Dirs does.
func dirsOf(fs files) func(string) []string {
	return func(dir string) []string {
		var out []string
		for p := range fs {
			for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
				if filepath.Dir(d) == dir && !slices.Contains(out, filepath.Base(d)) {
					out = append(out, filepath.Base(d))
				}
			}
		}
		slices.Sort(out)
		return out
	}
}

// TestSiteImports: a script the python of the project's own environment
// runs holds what it imports by name from the environment's
// site-packages (a package whole, a module's files), and in turn what
// the distribution it belongs to requires, by the names that
// distribution is imported by; another python's scripts hold none of it.
func TestSiteImports(t *testing.T) {
	const site = "/r/.venv/lib/python3.11/site-packages"
	project := files{
		"/r/pyproject.toml":   "[project]\nname = \"x\"\n",
		"/r/.venv/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n",
		"/r/tools/hook.py":    "import mypkg, mymod\nimport json\nimport bs4\n",
		"/r/hook.py":          "import mymod\n",
		"/r/env/bin/python":   "",
		"/r/env/lib/python3.11/site-packages/mymod.py":        "",
		site + "/mypkg/__init__.py":                           "",
		site + "/mypkg-1.0.dist-info/METADATA":                "Metadata-Version: 2.1\nName: mypkg\nRequires-Dist: Dep.Two (>=1)\nRequires-Dist: extra-thing; extra == \"x\"\nRequires-Dist: pyyaml\n\nRequires-Dist: not-a-header\n",
		site + "/dep_two-2.0.dist-info/METADATA":              "Name: Dep.Two\n",
		site + "/dep_two-2.0.dist-info/RECORD":                "dep2/__init__.py,sha256=x,1\ndep2_helpers.py,,\n../../../bin/dep2,,\ndep_two-2.0.dist-info/METADATA,,\n",
		site + "/dep2/__init__.py":                            "",
		site + "/dep2_helpers.py":                             "",
		site + "/PyYAML-6.0.dist-info/METADATA":               "Name: PyYAML\n",
		site + "/PyYAML-6.0.dist-info/top_level.txt":          "_yaml\nyaml\n",
		site + "/yaml/__init__.py":                            "",
		site + "/_yaml/__init__.py":                           "",
		site + "/not_a_header-1.0.dist-info/METADATA":         "",
		site + "/not_a_header/__init__.py":                    "",
		site + "/mymod.py":                                    "",
		site + "/mymod.cpython-311-x86_64-linux-gnu.so":       "",
		site + "/other/__init__.py":                           "",
		site + "/bs4/__init__.py":                             "",
		site + "/beautifulsoup4-4.12.dist-info/METADATA":      "Name: beautifulsoup4\nRequires-Dist: soupsieve>1.2\n",
		site + "/beautifulsoup4-4.12.dist-info/top_level.txt": "bs4\n",
		site + "/soupsieve-2.5.dist-info/METADATA":            "Name: soupsieve\n",
		site + "/soupsieve/__init__.py":                       "",
	}
	deps := []string{site + "/mypkg", site + "/bs4", site + "/dep2", site + "/_yaml", site + "/yaml", site + "/soupsieve"}
	mymod := []string{site + "/mymod.cpython-311-x86_64-linux-gnu.so", site + "/mymod.py"}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string
	}{
		{"the environment's python", `.venv/bin/python tools/hook.py`, append([]string{"/r/tools"}, deps...), append(mymod, site+"/dep2_helpers.py")},
		{"through the project's directory, at the root", `"$CLAUDE_PROJECT_DIR"/.venv/bin/python3 hook.py`, nil, mymod},
		{"uv run", `uv run tools/hook.py`, append([]string{"/r/tools"}, deps...), append(mymod, site+"/dep2_helpers.py")},
		{"another python", `python3 tools/hook.py`, []string{"/r/tools"}, nil},
		{"a bin with no pyvenv.cfg", `env/bin/python tools/hook.py`, []string{"/r/tools"}, nil},
		{"an environment outside the project", `/opt/venv/bin/python tools/hook.py`, []string{"/r/tools"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: listOf(project), Dirs: dirsOf(project)})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			var got []string
			for _, f := range n.Files {
				if strings.HasPrefix(f, "/r/.venv/lib/") || strings.HasPrefix(f, "/r/env/lib/") {
					got = append(got, f)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.files))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("files in site-packages (-want +got):\n%s", d)
			}
			for _, f := range got {
				if !slices.Contains(n.Programs, f) {
					t.Errorf("programs lack %s", f)
				}
			}
			// The site-packages is swept at the end for what runs as
			// Python starts, when its python runs the script.
			swept := slices.ContainsFunc(n.Modules, func(m protect.ModuleDir) bool { return m.Site && m.Path == site })
			if swept != (len(tt.files) > 0) {
				t.Errorf("site-packages swept: %v, want %v (%+v)", swept, len(tt.files) > 0, n.Modules)
			}
		})
	}
}

// TestSiteImportsBounded: distributions that require more than are
// followed hold so many, and say so once.
func TestSiteImportsBounded(t *testing.T) {
	const site = "/r/.venv/lib/python3.12/site-packages"
	project := files{"/r/.venv/pyvenv.cfg": "version_info = 3.12.1\n", "/r/tools/hook.py": "import p0\n", site + "/distutils-precedence.pth": ""}
	for i := range 400 {
		project[fmt.Sprintf("%s/p%d/__init__.py", site, i)] = ""
		project[fmt.Sprintf("%s/p%d-1.0.dist-info/METADATA", site, i)] = fmt.Sprintf("Requires-Dist: p%d\n", i+1)
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(".venv/bin/python tools/hook.py")), Project{Read: project.read, List: listOf(project), Dirs: dirsOf(project)})
	if len(n.Dirs) != 1+maxPackages {
		t.Errorf("%d dirs held, want %d", len(n.Dirs), 1+maxPackages)
	}
	if len(n.Notes) != 1 || !strings.Contains(n.Notes[0], "than are followed (256): p256 and those after it are not held") {
		t.Errorf("notes: %q", n.Notes)
	}
}

// TestVenvVersion: the Python version of venv's, uv's and virtualenv's
// pyvenv.cfg.
func TestVenvVersion(t *testing.T) {
	for cfg, want := range map[string]string{
		"home = /usr/bin\nversion = 3.11.7\n":                                    "3.11",
		"home = /x\nimplementation = CPython\nuv = 0.5\nversion_info = 3.12.1\n": "3.12",
		"version_info = 3.10.12.final.0\n":                                       "3.10",
		"version = 3\n":                                                          "",
		"version = 3.1x.0\n":                                                     "",
		"version = ../../x\n":                                                    "",
		"":                                                                       "",
	} {
		if got := venvVersion([]byte(cfg)); got != want {
			t.Errorf("venvVersion(%q) = %q, want %q", cfg, got, want)
		}
	}
}

// TestSiteModulesAndEntryPoints: python -m with the environment's
// python (or a Python launcher) runs a module of its site-packages, and
// an entry point of its bin (by its path, or by its name through a
// launcher), whose #! line names that python, imports its package from
// there.
func TestSiteModulesAndEntryPoints(t *testing.T) {
	const site = "/r/.venv/lib/python3.11/site-packages"
	project := files{
		"/r/pyproject.toml":            "[project]\nname = \"x\"\n",
		"/r/.venv/pyvenv.cfg":          "version = 3.11.7\n",
		"/r/.venv/bin/probe":           "#!/r/.venv/bin/python\nfrom entrypkg.cli import main\n",
		"/r/.venv/bin/other":           "#!/usr/bin/env python3\nfrom entrypkg.cli import main\n",
		site + "/modcli.py":            "",
		site + "/entrypkg/__init__.py": "",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string
	}{
		{"python -m", `.venv/bin/python -m modcli`, nil, []string{site + "/modcli.py"}},
		{"uv run -m", `uv run -m modcli.sub`, nil, []string{site + "/modcli.py"}},
		{"another python -m", `python3 -m modcli`, nil, nil},
		{"an entry point", `.venv/bin/probe --check`, []string{"/r/.venv/bin", site + "/entrypkg"}, nil},
		{"an entry point through uv run", `uv run probe --check`, []string{"/r/.venv/bin", site + "/entrypkg"}, nil},
		{"an entry point through poetry run --", `poetry run -- probe`, []string{"/r/.venv/bin", site + "/entrypkg"}, nil},
		{"a script by env's python", `.venv/bin/other`, []string{"/r/.venv/bin"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: listOf(project), Dirs: dirsOf(project)})
			var dirs []string
			for _, d := range n.Dirs {
				if strings.HasPrefix(d, "/r/.venv/") {
					dirs = append(dirs, d)
				}
			}
			if d := cmp.Diff(tt.dirs, dirs); d != "" {
				t.Errorf("dirs in the environment (-want +got):\n%s", d)
			}
			var got []string
			for _, f := range n.Files {
				if strings.HasPrefix(f, site) {
					got = append(got, f)
				}
			}
			if d := cmp.Diff(tt.files, got); d != "" {
				t.Errorf("files in site-packages (-want +got):\n%s", d)
			}
		})
	}
}

// TestSiteEditable: the project's own package installed editable in its
// environment (uv's default, pip install -e) is imported from the
// project: from a directory a .pth file adds (src), in order, or where
// an editable install's finder maps it. A script the environment's
// python runs holds it there, and the directories the .pth files add
// are swept like site-packages for the names imported (the project's
// own directory as the root is); a path out of the project, or an
// import line, adds nothing.
func TestSiteEditable(t *testing.T) {
	const site = "/r/.venv/lib/python3.11/site-packages"
	project := files{
		"/r/.venv/pyvenv.cfg":                       "version = 3.11.7\n",
		"/r/tools/hook.py":                          "import myproj, helpers, mapped, flat\nimport absent\n",
		site + "/_myproj.pth":                       "/r/src\n# a comment\n/opt/elsewhere\nimport os; os.getcwd()\n../../../../lib\n",
		site + "/__editable__.mapped-1.0.pth":       "import __editable___mapped_1_0_finder; __editable___mapped_1_0_finder.install()\n",
		site + "/__editable___mapped_1_0_finder.py": "import sys\nMAPPING: dict[str, str] = {'mapped': '/r/pkgs/mapped', 'out': '/usr/lib/out'}\nNAMESPACES: dict[str, list[str]] = {}\n",
		site + "/flat.pth":                          "/r\n",
		"/r/src/myproj/__init__.py":                 "",
		"/r/src/README":                             "",
		"/r/pyproject.toml":                         "",
		"/r/lib/helpers.py":                         "",
		"/r/pkgs/mapped/__init__.py":                "",
		"/r/flat/__init__.py":                       "",
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(".venv/bin/python tools/hook.py")), Project{Read: project.read, List: listOf(project), Dirs: dirsOf(project)})
	if d := cmp.Diff([]string{"/r/tools", "/r/src/myproj", "/r/pkgs/mapped", "/r/flat"}, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
	if !slices.Contains(n.Files, "/r/lib/helpers.py") || !slices.Contains(n.Programs, "/r/lib/helpers.py") {
		t.Errorf("files %q: want /r/lib/helpers.py held", n.Files)
	}
	names := []string{"myproj", "helpers", "mapped", "flat", "absent"}
	want := []protect.ModuleDir{
		{Path: "/r/.venv/lib/python3.11/site-packages", Names: names, Site: true},
		{Path: "/r/lib", Names: names, Site: true},
		{Path: "/r/src", Names: names, Site: true},
		// flat.pth adds the project's own directory: swept as the root
		// is when a script's module path starts there.
		{Path: "/r", Names: names},
	}
	if d := cmp.Diff(want, n.Modules); d != "" {
		t.Errorf("swept (-want +got):\n%s", d)
	}
}

// TestSiteMissing: an environment whose site-packages is not there at
// launch is swept all the same: the box could make it, and the
// environment's python would import from it.
func TestSiteMissing(t *testing.T) {
	project := files{"/r/.venv/pyvenv.cfg": "version = 3.11.7\n", "/r/tools/hook.py": "try:\n    import ujson\nexcept ImportError:\n    pass\n"}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(".venv/bin/python tools/hook.py")), Project{Read: project.read, List: listOf(project), Dirs: dirsOf(project)})
	want := []protect.ModuleDir{{Path: "/r/.venv/lib/python3.11/site-packages", Names: []string{"ujson"}, Site: true}}
	if d := cmp.Diff(want, n.Modules); d != "" {
		t.Errorf("swept (-want +got):\n%s", d)
	}
}

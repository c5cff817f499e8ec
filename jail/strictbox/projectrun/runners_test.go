package projectrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPytest(t *testing.T) {
	project := files{
		"/r/pyproject.toml":    "[tool.pytest.ini_options]\naddopts = \"-p myplug -q\"\npythonpath = [\"src\"]\n",
		"/r/conftest.py":       "import helpers\n",
		"/r/tests/conftest.py": "x = 1\n",
	}
	config := func(d string) []string {
		return []string{d + "/pytest.ini", d + "/.pytest.ini", d + "/pyproject.toml"}
	}
	plug := []string{"/r/myplug.py", "/r/myplug/__main__.py", "/r/myplug/__init__.py", "/r/tox.ini", "/r/setup.cfg", "/r/conftest.py"}
	for _, tt := range []struct {
		name, cmd   string
		files, dirs []string
		notes       []string
	}{
		{"bare pytest: the configuration, its plugins and pythonpath, conftest.py; the root it collects from is said", `pytest`,
			append([]string{"/r/conftest.py"}, append(config("/r"), plug[:5]...)...), []string{"/r/tests", "/r/test", "/r/src"},
			[]string{"pytest collects tests, and runs the conftest.py", "held for review instead: conftest.py", "the modules they import by name (helpers)"}},
		{"python -m pytest with a plugin and a test: its directory whole, the conftest.py above it", `python -m pytest -p plug2 tests/unit/test_a.py::test_x -k foo`,
			append(append([]string{"/r/pytest.py", "/r/pytest/__main__.py", "/r/plug2.py", "/r/plug2/__main__.py", "/r/plug2/__init__.py", "/r/tests/unit/test_a.py", "/r/tests/conftest.py"}, config("/r")...), plug...),
			[]string{"/r/tests/unit", "/r/src"}, []string{"the modules they import by name (helpers)"}},
		{"pytest in a test directory", `cd tests && pytest -q`,
			append(append(config("/r/tests"), "/r/tests/tox.ini", "/r/tests/setup.cfg", "/r/tests/conftest.py"), append(config("/r"), plug...)...),
			[]string{"/r/tests", "/r/src"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, Home: "/home/u"})
			if d := cmp.Diff(tt.files, n.Files); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			all := strings.Join(n.Notes, "\n")
			for _, want := range tt.notes {
				if !strings.Contains(all, want) {
					t.Errorf("the notes lack %q:\n%s", want, all)
				}
			}
		})
	}
}

package strictbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// venvNote names the interpreter of the project's virtualenv (.venv or
// venv, the nearest at or above cwd, up to repo) when the box does not
// show it (shows): a venv made with pyenv's or uv's python links to
// it, and its commands then fail in the box with a bare "not found"
// (their #! line names a link to nothing). provider names the shipped
// spec whose read-only directories hold a directory ("" for none).
// "" when there is nothing to say.
func venvNote(cwd, repo string, shows func(string) bool, provider func(string) string) string {
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		for _, name := range []string{".venv", "venv"} {
			venv := filepath.Join(d, name)
			if _, err := os.Stat(filepath.Join(venv, "pyvenv.cfg")); err != nil {
				continue
			}
			target, err := filepath.EvalSymlinks(filepath.Join(venv, "bin", "python"))
			if err != nil || shows(target) {
				return ""
			}
			rel, err := filepath.Rel(cwd, filepath.Join(venv, "bin", "python"))
			if err != nil {
				rel = filepath.Join(venv, "bin", "python")
			}
			how := ""
			if spec := provider(filepath.Dir(target)); spec != "" {
				how = "--binds " + spec + " brings it"
			} else {
				how = "a bind spec with ro = [" + strconv.Quote(filepath.Dir(filepath.Dir(target))) + "] (--binds FILE) brings it read-only"
			}
			return fmt.Sprintf("the project's %s is %s, which the box does not show, so the virtualenv's commands fail there with \"not found\"; %s", rel, target, how)
		}
		if repo == "" || d == repo || !within(d, repo) || d == filepath.Dir(d) {
			return ""
		}
	}
}

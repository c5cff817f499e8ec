package bindspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWorkdir: a strict box's repository or working directory is
// refused by the rule an rw entry is: the home itself (whatever it
// holds), a directory the host runs from or lies in one, a dotfiles
// repository a startup file links into; a project is not.
func TestCheckWorkdir(t *testing.T) {
	h := Host{
		Home: "/home/u", Facts: userFacts, PATH: []string{"/opt/tools/bin", "/usr/bin"},
		RealPath: func(p string) (string, error) {
			switch p {
			case "/home/u/.gitconfig":
				return "/home/u/dotfiles/gitconfig", nil
			case "/home/u/proj-link":
				return "/home/u/.config", nil
			}
			return p, nil
		},
	}
	for _, tc := range []struct {
		dirs []string
		err  string
	}{
		{[]string{"/home/u", "/home/u"}, "a strict box does not start in /home/u: it is /home/u (your home"},
		{[]string{"/home/u/proj", "/home/u"}, "it is /home/u (your home"},
		{[]string{"/home", "/home"}, "it holds /home/u"},
		{[]string{"/home/u/.config", "/home/u/.config"}, "it is /home/u/.config (it holds the startup files"},
		{[]string{"/home/u/.config/git", "/home/u/.config/git"}, "it is /home/u/.config/git (git's global config"},
		{[]string{"/home/u/.config/nvim/lua", ""}, "lies inside /home/u/.config/nvim"},
		{[]string{"/home/u/.local/bin", "/home/u/.local/bin"}, "it is /home/u/.local/bin (commands on your PATH)"},
		{[]string{"/home/u/dotfiles", "/home/u/dotfiles"}, "it holds /home/u/.gitconfig"},
		{[]string{"/home/u/proj-link", "/home/u/proj-link"}, "it holds the startup files"},
		{[]string{"/opt/tools", "/opt/tools"}, "it holds /opt/tools/bin (a directory on your PATH)"},
		{[]string{"/home/u/proj", "/home/u/proj/sub"}, ""},
		{[]string{"/home/u/.config/myapp", "/home/u/.config/myapp"}, ""},
		{[]string{"/home/u/go/src/x", "/home/u/go/src/x"}, ""},
	} {
		t.Run(tc.dirs[0], func(t *testing.T) {
			we := wantWorkdirError(t, CheckWorkdir(tc.dirs, h), tc.err)
			if we == nil {
				return
			}
			if hints := strings.Join(we.Hints(), "\n"); !strings.Contains(hints, "cd into a project directory") || !strings.Contains(hints, "read-only") {
				t.Errorf("hints %q", hints)
			}
		})
	}
	// git's global and system config moved by a variable into a
	// repository: the box would write what every host git runs.
	moved := Host{Home: "/home/u", Facts: Facts{"HOME": "/home/u", "GIT_CONFIG_GLOBAL": "/home/u/proj/gitconfig", "GIT_CONFIG_SYSTEM": "/srv/sys/gitconfig"}, RealPath: func(p string) (string, error) { return p, nil }}
	for _, tc := range []struct {
		dirs []string
		err  string
	}{
		{[]string{"/home/u/proj", ""}, "it holds /home/u/proj/gitconfig (git's global config, as GIT_CONFIG_GLOBAL names it"},
		{[]string{"/srv/sys", ""}, "it holds /srv/sys/gitconfig (git's system config, as GIT_CONFIG_SYSTEM names it"},
		{[]string{"/home/u/other", ""}, ""},
	} {
		t.Run("moved "+tc.dirs[0], func(t *testing.T) {
			we := wantWorkdirError(t, CheckWorkdir(tc.dirs, moved), tc.err)
			if we == nil {
				return
			}
			if hints := strings.Join(we.Hints(), "\n"); !strings.Contains(hints, "cd into a project directory") || !strings.Contains(hints, "read-only") {
				t.Errorf("hints %q", hints)
			}
		})
	}
}

// TestCheckWorkdirLinks: a dotfiles repository linked in file by file
// below a directory the host runs from is refused; one whose links point
// elsewhere, or lie below a system directory, is not.
func TestCheckWorkdirLinks(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dotfiles/bin", "dotfiles/git", ".local/bin", ".config/git", "proj", "sys/bin"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, "dotfiles/bin/tool"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(home, "dotfiles/git/config"), []byte("[user]\n"), 0o644)
	link := func(target, at string) {
		if err := os.Symlink(filepath.Join(home, target), filepath.Join(home, at)); err != nil {
			t.Fatal(err)
		}
	}
	facts := Facts{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	for _, tc := range []struct {
		name, link, at string
		system         bool
		err            string
	}{
		{name: "a command on PATH", link: "dotfiles/bin/tool", at: ".local/bin/tool", err: "it is where " + filepath.Join(home, ".local/bin/tool") + " links to (commands on your PATH)"},
		{name: "git's global config", link: "dotfiles/git/config", at: ".config/git/config", err: "(git's global config"},
		{name: "a link elsewhere", link: "proj", at: ".local/bin/proj"},
		{name: "below a system directory", link: "dotfiles/bin/tool", at: "sys/bin/tool", system: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link(tc.link, tc.at)
			defer os.Remove(filepath.Join(home, tc.at))
			h := Host{Home: home, Facts: facts, PATH: []string{filepath.Join(home, "sys/bin")}}
			if tc.system {
				h.System = []string{filepath.Join(home, "sys")}
			}
			dots := filepath.Join(home, "dotfiles")
			wantWorkdirError(t, CheckWorkdir([]string{dots, dots}, h), tc.err)
		})
	}
}

// wantWorkdirError checks err against want ("" for none) and returns
// the *WorkdirError it is, nil when none was wanted.
func wantWorkdirError(t *testing.T, err error, want string) *WorkdirError {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return nil
	}
	var we *WorkdirError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &we) {
		t.Fatalf("error %v, want a WorkdirError containing %q", err, want)
	}
	return we
}

// TestCheckWorkdirProjectPath: a project whose own directory is on the
// host's PATH is refused with what to do in a project; when that
// directory is an activated virtualenv's bin, the hints say to
// deactivate it and how the box runs its commands, not to cd elsewhere.
func TestCheckWorkdirProjectPath(t *testing.T) {
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(proj, ".venv", "bin"), 0o755)
	os.WriteFile(filepath.Join(proj, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	os.MkdirAll(filepath.Join(proj, "bin"), 0o755)
	for _, tc := range []struct {
		path      string
		want, not []string
	}{
		{path: filepath.Join(proj, ".venv", "bin"),
			want: []string{"it is the virtualenv your shell activated: run 'deactivate', then start the box", ".venv/bin/pytest", "sh -c '. .venv/bin/activate && pytest'", "PATH_add .venv/bin"},
			not:  []string{"cd into a project directory"}},
		{path: filepath.Join(proj, "bin"),
			want: []string{"take " + filepath.Join(proj, "bin") + " off your PATH", "PATH_add"},
			not:  []string{"virtualenv"}},
	} {
		h := Host{Home: "/home/u", Facts: userFacts, PATH: []string{tc.path, "/usr/bin"}}
		we := wantWorkdirError(t, CheckWorkdir([]string{proj, proj}, h), "it holds "+tc.path+" (a directory on your PATH)")
		hints := strings.Join(we.Hints(), "\n")
		for _, w := range tc.want {
			if !strings.Contains(hints, w) {
				t.Errorf("%s: hints %q, want %q", tc.path, hints, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(hints, n) {
				t.Errorf("%s: hints %q, do not want %q", tc.path, hints, n)
			}
		}
	}
}

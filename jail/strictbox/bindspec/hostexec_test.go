package bindspec

import (
	"errors"
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
			err := CheckWorkdir(tc.dirs, h)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var we *WorkdirError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &we) {
				t.Fatalf("error %v, want a WorkdirError containing %q", err, tc.err)
			}
			if hints := strings.Join(we.Hints(), "\n"); !strings.Contains(hints, "cd into a project directory") || !strings.Contains(hints, "read-only") {
				t.Errorf("hints %q", hints)
			}
		})
	}
}

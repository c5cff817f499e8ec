package gitpin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadIdentity: settings in a file the global config includes count,
// as do those of an includeIf.gitdir: whose pattern matches the
// repository's git dir (git's rules: ~/, trailing /, no leading /,
// gitdir/i:); one that does not match, and other conditions, do not.
func TestReadIdentity(t *testing.T) {
	home := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(home, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	write(".gitconfig.local", "[user]\n\tname = Local Name\n\temail = local@example.invalid\n")
	write(".gitconfig-work", "[user]\n\temail = work@example.invalid\n")
	write(".gitconfig-oss", "[user]\n\temail = oss@example.invalid\n")
	write(".gitconfig-branch", "[user]\n\temail = branch@example.invalid\n")
	global := write(".gitconfig", `[user]
	name = Default
[include]
	path = ~/.gitconfig.local
[includeIf "gitdir:~/work/"]
	path = ~/.gitconfig-work
[includeIf "gitdir/i:OSS/"]
	path = .gitconfig-oss
[includeIf "onbranch:main"]
	path = ~/.gitconfig-branch
`)
	for _, tc := range []struct{ gitDir, name, email string }{
		{filepath.Join(home, "src", "p", ".git"), "Local Name", "local@example.invalid"},
		{filepath.Join(home, "work", "api", ".git"), "Local Name", "work@example.invalid"},
		{filepath.Join(home, "work", "api", ".git", "worktrees", "x"), "Local Name", "work@example.invalid"},
		{"/srv/oss/lib/.git", "Local Name", "oss@example.invalid"},
		{"/srv/workshop/.git", "Local Name", "local@example.invalid"},
		{"", "Local Name", "local@example.invalid"},
	} {
		s := ReadIdentity(home, tc.gitDir, global)
		name, _ := Lookup(s, "user.name")
		email, _ := Lookup(s, "user.email")
		if name != tc.name || email != tc.email {
			t.Errorf("in %q: %q <%s>, want %q <%s>", tc.gitDir, name, email, tc.name, tc.email)
		}
	}
}

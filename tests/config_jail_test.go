package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests attack aisan's configuration from inside a real deny-list
// jail, then take the host's next step: the configuration sets how the
// next launch is built (strict or not, which sockets a box may reach),
// so no jail may write it, and no configuration may hand a box the
// user manager or a bus.

// configEnv is a test home with a configuration in
// $XDG_CONFIG_HOME/aisan and another in ~/.config/aisan (where an aisan
// started without the variable reads), both holding content.
func configEnv(t *testing.T, content string) (env []string, files []string) {
	t.Helper()
	home, env := testEnv(t)
	xdg := filepath.Join(t.TempDir(), "xdg")
	env = append(env, "XDG_CONFIG_HOME="+xdg)
	for _, d := range []string{filepath.Join(xdg, "aisan"), filepath.Join(home, ".config", "aisan")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, "config.toml")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return env, files
}

// TestConfigReadOnlyInJail: from inside a deny-list jail, rewriting the
// configuration (strict = true turned false), adding a file beside it,
// and moving its directory away all fail, in both places aisan reads it;
// the rest of the home stays writable.
func TestConfigReadOnlyInJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	// Another repository's strict box: this launch is a deny-list jail.
	content := "[repo.\"" + t.TempDir() + "\"]\nstrict = true\n"
	env, files := configEnv(t, content)
	script := `for f in "$@"; do
		d=$(dirname "$f")
		printf 'strict = false\n' 2>&1 >"$f" | grep -q 'Read-only' && echo rewrite:EROFS || echo rewrite:wrote
		(: >"$d/extra.toml") 2>&1 | grep -q 'Read-only' && echo add:EROFS || echo add:wrote
		mv "$d" "$d.moved" 2>/dev/null && echo move:moved || echo move:refused
	done
	: >"$HOME/.config/transparent" && echo home:writable`
	r := aisanIn(t, wt, env, "", append([]string{"run", "--", "sh", "-c", script, "attack"}, files...)...)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := strings.Repeat("rewrite:EROFS\nadd:EROFS\nmove:refused\n", len(files)) + "home:writable\n"
	if r.stdout != want {
		t.Errorf("attacks on the configuration from inside a jail:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || string(b) != content {
			t.Errorf("%s after the jail: %q, %v; want it unchanged", f, b, err)
		}
	}
}

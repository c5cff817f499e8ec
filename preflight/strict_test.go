package preflight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// listing is every name under dir with its mode, to tell a check that
// changed nothing from one that did.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			out = append(out, fmt.Sprintf("%s %v %d", p, fi.Mode(), fi.ModTime().UnixNano()))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestClaudeLoginCheckReadsOnly: the strict preflight's login check
// creates nothing and changes nothing in the Claude directory, whatever
// shape the refresh lock is in, and says what to do about a lock the CLI
// could not take (TRIAL-3 defect 3: it used to create the lock as a file,
// which broke every later refresh).
func TestClaudeLoginCheckReadsOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plant  func(lock string)
		status Status
		want   string
	}{
		{"no lock", func(string) {}, OK, "a refresh can take its lock"},
		{"the CLI holds it", func(l string) { os.Mkdir(l, 0o755) }, OK, "a refresh can take its lock"},
		{"a file where the CLI takes a directory", func(l string) {
			os.WriteFile(l, nil, 0o600)
			old := time.Now().Add(-time.Hour)
			os.Chtimes(l, old, old)
		}, Fail, "is not a directory"},
		{"a link", func(l string) { os.Symlink("/nonexistent", l) }, Fail, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, ".claude")
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d}}`, time.Now().Add(time.Hour).UnixMilli())), 0o600)
			lock := filepath.Join(dir, ".oauth_refresh.lock")
			tc.plant(lock)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			before := listing(t, dir)
			f := checkClaudeLogin(context.Background(), &Env{Home: home})
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("the check changed the Claude directory:\nbefore %v\nafter  %v", before, after)
			}
			if f.Status != tc.status || !strings.Contains(f.Detail, tc.want) {
				t.Errorf("got %v %q, want %v with %q", f.Status, f.Detail, tc.status, tc.want)
			}
			if f.Status != OK && !strings.Contains(f.Fix, "rm ~/.claude/.oauth_refresh.lock") {
				t.Errorf("fix %q does not say how to remove the lock", f.Fix)
			}
		})
	}
}

// TestLockDirectoryNotWritable: a directory nobody can make the lock in
// fails, naming it, and is left alone.
func TestLockDirectoryNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any directory")
	}
	home := t.TempDir()
	dir := filepath.Join(home, ".codex")
	os.Mkdir(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	f, bad := lockFinding(&Env{Home: home}, filepath.Join(dir, ".aisan-refresh.lock"), lockFileShape)
	if !bad || f.Status != Fail || !strings.Contains(f.Detail, "~/.codex") {
		t.Errorf("got %v %+v", bad, f)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".aisan-refresh.lock")); err == nil {
		t.Error("the check created the lock")
	}
}

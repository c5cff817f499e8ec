package strictbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestVenvNote: a project's virtualenv whose python links outside what
// the box shows is named with the spec that brings its interpreter (or
// the bind spec line for its prefix), from a subdirectory too; one the
// box shows, a broken link and a directory that is no venv say nothing.
func TestVenvNote(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(root, "proj")
	pyenv := filepath.Join(root, "home", ".pyenv", "versions", "3.99", "bin")
	os.MkdirAll(pyenv, 0o755)
	os.WriteFile(filepath.Join(pyenv, "python3.99"), []byte("#!/bin/sh\n"), 0o755)
	os.MkdirAll(filepath.Join(repo, ".venv", "bin"), 0o755)
	os.MkdirAll(filepath.Join(repo, "src", "pkg"), 0o755)
	os.WriteFile(filepath.Join(repo, ".venv", "pyvenv.cfg"), []byte("home = "+pyenv+"\n"), 0o644)
	os.Symlink(filepath.Join(pyenv, "python3.99"), filepath.Join(repo, ".venv", "bin", "python"))
	target := filepath.Join(pyenv, "python3.99")
	inRepo := func(p string) bool { return within(p, repo) }
	pyenvSpec := func(d string) string {
		if within(d, filepath.Join(root, "home", ".pyenv")) {
			return "python"
		}
		return ""
	}
	none := func(string) string { return "" }
	for _, tc := range []struct {
		name, cwd string
		shows     func(string) bool
		provider  func(string) string
		want      string
	}{
		{"spec", repo, inRepo, pyenvSpec, "the project's .venv/bin/python is " + target + ", which the box does not show, so the virtualenv's commands fail there with \"not found\"; --binds python brings it"},
		{"subdir", filepath.Join(repo, "src", "pkg"), inRepo, pyenvSpec, "the project's ../../.venv/bin/python is " + target + ", which the box does not show, so the virtualenv's commands fail there with \"not found\"; --binds python brings it"},
		{"no spec", repo, inRepo, none, "the project's .venv/bin/python is " + target + ", which the box does not show, so the virtualenv's commands fail there with \"not found\"; a bind spec with ro = [\"" + filepath.Join(root, "home", ".pyenv", "versions", "3.99") + "\"] (--binds FILE) brings it read-only"},
		{"shown", repo, func(string) bool { return true }, pyenvSpec, ""},
		{"outside the repo", root, inRepo, pyenvSpec, ""},
	} {
		if got := venvNote(tc.cwd, repo, tc.shows, tc.provider); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	os.Remove(filepath.Join(repo, ".venv", "pyvenv.cfg"))
	if got := venvNote(repo, repo, inRepo, pyenvSpec); got != "" {
		t.Errorf("no pyvenv.cfg: %q", got)
	}
	os.WriteFile(filepath.Join(repo, ".venv", "pyvenv.cfg"), nil, 0o644)
	os.Remove(target)
	if got := venvNote(repo, repo, inRepo, pyenvSpec); got != "" {
		t.Errorf("a broken link: %q", got)
	}
}

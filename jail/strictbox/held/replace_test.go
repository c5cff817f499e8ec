package held

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestApplyDirReplacedByFile: the box replaced a directory of what it
// held with a file (and a file with a directory); --apply writes both,
// the directory's old entries removed first.
func TestApplyDirReplacedByFile(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(d, "repo")
	os.MkdirAll(filepath.Join(repo, ".claude/commands"), 0o755)
	os.WriteFile(filepath.Join(repo, ".claude/commands/a.md"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".claude/settings.json"), []byte("{}\n"), 0o644)
	set := NewSetDir(filepath.Join(d, "home"), "repo-1-claude", time.Now())
	if err := Prepare(set, Manifest{Slot: "repo-1-claude", Repo: repo, Items: []protect.Item{{Path: filepath.Join(repo, ".claude"), Dir: true, How: protect.Copy}}}); err != nil {
		t.Fatal(err)
	}
	w := Work(set, 0)
	os.RemoveAll(filepath.Join(w, "commands"))
	os.WriteFile(filepath.Join(w, "commands"), []byte("now a file\n"), 0o644)
	os.Remove(filepath.Join(w, "settings.json"))
	os.MkdirAll(filepath.Join(w, "settings.json"), 0o755)
	os.WriteFile(filepath.Join(w, "settings.json/x"), []byte("x\n"), 0o644)
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	if err := Apply(set); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, ".claude/commands")); err != nil || string(b) != "now a file\n" {
		t.Errorf(".claude/commands after apply: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, ".claude/settings.json/x")); err != nil || string(b) != "x\n" {
		t.Errorf(".claude/settings.json/x after apply: %q %v", b, err)
	}
}

// TestApplyReadOnlyDir: the box made a new directory read-only after
// filling it; --apply writes it whole, not half-way. (Only a user
// without CAP_DAC_OVERRIDE sees the difference.)
func TestApplyReadOnlyDir(t *testing.T) {
	repo, set := fixture(t)
	ro := filepath.Join(Work(set, 0), "ro")
	os.Mkdir(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "f"), []byte("x\n"), 0o644)
	os.Chmod(ro, 0o500)
	os.WriteFile(filepath.Join(Work(set, 0), "settings.json"), []byte("box\n"), 0o644)
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	if err := Apply(set); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, ".claude/ro/f")); err != nil || string(b) != "x\n" {
		t.Errorf(".claude/ro/f after apply: %q %v", b, err)
	}
}

package lockfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestPath(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "locks")
	a, err := Path("/home/u/.aisan/held/.lock", rt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Path("/tmp/other/.aisan/held/.lock", rt)
	if a == b || !strings.HasPrefix(a, rt+"/") || !strings.HasSuffix(a, ".lock") {
		t.Errorf("Path: %q and %q; want two locks under %s", a, b, rt)
	}
	if again, _ := Path("/home/u/.aisan/held/.lock", rt); again != a {
		t.Errorf("Path is not stable: %q then %q", a, again)
	}
	if fi, err := os.Stat(filepath.Dir(a)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("lock directory: %v %v; want 0700", fi, err)
	}
	if p, _ := Path("/x/.lock", ""); p != "/x/.lock" {
		t.Errorf("without a runtime directory: %q", p)
	}
	// A link where the lock directory goes is refused.
	rt2 := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(rt2, "locks"))
	if _, err := Path("/x/.lock", filepath.Join(rt2, "locks")); err == nil {
		t.Error("a link at the lock directory was used")
	}
}

func TestOpen(t *testing.T) {
	state := t.TempDir()
	f, err := Open(filepath.Join(state, ".lock"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("flock on a write-only lock: %v", err)
	}
	if fi, _ := f.Stat(); fi.Mode().Perm() != Mode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), os.FileMode(Mode))
	}
	if _, err := os.Lstat(filepath.Join(state, ".lock")); err == nil {
		t.Error("the lock was made beside what it guards, where a jail sees it")
	}
}

// TestPathThroughLink: a state directory named through a link has the
// same lock as by its real path, as a lock file beside it had.
func TestPathThroughLink(t *testing.T) {
	rt, base := filepath.Join(t.TempDir(), "locks"), t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "held"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	a, err := Path(filepath.Join(real, "held", ".lock"), rt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Path(filepath.Join(link, "held", ".lock"), rt)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("one store, two locks: %q by its real path, %q through a link", a, b)
	}
}

// TestDirFor: the locks standing for a directory's files are in a
// directory of their own in the lock directory, one per real path; with
// no runtime directory they are beside those files.
func TestDirFor(t *testing.T) {
	rt, base := filepath.Join(t.TempDir(), "locks"), t.TempDir()
	slots := filepath.Join(base, "state", "slots")
	if err := os.MkdirAll(slots, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(base, "state"), filepath.Join(base, "link"))
	a, err := DirFor(slots, rt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, rt+"/") {
		t.Errorf("DirFor = %q, want it under %s", a, rt)
	}
	if fi, err := os.Lstat(a); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v; want a 0700 directory", a, fi, err)
	}
	if b, _ := DirFor(filepath.Join(base, "link", "slots"), rt); b != a {
		t.Errorf("through a link: %q, want %q", b, a)
	}
	if b, _ := DirFor(filepath.Join(base, "other", "slots"), rt); b == a {
		t.Errorf("two directories share %q", a)
	}
	if d, _ := DirFor(slots, ""); d != slots {
		t.Errorf("without a runtime directory: %q", d)
	}
	// A link where the directory goes is refused.
	rt2 := filepath.Join(t.TempDir(), "locks")
	p, _ := Path(slots, rt2)
	os.Symlink(t.TempDir(), strings.TrimSuffix(p, ".lock")+".d")
	if _, err := DirFor(slots, rt2); err == nil {
		t.Error("a link at the directory was used")
	}
}

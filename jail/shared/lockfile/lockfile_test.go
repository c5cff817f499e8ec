package lockfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenMakesWriteOnly(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.lock")
	f, err := Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("flock on a write-only lock: %v", err)
	}
	f.Close()
	// An older aisan's lock file, readable: the first look migrates it.
	old := filepath.Join(dir, "old.lock")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err = Open(old); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{fresh, old} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != Mode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), os.FileMode(Mode))
		}
	}
}

func TestOpenRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "link.lock")
	os.Symlink(target, link)
	if f, err := Open(link); err == nil {
		f.Close()
		t.Errorf("Open followed a symlink")
	}
	fifo := filepath.Join(dir, "fifo.lock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(fifo); err == nil {
		f.Close()
		t.Errorf("Open took a FIFO")
	}
}

package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadRefuses: a symlink is not followed, a FIFO is refused without
// waiting for a writer, a directory is not regular, a file over the cap
// is refused, a missing one says so; each case is told apart by its error.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.WriteFile(real, []byte("tok\n"), 0o600)
	if b, err := Read(real, 100); err != nil || string(b) != "tok\n" {
		t.Fatalf("a regular file: %q %v", b, err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	if _, err := Read(link, 100); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a symlink: %v, want ELOOP", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, 100); done <- err }()
	select {
	case err := <-done:
		var nr *NotRegularError
		if !errors.Is(err, ErrNotRegular) || !errors.As(err, &nr) || nr.Mode.Type() != fs.ModeNamedPipe {
			t.Errorf("a FIFO: %v, want a NotRegularError for a named pipe", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("hung on a FIFO")
	}
	if _, err := Read(dir, 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "nope"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	os.WriteFile(real, make([]byte, 200), 0o600)
	if _, err := Read(real, 100); !errors.Is(err, ErrTooLarge) || err.Error() != "read "+real+": larger than 100 bytes" {
		t.Errorf("an oversized file: %v", err)
	}
	if b, err := Read(real, 200); err != nil || len(b) != 200 {
		t.Errorf("a file of exactly the cap: %d bytes, %v", len(b), err)
	}
}

// TestReadNamedFollowsOnlyALink: a file the user names may be a link to a
// regular file (a dotfile), never to a FIFO; Read refuses the link.
func TestReadNamedFollowsOnlyALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "spec.toml")
	os.WriteFile(real, []byte("x"), 0o600)
	link := filepath.Join(dir, "link.toml")
	os.Symlink(real, link)
	if b, err := ReadNamed(link, 10); err != nil || string(b) != "x" {
		t.Fatalf("ReadNamed(link): %q %v", b, err)
	}
	if _, err := Read(link, 10); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("Read(link): %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	os.Symlink(fifo, filepath.Join(dir, "to-fifo"))
	if _, err := ReadNamed(filepath.Join(dir, "to-fifo"), 10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("ReadNamed(link to a FIFO): %v", err)
	}
}

// TestCopy: the content and permission bits arrive; an existing
// destination, a link and a FIFO as the source are refused.
func TestCopy(t *testing.T) {
	d := t.TempDir()
	src := filepath.Join(d, "src")
	os.WriteFile(src, []byte("data"), 0o640)
	os.Chmod(src, 0o640)
	dst := filepath.Join(d, "dst")
	if err := Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "data" {
		t.Errorf("copied %q", b)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := Copy(src, dst); err == nil {
		t.Error("an existing destination was overwritten")
	}
	os.Symlink(src, filepath.Join(d, "link"))
	if err := Copy(filepath.Join(d, "link"), filepath.Join(d, "via-link")); err == nil {
		t.Error("a link was followed")
	}
	syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644)
	if err := Copy(filepath.Join(d, "fifo"), filepath.Join(d, "from-fifo")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO: %v", err)
	}
}

package launch

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

// TestOpenPinsIdentity: a pin that names the file it was checked as
// (a raw relay's socket) opens only that file: one swapped in at the same
// path since, through a directory on the way, is refused.
func TestOpenPinsIdentity(t *testing.T) {
	dir := t.TempDir()
	listen := func(p string) *syscall.Stat_t {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t)
	}
	os.Mkdir(filepath.Join(dir, "run"), 0o700)
	os.Mkdir(filepath.Join(dir, "evil"), 0o700)
	checked := listen(filepath.Join(dir, "run", "db.sock"))
	listen(filepath.Join(dir, "evil", "db.sock"))
	pin := jail.Pin{Path: filepath.Join(dir, "run", "db.sock"), Type: jail.PinSocket, Dev: uint64(checked.Dev), Ino: checked.Ino}
	fs, err := OpenPins([]jail.Pin{pin})
	if err != nil {
		t.Fatalf("the checked socket: %v", err)
	}
	fs[0].Close()
	// A box swaps the directory on the checked path.
	if err := os.Rename(filepath.Join(dir, "run"), filepath.Join(dir, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "evil"), filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	if fs, err := OpenPins([]jail.Pin{pin}); err == nil {
		fs[0].Close()
		t.Fatal("a socket swapped in after the check was pinned")
	}
}

package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGatherDev: what of a /dev a jail gets back. The test's /dev is a
// plain directory, so its "nodes" are regular files, opened by mode.
func TestGatherDev(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"pts", "dri", "shm", "mqueue"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]os.FileMode{
		"ptmx": 0o666, "null": 0o666, "tty": 0o666, "console": 0o600,
		"tty1": 0o620, "tty63": 0o620, "ttyS0": 0o660, "ttyUSB0": 0o660,
		"kvm": 0o666, "nvidia0": 0o666, "fuse": 0o666, "kmsg": 0o444,
		"rootonly": 0o000,
	}
	for name, mode := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "log": "/run/systemd/journal/dev-log", "stdin": "/proc/self/fd/0"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, e := range GatherDev(dir) {
		got[e.Name] = e.Link
	}
	tests := []struct {
		name string
		in   bool
		link string
		why  string
	}{
		{"pts", false, "", "the jail's own devpts"},
		{"ptmx", false, "", "points into the jail's devpts"},
		{"tty", false, "", "bwrap binds it"},
		{"console", false, "", "bwrap binds the jail's terminal there"},
		{"null", false, "", "bwrap binds it"},
		{"tty1", false, "", "a virtual console is another terminal"},
		{"tty63", false, "", "a virtual console is another terminal"},
		{"fd", false, "", "bwrap links it"},
		{"stdin", false, "", "bwrap links it"},
		{"dri", true, "", "GPU"},
		{"shm", true, "", "the host's shared memory"},
		{"mqueue", true, "", "a directory is bound whole"},
		{"ttyS0", true, "", "a serial port is no virtual console"},
		{"ttyUSB0", true, "", "a serial port is no virtual console"},
		{"kvm", true, "", "a device"},
		{"nvidia0", true, "", "GPU"},
		{"fuse", true, "", "a device"},
		{"kmsg", true, "", "readable"},
		{"log", true, "/run/systemd/journal/dev-log", "a symlink stays a symlink"},
	}
	if os.Getuid() != 0 {
		tests = append(tests, struct {
			name string
			in   bool
			link string
			why  string
		}{"rootonly", false, "", "nobody but root opens it"})
	}
	for _, tt := range tests {
		link, in := got[tt.name]
		if in != tt.in || link != tt.link {
			t.Errorf("%s: in=%v link=%q, want in=%v link=%q (%s)", tt.name, in, link, tt.in, tt.link, tt.why)
		}
	}
}

// TestDenyListDev: the deny-list jail's /dev is a fresh one with the
// gathered entries put back, binds that may vanish are tried, and nothing
// binds the host's pts or ptmx.
func TestDenyListDev(t *testing.T) {
	spec := DenyList(DenyOptions{Command: []string{"true"}, Dev: []DevEntry{{Name: "dri"}, {Name: "log", Link: "/run/log"}}})
	var dev []Mount
	for _, m := range spec.Mounts {
		if m.Dst == "/dev" || filepath.Dir(m.Dst) == "/dev" {
			dev = append(dev, m)
		}
	}
	want := []Mount{
		{Kind: Dev, Dst: "/dev"},
		{Kind: DevBind, Src: "/dev/dri", Dst: "/dev/dri", Try: true},
		{Kind: Symlink, Src: "/run/log", Dst: "/dev/log"},
	}
	if !slices.EqualFunc(dev, want, func(a, b Mount) bool { return a.Kind == b.Kind && a.Src == b.Src && a.Dst == b.Dst && a.Try == b.Try }) {
		t.Fatalf("/dev mounts = %+v, want %+v", dev, want)
	}
}

func TestVirtualConsole(t *testing.T) {
	for name, want := range map[string]bool{
		"tty0": true, "tty1": true, "tty63": true,
		"tty": false, "ttyS0": false, "ttyUSB1": false, "tty1a": false, "xtty1": false, "": false,
	} {
		if got := virtualConsole(name); got != want {
			t.Errorf("virtualConsole(%q) = %v, want %v", name, got, want)
		}
	}
}

package distro

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		osRelease string
		want      Family
		install   string
	}{
		{"ID=debian\n", Debian, "sudo apt-get install bubblewrap"},
		{"ID=ubuntu\nID_LIKE=debian\n", Debian, "sudo apt-get install bubblewrap"},
		{"ID=\"fedora\"\n", Fedora, "sudo dnf install bubblewrap"},
		{"ID=rocky\nID_LIKE=\"rhel centos fedora\"\n", Fedora, "sudo dnf install bubblewrap"},
		{"ID=arch\n", Arch, "sudo pacman -S bubblewrap"},
		{"ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"\n", SUSE, "sudo zypper install bubblewrap"},
		{"ID=nixos\n", Unknown, "install the package that provides bwrap (usually named bubblewrap) with your distribution's package manager"},
	} {
		p := filepath.Join(t.TempDir(), "os-release")
		if err := os.WriteFile(p, []byte(tc.osRelease), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AISAN_OS_RELEASE", p)
		got := Detect()
		if got != tc.want {
			t.Errorf("%q: family %q, want %q", tc.osRelease, got, tc.want)
		}
		if cmd := InstallCommand(got, "bwrap"); cmd != tc.install {
			t.Errorf("%q: install %q, want %q", tc.osRelease, cmd, tc.install)
		}
	}
}

func TestDetectMissingFile(t *testing.T) {
	t.Setenv("AISAN_OS_RELEASE", filepath.Join(t.TempDir(), "absent"))
	if f := Detect(); f != Unknown {
		t.Fatalf("missing os-release gave %q", f)
	}
}

package strictbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCgroupDir: only the unified hierarchy's line names the directory,
// and a path that climbs out of the hierarchy names none.
func TestCgroupDir(t *testing.T) {
	root := cgroup2Root()
	for in, want := range map[string]string{
		"0::/user.slice/app.slice/aisan-x.scope\n": root + "/user.slice/app.slice/aisan-x.scope",
		"4:memory:/a\n0::/b.scope\n":               root + "/b.scope",
		"4:memory:/a\n":                            "",
		"0::/../../etc\n":                          "",
		"0::relative\n":                            "",
		"0::/a/..\n":                               "",
		"0::/\n":                                   root,
		"1:name=systemd:/x\n0::/init.scope\n12:pids:/y\n": root + "/init.scope",
	} {
		if got := cgroupDir([]byte(in)); got != want {
			t.Errorf("cgroupDir(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCgroupDir: whatever /proc says, the directory is under the
// hierarchy's root or none.
func FuzzCgroupDir(f *testing.F) {
	f.Add("0::/user.slice/x.scope\n")
	f.Add("0::/../x\n")
	f.Fuzz(func(t *testing.T, in string) {
		got := cgroupDir([]byte(in))
		if got == "" {
			return
		}
		rel, err := filepath.Rel(cgroup2Root(), got)
		if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
			t.Errorf("cgroupDir(%q) = %q, outside the hierarchy", in, got)
		}
	})
}

// TestReadCgroupUse: the counters as the kernel writes them, and the
// resident memory of the cgroup's processes where there is no memory
// controller.
func TestReadCgroupUse(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 1500000\nuser_usec 1000000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.peak"), []byte("52428800\n"), 0o644)
	if peak, cpu := readCgroupUse(dir); peak != 52428800 || cpu != 1500000 {
		t.Errorf("peak %d, cpu %d", peak, cpu)
	}
	os.Remove(filepath.Join(dir, "memory.peak"))
	os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	if peak, _ := readCgroupUse(dir); peak <= 0 {
		t.Errorf("the resident memory of this process: %d", peak)
	}
}

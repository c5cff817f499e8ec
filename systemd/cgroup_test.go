package systemd

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Mount tables seen on real hosts.
const (
	// Debian 12 VM with a hybrid layout: v1 holds the controllers.
	mountsHybrid = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
`
	// The same host inside tests/env/usermgr.sh's mount namespace: a fresh
	// cgroup2 mount over /sys/fs/cgroup hides the host's unified mount.
	mountsTestEnv = mountsHybrid + `65 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate
`
	// A pure cgroup v2 desktop.
	mountsUnified = `25 22 0:5 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	// A container with a cgroup namespace bind-mounted at its own subtree,
	// and a path with a space (escaped as \040).
	mountsContainer = `700 690 0:5 /user.slice/user-1000.slice /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw
701 690 0:40 / /mnt/my\040dir rw - tmpfs tmpfs rw
`
)

func TestCgroupDir(t *testing.T) {
	tests := []struct {
		mounts, cgroup, want string
	}{
		{mountsHybrid, "/user.slice/user-1000.slice/user@1000.service", "/sys/fs/cgroup/unified/user.slice/user-1000.slice/user@1000.service"},
		{mountsTestEnv, "/user.slice/user-1002.slice/user@1002.service", "/sys/fs/cgroup/user.slice/user-1002.slice/user@1002.service"},
		{mountsUnified, "/user.slice/user-1000.slice/user@1000.service/app.slice/aisan-x.scope", "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/aisan-x.scope"},
		{mountsUnified, "/", "/sys/fs/cgroup"},
		{mountsContainer, "/user.slice/user-1000.slice/user@1000.service", "/sys/fs/cgroup/user@1000.service"},
		{mountsContainer, "/user.slice/user-1000.slice", "/sys/fs/cgroup"},
		{mountsContainer, "/system.slice", ""},
		{mountsContainer, "/user.slice/user-1000.slicex", ""},
	}
	for _, tt := range tests {
		mounts, err := parseMountinfo(strings.NewReader(tt.mounts))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := cgroupDir(mounts, tt.cgroup)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("cgroupDir(%s…, %q) = %q, %v; want %q", tt.mounts[:20], tt.cgroup, got, ok, tt.want)
		}
	}
}

func TestParseMountinfo(t *testing.T) {
	mounts, err := parseMountinfo(strings.NewReader(mountsContainer))
	if err != nil {
		t.Fatal(err)
	}
	if mounts[1].point != "/mnt/my dir" {
		t.Errorf("escaped mount point = %q; want %q", mounts[1].point, "/mnt/my dir")
	}
	if _, err := parseMountinfo(strings.NewReader("1 2 3\n")); err == nil {
		t.Error("a malformed line parsed")
	}
}

func TestV1Controllers(t *testing.T) {
	tests := []struct {
		mounts string
		want   []string
	}{
		{mountsHybrid, []string{"cpu", "memory", "pids"}},
		{mountsTestEnv, []string{"cpu", "memory", "pids"}},
		{mountsUnified, nil},
	}
	for _, tt := range tests {
		mounts, err := parseMountinfo(strings.NewReader(tt.mounts))
		if err != nil {
			t.Fatal(err)
		}
		if got := v1Controllers(mounts); !slices.Equal(got, tt.want) {
			t.Errorf("v1Controllers(%s…) = %q; want %q", tt.mounts[:20], got, tt.want)
		}
	}
}

func TestUnifiedCgroup(t *testing.T) {
	hybrid := "9:name=systemd:/\n8:pids:/\n4:memory:/x\n0::/user.slice/user-1002.slice/session-aisan.scope\n"
	if got, ok := unifiedCgroup(hybrid); !ok || got != "/user.slice/user-1002.slice/session-aisan.scope" {
		t.Errorf("unifiedCgroup(hybrid) = %q, %v", got, ok)
	}
	if _, ok := unifiedCgroup("4:memory:/x\n"); ok {
		t.Error("unifiedCgroup found a v2 path in a v1-only file")
	}
}

func TestMissingControllers(t *testing.T) {
	all := Limits{MemoryMax: 1 << 30, CPUQuotaPerSecUSec: 100_000, TasksMax: 100}
	tests := []struct {
		l         Limits
		delegated []string
		want      []string
	}{
		{Limits{}, nil, nil},
		{all, nil, []string{"memory", "cpu", "pids"}},
		{all, []string{"cpu", "io", "memory", "pids"}, nil},
		{all, []string{"cpu", "pids"}, []string{"memory"}},
		{Limits{TasksMax: 64}, []string{"memory"}, []string{"pids"}},
		// Unlimited needs no controller: it only lifts a default.
		{Limits{MemoryMax: Unlimited, CPUQuotaPerSecUSec: Unlimited, TasksMax: Unlimited}, nil, nil},
	}
	for _, tt := range tests {
		if got := MissingControllers(tt.l, tt.delegated); !slices.Equal(got, tt.want) {
			t.Errorf("MissingControllers(%v, %q) = %q; want %q", tt.l, tt.delegated, got, tt.want)
		}
	}
}

// TestCheckDelegation pins the warning text the launcher prints.
func TestCheckDelegation(t *testing.T) {
	tests := []struct {
		l             Limits
		delegated, v1 []string
		msg, hint     string
	}{
		{
			Limits{MemoryMax: 1 << 30}, []string{"cpu", "io", "memory", "pids"}, nil,
			"", "",
		},
		{
			Limits{MemoryMax: 1 << 30, TasksMax: 512}, []string{"cpu", "io"}, nil,
			"the memory and tasks limits would be ignored: the memory and pids cgroup controllers are not delegated to the systemd user manager (it has: cpu io)",
			`delegate them: run "sudo systemctl edit user@.service", add "[Service]" and "Delegate=cpu memory pids", then log out and in again`,
		},
		{
			Limits{CPUQuotaPerSecUSec: 100_000}, nil, []string{"cpu", "memory"},
			"the cpu limit would be ignored: the cpu cgroup controller is not delegated to the systemd user manager (it has: none)",
			"this host mounts cpu on cgroup v1; boot with systemd.unified_cgroup_hierarchy=1 for a pure cgroup v2 layout",
		},
	}
	for _, tt := range tests {
		err := CheckDelegation(tt.l, tt.delegated, tt.v1)
		if tt.msg == "" {
			if err != nil {
				t.Errorf("CheckDelegation(%v, %q) = %v; want nil", tt.l, tt.delegated, err)
			}
			continue
		}
		var ue *UndelegatedError
		if !errors.As(err, &ue) {
			t.Fatalf("CheckDelegation(%v, %q) = %v; want *UndelegatedError", tt.l, tt.delegated, err)
		}
		if err.Error() != tt.msg {
			t.Errorf("message:\n got %s\nwant %s", err, tt.msg)
		}
		if h := strings.Join(ue.Hints(), "\n"); h != tt.hint {
			t.Errorf("hint:\n got %s\nwant %s", h, tt.hint)
		}
	}
}

package jail

import (
	"slices"
	"testing"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// TestOtherRuntimeDirHidesStdRunDir: with $XDG_RUNTIME_DIR elsewhere, aisan's
// directory under /run/user/UID (another launch's gates, the supervisor's
// locks) is hidden like the manager's directory there.
func TestOtherRuntimeDirHidesStdRunDir(t *testing.T) {
	h := Host{StdManagerDir: "/run/user/1000/systemd", StdRunDir: "/run/user/1000/aisan"}
	dirs, _ := otherRuntimeDir(h, busproxy.Plan{})
	if !slices.Contains(dirs, "/run/user/1000/aisan") {
		t.Errorf("otherRuntimeDir = %q; want /run/user/1000/aisan hidden", dirs)
	}
	spec := DenyList(DenyOptions{Command: []string{"true"}, OtherManagerDirs: dirs})
	if !slices.ContainsFunc(spec.Mounts, func(m Mount) bool { return m.Kind == Tmpfs && m.Dst == "/run/user/1000/aisan" }) {
		t.Errorf("no tmpfs over /run/user/1000/aisan in %+v", spec.Mounts)
	}
}

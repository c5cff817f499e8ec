package hostproxy

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// inOwnNetns reports whether t runs in namespaces of its own (made by
// unshare with flags, "-rn" or "-rmn"), where it may change addresses,
// routes and files no other test sees. When it does not, it runs the
// test again in such namespaces, fails t if that run fails, and reports
// false: the caller returns.
func inOwnNetns(t *testing.T, flags string) bool {
	t.Helper()
	if os.Getenv("HOSTPROXY_TEST_NETNS") != "" {
		return true
	}
	jailtest.Need(t, "a network namespace (unshare "+flags+")", userNS())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "unshare", flags, self, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "HOSTPROXY_TEST_NETNS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("in namespaces of its own (unshare %s): %v\n%s", flags, err, out)
	}
	return false
}

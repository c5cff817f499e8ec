package guard

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// TestGuardDeps keeps the hook path small: aisan guard runs as a fresh
// process before every shell command an agent issues, so the guard must
// not link D-Bus, systemd, pty handling or the egress proxy.
func TestGuardDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command, to list dependencies", err)
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/godbus/dbus",
		"github.com/coreos/go-systemd",
		"github.com/creack/pty",
		"github.com/aisan-dev/aisan/egress",
		"github.com/aisan-dev/aisan/systemd",
	}
	allowed := []string{
		"github.com/aisan-dev/aisan/guard",
		"mvdan.cc/sh/v3/",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("guard links %s, which the hook path must not", dep)
			}
		}
		ok := false
		for _, prefix := range allowed {
			if dep == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(dep, prefix) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("guard links %s; the hook path may only use the standard library and mvdan.cc/sh (update this test if the new dependency is deliberate)", dep)
		}
	}
}

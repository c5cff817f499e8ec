package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// TestDeps holds the binary to an allow-list: every package outside the
// standard library that it links is named here. A new one makes the hook
// start slower on every tool call, so adding it should be a decision, not
// a side effect (cmd/aisan's TestImportDirections says what must never
// come in; this says what may).
func TestDeps(t *testing.T) {
	allowed := []string{
		"github.com/aisan-dev/aisan/cmd/aisan-guard",
		"github.com/aisan-dev/aisan/guard",
		"golang.org/x/sys/unix",
		"mvdan.cc/sh/v3/fileutil", // through syntax
		"mvdan.cc/sh/v3/syntax",
	}
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command, to list dependencies", err)
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/aisan-dev/aisan/guard") {
		t.Fatalf("go list -deps does not list the guard: %q", deps)
	}
	for _, d := range deps {
		if !slices.Contains(allowed, d) {
			t.Errorf("aisan-guard links %s, which is not on its allow-list", d)
		}
	}
}

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

const mod = "github.com/aisan-dev/aisan"

// forbidden says, for each package pattern (a trailing "/..." includes
// the subpackages), which imports it must never have, directly or
// through others, and why. It is the design's import directions as data,
// in the shape of tailscale's tstest/deptest.
var forbidden = []struct {
	pkg  string
	deps map[string]string
}{
	{mod + "/...", map[string]string{
		mod + "/cmd/...": "nothing imports the command layer",
	}},
	{mod + "/jail/...", map[string]string{
		mod + "/egress/...": "the jail and the egress proxy meet only in cmd/aisan, as plain data",
		mod + "/hooks/...":  "what the hooks package knows reaches the jail as data from cmd/aisan",
	}},
	{mod + "/egress/...", map[string]string{
		mod + "/jail":          "egress knows sockets, not mounts (the leaves jail/agent, jail/atomicfile and jail/regfile excepted)",
		mod + "/jail/slot":     "egress knows sockets, not slots",
		mod + "/jail/bindspec": "egress knows sockets, not mounts",
		mod + "/systemd/...":   "egress does not manage units",
	}},
	{mod + "/guard/...", map[string]string{
		mod + "/jail":                      "the hook path runs before every tool call: it stays small",
		mod + "/jail/slot":                 "the hook path stays small",
		mod + "/egress/...":                "the hook path stays small",
		mod + "/systemd/...":               "the hook path links no systemd",
		"github.com/godbus/dbus/...":       "the hook path links no D-Bus",
		"github.com/coreos/go-systemd/...": "the hook path links no systemd",
		"github.com/creack/pty":            "the hook path handles no terminal",
	}},
	{mod + "/cmd/aisan-guard", map[string]string{
		mod + "/jail/...":                  "the lean hook binary starts before every tool call: it links the guard and nothing else of ours",
		mod + "/egress/...":                "the lean hook binary links no proxy",
		mod + "/hooks/...":                 "the lean hook binary edits no settings",
		mod + "/systemd/...":               "the lean hook binary links no systemd",
		mod + "/preflight/...":             "the lean hook binary runs no host checks",
		mod + "/shell/...":                 "the lean hook binary prints no shell functions",
		"github.com/godbus/dbus/...":       "the lean hook binary links no D-Bus",
		"github.com/coreos/go-systemd/...": "the lean hook binary links no systemd",
		"github.com/creack/pty":            "the lean hook binary handles no terminal",
		"github.com/charmbracelet/...":     "the lean hook binary emulates no terminal",
		"github.com/pelletier/go-toml/...": "the lean hook binary reads no TOML",
		"github.com/tailscale/hujson":      "the lean hook binary reads no JSONC",
		"github.com/mattn/go-shellwords":   "the lean hook binary splits no argv",
		"golang.org/x/net/...":             "the lean hook binary speaks no HTTP/2",
		"google.golang.org/protobuf/...":   "the lean hook binary speaks no protobuf",
		"net/http":                         "the lean hook binary makes no requests",
		"crypto/tls":                       "the lean hook binary makes no connections",
	}},
	{mod + "/hooks/...", map[string]string{
		mod + "/jail":                "hooks edit agent settings; the jail is not theirs",
		mod + "/egress/...":          "hooks edit agent settings",
		mod + "/systemd/...":         "hooks edit agent settings",
		"github.com/godbus/dbus/...": "hooks link no D-Bus",
		"github.com/creack/pty":      "hooks handle no terminal",
	}},
	{mod + "/jail/agent", map[string]string{
		mod + "/...": "jail/agent is a leaf of data that others read",
	}},
	{mod + "/jail/distro", map[string]string{
		mod + "/...": "jail/distro is a leaf of data",
	}},
	{mod + "/jail/sibling", map[string]string{
		mod + "/...": "jail/sibling is a leaf the jail and the hooks share",
	}},
	{mod + "/jail/atomicfile", map[string]string{
		mod + "/...": "jail/atomicfile is a leaf the others write files through",
	}},
	{mod + "/jail/regfile", map[string]string{
		mod + "/...": "jail/regfile is a leaf the others read files through",
	}},
	{mod + "/jail/trust", map[string]string{
		mod + "/jail":          "the trust check is a leaf that the launch, the egress loading and the CLI share",
		mod + "/jail/slot":     "the trust check is a leaf",
		mod + "/jail/bindspec": "the trust check reads bytes; what they mean is its callers'",
		mod + "/egress/...":    "the trust check is a leaf",
		mod + "/systemd/...":   "the trust check is a leaf",
	}},
	{mod + "/jail/mcp", map[string]string{
		mod + "/jail":       "the MCP import is a leaf the strict launcher calls",
		mod + "/egress/...": "the MCP import is a leaf",
	}},
	{mod + "/jail/relay", map[string]string{
		"net/http":                         "the in-box relay is a byte pump",
		"github.com/godbus/dbus/...":       "the in-box relay is a byte pump",
		"github.com/coreos/go-systemd/...": "the in-box relay is a byte pump",
		mod + "/egress/...":                "the in-box relay is a byte pump",
	}},
	// Every launch starts the stage and the init: a lean binary, so each
	// start costs what a small Go program costs.
	{mod + "/jail/boxinit", leanInit},
	{mod + "/cmd/aisan-init", leanInit},
	{mod + "/egress/anthropic", map[string]string{mod + "/egress/openai/...": "backends are independent", mod + "/egress/reapi/...": "backends are independent"}},
	{mod + "/egress/openai", map[string]string{mod + "/egress/anthropic/...": "backends are independent", mod + "/egress/reapi/...": "backends are independent"}},
	{mod + "/egress/reapi", map[string]string{mod + "/egress/anthropic/...": "backends are independent", mod + "/egress/openai/...": "backends are independent"}},
	{mod + "/egress/policy", map[string]string{mod + "/...": "the policy engine is data and a walk; the backends hold the tables"}},
	{mod + "/egress/cred", map[string]string{mod + "/egress/anthropic/...": "credential sources serve the backends, not the reverse", mod + "/egress/openai/...": "likewise", mod + "/egress/reapi/...": "likewise"}},
}

// leanInit is what the stage and the in-jail init must not link.
var leanInit = map[string]string{
	mod + "/jail":                      "the init is a lean binary: package jail links the launcher",
	mod + "/jail/slot":                 "the init keeps no records",
	mod + "/jail/transcript":           "the init writes no transcripts",
	mod + "/egress/...":                "the init relays bytes, it proxies nothing",
	mod + "/systemd/...":               "the init places nothing in units",
	"net/http":                         "the init is a lean binary",
	"net":                              "the init's relay uses raw sockets: net's initialisation would cost every start",
	"github.com/godbus/dbus/...":       "the init links no D-Bus",
	"github.com/coreos/go-systemd/...": "the init links no systemd",
	"github.com/creack/pty":            "the wrapper owns the terminal",
	"github.com/charmbracelet/...":     "the init renders nothing",
	"google.golang.org/protobuf/...":   "the init is a lean binary",
	"github.com/pelletier/go-toml/...": "the init parses no TOML",
}

// matches reports whether path is named by pattern ("x/..." means x and
// everything under it).
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

// TestImportDirections checks every package of the module against the
// table, through its whole dependency graph (test files excluded).
func TestImportDirections(t *testing.T) {
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command, to list dependencies", err)
	cmd := exec.Command(gobin, "list", "-deps=false", "-json", mod+"/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p.ImportPath)
	}
	if len(pkgs) < 10 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	checked := 0
	for _, pkg := range pkgs {
		var rules []map[string]string
		for _, f := range forbidden {
			if matches(f.pkg, pkg) {
				rules = append(rules, f.deps)
			}
		}
		if len(rules) == 0 {
			continue
		}
		c := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", pkg)
		c.Dir = cmd.Dir
		deps, err := c.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(deps)) {
			if dep == pkg {
				continue
			}
			for _, r := range rules {
				for bad, why := range r {
					// jail/agent is the one leaf every side may read.
					if matches(bad, dep) && dep != mod+"/jail/agent" && dep != mod+"/jail/distro" {
						t.Errorf("%s imports %s: %s", pkg, dep, why)
					}
				}
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked", checked)
	}
}

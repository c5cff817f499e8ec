package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

const mod = "github.com/aisan-dev/aisan"

// roles places every package of the module in one role (a trailing
// "/..." includes the subpackages), and says which roles it must never
// import, directly or through others, and why. It is the design's layout
// (DESIGN.md §2) as data, in the shape of tailscale's tstest/deptest: a
// new package must be given a role here before the test passes, and no
// rule has an exception.
var roles = []struct {
	name  string
	pkgs  []string
	never map[string]string
}{
	{"command", []string{mod + "/cmd/..."}, nil},
	{"description", []string{mod + "/jail"}, map[string]string{
		"runtime":   "the description of a box is pure: it runs nothing",
		"strict":    "the description knows a strict box as plain data its mode gathered",
		"egress":    "the description knows endpoints as data, not the proxy",
		"hooks":     "what the hooks package knows reaches the jail as data from cmd/aisan",
		"systemd":   "the description places nothing in units",
		"preflight": "preflight checks the description, not the reverse",
		"control":   "the description is steered by nothing",
	}},
	{"runtime", []string{mod + "/jail/launch/..."}, map[string]string{
		"strict":    "the runtime calls the box's mode; it never knows which",
		"egress":    "the runtime starts what the mode serves; it knows no proxy",
		"hooks":     "what the hooks package knows reaches the jail as data from cmd/aisan",
		"preflight": "preflight probes the runtime, not the reverse",
		"control":   "the runtime calls the box's mode; steering a running box is the mode's",
	}},
	{"strict", []string{mod + "/jail/strictbox/..."}, map[string]string{
		"hooks":     "a strict box edits no agent settings outside it",
		"preflight": "preflight checks the host, not the reverse",
	}},
	{"mechanism", []string{mod + "/jail/boxinit", mod + "/jail/relay", mod + "/jail/busproxy", mod + "/jail/slot", mod + "/jail/transcript/...", mod + "/jail/history"}, map[string]string{
		"description": "the box's own mechanisms and the runtime's state are beneath the description",
		"runtime":     "the box's own mechanisms are beneath the runtime",
		"strict":      "the box's own mechanisms are beneath the strict box",
		"egress":      "the box's own mechanisms proxy nothing",
		"hooks":       "the box's own mechanisms edit no agent settings",
		"systemd":     "the box's own mechanisms place nothing in units",
		"preflight":   "preflight checks the mechanisms, not the reverse",
		"control":     "the box's own mechanisms are steered by nothing",
	}},
	{"egress", []string{mod + "/egress/..."}, map[string]string{
		"description": "egress knows sockets, not mounts",
		"runtime":     "egress knows sockets, not launches",
		"strict":      "the strict box assembles egress, not the reverse",
		"mechanism":   "egress knows sockets, not slots or inits",
		"hooks":       "egress edits no agent settings",
		"systemd":     "egress does not manage units",
		"preflight":   "preflight checks egress, not the reverse",
		"control":     "egress is steered through the strict box, which holds the control channel",
	}},
	{"control", []string{mod + "/jail/control"}, map[string]string{
		"description": "the control channel carries requests; what they change is the box's",
		"runtime":     "the control channel carries requests; what they change is the box's",
		"strict":      "the strict box serves the control channel, not the reverse",
		"mechanism":   "the control channel carries requests and keeps no state",
		"egress":      "the control channel carries requests; the strict box applies them to egress",
		"leaf":        "the control channel imports nothing of ours",
		"guard":       "the control channel imports nothing of ours",
		"hooks":       "the control channel imports nothing of ours",
		"systemd":     "the control channel imports nothing of ours",
		"preflight":   "the control channel imports nothing of ours",
		"shell":       "the control channel imports nothing of ours",
		"config":      "the control channel imports nothing of ours",
	}},
	{"leaf", []string{mod + "/jail/agent", mod + "/jail/shared/...", mod + "/jail/jailtest"}, map[string]string{
		"leaf":        "a shared leaf imports nothing of ours",
		"description": "a shared leaf imports nothing of ours",
		"runtime":     "a shared leaf imports nothing of ours",
		"strict":      "a shared leaf imports nothing of ours",
		"mechanism":   "a shared leaf imports nothing of ours",
		"egress":      "a shared leaf imports nothing of ours",
		"guard":       "a shared leaf imports nothing of ours",
		"hooks":       "a shared leaf imports nothing of ours",
		"systemd":     "a shared leaf imports nothing of ours",
		"preflight":   "a shared leaf imports nothing of ours",
		"shell":       "a shared leaf imports nothing of ours",
		"control":     "a shared leaf imports nothing of ours",
		"config":      "a shared leaf imports nothing of ours",
	}},
	{"guard", []string{mod + "/guard/..."}, map[string]string{
		"description": "the hook path runs before every tool call: it stays small",
		"runtime":     "the hook path stays small",
		"strict":      "the hook path stays small",
		"mechanism":   "the hook path stays small",
		"egress":      "the hook path stays small",
		"hooks":       "the guard decides; installing it is another role",
		"systemd":     "the hook path links no systemd",
		"preflight":   "the hook path runs no host checks",
		"control":     "the hook path stays small",
	}},
	{"hooks", []string{mod + "/hooks/..."}, map[string]string{
		"description": "hooks edit agent settings; the jail is not theirs",
		"runtime":     "hooks edit agent settings",
		"strict":      "hooks edit agent settings",
		"mechanism":   "hooks edit agent settings",
		"egress":      "hooks edit agent settings",
		"systemd":     "hooks edit agent settings",
		"preflight":   "preflight checks the hooks, not the reverse",
	}},
	{"systemd", []string{mod + "/systemd/..."}, map[string]string{
		"description": "the user manager's client knows units, not boxes",
		"runtime":     "the runtime uses systemd, not the reverse",
		"strict":      "the user manager's client knows units, not boxes",
		"mechanism":   "the user manager's client knows units, not slots",
		"egress":      "the user manager's client proxies nothing",
		"hooks":       "the user manager's client edits no agent settings",
		"preflight":   "preflight checks systemd, not the reverse",
	}},
	{"shell", []string{mod + "/shell/..."}, map[string]string{
		"description": "the shell functions are embedded text",
		"runtime":     "the shell functions are embedded text",
		"strict":      "the shell functions are embedded text",
		"mechanism":   "the shell functions are embedded text",
		"egress":      "the shell functions are embedded text",
		"hooks":       "the shell functions are embedded text",
		"systemd":     "the shell functions are embedded text",
		"preflight":   "the shell functions are embedded text",
	}},
	{"config", []string{mod + "/jail/config"}, map[string]string{
		"description": "the configuration is parsed and weighed alone; the command layer applies it",
		"runtime":     "the configuration is parsed and weighed alone; the command layer applies it",
		"strict":      "the command layer reads the file through the trust check and hands over its bytes",
		"mechanism":   "the configuration knows keys, not slots or inits",
		"egress":      "the configuration knows keys, not proxies",
		"guard":       "the configuration knows keys, not commands",
		"hooks":       "the configuration edits no agent settings",
		"systemd":     "the configuration places nothing in units",
		"preflight":   "the configuration checks nothing on the host",
		"shell":       "the configuration knows keys, not shells",
		"control":     "the configuration knows keys, not running boxes",
	}},
	{"preflight", []string{mod + "/preflight/..."}, map[string]string{
		"strict": "preflight checks the host and probes a deny-list jail; the strict box's assembly is not its own",
	}},
	{"tests", []string{mod + "/tests/..."}, nil},
}

// libraries says, for packages that must stay lean or apart, which other
// imports (ours or third parties') they must never have, and why.
var libraries = []struct {
	pkg  string
	deps map[string]string
}{
	{mod + "/guard/...", map[string]string{
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
		"github.com/godbus/dbus/...": "hooks link no D-Bus",
		"github.com/creack/pty":      "hooks handle no terminal",
	}},
	{mod + "/jail/strictbox/mcp", map[string]string{
		mod + "/jail":                  "the MCP import is a leaf the strict box calls",
		mod + "/jail/strictbox":        "the MCP import is a leaf the strict box calls",
		mod + "/jail/strictbox/gitpin": "the MCP import is a leaf the strict box calls",
	}},
	// The strict side's helpers beneath strictbox are leaves it calls:
	// none reaches back up to the box, the launch or the description.
	{mod + "/jail/strictbox/trust", map[string]string{
		mod + "/jail":                    "the trust check is a leaf that the launch, the egress loading and the CLI share",
		mod + "/jail/strictbox":          "the trust check is a leaf",
		mod + "/jail/slot":               "the trust check is a leaf",
		mod + "/jail/strictbox/bindspec": "the trust check reads bytes; what they mean is its callers'",
		mod + "/egress/...":              "the trust check is a leaf",
	}},
	{mod + "/jail/strictbox/protect", map[string]string{
		mod + "/jail":           "what host tools run is decided from gathered facts, for the box's mode",
		mod + "/jail/strictbox": "protect is a leaf the strict box calls",
		mod + "/egress/...":     "protect knows paths, not egress",
	}},
	{mod + "/jail/strictbox/held", map[string]string{
		mod + "/jail":           "the held store knows files, not plans",
		mod + "/jail/strictbox": "held is a leaf the strict box and the review command call",
		mod + "/egress/...":     "the held store knows files, not egress",
	}},
	{mod + "/jail/strictbox/gitpin", map[string]string{
		mod + "/jail":           "git pins are decided from the repository, for the box's mode",
		mod + "/jail/strictbox": "gitpin is a leaf the strict box calls",
	}},
	// A launch writes transcripts; playing them back is 'aisan logs''.
	{mod + "/jail/launch/...", map[string]string{
		mod + "/jail/transcript/playback": "a launch records; playing back is aisan logs'",
		"github.com/charmbracelet/...":    "a launch emulates no terminal: the front starts on every launch",
	}},
	{mod + "/jail/relay", map[string]string{
		"net/http":                         "the in-box relay is a byte pump",
		"github.com/godbus/dbus/...":       "the in-box relay is a byte pump",
		"github.com/coreos/go-systemd/...": "the in-box relay is a byte pump",
	}},
	// Every launch starts the init: a lean binary, so its start costs
	// what a small Go program costs. (cmd/aisan-init itself:
	// TestInitLinks.)
	{mod + "/jail/boxinit", leanInit},
	{mod + "/egress/anthropic", map[string]string{mod + "/egress/openai/...": "backends are independent", mod + "/egress/reapi/...": "backends are independent"}},
	{mod + "/egress/openai", map[string]string{mod + "/egress/anthropic/...": "backends are independent", mod + "/egress/reapi/...": "backends are independent"}},
	{mod + "/egress/reapi", map[string]string{mod + "/egress/anthropic/...": "backends are independent", mod + "/egress/openai/...": "backends are independent"}},
	{mod + "/egress/policy", map[string]string{mod + "/...": "the policy engine is data and a walk; the backends hold the tables"}},
	{mod + "/egress/cred", map[string]string{mod + "/egress/anthropic/...": "credential sources serve the backends, not the reverse", mod + "/egress/openai/...": "likewise", mod + "/egress/reapi/...": "likewise"}},
}

// leanInit is what the in-jail init must not link.
var leanInit = map[string]string{
	mod + "/jail":                      "the init is a lean binary: package jail links the planner",
	mod + "/jail/launch/...":           "the init is a lean binary: the launcher is aisan's",
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
	// What each start of the init would pay for in package initialisation
	// and pages faulted in, for work the init does not do. (context stays:
	// os/signal links it, and PID 1 must handle signals.)
	"fmt":                   "the init writes its few messages itself (errwrap, complain): fmt's printer links reflect",
	"reflect":               "the init decodes its payload by hand; nothing it does needs reflection",
	"encoding/json":         "the payload is NUL-separated fields (boxinit/payload.go), not JSON",
	"encoding/binary":       "it links reflect",
	"golang.org/x/sys/unix": "the syscall package has every call the init and its relay make; x/sys/unix links encoding/binary, and so reflect",
	"os/exec":               "the init starts its children with syscall.ForkExec and finds the agent with its own PATH walk (boxinit/lookpath.go)",
	"path/filepath":         "the init joins a PATH entry with path, as filepath does on Linux",
	"bufio":                 "the environment file is read whole and split by hand",
	"sort":                  "slices sorts without sort's interface",
	"regexp":                "the init matches no patterns",
}

// TestInitLinks checks the whole dependency graph of aisan-init, the
// binary every launch starts, against leanInit.
func TestInitLinks(t *testing.T) {
	for _, dep := range linkedBy(t, mod+"/cmd/aisan-init") {
		for bad, why := range leanInit {
			if matches(bad, dep) {
				t.Errorf("aisan-init links %s: %s", dep, why)
			}
		}
	}
}

// linkedBy is every package the go command lists for building pkg with
// the go list arguments given before it.
func linkedBy(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command, to list dependencies", err)
	cmd := exec.Command(gobin, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("only %d packages listed", len(deps))
	}
	return deps
}

// matches reports whether path is named by pattern ("x/..." means x and
// everything under it).
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

// roleOf is the roles the table gives pkg: none for a package outside
// the module; a module package has exactly one (TestImportDirections
// checks).
func roleOf(pkg string) []string {
	var out []string
	for _, r := range roles {
		if slices.ContainsFunc(r.pkgs, func(p string) bool { return matches(p, pkg) }) {
			out = append(out, r.name)
		}
	}
	return out
}

// TestImportDirections checks every package of the module against the
// tables, through its whole dependency graph (test files excluded).
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
	never := map[string]map[string]string{}
	for _, r := range roles {
		never[r.name] = r.never
	}
	for _, pkg := range pkgs {
		rs := roleOf(pkg)
		if len(rs) != 1 {
			t.Errorf("%s has the roles %q: give it exactly one in the roles table", pkg, rs)
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
			if ds := roleOf(dep); len(ds) == 1 {
				if ds[0] == "command" {
					t.Errorf("%s imports %s: nothing imports the command layer", pkg, dep)
				}
				if why, bad := never[rs[0]][ds[0]]; bad {
					t.Errorf("%s (%s) imports %s (%s): %s", pkg, rs[0], dep, ds[0], why)
				}
			}
			for _, l := range libraries {
				if !matches(l.pkg, pkg) {
					continue
				}
				for bad, why := range l.deps {
					if matches(bad, dep) {
						t.Errorf("%s imports %s: %s", pkg, dep, why)
					}
				}
			}
		}
	}
}

// frontNever is what the front (cmd/aisan built with the aisanfront tag,
// handover.go) must not link: it starts on every launch and every
// shell-function call, and what a deny-list launch never uses is the
// full binary's.
var frontNever = map[string]string{
	mod + "/egress/...":               "a deny-list launch proxies nothing; strict boxes are the full binary's",
	mod + "/jail/strictbox":           "strict boxes are the full binary's",
	mod + "/jail/transcript/playback": "aisan logs is the full binary's",
	mod + "/preflight/...":            "preflight is the full binary's",
	mod + "/guard/...":                "the guard is aisan-guard's (or the full binary's 'aisan guard')",
	"github.com/charmbracelet/...":    "the front emulates no terminal",
	"golang.org/x/net/...":            "the front speaks no HTTP/2",
	"golang.org/x/oauth2/...":         "the front fetches no tokens",
	"google.golang.org/protobuf/...":  "the front speaks no protobuf",
	"net/http":                        "the front makes no requests",
	"crypto/tls":                      "the front makes no connections",
	"github.com/mattn/go-shellwords":  "the front splits no MCP commands",
	"github.com/pelletier/go-toml/v2": "the front reads TOML through the unstable parser only (jail/config)",
	mod + "/hooks":                    "the front edits no agent settings (install-hook is the full binary's); opencode's rules are hooks/opencode",
	"mvdan.cc/sh/...":                 "the front parses no shell: its package init compiles regular expressions on every start",
}

// TestFrontLinks checks the front's whole dependency graph against
// frontNever.
func TestFrontLinks(t *testing.T) {
	for _, dep := range linkedBy(t, "-tags", "aisanfront", mod+"/cmd/aisan") {
		for bad, why := range frontNever {
			if matches(bad, dep) {
				t.Errorf("the front links %s: %s", dep, why)
			}
		}
	}
}

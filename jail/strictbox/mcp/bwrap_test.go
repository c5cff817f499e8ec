package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// A server imported from the host runs in a bwrap box built only from
// what Prepare returned (plus /usr and /etc): its command resolves through
// the recreated link and the bind, it cannot read a host-only file under
// $HOME, it sees no network but loopback, and its env holds only what the
// written config gives it (the withheld secret is gone, the allowed one
// is there). This is the box side of the import without an agent; the
// strict launcher's own test drives the same through a client.
func TestImportedServerRunsInBwrap(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	H := root + "/home"
	probe, _ := os.ReadFile("testdata/mcp-probe.sh")
	writeTree(t, root, map[string]string{
		"home/.local/share/probe/bin/mcp-probe": string(probe),
		"home/.local/bin/mcp-probe":             "->../share/probe/bin/mcp-probe",
		"home/secret.txt":                       "host-only",
		"home/.claude.json": `{"mcpServers": {"probe": {"command": "mcp-probe", "env": {
			"GITHUB_TOKEN": "ghp_0123456789abcdefghij0123456789abcdef", "ALLOWED_KEY": "sk-0123456789abcdefghij", "PLAIN": "1"}}}}`,
		"state/": "",
	})
	before := treeSums(t, H)
	boxPATH := H + "/.local/bin:/usr/bin:/bin"
	p, err := Prepare(Options{
		Client: Claude, Host: Host{Home: H}, AllowEnv: []string{"ALLOWED_KEY"},
		StateDir: root + "/state", BoxStateDir: root + "/state",
		Resolve: ResolveHost{PATH: boxPATH, Home: H, Covered: func(p string) bool { return under(p, []string{"/usr", "/bin", "/etc"}) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("binds %q symlinks %+v lines %q", p.Binds, p.Symlinks, p.Lines)

	// Start the server the way Claude would from the written config.
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	b, _ := os.ReadFile(p.ConfigPath)
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	srv := cfg.MCPServers["probe"]
	args := boxArgs(H, boxPATH, p.Binds, p.Symlinks)
	names := make([]string, 0, len(srv.Env))
	for k := range srv.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--setenv", k, srv.Env[k])
	}
	args = append(append(args, srv.Command), srv.Args...)
	cmd := exec.Command(bwrap, args...)
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + H + `/secret.txt"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"env","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"net","arguments":{}}}`,
	}, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bwrap %q: %v\n%s", args, err, out)
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Result struct{ Content []struct{ Text string } }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if len(r.Result.Content) > 0 {
			texts = append(texts, r.Result.Content[0].Text)
		}
	}
	if len(texts) != 3 {
		t.Fatalf("replies:\n%s", out)
	}
	if strings.Contains(texts[0], "host-only") || !strings.Contains(texts[0], "No such file") {
		t.Errorf("the server read the host-only file: %q", texts[0])
	}
	env := strings.Fields(texts[1])
	for _, want := range []string{"ALLOWED_KEY", "HOME", "PATH", "PLAIN"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
	for _, v := range env {
		if !slices.Contains([]string{"ALLOWED_KEY", "HOME", "PATH", "PLAIN", "PWD", "OLDPWD", "SHLVL", "_"}, v) {
			t.Errorf("the server sees %s, which nothing allowed", v)
		}
	}
	if texts[2] != "lo" {
		t.Errorf("network interfaces %q, want only lo", texts[2])
	}
	after := treeSums(t, H)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("host home changed")
	}
	if filepath.Dir(p.ConfigPath) != root+"/state" {
		t.Errorf("config written to %s", p.ConfigPath)
	}
}

func needBwrap(t *testing.T) string {
	bwrap, err := exec.LookPath("bwrap")
	jailtest.Need(t, "bwrap", err)
	if out, err := exec.Command(bwrap, "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput(); err != nil {
		jailtest.Need(t, "bwrap with namespaces", fmt.Errorf("%v: %s", err, out))
	}
	return bwrap
}

// boxArgs is a minimal strict-like box: /usr and /etc read-only, an empty
// home, no network, a cleared env, plus the resolved binds and links.
func boxArgs(home, path string, binds []string, links []Symlink) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--clearenv",
		"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
		"--tmpfs", "/tmp", "--dir", home, "--setenv", "HOME", home, "--setenv", "PATH", path}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if t, err := os.Readlink("/" + l); err == nil {
			args = append(args, "--symlink", t, "/"+l)
		} else if _, err := os.Stat("/" + l); err == nil {
			args = append(args, "--ro-bind", "/"+l, "/"+l)
		}
	}
	for _, b := range binds {
		args = append(args, "--ro-bind", b, b)
	}
	for _, l := range links {
		args = append(args, "--symlink", l.Target, l.Path)
	}
	return args
}

// The installed codex is an npm package whose node launcher finds its
// native binary in a sibling package: the resolved binds must be enough
// for it to run in the box.
func TestResolvedNpmToolRunsInBwrap(t *testing.T) {
	bwrap := needBwrap(t)
	bin := npmBin(t)
	path := bin + ":/usr/bin:/bin"
	res := Resolve([]Server{{Name: "codex", Command: "codex"}}, ResolveHost{PATH: path, Home: "/root",
		Covered: func(p string) bool { return under(p, []string{"/usr", "/bin", "/etc"}) }})
	if len(res.Unrunnable) != 0 {
		t.Fatal(res.Unrunnable[0].Err)
	}
	t.Logf("binds %q links %+v", res.Binds, res.Symlinks)
	home := t.TempDir()
	out, err := exec.Command(bwrap, append(boxArgs(home, path, res.Binds, res.Symlinks), "codex", "--version")...).Output()
	if err != nil || !strings.HasPrefix(string(out), "codex-cli ") {
		t.Errorf("codex in the box: %v\n%s", err, out)
	}
}

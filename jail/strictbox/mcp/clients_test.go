package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// The real claude, codex and opencode must accept what the writers emit,
// start the imported stdio server and list only it;
// and the whole import must leave the host files byte for byte as they
// were. The clients run unjailed but in a fresh network namespace with
// loopback down (unshare -rn), so nothing can leave the machine.

func npmBin(t *testing.T) string {
	dir := os.Getenv("AISAN_TEST_NPM_BIN")
	if dir == "" {
		dir = "/opt/aisan-test-npm/node_modules/.bin"
	}
	for _, c := range []string{"claude", "codex", "opencode"} {
		_, err := os.Stat(filepath.Join(dir, c))
		jailtest.Need(t, "the "+c+" CLI in "+dir+" (set AISAN_TEST_NPM_BIN)", err)
	}
	_, err := exec.LookPath("node")
	jailtest.Need(t, "node on PATH (codex's launcher is a node script)", err)
	out, err := exec.Command("unshare", "-rn", "true").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, out)
	}
	jailtest.Need(t, "unshare -rn (an unprivileged network namespace)", err)
	return dir
}

// treeSums maps every file under root to its content hash (links to their
// target), so that any write, creation or deletion shows.
func treeSums(t *testing.T, root string) map[string]string {
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			sums[p] = "-> " + l
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sums[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func runClient(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-rn", name}, args...)...)
	cmd.Env = env
	cmd.Dir = env[0][len("HOME="):]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	if ctx.Err() != nil {
		t.Fatalf("%s timed out", name)
	}
	return out.String()
}

func TestRealClientsAcceptGeneratedConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the three real clients (about 15 s); not in -short")
	}
	bin := npmBin(t)
	root := t.TempDir()
	host, box, state := root+"/host", root+"/box", root+"/state"
	for _, d := range []string{host, box, state} {
		os.MkdirAll(d, 0o700)
	}
	probe, err := filepath.Abs("testdata/mcp-probe.sh")
	if err != nil {
		t.Fatal(err)
	}
	probeLog := root + "/probe.log"
	entryEnv := fmt.Sprintf(`{"MCP_PROBE_LOG": %q, "GITHUB_TOKEN": "ghp_0123456789abcdefghij0123456789abcdef", "REF": "${HOME}"}`, probeLog)
	writeTree(t, host, map[string]string{
		".claude.json":                    fmt.Sprintf(`{"mcpServers": {"probe": {"command": %q, "env": %s}, "web": {"type": "http", "url": "https://mcp.invalid/mcp", "headers": {"Authorization": "Bearer hostsecret"}}}}`, probe, entryEnv),
		".codex/config.toml":              fmt.Sprintf("[mcp_servers.probe]\ncommand = %q\nenv = { MCP_PROBE_LOG = %q, API_KEY = \"sk-0123456789abcdefghij\" }\nstartup_timeout_sec = 20\n\n[mcp_servers.web]\nurl = \"https://mcp.invalid/mcp\"\nbearer_token_env_var = \"HOST_TOKEN\"\n", probe, probeLog),
		".config/opencode/opencode.jsonc": fmt.Sprintf("{\n  // host servers\n  \"mcp\": {\n    \"probe\": {\"type\": \"local\", \"command\": [%q], \"environment\": %s,},\n    \"web\": {\"type\": \"remote\", \"url\": \"https://mcp.invalid/mcp\"},\n  },\n}\n", probe, entryEnv),
	})
	// A decoy in the box's own Claude config: --strict-mcp-config must
	// keep Claude from starting it.
	writeTree(t, state, map[string]string{
		".claude.json": `{"hasCompletedOnboarding": true, "mcpServers": {"decoy": {"command": "/bin/false"}}}`,
	})
	writeTree(t, box, map[string]string{".mcp.json": `{"mcpServers": {"decoy2": {"command": "/bin/false"}}}`})
	before := treeSums(t, host)

	h := Host{Home: host, Project: box, Repo: box}
	rh := ResolveHost{PATH: "/usr/local/bin:/usr/bin:/bin", Home: host, Covered: func(p string) bool {
		return under(p, []string{"/usr", "/bin", "/etc", filepath.Dir(probe)})
	}}
	written := map[Client]string{}
	for _, c := range []struct {
		client Client
		load   func(Host) (Import, error)
		write  func(string, []Server) (string, error)
	}{{Claude, LoadClaude, WriteClaude}, {Codex, LoadCodex, WriteCodex}, {Opencode, LoadOpencode, WriteOpencode}} {
		imp, err := c.load(h)
		if err != nil {
			t.Fatal(err)
		}
		if len(imp.Servers) != 1 || imp.Servers[0].Name != "probe" || !slices.ContainsFunc(imp.Dropped, func(d Dropped) bool { return d.Name == "web" }) {
			t.Fatalf("%s import: %+v", c.client, imp)
		}
		kept, withheld, _ := FilterEnv(imp, nil)
		if len(withheld) != 1 {
			t.Errorf("%s: withheld %+v, want the one secret", c.client, withheld)
		}
		if res := Resolve(kept.Servers, rh); len(res.Unrunnable) != 0 {
			t.Fatal(res.Unrunnable[0].Err)
		}
		p, err := c.write(state, kept.Servers)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("ghp_")) || bytes.Contains(b, []byte("sk-")) || bytes.Contains(b, []byte("hostsecret")) || bytes.Contains(b, []byte("mcp.invalid")) {
			t.Errorf("%s: a secret or the remote server reached %s:\n%s", c.client, p, b)
		}
		written[c.client] = p
	}

	env := []string{
		"HOME=" + box, "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + box + "/.config", "XDG_DATA_HOME=" + box + "/.local/share",
		"XDG_STATE_HOME=" + box + "/.local/state", "XDG_CACHE_HOME=" + box + "/.cache",
		// Telemetry and update kill switches (see the strict-mode notes).
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "npm_config_offline=true",
	}

	t.Run("claude", func(t *testing.T) {
		os.Remove(probeLog)
		dbg := root + "/claude-debug.log"
		cenv := append(env, "CLAUDE_CONFIG_DIR="+state, "ANTHROPIC_API_KEY=placeholder", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "CLAUDE_CODE_MAX_RETRIES=0")
		args := append([]string{"-p", "hi", "--debug-file", dbg}, ClaudeArgs(written[Claude])...)
		runClient(t, cenv, "claude", args...)
		log, _ := os.ReadFile(dbg)
		if !bytes.Contains(log, []byte(`MCP server "probe": Successfully connected`)) {
			t.Errorf("claude did not connect to the imported server; debug log:\n%s", grepLines(log, "MCP"))
		}
		if bytes.Contains(log, []byte(`"decoy`)) || bytes.Contains(log, []byte(`"web"`)) {
			t.Errorf("claude saw a server it should not have:\n%s", grepLines(log, "MCP"))
		}
		if b, _ := os.ReadFile(probeLog); !bytes.Contains(b, []byte(`"initialize"`)) {
			t.Errorf("the probe server logged no initialize: %q", b)
		}
	})

	t.Run("codex", func(t *testing.T) {
		out := runClient(t, append(env, "CODEX_HOME="+state), "codex", "mcp", "list", "--json")
		var list []struct {
			Name      string
			Enabled   bool
			Transport struct {
				Type    string
				Command string
				Env     map[string]string
			}
		}
		if i := strings.Index(out, "["); i < 0 || json.Unmarshal([]byte(out[i:]), &list) != nil {
			t.Fatalf("codex mcp list --json gave no JSON list:\n%s", out)
		}
		if len(list) != 1 || list[0].Name != "probe" || !list[0].Enabled || list[0].Transport.Type != "stdio" || list[0].Transport.Command != probe ||
			list[0].Transport.Env["MCP_PROBE_LOG"] != probeLog || list[0].Transport.Env["API_KEY"] != "" {
			t.Errorf("codex lists %+v", list)
		}
	})

	// codex mcp list does not start servers; codex exec does, before its
	// model call, which then waits for a network that never comes: so
	// wait for the probe's tools/list and stop codex.
	t.Run("codex exec", func(t *testing.T) {
		os.Remove(probeLog)
		cenv := append(env, "CODEX_HOME="+state, "AISAN_CODEX_API_KEY=placeholder")
		args := []string{"-rn", "codex", "exec", "--skip-git-repo-check",
			"-c", `model_provider="aisan"`, "-c", `model_providers.aisan.name="aisan"`,
			"-c", `model_providers.aisan.base_url="http://127.0.0.1:9"`, "-c", `model_providers.aisan.env_key="AISAN_CODEX_API_KEY"`,
			"-c", `model_providers.aisan.wire_api="responses"`, "-c", "model_providers.aisan.requires_openai_auth=false",
			"-c", "analytics.enabled=false", "-c", "features.plugins=false", "-c", "features.apps=false",
			"-c", "check_for_update_on_startup=false", "hi"}
		cmd := exec.Command("unshare", args...)
		cmd.Env, cmd.Dir = cenv, box
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if b, _ := os.ReadFile(probeLog); bytes.Contains(b, []byte(`"tools/list"`)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("codex exec did not start the imported server in 60 s:\n%s", out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("opencode", func(t *testing.T) {
		os.Remove(probeLog)
		out := runClient(t, append(env, "OPENCODE_CONFIG="+written[Opencode]), "opencode", "mcp", "list")
		if !strings.Contains(out, "probe") || !strings.Contains(out, "connected") || strings.Contains(out, "web") {
			t.Errorf("opencode mcp list:\n%s", out)
		}
		if b, _ := os.ReadFile(probeLog); !bytes.Contains(b, []byte(`"initialize"`)) || bytes.Contains(b, []byte("ghp_")) {
			t.Errorf("the probe server's log: %q", b)
		}
	})

	after := treeSums(t, host)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("host files changed:\nbefore %v\nafter  %v", before, after)
	}
}

func grepLines(b []byte, word string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

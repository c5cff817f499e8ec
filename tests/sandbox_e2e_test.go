package tests

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The agents' own sandboxes keep working inside aisan: Claude Code's
// (sandbox.enabled, which builds its own bwrap inside, with socat for its
// network bridge) and Codex's (--sandbox workspace-write), in a deny-list
// jail and in a strict box, each the real CLI against a loopback stand-in.
// A tool call then writes in the working directory (allowed) and in $HOME
// (which the agent's sandbox refuses); the same probe run by aisan
// without the agent's sandbox writes both, so the test tells the two
// apart.

// sandboxProbe is the tool call: one line each for the two writes.
const sandboxProbe = `touch inside-probe && echo inside:written; if touch "$HOME/outside-probe" 2>/dev/null; then echo outside:written; else echo outside:refused; fi`

// claudeSandboxSettings turn Claude Code's sandbox on, and make it fail
// rather than run a command unsandboxed.
const claudeSandboxSettings = `{"sandbox":{"enabled":true,"failIfUnavailable":true,"allowUnsandboxedCommands":false,"autoAllowBashIfSandboxed":true}}`

// checkSandboxed asserts the probe's result under an agent's sandbox.
func checkSandboxed(t *testing.T, what, res, dir, home string) {
	t.Helper()
	if !strings.Contains(res, "inside:written") || !strings.Contains(res, "outside:refused") || strings.Contains(res, "outside:written") {
		t.Errorf("%s: the probe under the agent's own sandbox said %q; want the working directory written and $HOME refused", what, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "inside-probe")); err != nil {
		t.Errorf("%s: the write in the working directory did not reach the host: %v", what, err)
	}
	if _, err := os.Stat(filepath.Join(home, "outside-probe")); err == nil {
		t.Errorf("%s: the write in $HOME reached the host", what)
	}
}

// checkUnsandboxedProbe runs the probe with aisan ARGS and no agent: it
// must write both, or the agent's refusal above proves nothing.
func checkUnsandboxedProbe(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	r := runJailed(t, dir, env, append(args, "sh", "-c", sandboxProbe)...)
	if r.code != 0 || !strings.Contains(r.stdout, "outside:written") {
		t.Fatalf("the probe without the agent's sandbox (aisan %s): %d %q %q; want $HOME writable, or the test proves nothing", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	os.Remove(filepath.Join(dir, "inside-probe"))
}

// TestAgentClaudeOwnSandbox: Claude Code with its sandbox on, in a
// deny-list jail and in a strict box.
func TestAgentClaudeOwnSandbox(t *testing.T) {
	bin := nodeBin(t, "claude")
	requireSocat(t)
	prompt := []string{"-p", "Run the shell commands you are given.", "--output-format", "json", "--allowedTools", "Bash", "--settings", claudeSandboxSettings}
	t.Run("deny-list", func(t *testing.T) {
		requireJail(t)
		home, _ := testEnv(t)
		dir := worktree(t)
		s := newStandIn(t, sandboxProbe, anthropicAPI)
		env := append(jailEnv(home, bin), claudeSetup(t, home, s)...)
		checkUnsandboxedProbe(t, dir, env, "run", "--")
		os.Remove(filepath.Join(home, "outside-probe"))
		r := runJailed(t, dir, env, append([]string{"claude"}, prompt...)...)
		if err := claudeDone(r.stdout); err != nil {
			t.Fatalf("claude with its sandbox in a deny-list jail: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
		}
		checkSandboxed(t, "deny-list jail", toolResult(t, s, 0, r.stdout+r.stderr), dir, home)
	})
	t.Run("strict", func(t *testing.T) {
		repo, home, _ := strictRepo(t)
		ca := newTestCA(t, t.TempDir(), "127.0.0.1")
		os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
		os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-host","refreshToken":"r","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
			time.Now().Add(24*time.Hour).UnixMilli())), 0o600)
		s, _ := tlsStandIn(t, ca, []string{sandboxProbe}, anthropicAPI)
		env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
		checkUnsandboxedProbe(t, repo, env, "run", "--strict", "--")
		r := runJailed(t, repo, env, append([]string{"claude", "--strict", "--"}, prompt...)...)
		if err := claudeDone(r.stdout); err != nil {
			t.Fatalf("claude with its sandbox in a strict box: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
		}
		checkSandboxed(t, "strict box", toolResult(t, s, 0, r.stdout+r.stderr), repo, home)
	})
}

// TestAgentCodexOwnSandbox: Codex with --sandbox workspace-write, in a
// deny-list jail and in a strict box. Its sandbox lets commands write in
// /tmp, and it makes the aliases its sandbox helper runs through only in
// a CODEX_HOME outside /tmp: HOME and aisan's state are outside /tmp here,
// as they are for a user.
func TestAgentCodexOwnSandbox(t *testing.T) {
	bin := nodeBin(t, "codex")
	exec := []string{"exec", "--skip-git-repo-check", "--json", "--sandbox", "workspace-write", "Run the shell commands you are given."}
	done := printsEvent(`"type":"turn.completed"`)
	t.Run("deny-list", func(t *testing.T) {
		requireJail(t)
		home, _ := homeOutsideTmp(t)
		dir := worktree(t)
		s := newStandIn(t, sandboxProbe, responsesAPI)
		env := append(jailEnv(home, bin), codexSetup(t, home, s)...)
		checkUnsandboxedProbe(t, dir, env, "run", "--")
		os.Remove(filepath.Join(home, "outside-probe"))
		r := runJailed(t, dir, env, append([]string{"codex"}, exec...)...)
		if err := done(r.stdout); err != nil {
			t.Fatalf("codex with its sandbox in a deny-list jail: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
		}
		checkSandboxed(t, "deny-list jail", toolResult(t, s, 0, r.stdout+r.stderr), dir, home)
	})
	t.Run("strict", func(t *testing.T) {
		requireJail(t)
		home, env := homeOutsideTmp(t)
		repo := worktree(t)
		hostGit(t, repo, env, "init", "-q")
		ca := newTestCA(t, t.TempDir(), "127.0.0.1")
		os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
		os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"gpt-5-codex\"\n"), 0o600)
		s, _ := tlsStandIn(t, ca, []string{sandboxProbe}, responsesAPI)
		env = append(jailEnv(home, bin), "OPENAI_API_KEY=sk-host-openai-key", "AISAN_OPENAI_UPSTREAM="+s.srv.URL+"/v1",
			"SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
		checkUnsandboxedProbe(t, repo, env, "run", "--strict", "--")
		r := runJailed(t, repo, env, append([]string{"codex", "--strict", "--"}, exec...)...)
		if err := done(r.stdout); err != nil {
			t.Fatalf("codex with its sandbox in a strict box: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
		}
		checkSandboxed(t, "strict box", toolResult(t, s, 0, r.stdout+r.stderr), repo, home)
	})
}

// homeOutsideTmp is testEnv with HOME (and aisan's state in it) in a new
// directory under the test user's own home instead of the temporary
// directory, removed at cleanup.
func homeOutsideTmp(t *testing.T) (home string, env []string) {
	t.Helper()
	base, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	home, err = os.MkdirTemp(base, "aisan-test-home-")
	if err != nil {
		need(t, "a writable home directory for the test user", err)
	}
	if home, err = filepath.EvalSymlinks(home); err != nil {
		t.Fatal(err)
	}
	env = []string{"HOME=" + home, "AISAN_HOME=" + filepath.Join(home, ".aisan")}
	t.Cleanup(func() {
		cmd := osexec.Command(aisanBin, "kill", "--all", "--signal", "KILL")
		cmd.Env = append(os.Environ(), env...)
		cmd.Run()
		os.RemoveAll(home)
	})
	return home, env
}

// requireSocat skips (or fails) without socat, which Claude Code's sandbox
// needs on Linux (tests/env/deps.sh installs it).
func requireSocat(t *testing.T) {
	t.Helper()
	_, err := osexec.LookPath("socat")
	need(t, "socat, for Claude Code's sandbox", err)
}

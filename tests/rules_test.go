package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// claudeRulesSettings are the user's Claude settings the rules tests
// use: a deny rule, and a hook whose script lives in the home, which no
// box shows.
func claudeRulesSettings(t *testing.T, home string) {
	t.Helper()
	hook := filepath.Join(home, "hooks", "notify.sh")
	os.MkdirAll(filepath.Dir(hook), 0o755)
	os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	settings := map[string]any{
		"permissions": map[string]any{"deny": []string{"Bash(touch:*)"}},
		"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": hook},
		}}}},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeUserDenyHolds: the real claude, told to skip its prompts,
// refuses a command the user's permissions.deny names, in the deny-list
// jail and in a strict box alike; in the box aisan's kill guard, which
// the user installed with install-hook, refuses a broadcast kill too, and
// the launch names the hook the box cannot run.
func TestClaudeUserDenyHolds(t *testing.T) {
	bin := nodeBin(t, "claude")
	const touched = "denied-by-the-user"
	commands := []string{"touch " + touched, "pkill -f aisan-rules-test-nothing"}
	check := func(t *testing.T, repo string, s *standIn, r jailedRun) {
		t.Helper()
		if err := claudeDone(r.stdout); err != nil {
			t.Fatalf("claude: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
		}
		if _, err := os.Stat(filepath.Join(repo, touched)); err == nil {
			t.Errorf("%q ran although the user's settings deny it", commands[0])
		}
		if res, _ := s.resultOf(0); !strings.Contains(res, "denied") {
			t.Errorf("the model was not told the command is denied: %q", res)
		}
	}
	t.Run("jailed", func(t *testing.T) {
		requireJail(t)
		repo := worktree(t)
		home, _ := testEnv(t)
		s := newScriptedStandIn(t, commands[:1], anthropicAPI)
		env := append(jailEnv(home, bin), claudeSetup(t, home, s)...)
		claudeRulesSettings(t, home)
		r := runJailed(t, repo, append(env, "AISAN_NO_SCOPE=1"), "claude", "--", "--dangerously-skip-permissions", "-p", "Run the shell command you are given.", "--output-format", "json")
		check(t, repo, s, r)
	})
	t.Run("strict", func(t *testing.T) {
		repo, home, env := strictRepo(t)
		strictClaudeUser(t, env, home)
		ca := newTestCA(t, t.TempDir(), "127.0.0.1")
		s, _ := tlsStandIn(t, ca, commands, anthropicAPI)
		env = append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
		r := runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Run the shell command you are given.", "--output-format", "json")
		check(t, repo, s, r)
		if res, _ := s.resultOf(1); !carriesReason(res, guardReasonsIn(t, slotName(repo, "claude"), commands[1])) {
			t.Errorf("aisan's kill guard did not refuse %q in the box: %q", commands[1], res)
		}
		hook := filepath.Join(home, "hooks", "notify.sh")
		if !strings.Contains(r.stderr, "Stop hook \""+hook+"\": "+hook+" is not in the box") || !strings.Contains(r.stderr, `ro = ["~/hooks"]`) {
			t.Errorf("the launch did not name the hook the box cannot run:\n%s", r.stderr)
		}
		if !strings.Contains(r.stderr, "aisan claude --strict --resume") {
			t.Errorf("the launch did not say where the box's sessions resume:\n%s", r.stderr)
		}
	})
}

// TestStrictOpencodeAsks: the user's "bash": "ask" reaches opencode in a
// strict box: the real opencode there builds a ruleset that asks for
// bash, with aisan's kill rules after it.
func TestStrictOpencodeAsks(t *testing.T) {
	bin := nodeBin(t, "opencode")
	repo, home, _ := strictRepo(t)
	writeFiles(t, home, map[string]string{".config/opencode/opencode.jsonc": "{\n  // the user's own rule\n  \"permission\": {\"bash\": \"ask\"},\n}\n"})
	r := runJailed(t, repo, append(jailEnv(home, bin), "AISAN_NO_SCOPE=1"), "opencode", "--strict", "--", "debug", "agent", "build")
	if r.code != 0 {
		t.Fatalf("opencode debug agent build in the box: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var agent struct {
		Permission []opencodeRule `json:"permission"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &agent); err != nil {
		t.Fatalf("opencode printed no agent (%v):\n%s", err, r.stdout)
	}
	if got := ocEvaluate(agent.Permission, "bash", "npm test"); got != "ask" {
		t.Errorf("in the box opencode does %q for bash, want ask; rules %+v", got, agent.Permission)
	}
	if got := ocEvaluate(agent.Permission, "bash", "pkill -f node"); got != "deny" {
		t.Errorf("in the box opencode does %q for a pkill, want aisan's deny", got)
	}
}

// TestStrictMCPNeverStopsALaunch: a server whose command the box cannot
// run (a bare name from ~/.local/bin) is dropped with a note naming it,
// its file and the bind spec line that would bring it, and the launch
// goes on; --no-mcp imports nothing, not even a server that would run.
func TestStrictMCPNeverStopsALaunch(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	local := filepath.Join(home, ".local", "bin")
	os.MkdirAll(local, 0o755)
	os.WriteFile(filepath.Join(local, "far-mcp"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	claudeJSON := filepath.Join(home, ".claude.json")
	os.WriteFile(claudeJSON, []byte(`{"mcpServers": {"far": {"command": "far-mcp"}, "near": {"command": "sh", "args": ["-c", "cat"]}, "fetched": {"command": "npx", "args": ["-y", "some-mcp"]}}}`), 0o600)
	env := append(jailEnv(home, bin), "PATH="+bin+":"+local+":"+os.Getenv("PATH"), "AISAN_NO_SCOPE=1")
	mcpFile := func() string {
		t.Helper()
		matches, _ := filepath.Glob(filepath.Join(home, ".aisan", "state", "*", "aisan-mcp.json"))
		if len(matches) != 1 {
			t.Fatalf("the box's MCP config: %q", matches)
		}
		b, _ := os.ReadFile(matches[0])
		return string(b)
	}

	r := runJailed(t, repo, env, "claude", "--strict", "--", "--version")
	if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("a server the box cannot run stopped the launch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := `claude mcp server "far" from ` + claudeJSON + ` not imported: cannot run in the box: command "far-mcp" is not on the box PATH`
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, `ro = ["~/.local/bin"] and path = ["~/.local/bin"]`) {
		t.Errorf("the launch did not name the dropped server, its file and the fix:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, `"fetched"`) || !strings.Contains(r.stderr, "runs npx") {
		t.Errorf("the launch did not say the npx server needs the network:\n%s", r.stderr)
	}
	if f := mcpFile(); !strings.Contains(f, `"near"`) || strings.Contains(f, `"far"`) {
		t.Errorf("the box's MCP config:\n%s", f)
	}

	r = runJailed(t, repo, env, "claude", "--strict", "--no-mcp", "--", "--version")
	if r.code != 0 {
		t.Fatalf("--no-mcp: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "far") || strings.Contains(r.stderr, "mcp server") {
		t.Errorf("--no-mcp still spoke of the user's servers:\n%s", r.stderr)
	}
	if f := mcpFile(); strings.Contains(f, `"near"`) {
		t.Errorf("--no-mcp still gave the box a server:\n%s", f)
	}
}

// claudeHostLogin gives home a Claude subscription login, valid for a
// day, that stays on the host.
func claudeHostLogin(t *testing.T, home string) {
	t.Helper()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(
		`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-host","refreshToken":"r","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())), 0o600); err != nil {
		t.Fatal(err)
	}
}

// strictClaudeUser gives home the user's Claude rules (claudeRulesSettings),
// aisan's kill guard installed as a hook, and a subscription login that
// stays on the host.
func strictClaudeUser(t *testing.T, env []string, home string) {
	t.Helper()
	claudeRulesSettings(t, home)
	if r := aisan(t, env, "", "install-hook", "--claude"); r.code != 0 {
		t.Fatalf("install-hook: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	claudeHostLogin(t, home)
}

// TestStrictClaudeRulesOutliveTheBox: the switches that turn hooks off
// (disableAllHooks, or CLAUDE_CODE_SAFE_MODE through env), left in the
// box's Claude settings.json, which the box may write,
// are gone at the next launch: there the real claude still runs the
// user's kill guard and still refuses what the user's permissions.deny
// names. The box itself cannot write the file holding those rules.
func TestStrictClaudeRulesOutliveTheBox(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, env := strictRepo(t)
	strictClaudeUser(t, env, home)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	launch := func(commands []string) (*standIn, jailedRun) {
		s, _ := tlsStandIn(t, ca, commands, anthropicAPI)
		env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
		return s, runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Run the shell command you are given.", "--output-format", "json")
	}
	const plant = `{"disableAllHooks":true,"env":{"CLAUDE_CODE_SAFE_MODE":"1"}}`
	s, r := launch([]string{`printf '%s' '` + plant + `' > "$CLAUDE_CONFIG_DIR/settings.json"; printf '{}' > "$CLAUDE_CONFIG_DIR/aisan-rules.json" && echo planted`})
	if res, _ := s.resultOf(0); strings.Contains(res, "planted") {
		t.Errorf("the box rewrote the file holding the user's rules: %q", res)
	}
	settings, _ := filepath.Glob(filepath.Join(home, ".aisan", "state", "*-claude", "settings.json"))
	if len(settings) != 1 {
		t.Fatalf("the box's settings: %q\n%s", settings, r.stderr)
	}
	if err := os.WriteFile(settings[0], []byte(plant), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := []string{"touch denied-by-the-user", "pkill -f aisan-rules-test-nothing"}
	s, r = launch(commands)
	if err := claudeDone(r.stdout); err != nil {
		t.Fatalf("claude: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
	}
	if _, err := os.Stat(filepath.Join(repo, "denied-by-the-user")); err == nil {
		t.Errorf("%q ran although the user's settings deny it", commands[0])
	}
	if res, _ := s.resultOf(1); !carriesReason(res, guardReasonsIn(t, slotName(repo, "claude"), commands[1])) {
		t.Errorf("the next launch ran without the user's kill guard: %q", res)
	}
}

// TestStrictCodexUserRulesHold: the real codex in a strict box follows
// the user's own rules from ~/.codex/rules (a forbidden prefix refuses
// touch, --skip-permissions or not), as it does jailed, and the box
// cannot rewrite them for its next launch; the launch says the user's
// Codex hooks stay on the host.
func TestStrictCodexUserRulesHold(t *testing.T) {
	bin := nodeBin(t, "codex")
	repo, home, henv := strictRepo(t)
	const rules = `prefix_rule(pattern=["touch"], decision="forbidden")` + "\n"
	rulesFile := filepath.Join(home, ".codex", "rules", "default.rules")
	writeFiles(t, home, map[string]string{".codex/config.toml": "model = \"gpt-5-codex\"\n", ".codex/rules/default.rules": rules})
	if r := aisan(t, henv, "", "install-hook", "--codex"); r.code != 0 {
		t.Fatalf("install-hook: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	commands := []string{"touch denied-by-the-user",
		`printf '%s\n' 'prefix_rule(pattern=["touch"], decision="allow")' > "$CODEX_HOME/rules/aisan-user-default.rules" && echo rewritten`}
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	s, _ := tlsStandIn(t, ca, commands, responsesAPI)
	env := append(jailEnv(home, bin), "OPENAI_API_KEY=sk-host-openai-key-0123456789", "AISAN_OPENAI_UPSTREAM="+s.srv.URL+"/v1",
		"SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailed(t, repo, env, "codex", "--strict", "--skip-permissions", "--", "exec", "--skip-git-repo-check", "--json", "Run the shell commands you are given.")
	if !strings.Contains(r.stdout, `"type":"turn.completed"`) {
		t.Fatalf("codex in the strict box: exit %d\nstdout %s\nstderr %s\nrequests %s", r.code, r.stdout, r.stderr, s.requests())
	}
	if _, err := os.Stat(filepath.Join(repo, "denied-by-the-user")); err == nil {
		res, _ := s.resultOf(0)
		t.Errorf("%q ran in the box although the user's Codex rules forbid it: %q", commands[0], res)
	}
	if res, _ := s.resultOf(1); strings.Contains(res, "rewritten") {
		t.Errorf("the box rewrote the rules it was given: %q", res)
	}
	if b, _ := os.ReadFile(rulesFile); string(b) != rules {
		t.Errorf("the user's rules changed: %q", b)
	}
	if !strings.Contains(r.stderr, filepath.Join(home, ".codex", "hooks.json")+": its hooks") {
		t.Errorf("the launch did not say the user's Codex hooks stay on the host:\n%s", r.stderr)
	}
}

// TestStrictClaudeRulesHoldDuringTheRun: the box cannot rewrite the
// settings file that holds the user's rules while its Claude runs
// (Claude reads a changed file at once): after a tool call that tries to
// empty it, the user's deny rule still refuses.
func TestStrictClaudeRulesHoldDuringTheRun(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	claudeRulesSettings(t, home)
	claudeHostLogin(t, home)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	// The pause gives Claude's watch of its settings time to see a change.
	commands := []string{`for f in settings.json aisan-rules.json; do printf '{}' > "$CLAUDE_CONFIG_DIR/$f"; done; sleep 2; cat "$CLAUDE_CONFIG_DIR/aisan-rules.json"`, "touch denied-by-the-user"}
	s, _ := tlsStandIn(t, ca, commands, anthropicAPI)
	env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Run the shell command you are given.", "--output-format", "json")
	if err := claudeDone(r.stdout); err != nil {
		t.Fatalf("claude: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
	}
	if res, _ := s.resultOf(0); !strings.Contains(res, "Bash(touch:*)") {
		t.Errorf("the box emptied the settings holding the user's rules: %q", res)
	}
	if _, err := os.Stat(filepath.Join(repo, "denied-by-the-user")); err == nil {
		res, _ := s.resultOf(1)
		t.Errorf("%q ran after the box rewrote its settings: %q", commands[1], res)
	}
}

// TestStrictClaudePreferences: the model the user chose in Claude's
// settings.json is the one the real claude in a strict box asks for,
// and a plain preference reaches the box's settings with it; a command
// (statusLine) does not.
func TestStrictClaudePreferences(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	// An alias: claude asks for the current model of that family (the
	// default is another family).
	const model = "sonnet"
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"model":"`+model+`","includeCoAuthoredBy":false,"statusLine":{"type":"command","command":"echo hi"}}`), 0o600)
	claudeHostLogin(t, home)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	var mu sync.Mutex
	var models []string
	s, _ := tlsStandIn(t, ca, []string{"true"}, func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(body, &req) == nil && req.Model != "" {
			mu.Lock()
			models = append(models, req.Model)
			mu.Unlock()
		}
		anthropicAPI(s, w, r, body)
	})
	env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Run the shell command you are given.", "--output-format", "json")
	if err := claudeDone(r.stdout); err != nil {
		t.Fatalf("claude: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(models) == 0 || slices.ContainsFunc(models, func(m string) bool { return !strings.Contains(m, model) }) {
		t.Errorf("the box's claude asked for %q, not the user's %s", models, model)
	}
	state, _ := filepath.Glob(filepath.Join(home, ".aisan", "state", "*-claude", "settings.json"))
	if len(state) != 1 {
		t.Fatalf("the box's settings: %q", state)
	}
	b, _ := os.ReadFile(state[0])
	var seeded map[string]any
	json.Unmarshal(b, &seeded)
	if seeded["includeCoAuthoredBy"] != false || seeded["statusLine"] != nil {
		t.Errorf("the box's settings.json: %s", b)
	}
}

// TestStrictClaudeHooksHoldAgainstTheProject: the box writes
// disableAllHooks into its copy of the project's
// .claude/settings.local.json, which Claude rereads while it runs; the
// next tool call still goes through the user's kill guard.
func TestStrictClaudeHooksHoldAgainstTheProject(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, env := strictRepo(t)
	strictClaudeUser(t, env, home)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	// The pause gives Claude's watch of its settings time to see them.
	commands := []string{`mkdir -p .claude && printf '{"disableAllHooks":true}' > .claude/settings.local.json && sleep 2 && echo planted`,
		"pkill -f aisan-rules-test-nothing"}
	s, _ := tlsStandIn(t, ca, commands, anthropicAPI)
	env = append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Run the shell command you are given.", "--output-format", "json")
	if err := claudeDone(r.stdout); err != nil {
		t.Fatalf("claude: %v\nexit %d\nstdout %s\nstderr %s\nrequests %s", err, r.code, r.stdout, r.stderr, s.requests())
	}
	if res, _ := s.resultOf(0); !strings.Contains(res, "planted") {
		t.Fatalf("the box could not write its project settings (the attack proves nothing): %q", res)
	}
	if res, _ := s.resultOf(1); !carriesReason(res, guardReasonsIn(t, slotName(repo, "claude"), commands[1])) {
		t.Errorf("after the box switched hooks off in its project settings, the kill guard did not run: %q", res)
	}
}

// TestStrictClaudeTUISavesModel: in the real Claude interface in a strict
// box, /model saves the pick as the box's default (Claude writes its
// settings.json for it) and /exit ends the session; the user's deny rule
// is in the read-only file Claude takes with --settings, not in the file
// the box writes.
func TestStrictClaudeTUISavesModel(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	claudeRulesSettings(t, home)
	claudeHostLogin(t, home)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	s, _ := tlsStandIn(t, ca, nil, anthropicAPI)
	env := append(tuiEnv(home, bin, nil), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	slot := slotName(repo, "claude")
	term, cmd := startTUI(t, repo, env, "claude", "--strict")
	submit(t, term, env, "claude", slot, "/model", "Select model")
	// The last entry of the list, then Enter saves it as the default.
	for i := 0; i < 6; i++ {
		term.master.Write([]byte("\x1b[B"))
		time.Sleep(200 * time.Millisecond)
	}
	term.master.Write([]byte("\r"))
	out := pollScreen(t, env, slot, 30*time.Second, func(out string) bool {
		if strings.Contains(out, "Switch model?") && !strings.Contains(out, "Set model to") {
			term.master.Write([]byte("\r"))
			time.Sleep(time.Second)
			return false
		}
		return strings.Contains(out, "Set model to")
	})
	if out == "" {
		t.Fatalf("/model did not set the model:\n%s", screen(t, env, slot))
	}
	if strings.Contains(out, "couldn't save") || strings.Contains(out, "this session only") {
		t.Errorf("/model could not save the pick in the box:\n%s", out)
	}
	waitReady(t, env, "claude", slot)
	typeLine(term, "/exit")
	waitExit(t, cmd)
	state, _ := filepath.Glob(filepath.Join(home, ".aisan", "state", "*-claude"))
	if len(state) != 1 {
		t.Fatalf("the box's state: %q", state)
	}
	b, _ := os.ReadFile(filepath.Join(state[0], "settings.json"))
	var saved map[string]any
	json.Unmarshal(b, &saved)
	if saved["model"] == nil || saved["permissions"] != nil {
		t.Errorf("the box's settings.json after /model: %s", b)
	}
	if rules, _ := os.ReadFile(filepath.Join(state[0], "aisan-rules.json")); !strings.Contains(string(rules), "Bash(touch:*)") {
		t.Errorf("the box's rules file: %s", rules)
	}
}

// TestStrictCodexTUIKeepsApproval: in the real Codex interface in a
// strict box, with rules of the user's own bound read-only, "don't ask
// again" for a command prefix holds for the rest of the session (Codex
// writes it to the box's default.rules), and the user's file is
// untouched.
func TestStrictCodexTUIKeepsApproval(t *testing.T) {
	bin := nodeBin(t, "codex")
	requireJail(t)
	home, henv := homeOutsideTmp(t)
	repo := worktree(t)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = T\n\temail = t@example.invalid\n"), 0o600)
	hostGit(t, repo, append(henv, "PATH="+os.Getenv("PATH")), "init", "-q")
	const rules = `prefix_rule(pattern=["touch"], decision="forbidden")` + "\n"
	rulesFile := filepath.Join(home, ".codex", "rules", "default.rules")
	writeFiles(t, home, map[string]string{".codex/config.toml": "model = \"gpt-5-codex\"\n", ".codex/rules/default.rules": rules})
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	commands := []string{"escalate:git commit -q --allow-empty -m one", "escalate:git commit -q --allow-empty -m two"}
	s, _ := tlsStandIn(t, ca, commands, responsesAPI)
	env := append(tuiEnv(home, bin, nil), "OPENAI_API_KEY=sk-host-openai-key-0123456789", "AISAN_OPENAI_UPSTREAM="+s.srv.URL+"/v1",
		"SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	slot := slotName(repo, "codex")
	term, cmd := startTUI(t, repo, env, "codex", "--strict")
	submit(t, term, env, "codex", slot, "commit twice", "don't ask again for commands that start with `git commit`")
	term.master.Write([]byte("p"))
	out := pollScreen(t, env, slot, time.Minute, func(out string) bool {
		return strings.Contains(out, "• Done.") || strings.Contains(out, "-m two") && strings.Contains(out, "Would you like to run")
	})
	if !strings.Contains(out, "• Done.") {
		t.Errorf("codex asked again after the user said not to:\n%s", screen(t, env, slot))
		term.master.Write([]byte("y"))
		waitLogs(t, env, slot, time.Minute, "• Done.")
	}
	typeLine(term, "/quit")
	waitExit(t, cmd)
	for i := range commands {
		if res, _ := s.resultOf(i); strings.Contains(res, "exited with code 1") || strings.Contains(res, "rejected") {
			t.Errorf("call %d: %q", i, res)
		}
	}
	if b, _ := os.ReadFile(rulesFile); string(b) != rules {
		t.Errorf("the user's rules changed: %q", b)
	}
}

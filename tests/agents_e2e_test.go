package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The agent end-to-end tests run the real Claude Code, Codex and opencode
// CLIs (installed by tests/env/npm.sh) inside aisan's jail, the way users
// run them ('aisan claude -p …'), against a stand-in model API on loopback
// (hooks_e2e_test.go's, plus a Chat Completions one for opencode). The
// stand-in asks for shell tool calls whose output is the jail's view of the
// machine; the tests check that view, what aisan printed and recorded, and
// that the kill guard works from inside the jail: the hook for Claude Code
// and Codex, the permission rules aisan sets for opencode.

// nodeBin is the directory holding the agents' commands, after checking
// that agent runs (skipping or failing the test as need does).
func nodeBin(t *testing.T, agent string) string {
	t.Helper()
	return filepath.Dir(agentBin(t, agent))
}

// worktree is a fresh directory with a readable name for an agent to run
// in, as its real path (what aisan names the slot after).
func worktree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// slotName is the slot the first launch of kind in dir takes, by the rule
// the README gives: the directory's name, a hash of its real path, the kind.
func slotName(dir, kind string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Base(dir) + "-" + hex.EncodeToString(sum[:4]) + "-" + kind
}

// agentEnvKeys match variables of the user's own agent setup, which must
// not reach the agents under test.
var agentEnvKeys = regexp.MustCompile(`^(ANTHROPIC_|CLAUDE_|CODEX_|OPENAI_|OPENCODE_|XDG_(CONFIG|DATA|STATE|CACHE)_HOME=|AISAN_JAIL=|NO_AISAN=)`)

// jailedRun is one 'aisan AGENT …' launch.
type jailedRun struct {
	result
	took time.Duration
}

// runJailed runs the aisan under test in dir with the test process's
// environment (the user manager and the session bus are named there), less
// the user's agent setup, plus env; stdin is empty, not a terminal.
func runJailed(t *testing.T, dir string, env []string, args ...string) jailedRun {
	t.Helper()
	return runJailedInput(t, dir, env, "", args...)
}

// runJailedInput is runJailed with stdin.
func runJailedInput(t *testing.T, dir string, env []string, stdin string, args ...string) jailedRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aisanBin, args...)
	for _, kv := range os.Environ() {
		if !agentEnvKeys.MatchString(kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	isolate(cmd)
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left behind
	}
	r := jailedRun{result: result{stdout: so.String(), stderr: se.String()}, took: took}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("aisan %q: %v", args, err)
	}
	t.Logf("aisan %s ran in %v, exit %d", strings.Join(args[:2], " "), took.Round(time.Millisecond), r.code)
	if r.stderr != "" {
		t.Logf("its stderr:\n%s", r.stderr)
	}
	return r
}

// jailEnv is what every jailed agent gets: the test's HOME and AISAN_HOME,
// and the agents' commands first on PATH, for the jail to find them.
func jailEnv(home, bin string) []string {
	return []string{
		"HOME=" + home,
		"AISAN_HOME=" + filepath.Join(home, ".aisan"),
		"PATH=" + bin + ":" + os.Getenv("PATH"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
	}
}

// viewCommand prints the jail's view: the slot, PID 1 and every process.
const viewCommand = `echo "AISAN_JAIL=$AISAN_JAIL"; echo "PID1=$(tr '\0' ' ' </proc/1/cmdline)"; ps -e -o pid=,args=`

// jailView is what viewCommand printed.
type jailView struct {
	slot  string
	pid1  string
	procs []string // one "PID ARGS" line per process
}

var psLine = regexp.MustCompile(`^\d+ `)

func parseView(out string) jailView {
	var v jailView
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		// The first of each: the shell's own argv, later in the ps
		// output, holds the command text too.
		case v.slot == "" && strings.Contains(line, "AISAN_JAIL="):
			// Claude's tool result starts on this line with is_error=….
			_, v.slot, _ = strings.Cut(line, "AISAN_JAIL=")
		case v.pid1 == "" && strings.HasPrefix(line, "PID1="):
			v.pid1 = strings.TrimSpace(strings.TrimPrefix(line, "PID1="))
		case psLine.MatchString(line):
			v.procs = append(v.procs, line)
		}
	}
	return v
}

// runs reports whether the view holds a process whose program is called
// name (argv[0]'s last element).
func (v jailView) runs(name string) bool {
	for _, p := range v.procs {
		f := strings.Fields(p)
		if len(f) > 1 && filepath.Base(f[1]) == name {
			return true
		}
	}
	return false
}

// checkJailView asserts what a jailed agent's shell saw with viewCommand:
// its slot, a PID 1 of the jail's own, only a handful of processes and not
// the marker m that runs outside. The same command run outside sees the
// marker, so the test can fail.
func checkJailView(t *testing.T, out, slot string, m marker) jailView {
	t.Helper()
	host, err := exec.Command("bash", "-c", viewCommand).CombinedOutput()
	if err != nil {
		t.Fatalf("the view command outside the jail: %v\n%s", err, host)
	}
	hv := parseView(string(host))
	if !hv.runs(m.name) {
		t.Fatalf("outside the jail the view command does not show the marker %s, so it proves nothing:\n%s", m.name, host)
	}
	v := parseView(out)
	if v.slot != slot {
		t.Errorf("AISAN_JAIL inside is %q, want the slot %q", v.slot, slot)
	}
	if v.runs(m.name) {
		t.Errorf("the jailed agent's shell sees the marker %s running outside:\n%s", m.name, out)
	}
	if !m.alive() {
		t.Errorf("the marker %s outside the jail died", m.name)
	}
	if v.pid1 == "" || v.pid1 == hv.pid1 {
		t.Errorf("PID 1 inside is %q (outside %q), want the jail's own init", v.pid1, hv.pid1)
	}
	if n := len(v.procs); n == 0 || n > 10 {
		t.Errorf("the jailed agent's shell sees %d processes, want a handful:\n%s", n, strings.Join(v.procs, "\n"))
	}
	return v
}

// checkSlotAfter asserts what aisan recorded about the one launch under
// env's AISAN_HOME, and returns its transcript as 'aisan logs' prints it.
func checkSlotAfter(t *testing.T, env []string, slot, kind, dir string) string {
	t.Helper()
	entries := slotList(t, env)
	e, ok := entries[slot]
	if len(entries) != 1 || !ok {
		t.Fatalf("aisan list --json shows %v, want the one slot %s", entries, slot)
	}
	if e.State == "background" {
		// The agent's tool left a process (the guard tests' pkill
		// victim, started with setsid): it lives on after the agent, as
		// unjailed, until the slot is killed; the agent's own status
		// is recorded.
		if e.AgentStatus == nil || *e.AgentStatus != 0 {
			t.Errorf("background slot %+v: want agent_status 0", e)
		}
		if r := aisan(t, env, "", "kill", "--signal", "KILL", slot); r.code != 0 {
			t.Fatalf("aisan kill %s: %d %s", slot, r.code, r.stderr)
		}
		e = slotList(t, env)[slot]
	}
	if e.Kind != kind || e.Worktree != dir || e.State != "exited" || e.ExitStatus == nil || *e.ExitStatus != 0 {
		t.Errorf("aisan list --json: %+v\nwant kind %s, worktree %s, exited with status 0", e, kind, dir)
	}
	logs := aisan(t, env, "", "logs", slot)
	if logs.code != 0 {
		t.Fatalf("aisan logs %s: exit %d\n%s%s", slot, logs.code, logs.stdout, logs.stderr)
	}
	return logs.stdout
}

// checkHistory asserts that no prompt the jailed agent recorded is
// missing from the host's history file: Claude writes it directly (no
// copy is kept), Codex's per-worktree copy is merged into it.
func checkHistory(t *testing.T, home, slot, kind, hostFile string) {
	t.Helper()
	host, _ := os.ReadFile(hostFile)
	cp := filepath.Join(home, ".aisan", "history", slot, kind+"-history.jsonl")
	data, err := os.ReadFile(cp)
	switch {
	case kind == "claude" && err == nil:
		t.Errorf("a copy of claude's history was kept at %s", cp)
	case kind == "codex" && err != nil:
		t.Fatalf("the worktree's codex history copy: %v", err)
	}
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(string(host), l) {
			t.Errorf("the jailed prompt %q is missing from %s", l, hostFile)
		}
	}
	t.Logf("copy %d bytes, host file %d bytes", len(data), len(host))
}

// toolResult is the agent's answer to call i, or a fatal error.
func toolResult(t *testing.T, s *standIn, i int, output string) string {
	t.Helper()
	res, ok := s.resultOf(i)
	if !ok {
		t.Fatalf("the agent never sent the result of tool call %d (%s); requests: %s\naisan's output:\n%s", i+1, s.commands[i], s.requests(), output)
	}
	t.Logf("tool call %d %q: result %q", i+1, s.commands[i], res)
	return res
}

// agentSetup is how the tests drive one agent against a stand-in.
type agentSetup struct {
	kind string
	api  func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte)
	// setup prepares HOME for the agent to use s and returns the env that
	// points it there.
	setup func(t *testing.T, home string, s *standIn) []string
	// args is the agent's command line, its name first.
	args []string
	// history is the host's prompt history file aisan binds over, relative
	// to HOME ("" when aisan keeps none for the agent).
	history string
	// done reports whether out holds the agent's final answer ("Done.")
	// in its machine-readable output format.
	done func(out string) error
}

func claudeSetup(t *testing.T, home string, s *standIn) []string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"permissions":{"allow":["Bash"]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"ANTHROPIC_BASE_URL=" + s.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-aisan-e2e-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
}

// claudeDone checks that out is exactly claude's JSON result.
func claudeDone(out string) error {
	var res struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return err
	}
	if res.Type != "result" || res.IsError || res.Result != "Done." {
		return fmt.Errorf("result %+v, want a successful one saying Done.", res)
	}
	return nil
}

func codexSetup(t *testing.T, home string, s *standIn) []string {
	t.Helper()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "standin"

[model_providers.standin]
name = "stand-in"
base_url = "%s/v1"
wire_api = "responses"
env_key = "AISAN_E2E_API_KEY"
`, s.srv.URL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"CODEX_HOME=" + codexHome, "AISAN_E2E_API_KEY=dummy"}
}

// printsEvent is a done check for an agent that prints JSON events.
func printsEvent(event string) func(string) error {
	return func(out string) error {
		if !strings.Contains(out, event) {
			return fmt.Errorf("no %s", event)
		}
		return nil
	}
}

// chatAPI speaks the OpenAI Chat Completions API as opencode's
// openai-compatible provider uses it: streamed POST /v1/chat/completions.
// A request that offers the bash tool gets the next tool call; any other
// (the session's title) gets text.
func chatAPI(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			s.record(m.ToolCallID, contentText(m.Content))
		}
	}
	hasBash := false
	for _, tool := range req.Tools {
		hasBash = hasBash || tool.Function.Name == "bash"
	}
	step, command, pending := s.next()
	message := map[string]any{"role": "assistant", "content": "Done."}
	finish := "stop"
	if hasBash && pending {
		s.note(fmt.Sprintf("(called bash %d)", step+1))
		args, _ := json.Marshal(map[string]string{"command": command, "description": "Run the given command"})
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": callID(step), "type": "function",
			"function": map[string]any{"name": "bash", "arguments": string(args)},
		}}}
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
	reply := func(object string, choice map[string]any) map[string]any {
		choice["index"] = 0
		return map[string]any{"id": "chatcmpl-aisan-e2e", "object": object, "created": 0, "model": "stand-in",
			"choices": []any{choice}}
	}
	if !req.Stream {
		full := reply("chat.completion", map[string]any{"message": message, "finish_reason": finish})
		full["usage"] = usage
		writeJSON(w, full)
		return
	}
	last := reply("chat.completion.chunk", map[string]any{"delta": map[string]any{}, "finish_reason": finish})
	last["usage"] = usage
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, c := range []map[string]any{reply("chat.completion.chunk", map[string]any{"delta": message, "finish_reason": nil}), last} {
		data, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// opencodeSetup declares s as opencode's provider, with bash allowed, in
// OPENCODE_CONFIG_CONTENT.
func opencodeSetup(t *testing.T, home string, s *standIn) []string {
	t.Helper()
	config, _ := json.Marshal(map[string]any{
		"model":       "standin/stand-in",
		"small_model": "standin/stand-in",
		"autoupdate":  false,
		"share":       "disabled",
		"provider": map[string]any{"standin": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "stand-in",
			"options": map[string]any{"baseURL": s.srv.URL + "/v1", "apiKey": "dummy"},
			"models":  map[string]any{"stand-in": map[string]any{"name": "stand-in"}},
		}},
		"permission": map[string]any{"bash": "allow"},
	})
	return []string{
		"OPENCODE_CONFIG_CONTENT=" + string(config),
		// Without it every start stalls for about 70 s trying to install
		// plugins.
		"npm_config_offline=true",
	}
}

var (
	claudeAgent = agentSetup{
		kind: "claude", api: anthropicAPI, setup: claudeSetup,
		args:    []string{"claude", "-p", "Run the shell commands you are given.", "--output-format", "json", "--allowedTools", "Bash"},
		history: ".claude/history.jsonl",
		done:    claudeDone,
	}
	codexAgent = agentSetup{
		kind: "codex", api: responsesAPI, setup: codexSetup,
		args: []string{"codex", "exec", "--skip-git-repo-check", "--json", "--sandbox", "danger-full-access",
			"--dangerously-bypass-hook-trust", "Run the shell commands you are given."},
		history: ".codex/history.jsonl",
		done:    printsEvent(`"type":"turn.completed"`),
	}
	opencodeAgent = agentSetup{
		kind: "opencode", api: chatAPI, setup: opencodeSetup,
		args: []string{"opencode", "run", "--format", "json", "Run the shell commands you are given."},
		done: printsEvent(`"text":"Done."`),
	}
)

// checkRecorded asserts what a successful launch of agent a printed and
// what aisan recorded of it: the agent's final answer on aisan's stdout and in
// 'aisan logs', the slot exited with status 0 in 'aisan list', and the
// slot's prompt history.
func checkRecorded(t *testing.T, a agentSetup, run jailedRun, home string, env []string, slot, dir string) {
	t.Helper()
	if err := a.done(run.stdout); err != nil {
		t.Errorf("aisan's stdout does not carry %s's answer (%v):\n%s", a.kind, err, run.stdout)
	}
	logs := checkSlotAfter(t, env, slot, a.kind, dir)
	if err := a.done(logs); err != nil {
		t.Errorf("aisan logs %s does not hold %s's output (%v):\n%s", slot, a.kind, err, logs)
	}
	if a.history != "" {
		checkHistory(t, home, slot, a.kind, filepath.Join(home, a.history))
	}
}

// testJailed runs 'aisan AGENT …' as a user would, checks the jail from
// the agent's own shell tool, then what aisan printed and recorded.
func testJailed(t *testing.T, a agentSetup) {
	requireJail(t)
	bin := nodeBin(t, a.kind)
	home, _ := testEnv(t)
	m := startMarker(t)
	dir := worktree(t)
	slot := slotName(dir, a.kind)
	s := newScriptedStandIn(t, []string{viewCommand}, a.api)
	env := append(jailEnv(home, bin), a.setup(t, home, s)...)

	run := runJailed(t, dir, env, a.args...)
	if run.code != 0 {
		t.Fatalf("aisan %s: exit %d\nstdout:\n%s\nstderr:\n%s\nrequests: %s", a.kind, run.code, run.stdout, run.stderr, s.requests())
	}
	checkJailView(t, toolResult(t, s, 0, run.stdout+run.stderr), slot, m)
	checkRecorded(t, a, run, home, env, slot, dir)
}

func TestAgentClaudeJailed(t *testing.T) { testJailed(t, claudeAgent) }

func TestAgentCodexJailed(t *testing.T) { testJailed(t, codexAgent) }

// innerMarker is a copy of sleep named after m, to be started inside a
// jail, where m's kill command matches it too. It returns its path.
func innerMarker(t *testing.T, m marker) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), m.name+"_in")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

var hiLine = regexp.MustCompile(`(?m)^hi$`)

// guardScript is what the stand-in asks a jailed agent to run: start a
// marker inside the jail (in a session of its own, so that no cleanup of
// the tool call's process group reaches it) and echo hi, then pkill -f a
// pattern that matches it and the marker outside, then show the jail.
func guardScript(m marker, inner string) []string {
	return []string{
		fmt.Sprintf("setsid -f %s 300 </dev/null >/dev/null 2>&1; sleep 0.1; ps -e -o pid=,args=; echo hi", inner),
		m.killCommand(),
		viewCommand,
	}
}

// runGuardScript launches aisan with aisanArgs and then a's argv (whose
// first word, the agent's name, is aisan's command when aisanArgs is
// empty), with bin first on PATH, on guardScript in a slot of kind. It
// checks what holds whether or not the pkill is refused: the harmless call
// ran, the marker inside started, the jail's view is the jail's. guarded
// says whether the pkill must have been refused, which the marker inside
// shows and refused reads in its tool result. install, when set, runs
// before the launch.
func runGuardScript(t *testing.T, a agentSetup, bin, kind string, aisanArgs []string, install func(env []string), guarded bool,
	refused func(slot, command, result string) bool) {
	t.Helper()
	home, _ := testEnv(t)
	m := startMarker(t)
	inner := innerMarker(t, m)
	dir := worktree(t)
	slot := slotName(dir, kind)
	s := newScriptedStandIn(t, guardScript(m, inner), a.api)
	env := append(jailEnv(home, bin), a.setup(t, home, s)...)
	if install != nil {
		install(env)
	}
	run := runJailed(t, dir, env, append(aisanArgs, a.args...)...)
	output := run.stdout + run.stderr
	if run.code != 0 {
		t.Fatalf("aisan %s: exit %d\n%s\nrequests: %s", kind, run.code, output, s.requests())
	}
	started := toolResult(t, s, 0, output)
	killed := toolResult(t, s, 1, output)
	view := checkJailView(t, toolResult(t, s, 2, output), slot, m)
	if !hiLine.MatchString(started) {
		t.Errorf("the harmless call did not run: no hi in\n%s", started)
	}
	if !strings.Contains(started, inner) {
		t.Fatalf("the marker inside the jail did not start:\n%s", started)
	}
	switch alive := view.runs(filepath.Base(inner)); {
	case guarded && !alive:
		t.Errorf("the marker inside the jail died: %q was not refused\n%s", m.killCommand(), strings.Join(view.procs, "\n"))
	case !guarded && alive:
		t.Fatalf("unguarded, %q left the marker inside the jail alive: the test proves nothing\n%s", m.killCommand(), strings.Join(view.procs, "\n"))
	}
	if refused(slot, m.killCommand(), killed) != guarded {
		t.Errorf("the pkill's tool result, guarded=%v:\n%s", guarded, killed)
	}
	if guarded {
		checkRecorded(t, a, run, home, env, slot, dir)
	}
}

// testGuardInJail runs the agent jailed on guardScript, without the hook
// and after 'aisan install-hook'. Without it the pkill kills the marker
// inside the jail (so the test can fail) and cannot reach the one outside.
// With it the guard, which the agent runs inside the jail, refuses the
// pkill with the reason it gives in this slot, naming the slot (only
// $AISAN_JAIL inside tells it), and the marker inside survives.
func testGuardInJail(t *testing.T, a agentSetup) {
	requireJail(t)
	bin := nodeBin(t, a.kind)
	refused := func(slot, command, result string) bool {
		return carriesReason(result, guardReasonsIn(t, slot, command)) && strings.Contains(result, "aisan kill "+slot+"`")
	}
	t.Run("without-hook", func(t *testing.T) {
		runGuardScript(t, a, bin, a.kind, nil, nil, false, refused)
	})
	t.Run("with-hook", func(t *testing.T) {
		install := func(env []string) {
			r := aisan(t, env, "", "install-hook", "--"+a.kind)
			if r.code != 0 {
				t.Fatalf("install-hook: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		}
		runGuardScript(t, a, bin, a.kind, nil, install, true, refused)
	})
}

func TestAgentGuardClaude(t *testing.T) { testGuardInJail(t, claudeAgent) }

func TestAgentGuardCodex(t *testing.T) { testGuardInJail(t, codexAgent) }

// TestAgentOpencode runs opencode jailed on guardScript. 'aisan opencode'
// sets OPENCODE_PERMISSION so that opencode itself refuses the pkill, and
// the marker inside the jail survives, while the harmless call runs. The
// same agent in the same jail without those rules ('aisan run --
// opencode …') kills that marker, so the test can fail.
func TestAgentOpencode(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "opencode")
	refused := func(_, _, result string) bool {
		return strings.Contains(result, "prevents you from using this specific tool call") && strings.Contains(result, `"pkill *"`)
	}
	t.Run("aisan-run", func(t *testing.T) {
		runGuardScript(t, opencodeAgent, bin, "run", []string{"run", "--"}, nil, false, refused)
	})
	t.Run("aisan-opencode", func(t *testing.T) {
		runGuardScript(t, opencodeAgent, bin, "opencode", nil, nil, true, refused)
	})
}

package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The opencode permission tests check that a jailed opencode keeps the
// user's own permission rules: the real opencode builds its rules from the
// user's files with and without the OPENCODE_PERMISSION aisan sets, and
// the only difference is that kill commands are denied.

// opencodeRule is one entry of the ruleset 'opencode debug agent' prints.
type opencodeRule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// ocMatch is opencode's Wildcard.match, written out again here so the
// test does not lean on aisan's copy.
func ocMatch(s, pattern string) bool {
	s = strings.ReplaceAll(s, `\`, "/")
	pattern = strings.ReplaceAll(pattern, `\`, "/")
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(regexp.QuoteMeta(p), `\?`, ".")
	}
	expr := strings.Join(parts, ".*")
	if strings.HasSuffix(expr, " .*") {
		expr = strings.TrimSuffix(expr, " .*") + "( .*)?"
	}
	return regexp.MustCompile(`(?s)^(?:` + expr + `)$`).MatchString(s)
}

// ocEvaluate is opencode's Permission.evaluate: the last rule matching
// both the permission and the pattern, "ask" when none does.
func ocEvaluate(rules []opencodeRule, permission, pattern string) string {
	for i := len(rules) - 1; i >= 0; i-- {
		if ocMatch(permission, rules[i].Permission) && ocMatch(pattern, rules[i].Pattern) {
			return rules[i].Action
		}
	}
	return "ask"
}

// ocHidden is opencode's rule for leaving a tool out of what the model is
// offered: the last rule for its permission denies "*".
func ocHidden(rules []opencodeRule, permission string) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if ocMatch(permission, rules[i].Permission) {
			return rules[i].Pattern == "*" && rules[i].Action == "deny"
		}
	}
	return false
}

// opencodeRules runs the real 'opencode debug agent build' in dir.
func opencodeRules(t *testing.T, bin, dir string, env []string) []opencodeRule {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "debug", "agent", "build")
	cmd.Dir = dir
	cmd.Env = env
	isolate(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opencode debug agent build: %v\n%s", err, out)
	}
	var agent struct {
		Permission []opencodeRule `json:"permission"`
	}
	if err := json.Unmarshal(out, &agent); err != nil {
		t.Fatalf("opencode debug agent build printed no agent (%v):\n%s", err, out)
	}
	return agent.Permission
}

// explainedPermission is the OPENCODE_PERMISSION 'aisan explain opencode'
// shows for a launch in dir, and whether it sets one.
func explainedPermission(t *testing.T, dir string, env []string) (string, bool) {
	t.Helper()
	r := aisanIn(t, dir, env, "", "explain", "opencode")
	if r.code != 0 {
		t.Fatalf("aisan explain opencode: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		for _, prefix := range []string{"  + OPENCODE_PERMISSION=", "  ~ OPENCODE_PERMISSION="} {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				return v, true
			}
		}
	}
	return "", false
}

// ocTestCommands are the bash commands the rules are evaluated on.
var ocTestCommands = []string{"ls", "git status", "git push --force", "rm -rf build", "npm test", "echo pkill",
	"pkill", "pkill -f node", "killall -9 node"}

var isKill = regexp.MustCompile(`^(pkill|killall)( |$)`)

// TestOpencodePermissionRules compares, for a set of user configurations,
// the ruleset the real opencode builds without aisan and with the
// OPENCODE_PERMISSION 'aisan explain opencode' shows: for every command
// but a kill the action is the user's, a kill is denied, and the bash tool
// is hidden from the model exactly when the user's rules hide it.
func TestOpencodePermissionRules(t *testing.T) {
	bin := agentBin(t, "opencode")
	for _, tc := range []struct {
		name    string
		files   map[string]string // relative to HOME; "proj/" is the launch directory
		userEnv string            // the user's OPENCODE_PERMISSION
	}{
		{name: "bash-ask", files: map[string]string{".config/opencode/opencode.json": `{"permission": {"bash": "ask"}}`}},
		{name: "bash-deny", files: map[string]string{".config/opencode/opencode.json": `{"permission": {"bash": "deny"}}`}},
		{name: "ask-everything-jsonc", files: map[string]string{
			".config/opencode/opencode.jsonc": "{\n  // everything asks\n  \"permission\": \"ask\",\n}\n"}},
		{name: "project-patterns", files: map[string]string{
			".config/opencode/opencode.json": `{"permission": {"bash": "ask", "edit": "deny"}}`,
			"proj/.git/HEAD":                 "",
			"proj/opencode.jsonc":            `{"permission": {"bash": {"*": "deny", "git *": "allow", "npm *": "ask", /* mine */ "pkill *": "allow"}}}`}},
		{name: "later-catch-all", files: map[string]string{
			".config/opencode/opencode.json": `{"permission": {"bash": "deny", "*": "allow"}}`}},
		{name: "tools-off", files: map[string]string{".config/opencode/opencode.json": `{"tools": {"bash": false}}`}},
		{name: "user-env", files: map[string]string{".config/opencode/opencode.json": `{"permission": {"bash": "allow"}}`},
			userEnv: `{"bash": {"*": "ask", "ls": "allow"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, env := testEnv(t)
			dir := filepath.Join(home, "proj")
			writeFiles(t, home, tc.files)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			env = append(env, "npm_config_offline=true", "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
			if tc.userEnv != "" {
				env = append(env, "OPENCODE_PERMISSION="+tc.userEnv)
			}
			value, set := explainedPermission(t, dir, env)
			t.Logf("aisan sets OPENCODE_PERMISSION: %v %s", set, value)
			base := append(baseEnv(home), env[1:]...)
			user := opencodeRules(t, bin, dir, base)
			jailed := user
			if set {
				jailed = opencodeRules(t, bin, dir, append(base, "OPENCODE_PERMISSION="+value))
			}
			if a, b := ocHidden(user, "bash"), ocHidden(jailed, "bash"); a != b {
				t.Errorf("the bash tool is hidden=%v for the user, hidden=%v jailed", a, b)
			}
			for _, c := range ocTestCommands {
				u, j := ocEvaluate(user, "bash", c), ocEvaluate(jailed, "bash", c)
				want := u
				if isKill.MatchString(c) {
					want = "deny"
				}
				t.Logf("%-18q user %-5s jailed %s", c, u, j)
				if j != want {
					t.Errorf("%q: jailed opencode says %s, want %s (the user's rules say %s)", c, j, want, u)
				}
			}
		})
	}
}

// writeFiles writes files (path relative to root → content).
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpencodePermissionRefuses: a config opencode would read that does
// not parse stops the launch, naming the file and where.
func TestOpencodePermissionRefuses(t *testing.T) {
	bin := agentBin(t, "opencode")
	home, env := testEnv(t)
	env = append(env, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	dir := filepath.Join(home, "proj")
	writeFiles(t, home, map[string]string{"proj/.git/HEAD": "", "proj/opencode.json": "{\"permission\": {\"bash\": \"ask\"\n"})
	r := aisanIn(t, dir, env, "", "explain", "opencode")
	want := "aisan: error: opencode's configuration " + filepath.Join(dir, "opencode.json") +
		": hujson: line 2, column 1: parsing object after value: unexpected EOF" +
		" (aisan adds its kill rules after opencode's own, so it reads them all: fix it, or unset it)\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// opencodeUserSetup is opencodeSetup with the user's rule for bash in a
// JSONC file of theirs instead of "bash": "allow" in the environment.
func opencodeUserSetup(rule string) func(t *testing.T, home string, s *standIn) []string {
	return func(t *testing.T, home string, s *standIn) []string {
		t.Helper()
		env := opencodeSetup(t, home, s)
		for i, kv := range env {
			if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
				var config map[string]any
				if err := json.Unmarshal([]byte(v), &config); err != nil {
					t.Fatal(err)
				}
				delete(config, "permission")
				data, _ := json.Marshal(config)
				env[i] = "OPENCODE_CONFIG_CONTENT=" + string(data)
			}
		}
		writeFiles(t, home, map[string]string{".config/opencode/opencode.jsonc": "{\n  // the user's own rule\n  \"permission\": {\"bash\": \"" + rule + "\"},\n}\n"})
		return env
	}
}

// toolErrors are the errors of the tool calls in 'opencode run --format
// json' output, by call id.
func toolErrors(output string) map[string]string {
	errs := map[string]string{}
	for _, line := range strings.Split(output, "\n") {
		var ev struct {
			Type string `json:"type"`
			Part struct {
				CallID string `json:"callID"`
				State  struct {
					Error string `json:"error"`
				} `json:"state"`
			} `json:"part"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "tool_use" && ev.Part.State.Error != "" {
			errs[ev.Part.CallID] = ev.Part.State.Error
		}
	}
	return errs
}

// TestAgentOpencodeUserRules runs the real opencode, unjailed and jailed,
// with the user's "bash": "ask" or "deny" in a JSONC file of theirs. With
// "ask", 'opencode run' rejects a call unasked and stops: unjailed that is
// the first call, the pkill; jailed the pkill meets aisan's deny first (and
// the model is told), then the harmless call is rejected as unjailed.
// With "deny" the model is not even offered the bash tool, in both cases.
func TestAgentOpencodeUserRules(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "opencode")
	const rejected = "The user rejected permission to use this specific tool call."
	for _, rule := range []string{"ask", "deny"} {
		for _, jailed := range []bool{false, true} {
			name := rule + map[bool]string{false: "-unjailed", true: "-jailed"}[jailed]
			t.Run(name, func(t *testing.T) {
				home, _ := testEnv(t)
				m := startMarker(t)
				dir := worktree(t)
				s := newScriptedStandIn(t, []string{m.killCommand(), "echo hi"}, chatAPI)
				a := opencodeAgent
				a.setup = opencodeUserSetup(rule)
				env := append(jailEnv(home, bin), a.setup(t, home, s)...)
				var output string
				if jailed {
					run := runJailed(t, dir, env, a.args...)
					if run.code != 0 {
						t.Fatalf("aisan opencode: exit %d\n%s%s\nrequests: %s", run.code, run.stdout, run.stderr, s.requests())
					}
					output = run.stdout + run.stderr
				} else {
					output = runAgent(t, s, dir, env, filepath.Join(bin, "opencode"), a.args[1:]...).output
				}
				if !m.alive() {
					t.Errorf("the marker died: %q ran", m.killCommand())
				}
				errs := toolErrors(output)
				t.Logf("tool errors: %q", errs)
				switch {
				case rule == "deny":
					if len(errs) != 0 || strings.Contains(s.requests(), "(called bash") {
						t.Errorf("with bash denied, opencode offered the model the bash tool; requests: %s\n%s", s.requests(), output)
					}
					if err := a.done(output); err != nil {
						t.Errorf("opencode did not finish (%v):\n%s", err, output)
					}
				case !jailed:
					if errs[callID(0)] != rejected || len(errs) != 1 {
						t.Errorf("unjailed with bash: ask, the pkill was not rejected unasked:\n%s", output)
					}
				default:
					denied, _ := s.resultOf(0)
					if !strings.Contains(denied, "prevents you from using this specific tool call") || !strings.Contains(denied, `"pkill *"`) {
						t.Errorf("jailed, the pkill was not denied by aisan's rule; the model was told:\n%s", denied)
					}
					if errs[callID(1)] != rejected {
						t.Errorf("jailed with bash: ask, the harmless call was not rejected unasked as unjailed:\n%s", output)
					}
				}
			})
		}
	}
}

package strictbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
)

// TestSeedRules: the keys the user's rules own are the user's at every
// launch, whatever the box wrote into its settings since; the box's
// other settings stay; a key the user no longer sets is removed.
func TestSeedRules(t *testing.T) {
	state := t.TempDir()
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r"}
	settings := filepath.Join(state, "settings.json")
	os.WriteFile(settings, []byte(`{"permissions":{"allow":["Bash"]},"hooks":{"Stop":[]},"theme":"dark"}`), 0o600)
	r := &BoxRules{Keys: []string{"permissions", "hooks"}, Settings: map[string]json.RawMessage{"permissions": json.RawMessage(`{"deny":["Bash(touch:*)"]}`)}}
	if _, err := seedState(o, r); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ := os.ReadFile(settings)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["hooks"]; ok || got["permissions"] != nil || got["theme"] != "dark" {
		t.Errorf("the box's settings after the seed:\n%s", b)
	}
	if rules, _ := os.ReadFile(filepath.Join(state, claudeRulesFile)); !strings.Contains(string(rules), `"Bash(touch:*)"`) || strings.Contains(string(rules), `"Bash"`) || strings.Contains(string(rules), "hooks") {
		t.Errorf("the box's rules file after the seed:\n%s", rules)
	}
}

// TestRulesNote: one note names what stays on the host and where it was
// read, and with Claude's auto mode what to use instead; Claude's launch
// says where resuming works.
func TestRulesNote(t *testing.T) {
	n := rulesNote(jail.KindClaude, BoxRules{Source: "/h/.claude/settings.json", Left: []string{"a", "b"}, AutoMode: true})
	for _, want := range []string{"from /h/.claude/settings.json: a; b", "auto mode", "--skip-permissions"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if n := rulesNote(jail.KindOpencode, BoxRules{}); n != "" {
		t.Errorf("nothing to say, yet %q", n)
	}
	if n := resumeNote(jail.KindClaude, "/h/.aisan/state/x"); !strings.Contains(n, "/h/.aisan/state/x") || !strings.Contains(n, "aisan claude --strict --resume") {
		t.Errorf("resume note %q", n)
	}
}

// TestPlanRules: the view the rules are read with is the box's (its
// PATH, its mounts, its state dir; the credentials are not mountable),
// and what they ask for lands in the plan: the guard bound read-only at
// its path from its real file, the variables, opencode's first layer.
func TestPlanRules(t *testing.T) {
	root := t.TempDir()
	tools := filepath.Join(root, "tools")
	os.MkdirAll(tools, 0o755)
	guard := filepath.Join(root, "real-guard")
	os.WriteFile(guard, []byte("\x7fELF"), 0o755)
	os.Symlink(guard, filepath.Join(tools, "aisan-guard"))
	os.WriteFile(filepath.Join(tools, "hooktool"), []byte("#!/bin/sh\n"), 0o755)
	o := jail.StrictOptions{Kind: jail.KindOpencode, Repo: "/src/app", Cwd: "/src/app", StateDir: "/st",
		Forbidden: []string{"/home/u/.ssh"}, BindPath: []string{tools},
		Binds: []jail.Mount{{Kind: jail.ROBind, Src: tools, Dst: tools}}}
	var view RulesView
	b := &Box{Options: Options{Rules: func(v RulesView) (BoxRules, error) {
		view = v
		return BoxRules{Binds: []string{filepath.Join(root, "elsewhere", "aisan-guard"), "/gone/aisan-guard"}, Env: []string{"OPENCODE_PERMISSION={}"}, OpencodePermission: json.RawMessage(`{"bash":"ask"}`)}, nil
	}}}
	os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755)
	os.Symlink(guard, filepath.Join(root, "elsewhere", "aisan-guard"))
	b.mcp = &mcp.Options{}
	note, err := b.planRules(jail.Host{Home: "/home/u", Cwd: "/src/app"}, &o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "aisan's guard /gone/aisan-guard, which a hook runs, is not there") {
		t.Errorf("a guard that is gone: note %q", note)
	}
	if !view.Shows("/src/app/x") || !view.Shows("/st/settings.json") || !view.Shows("/usr/bin/sh") || view.Shows("/home/u/x") || view.Shows(root+"/elsewhere") {
		t.Error("the view does not show what the box shows")
	}
	if p := view.LookPath("hooktool"); p != filepath.Join(tools, "hooktool") {
		t.Errorf("LookPath(hooktool) = %q", p)
	}
	if view.Mountable("/home/u/.ssh/id") == nil || view.Mountable(tools) != nil {
		t.Error("Mountable does not refuse exactly the credentials")
	}
	last := o.Binds[len(o.Binds)-1]
	if last.Kind != jail.ROBind || last.Src != guard || last.Dst != filepath.Join(root, "elsewhere", "aisan-guard") {
		t.Errorf("the guard's bind: %+v", last)
	}
	if !slices.Contains(o.ExtraEnv, "OPENCODE_PERMISSION={}") || string(b.mcp.OpencodePermission) != `{"bash":"ask"}` {
		t.Errorf("env %q, opencode layer %s", o.ExtraEnv, b.mcp.OpencodePermission)
	}
}

// TestSeedRulesSwitches: what a box wrote to switch the user's hooks off
// at its next launch (disableAllHooks, or env's CLAUDE_CODE_SAFE_MODE)
// is gone from that launch's settings, with the keys cmd/aisan gives
// (hooks.ClaudeBoxKeys).
func TestSeedRulesSwitches(t *testing.T) {
	state := t.TempDir()
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r"}
	settings := filepath.Join(state, "settings.json")
	os.WriteFile(settings, []byte(`{"disableAllHooks":true,"env":{"CLAUDE_CODE_SAFE_MODE":"1"},"theme":"dark"}`), 0o600)
	global := filepath.Join(state, ".claude.json")
	os.WriteFile(global, []byte(`{"env":{"CLAUDE_CODE_SAFE_MODE":"1"},"numStartups":3}`), 0o600)
	r := &BoxRules{Keys: []string{"permissions", "hooks", "disableAllHooks", "env"}, Settings: map[string]json.RawMessage{"hooks": json.RawMessage(`{"Stop":[]}`)}}
	if _, err := seedState(o, r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["disableAllHooks"]; ok || got["env"] != nil || got["hooks"] != nil || got["theme"] != "dark" {
		t.Errorf("the box's settings after the seed:\n%s", b)
	}
	if rules, _ := os.ReadFile(filepath.Join(state, claudeRulesFile)); !strings.Contains(string(rules), `"hooks"`) {
		t.Errorf("the box's rules file after the seed:\n%s", rules)
	}
	b, _ = os.ReadFile(global)
	got = nil
	if err := json.Unmarshal(b, &got); err != nil || got["env"] != nil || got["numStartups"] != float64(3) {
		t.Errorf("the box's .claude.json after the seed:\n%s", b)
	}
}

// TestSeedCodexRules: the rules a box left in Codex's state directory
// (an approval it kept, or a file it wrote) are dropped at the next
// launch; the mount point of each of the user's rules files stays, and
// one for a file the user no longer has goes.
func TestSeedCodexRules(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "rules")
	os.MkdirAll(dir, 0o700)
	for _, n := range []string{"default.rules", "mine.rules", jail.CodexUserRules("default.rules"), jail.CodexUserRules("gone.rules")} {
		os.WriteFile(filepath.Join(dir, n), []byte(`prefix_rule(pattern=["rm"], decision="allow")`), 0o600)
	}
	o := jail.StrictOptions{Kind: jail.KindCodex, StateDir: state, Cwd: "/w/r", Repo: "/w/r", CodexRules: []string{"default.rules"}}
	if _, err := seedState(o, nil); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{jail.CodexUserRules("default.rules")}) {
		t.Errorf("left in the box's rules directory: %q", left)
	}
	o.CodexRules = nil
	if _, err := seedState(o, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the rules directory still holds %d files", len(entries))
	}
}

// TestPlanRulesClaudeSettingsReadOnly: a Claude box sees the file aisan
// seeds with the user's rules read-only, and Claude takes it with
// --settings; its settings.json, which /model and /config write, is not
// among the read-only files.
func TestPlanRulesClaudeSettingsReadOnly(t *testing.T) {
	o := jail.StrictOptions{Kind: jail.KindClaude, Repo: "/src/app", Cwd: "/src/app", StateDir: "/st"}
	b := &Box{Options: Options{Rules: func(RulesView) (BoxRules, error) { return BoxRules{Keys: []string{"permissions"}}, nil }}}
	if _, err := b.planRules(jail.Host{Home: "/home/u", Cwd: "/src/app"}, &o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.StateRules, []string{claudeRulesFile}) {
		t.Errorf("state rules %q", o.StateRules)
	}
	if !slices.Equal(o.AgentArgs, []string{"--settings", "/st/" + claudeRulesFile}) {
		t.Errorf("agent args %q", o.AgentArgs)
	}
}

// TestPlanRulesClaudeUserSettingsFlag: Claude takes one --settings, so
// a user's own (a JSON object, or a file) leaves the command line and
// joins the rules file: its permission lists and hooks beside the
// user's, its other keys as they are.
func TestPlanRulesClaudeUserSettingsFlag(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"sandbox":{"enabled":true},"permissions":{"deny":["Bash(rm:*)"]}}`), 0o600)
	for _, arg := range [][]string{{"--settings", "s.json"}, {"--settings=" + `{"sandbox":{"enabled":true},"permissions":{"deny":["Bash(rm:*)"]}}`}} {
		state := t.TempDir()
		o := jail.StrictOptions{Kind: jail.KindClaude, Repo: dir, Cwd: dir, StateDir: state, Command: append([]string{"claude", "-p", "hi"}, arg...)}
		b := &Box{Options: Options{Rules: func(RulesView) (BoxRules, error) {
			return BoxRules{Keys: []string{"permissions"}, Settings: map[string]json.RawMessage{"permissions": json.RawMessage(`{"deny":["Bash(touch:*)"],"defaultMode":"acceptEdits"}`)}}, nil
		}}}
		if _, err := b.planRules(jail.Host{Home: "/home/u", Cwd: dir}, &o); err != nil {
			t.Fatalf("%q: %v", arg, err)
		}
		if !slices.Equal(o.Command, []string{"claude", "-p", "hi"}) {
			t.Errorf("%q: command %q, want the user's --settings gone", arg, o.Command)
		}
		if err := writeClaudeRules(state, b.rules); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(state, claudeRulesFile))
		var m struct {
			Sandbox     map[string]bool `json:"sandbox"`
			Permissions struct {
				Deny        []string `json:"deny"`
				DefaultMode string   `json:"defaultMode"`
			} `json:"permissions"`
			DisableAllHooks *bool `json:"disableAllHooks"`
		}
		if err := json.Unmarshal(got, &m); err != nil || !m.Sandbox["enabled"] || !slices.Equal(m.Permissions.Deny, []string{"Bash(touch:*)", "Bash(rm:*)"}) ||
			m.Permissions.DefaultMode != "acceptEdits" || m.DisableAllHooks == nil || *m.DisableAllHooks {
			t.Errorf("%q: rules file %s", arg, got)
		}
	}
	o := jail.StrictOptions{Kind: jail.KindClaude, Repo: dir, Cwd: dir, StateDir: t.TempDir(), Command: []string{"claude", "--settings", "nothing.json"}}
	b := &Box{Options: Options{Rules: func(RulesView) (BoxRules, error) { return BoxRules{}, nil }}}
	var h *jail.HintedError
	if _, err := b.planRules(jail.Host{Home: "/home/u", Cwd: dir}, &o); !errors.As(err, &h) || !strings.Contains(err.Error(), "nothing.json") {
		t.Errorf("a --settings file that is not there: %v", err)
	}
}

// TestClaudeRulesFileHooksOn: the rules file keeps hooks on (it ranks
// above the settings the box writes) unless the user switched theirs off.
func TestClaudeRulesFileHooksOn(t *testing.T) {
	for _, tt := range []struct {
		user map[string]json.RawMessage
		want string
	}{
		{nil, `"disableAllHooks": false`},
		{map[string]json.RawMessage{"hooks": json.RawMessage(`{}`)}, `"disableAllHooks": false`},
		{map[string]json.RawMessage{"disableAllHooks": json.RawMessage(`true`)}, `"disableAllHooks": true`},
	} {
		dir := t.TempDir()
		if err := writeClaudeRules(dir, &BoxRules{Settings: tt.user}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, claudeRulesFile))
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("user %s: rules file %s, want %s", tt.user, b, tt.want)
		}
	}
}

// TestClaudeRulesFileHookSwitches: the rules file, which ranks above the
// settings and global config the box writes, names the variables that
// switch hooks off with an empty value, unless the user's own --settings
// sets one; the rest of that env stays as the user gave it.
func TestClaudeRulesFileHookSwitches(t *testing.T) {
	for _, tt := range []struct {
		flag map[string]json.RawMessage
		want map[string]string
	}{
		{nil, map[string]string{"CLAUDE_CODE_SAFE_MODE": "", "CLAUDE_CODE_SIMPLE": ""}},
		{map[string]json.RawMessage{"env": json.RawMessage(`{"CLAUDE_CODE_SIMPLE":"1","FOO":"bar"}`)},
			map[string]string{"CLAUDE_CODE_SAFE_MODE": "", "CLAUDE_CODE_SIMPLE": "1", "FOO": "bar"}},
	} {
		dir := t.TempDir()
		if err := writeClaudeRules(dir, &BoxRules{Flag: tt.flag}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, claudeRulesFile))
		var m struct {
			Env map[string]string `json:"env"`
		}
		if err := json.Unmarshal(b, &m); err != nil || fmt.Sprint(m.Env) != fmt.Sprint(tt.want) {
			t.Errorf("--settings %s: rules file %s, want env %v", tt.flag, b, tt.want)
		}
	}
	if err := writeClaudeRules(t.TempDir(), &BoxRules{Flag: map[string]json.RawMessage{"env": json.RawMessage(`["x"]`)}}); err == nil {
		t.Error("an env that is not an object went into the rules file")
	}
}

// TestSeedClaudePlugins: what a box registered in its Claude's plugins
// directory, the settings that enable a plugin, and an agents directory
// of its own are gone at the next launch and named; Claude's store for
// its built-in plugins stays, and so does the mount point of the user's
// commands.
func TestSeedClaudePlugins(t *testing.T) {
	state := t.TempDir()
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r"}
	o.Instructions = []string{"commands"}
	for _, f := range []string{"plugins/installed_plugins.json", "plugins/known_marketplaces.json", "plugins/cache/m/p/hooks/hooks.json", "plugins/store/builtin.json",
		"agents/x.md", "commands/c.md"} {
		os.MkdirAll(filepath.Dir(filepath.Join(state, f)), 0o700)
		os.WriteFile(filepath.Join(state, f), []byte("{}"), 0o600)
	}
	os.WriteFile(filepath.Join(state, "settings.json"), []byte(`{"enabledPlugins":{"p@m":true},"theme":"dark"}`), 0o600)
	r := &BoxRules{Keys: []string{"permissions", "hooks", "enabledPlugins", "extraKnownMarketplaces"}}
	dropped, err := seedState(o, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"enabledPlugins", "plugins/cache", "plugins/installed_plugins.json", "plugins/known_marketplaces.json", "agents"}
	if !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	if _, err := os.Stat(filepath.Join(state, "commands", "c.md")); err != nil {
		t.Errorf("the mount point of the user's commands went: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(state, "plugins"))
	if len(entries) != 1 || entries[0].Name() != "store" {
		t.Errorf("the plugins directory after the seed holds %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "settings.json")); strings.Contains(string(b), "enabledPlugins") || !strings.Contains(string(b), "dark") {
		t.Errorf("the box's settings after the seed:\n%s", b)
	}
}

// TestSeedOpencodeSnapshots: the git directories of opencode's
// snapshots, whose config a box writes, are gone at the next launch and
// named; the rest of its data (sessions) stays.
func TestSeedOpencodeSnapshots(t *testing.T) {
	state := t.TempDir()
	for _, f := range []string{"opencode/snapshot/p/h/config", "opencode/storage/session.json"} {
		os.MkdirAll(filepath.Dir(filepath.Join(state, f)), 0o700)
		os.WriteFile(filepath.Join(state, f), []byte("x"), 0o600)
	}
	dropped, err := seedState(jail.StrictOptions{Kind: jail.KindOpencode, StateDir: state, Cwd: "/w/r", Repo: "/w/r"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || !strings.HasPrefix(dropped[0], "opencode/snapshot") {
		t.Errorf("dropped %q", dropped)
	}
	if _, err := os.Lstat(filepath.Join(state, "opencode", "snapshot")); err == nil {
		t.Error("the snapshots are still there")
	}
	if _, err := os.Stat(filepath.Join(state, "opencode", "storage", "session.json")); err != nil {
		t.Errorf("the sessions went too: %v", err)
	}
}

// TestStateClearingStaysInState: what the seed removes from a box's
// state is removed there, never through a symbolic link the box left on
// the way to it, which would reach the user's files on the host.
func TestStateClearingStaysInState(t *testing.T) {
	state, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{"snapshot", "agents"} {
		if err := os.MkdirAll(filepath.Join(outside, d), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(outside, d, "keep"), []byte("the user's"), 0o600)
	}
	if err := os.Symlink(outside, filepath.Join(state, "opencode")); err != nil {
		t.Fatal(err)
	}
	if _, err := clearOpencodeSnapshots(state); err == nil {
		t.Error("clearing opencode's snapshots through a link out of the state said nothing")
	}
	// The seed removes the link itself, and the launch goes on.
	dropped, err := seedState(jail.StrictOptions{Kind: jail.KindOpencode, StateDir: state, Cwd: "/w/r", Repo: "/w/r"}, nil)
	if err != nil || len(dropped) != 1 || !strings.HasPrefix(dropped[0], "opencode ") {
		t.Errorf("the seed over a link for opencode/: dropped %q, %v", dropped, err)
	}
	if _, err := os.Lstat(filepath.Join(state, "opencode")); err == nil {
		t.Error("the link the box left for opencode/ is still there")
	}
	if err := os.Symlink(filepath.Join(outside, "agents"), filepath.Join(state, "agents")); err != nil {
		t.Fatal(err)
	}
	removed, err := clearClaudeDefinitions(jail.StrictOptions{StateDir: state})
	if err != nil || !slices.Contains(removed, "agents") {
		t.Errorf("a link the box left for agents/: removed %v, %v", removed, err)
	}
	// Codex's rules directory, cleared at each launch, made a link out.
	if err := os.MkdirAll(filepath.Join(outside, "rules"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "rules", "keep"), []byte("the user's"), 0o600)
	if err := os.Symlink(filepath.Join(outside, "rules"), filepath.Join(state, "rules")); err != nil {
		t.Fatal(err)
	}
	if err := clearCodexRules(jail.StrictOptions{StateDir: state}); err != nil {
		t.Errorf("clearing a link the box left for rules/: %v", err)
	}
	for _, d := range []string{"snapshot", "agents", "rules"} {
		if _, err := os.Stat(filepath.Join(outside, d, "keep")); err != nil {
			t.Errorf("the seed removed %s outside the state: %v", d, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(state, "agents")); err == nil {
		t.Error("the link the box left for agents/ is still there")
	}
}

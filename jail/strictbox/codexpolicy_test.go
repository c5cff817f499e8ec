package strictbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/pelletier/go-toml/v2"
)

// TestPickCodexPolicy: the settings of the user's Codex config that
// restrict what it does without asking come in as overrides, the
// selected profile's over the top level's; what would widen the box's
// Codex, or what Codex would not take, stays out with a phrase; nothing
// else of the file comes in.
func TestPickCodexPolicy(t *testing.T) {
	projects := []string{"/w/repo/sub", "/w/repo"}
	for _, tc := range []struct {
		name, config string
		want         []string
		untrusted    bool
		left         []string // a fragment of each phrase, in order
	}{
		{name: "empty"},
		{name: "approval and sandbox", config: "approval_policy = \"on-request\"\nsandbox_mode = \"read-only\"\n",
			want: []string{`approval_policy="on-request"`, `sandbox_mode="read-only"`}},
		{name: "untrusted approval passes as Codex takes it", config: `approval_policy = "untrusted"`,
			want: []string{`approval_policy="untrusted"`}},
		{name: "granular", config: "[approval_policy.granular]\nsandbox_approval = false\nrules = true\nmcp_elicitations = false\nskill_approval = true\n",
			want: []string{"approval_policy={granular={sandbox_approval=false,rules=true,mcp_elicitations=false,skill_approval=true}}"}},
		{name: "granular missing a field", config: "[approval_policy.granular]\nsandbox_approval = false\n",
			left: []string{"approval_policy: not an approval"}},
		{name: "granular with a string", config: "[approval_policy.granular]\nsandbox_approval = \"no\"\nrules = true\nmcp_elicitations = true\n",
			left: []string{"approval_policy: not an approval"}},
		{name: "granular with an unknown field", config: "[approval_policy.granular]\nsandbox_approval = true\nrules = true\nmcp_elicitations = true\nsudo = true\n",
			left: []string{"approval_policy: not an approval"}},
		{name: "unknown approval", config: `approval_policy = "sometimes"`, left: []string{"approval_policy: not an approval"}},
		{name: "approval not a string", config: `approval_policy = 3`, left: []string{"approval_policy: not an approval"}},
		{name: "quote in a value", config: `sandbox_mode = "read-only\" \n x"`, left: []string{"sandbox_mode: not a sandbox mode"}},
		{name: "full access stays out", config: `sandbox_mode = "danger-full-access"`, left: []string{`sandbox_mode = "danger-full-access"`}},
		{name: "profile wins", config: "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\nprofile = \"careful\"\n[profiles.careful]\nsandbox_mode = \"read-only\"\nmodel_provider = \"p\"\n[profiles.loose]\nsandbox_mode = \"danger-full-access\"\n",
			want: []string{`approval_policy="never"`, `sandbox_mode="read-only"`}},
		{name: "profile's full access", config: "sandbox_mode = \"read-only\"\nprofile = \"loose\"\n[profiles.loose]\nsandbox_mode = \"danger-full-access\"\n",
			left: []string{`[profiles.loose] sandbox_mode = "danger-full-access"`}},
		{name: "missing profile", config: "sandbox_mode = \"read-only\"\nprofile = \"gone\"\n",
			want: []string{`sandbox_mode="read-only"`}, left: []string{`profile "gone"`}},
		{name: "profile not a string", config: "profile = 1\n", left: []string{"profile: not a string"}},
		{name: "workspace limits", config: "[sandbox_workspace_write]\nnetwork_access = false\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = false\nwritable_roots = []\n",
			want: []string{"sandbox_workspace_write.exclude_slash_tmp=true", "sandbox_workspace_write.network_access=false"}},
		{name: "workspace widening", config: "[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = [\"/home/u/.ssh\"]\nexclude_slash_tmp = \"yes\"\n",
			left: []string{"exclude_slash_tmp: not true or false", "network_access = true", "writable_roots"}},
		{name: "workspace not a table", config: "sandbox_workspace_write = 1\n", left: []string{"sandbox_workspace_write: not a table"}},
		{name: "login shell", config: "allow_login_shell = false\n", want: []string{"allow_login_shell=false"}},
		{name: "login shell allowed", config: "allow_login_shell = true\n"},
		{name: "permission profiles", config: "default_permissions = \"ro\"\n[permissions.ro.filesystem]\n\":project_roots\" = \"read\"\n",
			left: []string{"default_permissions", "permissions"}},
		{name: "secrets and providers never", config: "model_provider = \"p\"\nchatgpt_base_url = \"https://x\"\napprovals_reviewer = \"auto_review\"\n[model_providers.p]\nbase_url = \"https://x\"\nexperimental_bearer_token = \"sk-secret\"\n[shell_environment_policy]\ninherit = \"all\"\n"},
		{name: "project untrusted", config: "[projects.\"/w/repo\"]\ntrust_level = \"untrusted\"\n", untrusted: true},
		{name: "parent untrusted", config: "[projects.\"/w\"]\ntrust_level = \"untrusted\"\n", untrusted: true},
		{name: "project trusted under an untrusted parent", config: "[projects.\"/w\"]\ntrust_level = \"untrusted\"\n[projects.\"/w/repo\"]\ntrust_level = \"trusted\"\n"},
		{name: "another project untrusted", config: "[projects.\"/w/other\"]\ntrust_level = \"untrusted\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := toml.Unmarshal([]byte(tc.config), &m); err != nil {
				t.Fatal(err)
			}
			p := pickCodexPolicy(m, projects)
			if !slices.Equal(p.Overrides, tc.want) {
				t.Errorf("overrides %q, want %q", p.Overrides, tc.want)
			}
			if p.Untrusted != tc.untrusted {
				t.Errorf("untrusted %v, want %v", p.Untrusted, tc.untrusted)
			}
			if len(p.Left) != len(tc.left) {
				t.Fatalf("left %q, want phrases with %q", p.Left, tc.left)
			}
			for i, l := range tc.left {
				if !strings.Contains(p.Left[i], l) {
					t.Errorf("left[%d] %q, want it to hold %q", i, p.Left[i], l)
				}
			}
			for _, o := range p.Overrides {
				if strings.Contains(o, "secret") || strings.Contains(o, "https") {
					t.Errorf("override %q carries what it must not", o)
				}
			}
		})
	}
}

// TestReadCodexPolicy: a file that does not parse gives one phrase; a
// missing one nothing; the note says what came in and what stayed out.
func TestReadCodexPolicy(t *testing.T) {
	dir := t.TempDir()
	if p := readCodexPolicy(filepath.Join(dir, "none.toml"), nil); len(p.Overrides)+len(p.Left) != 0 || p.note("x") != "" {
		t.Errorf("missing file: %+v", p)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("sandbox_mode = \n"), 0o600)
	if p := readCodexPolicy(bad, nil); len(p.Overrides) != 0 || len(p.Left) != 1 || !strings.Contains(p.note(bad), "does not parse") {
		t.Errorf("broken file: %+v", p)
	}
	good := filepath.Join(dir, "config.toml")
	os.WriteFile(good, []byte("sandbox_mode = \"read-only\"\nallow_login_shell = \"no\"\n[projects.\"/w\"]\ntrust_level = \"untrusted\"\n"), 0o600)
	n := readCodexPolicy(good, []string{"/w"}).note(good)
	for _, w := range []string{good, `in the box: sandbox_mode="read-only"`, "untrusted", "not in the box: allow_login_shell"} {
		if !strings.Contains(n, w) {
			t.Errorf("note %q lacks %q", n, w)
		}
	}
}

// TestSeedCodexPolicy: the box's own config.toml loses what an earlier
// box wrote there that would decide what Codex runs without asking (a
// profile would beat the user's overrides) or that Codex runs itself
// (notify, hooks, a status line's program, otel's helper), keeps the
// preferences, names what it dropped, and marks the project as the
// user's config does. A hooks.json left there goes too.
func TestSeedCodexPolicy(t *testing.T) {
	state := t.TempDir()
	planted := "model = \"m\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\nprofile = \"loose\"\nnotify = [\"touch\", \"/w/r/x\"]\n" +
		"[profiles.loose]\napproval_policy = \"never\"\n[sandbox_workspace_write]\nnetwork_access = true\n" +
		"[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"touch /w/r/x\" }]\n[otel]\nheaders_helper = \"touch /w/r/x\"\n" +
		"[tui]\ntheme = \"dark\"\nstatus_line = { binary = \"/w/r/x\" }\n[mcp_servers.planted]\ncommand = \"touch\"\n"
	os.WriteFile(filepath.Join(state, "config.toml"), []byte(planted), 0o600)
	os.WriteFile(filepath.Join(state, "hooks.json"), []byte(`{"hooks":{}}`), 0o600)
	o := jail.StrictOptions{Kind: jail.KindCodex, StateDir: state, Cwd: "/w/r", Repo: "/w/r", CodexUntrusted: true}
	dropped, err := seedState(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"approval_policy", "hooks", "notify", "otel", "profile", "profiles", "sandbox_mode", "sandbox_workspace_write", "tui.status_line", "hooks.json"}
	if !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	if _, err := os.Lstat(filepath.Join(state, "hooks.json")); err == nil {
		t.Error("the box's hooks.json is still there")
	}
	b, _ := os.ReadFile(filepath.Join(state, "config.toml"))
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"approval_policy", "sandbox_mode", "profile", "profiles", "sandbox_workspace_write", "notify", "hooks", "otel", "mcp_servers"} {
		if _, ok := m[k]; ok {
			t.Errorf("the box's config kept %s:\n%s", k, b)
		}
	}
	if tui, _ := m["tui"].(map[string]any); m["model"] != "m" || tui["theme"] != "dark" || len(tui) != 1 || !strings.Contains(string(b), "trust_level = 'untrusted'") {
		t.Errorf("the box's config:\n%s", b)
	}
}

// TestProjectTrust: the user's [projects] decides, nearest entry first;
// every project must be trusted for "trusted", one untrusted is enough
// for "untrusted".
func TestProjectTrust(t *testing.T) {
	projects := []string{"/w/repo/sub", "/w/repo"}
	for _, tc := range []struct{ config, want string }{
		{"", ""},
		{"[projects.\"/w/repo\"]\ntrust_level = \"trusted\"\n", "trusted"},
		{"[projects.\"/w\"]\ntrust_level = \"trusted\"\n", "trusted"},
		{"[projects.\"/w/repo/sub\"]\ntrust_level = \"trusted\"\n", ""},
		{"[projects.\"/w/repo/sub\"]\ntrust_level = \"trusted\"\n[projects.\"/w/repo\"]\ntrust_level = \"untrusted\"\n", "untrusted"},
		{"[projects.\"/w/repo\"]\ntrust_level = \"sometimes\"\n", ""},
		{"[projects.\"/w/other\"]\ntrust_level = \"trusted\"\n", ""},
	} {
		var m map[string]any
		if err := toml.Unmarshal([]byte(tc.config), &m); err != nil {
			t.Fatal(err)
		}
		if got := projectTrust(m, projects); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.config, got, tc.want)
		}
	}
}

// TestCodexProfileArg: every spelling of Codex's --profile is found and
// taken out, the last one's name wins, and nothing after "--" is looked
// at.
func TestCodexProfileArg(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		name  string
		rest  []string
		found bool
	}{
		{args: []string{"exec", "hi"}, rest: []string{"exec", "hi"}},
		{args: []string{"--profile", "work", "exec", "hi"}, name: "work", rest: []string{"exec", "hi"}, found: true},
		{args: []string{"exec", "-p", "work", "hi"}, name: "work", rest: []string{"exec", "hi"}, found: true},
		{args: []string{"--profile=a", "exec", "-pb", "hi"}, name: "b", rest: []string{"exec", "hi"}, found: true},
		{args: []string{"-p=a"}, name: "a", rest: []string{}, found: true},
		{args: []string{"exec", "--profile"}, rest: []string{"exec"}, found: true},
		{args: []string{"mcp", "add", "x", "--", "srv", "-p", "1"}, rest: []string{"mcp", "add", "x", "--", "srv", "-p", "1"}},
		{args: []string{"--sandbox", "read-only", "exec", "--json", "say -p"}, rest: []string{"--sandbox", "read-only", "exec", "--json", "say -p"}},
		{args: []string{"exec", "-m", "-p", "-c", "--profile", "hi"}, rest: []string{"exec", "-m", "-p", "-c", "--profile", "hi"}},
		{args: []string{"-p", "w", "sandbox", "linux", "cmd", "-p", "x"}, name: "w", rest: []string{"sandbox", "linux", "cmd", "-p", "x"}, found: true},
		{args: []string{"exec", "sandbox", "-p", "w"}, name: "w", rest: []string{"exec", "sandbox"}, found: true},
	} {
		name, rest, found := codexProfileArg(tc.args)
		if name != tc.name || found != tc.found || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: %q %q %v, want %q %q %v", tc.args, name, rest, found, tc.name, tc.rest, tc.found)
		}
	}
	if got := codexCommand(jail.KindCodex, []string{"codex", "--profile", "w", "exec"}); !slices.Equal(got, []string{"codex", "exec"}) {
		t.Errorf("codex command %q", got)
	}
	if got := codexCommand(jail.KindClaude, []string{"claude", "-p", "w"}); !slices.Equal(got, []string{"claude", "-p", "w"}) {
		t.Errorf("claude command %q", got)
	}
}

// TestCodexSettingsProfile: --profile NAME takes the user's
// NAME.config.toml over the user's config.toml, for the policy and the
// preferences alike; a profile the user does not have, one whose name
// is a path, and one that does not parse are errors with a hint.
func TestCodexSettingsProfile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("model = \"m\"\nsandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "careful.config.toml"), []byte("model = \"p\"\nsandbox_mode = \"read-only\"\n[sandbox_workspace_write]\nnetwork_access = false\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.config.toml"), []byte("model = \n"), 0o600)
	prefs, p, err := codexSettings(dir, "careful", []string{"model"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`sandbox_mode="read-only"`, "sandbox_workspace_write.exclude_slash_tmp=true", "sandbox_workspace_write.network_access=false"}
	if !slices.Equal(prefs, []string{`model="p"`}) || !slices.Equal(p.Overrides, want) {
		t.Errorf("prefs %q, overrides %q", prefs, p.Overrides)
	}
	if prefs, p, err := codexSettings(dir, "", []string{"model"}, nil); err != nil || !slices.Equal(prefs, []string{`model="m"`}) || !slices.Contains(p.Overrides, `sandbox_mode="workspace-write"`) {
		t.Errorf("no profile: %q %q %v", prefs, p.Overrides, err)
	}
	for _, name := range []string{"gone", "../config", "bad"} {
		_, _, err := codexSettings(dir, name, nil, nil)
		var h interface{ Hints() []string }
		if err == nil || !errors.As(err, &h) || len(h.Hints()) == 0 {
			t.Errorf("profile %q: %v", name, err)
		}
	}
}

// TestCodexProjectDir: a .codex from the working directory up to the
// repository is found, one above it is not.
func TestCodexProjectDir(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755)
	os.Mkdir(filepath.Join(root, ".codex"), 0o755)
	if d := codexProjectDir(filepath.Join(repo, "a", "b"), repo); d != "" {
		t.Errorf("found %q", d)
	}
	os.Mkdir(filepath.Join(repo, ".codex"), 0o755)
	if d := codexProjectDir(filepath.Join(repo, "a", "b"), repo); d != filepath.Join(repo, ".codex") {
		t.Errorf("found %q", d)
	}
	os.WriteFile(filepath.Join(repo, "a", ".codex"), nil, 0o600)
	if d := codexProjectDir(filepath.Join(repo, "a", "b"), repo); d != filepath.Join(repo, "a", ".codex") {
		t.Errorf("found %q", d)
	}
}

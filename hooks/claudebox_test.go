package hooks

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/shared/secret"
)

// testView is a box that shows /usr, /bin, the repository /src/app and
// the state dir, with sh, git and jq on its PATH; the host's PATH also
// has ~/.local/bin/ruff. ~/.ssh is a credential.
func testView() BoxView {
	shown := []string{"/usr", "/bin", "/src/app", "/state"}
	return BoxView{
		Shows: func(p string) bool { return slices.ContainsFunc(shown, func(d string) bool { return within(p, d) }) },
		LookPath: func(name string) string {
			if slices.Contains([]string{"sh", "git", "jq", "grep", "python3"}, name) {
				return "/usr/bin/" + name
			}
			return ""
		},
		HostLookPath: func(name string) string {
			if name == "ruff" {
				return "/home/u/.local/bin/ruff"
			}
			return ""
		},
		Mountable: func(p string) error {
			if within(p, "/home/u/.ssh") {
				return errors.New(p + " is a credential path")
			}
			return nil
		},
		Home: "/home/u", Project: "/src/app",
	}
}

func TestClaudeBoxRules(t *testing.T) {
	hook := func(cmd string) string {
		c, _ := json.Marshal(cmd)
		return `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":` + string(c) + `,"timeout":5}]}]}}`
	}
	for _, tt := range []struct {
		name, src string
		// settings is what the box's settings.json gets, as compact JSON
		// with sorted keys; left what the note names, binds the binds.
		settings string
		left     []string
		binds    []string
		auto     bool
	}{
		{name: "no file", src: "", settings: `{}`},
		{name: "rules kept", src: `{"permissions":{"allow":["Bash(git status)"],"deny":["Bash(touch:*)","Read(~/.ssh/**)"],"ask":["Bash(git push:*)"],"defaultMode":"acceptEdits","disableBypassPermissionsMode":"disable"},"model":"opus","env":{"X":"1"}}`,
			settings: `{"model":"opus","permissions":{"allow":["Bash(git status)"],"ask":["Bash(git push:*)"],"defaultMode":"acceptEdits","deny":["Bash(touch:*)","Read(~/.ssh/**)"],"disableBypassPermissionsMode":"disable"}}`},
		// The user's plain preferences reach the box's Claude as they are;
		// what runs a command or may hold a credential does not.
		{name: "preferences", src: `{"model":"claude-opus-4-1","effortLevel":"high","outputStyle":"Explanatory","alwaysThinkingEnabled":true,"includeCoAuthoredBy":false,"cleanupPeriodDays":90,"env":{"BASH_DEFAULT_TIMEOUT_MS":"1"},"statusLine":{"type":"command","command":"~/.claude/statusline.sh"},"apiKeyHelper":"~/bin/key"}`,
			settings: `{"alwaysThinkingEnabled":true,"cleanupPeriodDays":90,"effortLevel":"high","includeCoAuthoredBy":false,"model":"claude-opus-4-1","outputStyle":"Explanatory"}`},
		{name: "a preference of the wrong type or secret", src: `{"model":{"id":"x"},"alwaysThinkingEnabled":"yes","outputStyle":"sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345","cleanupPeriodDays":null}`,
			settings: `{}`, left: []string{"alwaysThinkingEnabled: not a bool", "model: not a string", "outputStyle: it looks like it holds a secret"}},
		{name: "the user's switch for hooks", src: `{"disableAllHooks":true,"env":{"CLAUDE_CODE_SAFE_MODE":"1"}}`, settings: `{"disableAllHooks":true}`},
		{name: "a secret rule", src: `{"permissions":{"allow":["Bash(curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnop' *)","Bash(ls)"]}}`,
			settings: `{"permissions":{"allow":["Bash(ls)"]}}`, left: []string{"permissions.allow rule 1: it looks like it holds a secret"}},
		{name: "auto mode", src: `{"permissions":{"defaultMode":"auto"}}`, settings: `{"permissions":{}}`, auto: true},
		{name: "additional directories", src: `{"permissions":{"additionalDirectories":["/src/app/docs","../other","~/notes"]}}`,
			settings: `{"permissions":{"additionalDirectories":["/src/app/docs"]}}`,
			left: []string{`additionalDirectories "../other": the box does not show it (a bind spec's ro or rw entry would)`,
				`additionalDirectories "~/notes": the box does not show it (a bind spec's ro or rw entry would)`}},
		{name: "a project hook", src: hook(`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`), settings: hook(`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`)},
		{name: "a pipeline of box commands", src: hook(`jq -r .tool_input.command | grep -q rm && exit 2 || true`), settings: hook(`jq -r .tool_input.command | grep -q rm && exit 2 || true`)},
		{name: "a hook script in the home", src: hook(`python3 ~/.claude/hooks/check.py`), settings: `{}`,
			left: []string{`PreToolUse hook "python3 ~/.claude/hooks/check.py": /home/u/.claude/hooks/check.py is not in the box; ro = ["~/.claude/hooks"] in a bind spec (--binds FILE) brings it`}},
		{name: "a command on the host PATH only", src: hook(`ruff check`), settings: `{}`,
			left: []string{`PreToolUse hook "ruff check": ruff is not on the box PATH; ro = ["~/.local/bin"] and path = ["~/.local/bin"] in a bind spec (--binds FILE) bring it`}},
		{name: "a credential path", src: hook(`/home/u/.ssh/hook`), settings: `{}`,
			left: []string{`PreToolUse hook "/home/u/.ssh/hook": /home/u/.ssh/hook is not in the box`}},
		{name: "a secret in a hook", src: hook(`API_TOKEN=ghp_0123456789abcdefghij0123456789abcdef /usr/bin/notify`), settings: `{}`,
			left: []string{`PreToolUse hook "[redacted]": it looks like it holds a secret`}},
		{name: "aisan's guard outside the box", src: hook(`/home/u/.local/bin/aisan-guard`), settings: hook(`/home/u/.local/bin/aisan-guard`),
			binds: []string{"/home/u/.local/bin/aisan-guard"}},
		{name: "aisan's guard in the box", src: hook(`/usr/local/bin/aisan guard`), settings: hook(`/usr/local/bin/aisan guard`)},
		{name: "an http hook", src: `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"https://example.com/h"}]}]}}`, settings: `{}`,
			left: []string{`Stop hook "https://example.com/h": it posts to a URL, and the box has no network`}},
		{name: "a prompt hook", src: `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"check"}]}]}}`, settings: `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"check"}]}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ClaudeBoxRules([]byte(tt.src), "/home/u/.claude/settings.json", testView())
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(b.Settings)
			var want any
			if err := json.Unmarshal([]byte(tt.settings), &want); err != nil {
				t.Fatal(err)
			}
			w, _ := json.Marshal(want)
			var g any
			json.Unmarshal(got, &g)
			gs, _ := json.Marshal(g)
			if string(gs) != string(w) {
				t.Errorf("settings\n got %s\nwant %s", gs, w)
			}
			if !slices.Equal(b.Left, tt.left) {
				t.Errorf("left\n got %q\nwant %q", b.Left, tt.left)
			}
			if !slices.Equal(b.Binds, tt.binds) || b.AutoMode != tt.auto {
				t.Errorf("binds %q auto %v", b.Binds, b.AutoMode)
			}
			if strings.Contains(string(got)+strings.Join(b.Left, ""), "sk-ant") || strings.Contains(string(got)+strings.Join(b.Left, ""), "ghp_") {
				t.Errorf("a secret reached the box or the note")
			}
		})
	}
	for _, bad := range []string{`{`, `[]`, `{"permissions":[]}`, `{"permissions":{"deny":"Bash"}}`, `{"hooks":{"PreToolUse":{}}}`, `{"disableAllHooks":"yes"}`} {
		if _, err := ClaudeBoxRules([]byte(bad), "/s.json", testView()); err == nil || !strings.Contains(err.Error(), "/s.json") {
			t.Errorf("%s: err %v, want one naming the file", bad, err)
		}
	}
}

// FuzzClaudeBoxRules: any settings file gives an error or settings that
// parse, carry no secret-looking rule and bind only aisan's guard.
func FuzzClaudeBoxRules(f *testing.F) {
	for _, s := range []string{`{}`, `{"permissions":{"deny":["Bash(touch:*)"],"additionalDirectories":["../x"]}}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/opt/aisan guard"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a=$(b) \"$HOME\"/x; c | d"}]}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		b, err := ClaudeBoxRules(src, "/s.json", testView())
		if err != nil {
			return
		}
		for k, v := range b.Settings {
			if !slices.Contains(ClaudeBoxKeys, k) || !json.Valid(v) {
				t.Fatalf("key %q: %s", k, v)
			}
		}
		if p, ok := b.Settings["permissions"]; ok {
			var perm map[string]json.RawMessage
			json.Unmarshal(p, &perm)
			for _, l := range ruleLists {
				var rules []string
				json.Unmarshal(perm[l], &rules)
				for _, r := range rules {
					if secret.Text(r) {
						t.Fatalf("a secret-looking rule reached the box: %q", r)
					}
				}
			}
		}
		for _, bin := range b.Binds {
			if _, ok := GuardBinary(bin, nil); !ok && filepath.Base(bin) != "aisan" {
				t.Fatalf("bound %q, which is no guard", bin)
			}
		}
	})
}

package strictbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
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
	if err := seedState(o, r); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ := os.ReadFile(settings)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["hooks"]; ok || got["theme"] != "dark" || !strings.Contains(string(b), `"Bash(touch:*)"`) || strings.Contains(string(b), `"Bash"`) {
		t.Errorf("the box's settings after the seed:\n%s", b)
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

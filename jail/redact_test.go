package jail

import (
	"bytes"
	"strings"
	"testing"
)

func TestIsSecret(t *testing.T) {
	for _, tc := range []struct {
		k, v string
		want bool
	}{
		{"ANTHROPIC_API_KEY", "sk-ant-xyz", true},
		{"GITHUB_TOKEN", "abc", true},
		{"AWS_SECRET_ACCESS_KEY", "abc", true},
		{"PGPASSWORD", "hunter2", true},
		{"MY_VAR", "ghp_0123456789", true},
		{"DATABASE_URL", "postgres://u:pw@db/x", true},
		{"HOME", "/home/u", false},
		{"PATH", "/usr/bin", false},
		{"TERM", "xterm", false},
		{"GITHUB_TOKEN", "", false},
	} {
		if got := IsSecret(tc.k, tc.v); got != tc.want {
			t.Errorf("IsSecret(%s, %s) = %v", tc.k, tc.v, got)
		}
	}
}

// explain never prints a secret from the environment, in the changes or
// in the argv.
func TestExplainRedactsSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-do-not-print")
	spec := DenyList(DenyOptions{Kind: KindRun, Slot: "s-12345678-run", Command: []string{"true"}, Cwd: "/tmp",
		Env: []string{"HOME=/h", "ANTHROPIC_API_KEY=sk-ant-do-not-print", "NEW_TOKEN=tok-do-not-print"}})
	c, err := Compile(spec, Host{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	explainSpec(&buf, spec, c, "s-12345678-run", "")
	if out := buf.String(); strings.Contains(out, "do-not-print") || !strings.Contains(out, "NEW_TOKEN=<redacted>") {
		t.Fatalf("explain output leaks or lacks the redaction:\n%s", out)
	}
}

func TestIsSecretKeepsOrdinaryNames(t *testing.T) {
	for _, k := range []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_ID", "SSH_AUTH_SOCK", "XAUTHORITY"} {
		if IsSecret(k, "/run/user/1000/x") {
			t.Errorf("%s is taken for a secret", k)
		}
	}
}

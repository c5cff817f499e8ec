package secret

import "testing"

func TestLooks(t *testing.T) {
	tests := []struct {
		name, value, why string
	}{
		{"GITHUB_TOKEN", "abc", "name"},
		{"api_key", "x", "name"},
		{"DB_PASSWORD", "hunter2", "name"},
		{"CLIENT_SECRET", "s", "name"},
		{"GITHUB_TOKEN", "${GITHUB_TOKEN}", ""},
		{"GITHUB_TOKEN", "$GITHUB_TOKEN", ""},
		{"API_KEY", "${API_KEY:-none}", ""},
		{"API_KEY", "", ""},
		{"API_KEY", "{env:API_KEY}", ""},
		{"API_KEY", "{file:~/.config/key}", ""},
		{"API_KEY", "{env:A} {env:B}", "name"},
		{"API_KEY", "${A}${B}", "name"},
		{"X", "ghp_0123456789abcdefghij0123456789abcdef", "value"},
		{"X", "sk-ant-api03-abcdefghijklmnop", "value"},
		{"X", "AKIAIOSFODNN7EXAMPLE", "value"},
		{"X", "xoxb-1234-5678-abcdefgh", "value"},
		{"X", "-----BEGIN OPENSSH PRIVATE KEY-----", "value"},
		{"X", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "value"},
		{"X", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg", "value"},
		{"TOKEN", "ghp_0123456789abcdefghij0123456789abcdef", "value"},
		{"X", "sk-", ""},
		{"LOG_LEVEL", "debug", ""},
		{"PATH", "/usr/bin:/bin", ""},
		{"DATA", "/home/u/some/very/long/path/to/a/data/dir/that/is/long", ""},
		{"X", "abcdefghijklmnopqrstuvwxyzabcdefghijkl", ""},
		{"NODE_OPTIONS", "--max-old-space-size=4096", ""},
		{"DATABASE_URL", "postgres://app:Hunter2pw@db.internal/prod", "value"},
		{"REDIS_URL", "redis://:Hunter2pw@cache:6379", "value"},
		{"DATABASE_URL", "postgres://db.internal/prod", ""},
	}
	for _, tt := range tests {
		why, secret := Looks(tt.name, tt.value)
		if why != tt.why || secret != (tt.why != "") {
			t.Errorf("Looks(%q, %q) = %q, %v; want %q", tt.name, tt.value, why, secret, tt.why)
		}
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct {
		text   string
		secret bool
	}{
		{"Bash(touch:*)", false},
		{"Bash(rm -rf:*)", false},
		{"Read(~/.ssh/**)", false},
		{"Bash(export GITHUB_TOKEN=*)", false},
		{"Bash(GITHUB_TOKEN=$GITHUB_TOKEN gh pr list)", false},
		{"Bash(npm test)", false},
		{"/home/u/.local/bin/aisan-guard", false},
		{"'/opt/my tools/aisan' guard", false},
		{`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`, false},
		{"WebFetch(domain:example.com)", false},
		{"Bash(curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnop' *)", true},
		{"API_TOKEN=ghp_0123456789abcdefghij0123456789abcdef /usr/bin/hook", true},
		{"DB_PASSWORD=hunter2 /usr/bin/hook", true},
		{"hook --token=abcdefgh", true},
		{"https://user:pa55word@example.com/hook", true},
		{"https://example.com/hook", false},
		{"Bash(git push https://x-access-token:abc@example.com/r.git)", true},
	} {
		if got := Text(tt.text); got != tt.secret {
			t.Errorf("Text(%q) = %v, want %v", tt.text, got, tt.secret)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"Bash(touch:*)", "A=b c", "https://a:b@c", "sk-ant-0123456789", "", "{env:X}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// It decides every input, and a word that is a secret alone is
		// one in any text around it.
		if Value(s) && !containsSeparator(s) && !Text(s) {
			t.Errorf("Value(%q) but not Text", s)
		}
	})
}

func containsSeparator(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '(', ')', '[', ']', ',', ';', '|', '&', '<', '>', '=':
			return true
		}
	}
	return false
}

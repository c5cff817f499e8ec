//go:build !aisanfront

package main

import (
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

// TestMCPEnvNotEchoed: a credential given to --mcp-env is never quoted
// back, an "=" inside it included (the part before it is no NAME).
func TestMCPEnvNotEchoed(t *testing.T) {
	for _, v := range []string{
		"sk-ant-api03-abcdefghijklmnop",
		"postgres://app:hunter2@db/prod?sslmode=disable",
		"dGhpcyBpcyBhIHNlY3JldCBrZXkgZm9yIHRlc3Rpbmc=",
	} {
		f := &strictFlags{mcpEnv: listFlag{v}}
		_, err := f.boxOptions(jail.KindClaude)
		if err == nil {
			t.Fatalf("--mcp-env %s: accepted", v)
		}
		for _, part := range []string{"hunter2", "dGhpcyBp", "sk-ant"} {
			if strings.Contains(v, part) && strings.Contains(err.Error(), part) {
				t.Errorf("--mcp-env %s: the error echoes it: %v", v, err)
			}
		}
	}
	f := &strictFlags{mcpEnv: listFlag{"GITHUB_TOKEN=ghp_x"}}
	if _, err := f.boxOptions(jail.KindClaude); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN=…") || strings.Contains(err.Error(), "ghp_x") {
		t.Errorf("--mcp-env GITHUB_TOKEN=ghp_x: %v; want GITHUB_TOKEN=… without the value", err)
	}
}

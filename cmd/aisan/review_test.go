//go:build !aisanfront

package main

import (
	"strings"
	"testing"
)

// TestRelToEscapes: the held list names what a box chose; no terminal
// control reaches the user raw.
func TestRelToEscapes(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"/r/.claude/\r\x1b[2K\x1b]52;c;ZWNobyBwd25lZA==\a", `.claude/\r\x1b[2K\x1b]52;c;ZWNobyBwd25lZA==\a`},
		{"/r/.claude/\u009b31m", `.claude/\u009b31m`},
		{"/elsewhere/x\ny", `/elsewhere/x\ny`},
		{"/r/.envrc", ".envrc"},
	} {
		got := relTo("/r", []string{tc.file})
		if len(got) != 1 || got[0] != tc.want || strings.ContainsAny(got[0], "\r\n\x1b\a") {
			t.Errorf("relTo(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
}

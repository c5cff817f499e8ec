package tests

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStrictRefusalSummaryIsPlainText: the line a strict launch prints
// on the user's terminal when it ends, naming the commonest refusal,
// carries what the box sent (a request path) only as printable text. A
// box that asks its model relay for a path holding C1 control characters
// (U+009B is CSI, which terminals act on) or bytes that are not UTF-8
// sees it refused, and the user's terminal gets them escaped; so does
// 'aisan logs --egress --json', which prints the log's lines.
func TestStrictRefusalSummaryIsPlainText(t *testing.T) {
	repo, env := modelBox(t)
	script := `P=${ANTHROPIC_BASE_URL##*:}; P=${P%/}
exec 3<>/dev/tcp/127.0.0.1/$P || exit 9
printf 'GET /v1/x\302\2332J\302\235\233m HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
head -c 12 <&3; echo`
	r := strict(t, repo, env, []string{"--egress", "anthropic"}, "bash", "-c", script)
	if !strings.Contains(r.stdout, "HTTP/1.1 4") {
		t.Fatalf("the box's odd request was not refused: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	line := lineWith(r.stderr, "aisan: note: strict mode refused")
	if line == "" {
		t.Fatalf("no refusal summary on stderr: %q", r.stderr)
	}
	if !utf8.ValidString(line) {
		t.Errorf("the refusal summary is not valid UTF-8: %q", line)
	}
	for _, c := range line {
		if c < 0x20 || c == 0x7f || c >= 0x80 && c < 0xa0 {
			t.Errorf("the refusal summary carries the control character %U from the box: %q", c, line)
		}
	}
	logs := aisan(t, env, "", "logs", "--egress", slotName(repo, "run"), "--json")
	if logs.code != 0 || !strings.Contains(logs.stdout, `\u009b2J`) {
		t.Fatalf("aisan logs --egress --json: code %d, stdout %q, stderr %q", logs.code, logs.stdout, logs.stderr)
	}
	for _, c := range logs.stdout {
		if c >= 0x80 && c < 0xa0 {
			t.Errorf("aisan logs --egress --json carries the control character %U from the box", c)
		}
	}
}

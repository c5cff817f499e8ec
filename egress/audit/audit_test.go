package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileRotatesAndRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "egress.log")
	l, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	l.Max = 400
	for range 10 {
		l.Log(Entry{Backend: "anthropic", Method: "POST", Path: "/v1/messages?beta=true", Status: 200})
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	st, _ := os.Stat(p)
	if st.Size() > 400 {
		t.Fatalf("log not rotated: %d bytes", st.Size())
	}
	if _, err := os.Stat(p + ".1"); err != nil {
		t.Fatal("no rotated generation")
	}
	f, _ := os.Open(p)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		for _, k := range []string{"time", "backend", "method", "path", "status", "bytes_up", "bytes_down", "ms", "refused"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("line lacks %s: %s", k, sc.Text())
			}
		}
	}
	f.Close()
	link := filepath.Join(dir, "link.log")
	os.Symlink(p, link)
	if _, err := Open(link); err == nil {
		t.Fatal("opened through a symlink")
	}
}

func TestTallySummary(t *testing.T) {
	var tl Tally
	if s := tl.Summary(); s != "" {
		t.Errorf("nothing refused, yet %q", s)
	}
	c := &collect{}
	s := tl.Wrap("proj-1a2b3c4d-claude", c)
	s.Log(Entry{Status: 200})
	s.Log(Entry{Status: 403, Refused: "aisan strict mode refused this request: messages[0].content[1].source.type: an image source type \"url\" is refused"})
	s.Log(Entry{Status: 403, Refused: "aisan strict mode refused this request: messages[4].content[0].source.type: an image source type \"url\" is refused"})
	s.Log(Entry{Status: 429, Refused: "aisan strict mode: this box is sending requests faster than its rate limit"})
	want := `strict mode refused 3 requests of this box's; the commonest (2): messages[].content[].source.type: an image source type "url" is refused; the whole list: aisan logs --egress proj-1a2b3c4d-claude`
	if got := tl.Summary(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if len(c.e) != 4 {
		t.Errorf("the wrapped sink got %d entries", len(c.e))
	}
}

type collect struct{ e []Entry }

func (c *collect) Log(e Entry) { c.e = append(c.e, e) }

// TestTallySummaryEscapesControls: a reason may carry what the box sent
// (a request path); the summary, printed on the user's terminal, carries
// it only as printable text.
func TestTallySummaryEscapesControls(t *testing.T) {
	for _, c := range []struct{ reason, want string }{
		{"GET /v1/x\u009b2J is not a request", `GET /v1/x\u009b2J is not a request`},
		{"GET /\x1b]0;t\x07 is not", `GET /\x1b]0;t\a is not`},
		{"GET /\x9b31m is not", `GET /\x9b31m is not`},
		{"GET /\x7f\u0085 is not", `GET /\x7f\u0085 is not`},
		{"GET /bücher is not", "GET /bücher is not"},
		{"a" + strings.Repeat("é", 200), "a" + strings.Repeat("é", 119) + "…"},
	} {
		var tl Tally
		tl.Wrap("s", &collect{}).Log(Entry{Status: 403, Refused: c.reason})
		got := tl.Summary()
		if !strings.Contains(got, "(1): "+c.want+"; the whole list") {
			t.Errorf("reason %q: summary %q, want it to carry %q", c.reason, got, c.want)
		}
	}
}

// TestInertJSON: a log line with C1 controls in a string comes out as
// the same JSON with each escaped, and other text untouched.
func TestInertJSON(t *testing.T) {
	e := Entry{Path: "/v1/x\u009b2J\u009d\u00e9\u0085", Refused: "café"}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	out := InertJSON(b)
	for _, c := range []string{"\u009b", "\u009d", "\u0085"} {
		if bytes.Contains(out, []byte(c)) {
			t.Errorf("%q left raw in %s", c, out)
		}
	}
	if !bytes.Contains(out, []byte(`\u009b2J\u009d`)) || !bytes.Contains(out, []byte("é")) || !bytes.Contains(out, []byte("café")) {
		t.Errorf("escaped wrong: %s", out)
	}
	var back Entry
	if err := json.Unmarshal(out, &back); err != nil || back.Path != e.Path || back.Refused != e.Refused {
		t.Errorf("not the same JSON: %v, %+v", err, back)
	}
	if plain := []byte(`{"path":"/v1/messages"}`); string(InertJSON(plain)) != string(plain) {
		t.Errorf("clean JSON changed")
	}
}

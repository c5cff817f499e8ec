package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
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

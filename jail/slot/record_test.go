package slot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodRecord = `{"slot": "repo-0123abcd-claude", "kind": "claude", "worktree": "/w/repo", "wrapper_pid": 42, "start": "2025-01-01T00:00:00Z", "transcript": ""}`

func TestParseRecord(t *testing.T) {
	const slot = "repo-0123abcd-claude"
	for _, tc := range []struct {
		name, slot, data, err string
	}{
		{"a record", slot, goodRecord, ""},
		{"a record and a newline", slot, goodRecord + "\n", ""},
		{"a record and white space", slot, goodRecord + " \t\r\n\n", ""},
		{"trailing data", slot, goodRecord + "\n{}", "trailing data after the record"},
		{"trailing garbage", slot, goodRecord + "x", "trailing data after the record"},
		{"two records", slot, goodRecord + goodRecord, "trailing data after the record"},
		{"an unknown field", slot, strings.Replace(goodRecord, `"kind"`, `"extra": 1, "kind"`, 1), "unknown field"},
		{"another slot's", "other", goodRecord, `names slot "repo-0123abcd-claude", not "other"`},
		{"no kind", slot, strings.Replace(goodRecord, `"claude"`, `""`, 1), "lacks the kind"},
		{"truncated", slot, goodRecord[:40], "unexpected EOF"},
		{"empty", slot, "", "EOF"},
	} {
		r, err := parseRecord("/s/"+tc.slot+".json", tc.slot, []byte(tc.data))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && (r.Slot != tc.slot || r.WrapperPID != 42 || !r.Start.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))):
			t.Errorf("%s: parsed %+v", tc.name, r)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.err)
		}
	}
}

// FuzzParseRecord: no input panics, and what parses is a record of the
// slot asked for.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(goodRecord))
	f.Add([]byte(goodRecord + "\n \n"))
	f.Add([]byte(goodRecord + "{}"))
	f.Add([]byte(`{"slot": "repo-0123abcd-claude"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRecord("/s/x.json", "repo-0123abcd-claude", data)
		if err == nil && (r.Slot != "repo-0123abcd-claude" || r.Kind == "" || r.WrapperPID <= 0) {
			t.Fatalf("accepted %q as %+v", data, r)
		}
	})
}

// BenchmarkList lists a registry of 1,000 ended slots, a tenth of them
// without a recorded end, as make bench's list row does.
func BenchmarkList(b *testing.B) {
	home := b.TempDir()
	slots := filepath.Join(home, "slots")
	if err := os.MkdirAll(slots, 0o700); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		name := fmt.Sprintf("repo%04d-%08x-claude", i, uint32(i*2654435761))
		end := `"end": "2025-01-01T01:00:00Z", "exit_status": 0,`
		if i%10 == 0 {
			end = ""
		}
		rec := fmt.Sprintf(`{"slot": %q, "kind": "claude", "worktree": "/w/repo%04d", "wrapper_pid": %d, "init_pid": 4194303, "pidns_inode": 4026532999, "start": "2025-01-01T00:00:00Z", %s "transcript": ""}`, name, i, 1000+i, end)
		if err := os.WriteFile(filepath.Join(slots, name+".json"), []byte(rec), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(slots, name+".lock"), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	reg, err := Open(home)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if e, p := reg.List(); len(e) != 1000 || len(p) != 0 {
			b.Fatalf("listed %d slots, problems %v", len(e), p)
		}
	}
}

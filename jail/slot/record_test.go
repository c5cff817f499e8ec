package slot

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const goodRecord = `{"slot": "repo-0123abcd-claude", "kind": "claude", "worktree": "/w/repo", "wrapper_pid": 42, "start": "2025-01-01T00:00:00Z", "transcript": ""}`

// recordCase is one file's bytes and what reading it as slot's record
// gives: no error, or one that contains err.
type recordCase struct {
	name, slot, data, err string
}

func recordCases() []recordCase {
	const slot = "repo-0123abcd-claude"
	return []recordCase{
		{"a record", slot, goodRecord, ""},
		{"a record and a newline", slot, goodRecord + "\n", ""},
		{"a record and white space", slot, goodRecord + " \t\r\n\n", ""},
		{"a record after white space", slot, "\n\t " + goodRecord, ""},
		{"a record and 100 bytes of white space", slot, goodRecord + strings.Repeat(" ", 100), ""},
		{"trailing data", slot, goodRecord + "\n{}", "trailing data after the record"},
		{"trailing data after much white space", slot, goodRecord + strings.Repeat("\n", 200) + "x", "trailing data after the record"},
		{"trailing garbage", slot, goodRecord + "x", "trailing data after the record"},
		{"two records", slot, goodRecord + goodRecord, "trailing data after the record"},
		{"an unknown field", slot, strings.Replace(goodRecord, `"kind"`, `"extra": 1, "kind"`, 1), "unknown field"},
		{"another slot's", "other", goodRecord, `names slot "repo-0123abcd-claude", not "other"`},
		{"no kind", slot, strings.Replace(goodRecord, `"claude"`, `""`, 1), "lacks the kind"},
		{"truncated", slot, goodRecord[:40], "unexpected EOF"},
		{"an open object", slot, "{", "unexpected EOF"},
		{"a number", slot, "42", "cannot unmarshal number"},
		{"white space only", slot, " \n", "EOF"},
		{"empty", slot, "", "EOF"},
	}
}

func TestParseRecord(t *testing.T) {
	for _, tc := range recordCases() {
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

// TestRecordReaderInSequence: a reader that read one file reads the next
// as a fresh one would, whatever the first held, for every ordered pair
// of the table's files.
func TestRecordReaderInSequence(t *testing.T) {
	cases := recordCases()
	for _, a := range cases {
		for _, b := range cases {
			var rr recordReader
			rr.parse("/s/a.json", a.slot, []byte(a.data), new(Record))
			if diff := sameParse(&rr, b.slot, []byte(b.data)); diff != "" {
				t.Errorf("%s after %s: %s", b.name, a.name, diff)
			}
		}
	}
}

// sameParse parses data with rr and with a fresh reader, and says how
// the two differ ("" when they do not).
func sameParse(rr *recordReader, slot string, data []byte) string {
	var got Record
	gerr := rr.parse("/s/b.json", slot, data, &got)
	want, werr := parseRecord("/s/b.json", slot, data)
	switch {
	case (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error():
		return fmt.Sprintf("error %v, a fresh reader's %v", gerr, werr)
	case !reflect.DeepEqual(got, want):
		return fmt.Sprintf("record %+v, a fresh reader's %+v", got, want)
	}
	return ""
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

// FuzzRecordReader: a reader that read one file reads the next as a
// fresh reader does.
func FuzzRecordReader(f *testing.F) {
	f.Add([]byte(goodRecord), []byte(goodRecord))
	f.Add([]byte(goodRecord+"\n"), []byte(goodRecord))
	f.Add([]byte(goodRecord[:40]), []byte(goodRecord))
	f.Add([]byte(goodRecord+"{"), []byte(`"kind": "x"}`))
	f.Add([]byte("42"), []byte(goodRecord))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var rr recordReader
		if diff := sameParse(&rr, "repo-0123abcd-claude", a); diff != "" {
			t.Fatalf("first file %q: %s", a, diff)
		}
		if diff := sameParse(&rr, "repo-0123abcd-claude", b); diff != "" {
			t.Fatalf("%q after %q: %s", b, a, diff)
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

// TestWarmRecordIsARecord: Warm's sample is a record aisan would read,
// so that warming decodes what a launch decodes.
func TestWarmRecordIsARecord(t *testing.T) {
	if _, err := parseRecord("/s/w.json", "w", warmRecord); err != nil {
		t.Fatal(err)
	}
	Warm()
}

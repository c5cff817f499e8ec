package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the out and error sections of testdata/merge")

// testBinary is the aisan path the goldens install unless a case has a
// "binary" section.
const testBinary = "/usr/local/bin/aisan"

// goldenCase is one testdata/merge/*.txtar file:
//
//	-- op --      install (default) or uninstall
//	-- binary --  optional aisan path for install
//	-- guard --   optional lean guard path for install (Hook.Guard)
//	-- in --      the file before; no section means no file
//	-- out --     the file after (equal to in: nothing changed)
//	-- error --   or: the refusal, in which case in is left untouched
type goldenCase struct {
	path    string
	ar      *txtar.Archive
	op      string
	binary  string
	guard   string
	in      []byte // nil: absent
	hasOut  bool
	out     []byte
	wantErr string
}

func readGolden(t *testing.T, path string) goldenCase {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := goldenCase{path: path, ar: ar, op: "install", binary: testBinary}
	for _, f := range ar.Files {
		switch f.Name {
		case "op":
			c.op = strings.TrimSpace(string(f.Data))
		case "binary":
			c.binary = strings.TrimSpace(string(f.Data))
		case "guard":
			c.guard = strings.TrimSpace(string(f.Data))
		case "in":
			c.in = append([]byte{}, f.Data...)
		case "out":
			c.hasOut, c.out = true, f.Data
		case "error":
			c.wantErr = strings.TrimSpace(string(f.Data))
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
	}
	return c
}

func (c goldenCase) run() ([]byte, bool, error) {
	if c.op == "uninstall" {
		return Uninstall(c.in)
	}
	return Install(c.in, c.hook())
}

func (c goldenCase) hook() Hook {
	return Hook{Binary: c.binary, Guard: c.guard, Timeout: DefaultTimeout}
}

// TestGolden runs every case in testdata/merge: what a merge writes, that it
// reports a change exactly when the bytes differ, that a refusal leaves the
// input alone, and that every successful install is idempotent and undone
// by Uninstall.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/merge/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			c := readGolden(t, path)
			runningAs(t, c.binary) // uninstall runs from the binary that installed
			in := bytes.Clone(c.in)
			out, changed, err := c.run()
			if !bytes.Equal(in, c.in) {
				t.Fatalf("%s modified its input", c.op)
			}
			if *update {
				writeGolden(t, c, out, err)
				return
			}
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("%s succeeded, want error %q", c.op, c.wantErr)
				}
				if err.Error() != c.wantErr {
					t.Fatalf("error:\n got %s\nwant %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.op, err)
			}
			if !c.hasOut {
				t.Fatalf("case has neither out nor error section")
			}
			if d := diff.Diff("want", c.out, "got", out); d != nil {
				t.Fatalf("output differs (-want +got):\n%s", d)
			}
			if wantChanged := !bytes.Equal(c.in, c.out); changed != wantChanged {
				t.Errorf("changed = %v, want %v", changed, wantChanged)
			}
			if (c.in != nil || len(out) > 0) && !json.Valid(out) {
				t.Fatalf("output is not valid JSON")
			}
			if c.op != "install" {
				return
			}
			again, changed, err := Install(out, c.hook())
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Errorf("second install: changed=%v err=%v, want nothing to do", changed, err)
			}
			undone, _, err := Uninstall(out)
			if err != nil {
				t.Fatalf("uninstall after install: %v", err)
			}
			if !sameJSON(t, pruned(t, undone), pruned(t, withoutOurs(t, c.in))) {
				t.Errorf("uninstall did not undo install:\n%s", undone)
			}
		})
	}
}

// runningAs makes bin the running binary for the rest of the test.
func runningAs(t *testing.T, bin string) {
	t.Helper()
	saved := selfBinary
	selfBinary = func() string { return bin }
	t.Cleanup(func() { selfBinary = saved })
}

// TestRenamedBinary installs from a copy of aisan named aisan-dev: a second
// install finds the first entry, and uninstall-hook run from that copy
// removes it. The hooks of other programs named like it are not ours.
func TestRenamedBinary(t *testing.T) {
	const bin = "/opt/aisan/aisan-dev"
	h := Hook{Binary: bin, Timeout: DefaultTimeout}
	once, changed, err := Install(nil, h)
	if err != nil || !changed {
		t.Fatalf("first install: changed=%v err=%v", changed, err)
	}
	twice, changed, err := Install(once, h)
	if err != nil || changed || !bytes.Equal(twice, once) {
		t.Fatalf("second install: changed=%v err=%v\n%s", changed, err, twice)
	}
	if n := strings.Count(string(twice), "aisan-dev guard"); n != 1 {
		t.Fatalf("%d entries after installing twice, want 1:\n%s", n, twice)
	}
	// Another binary of that name is not ours when it is not the one running.
	if _, ours, err := Uninstall(once); err != nil || ours {
		t.Fatalf("uninstall from another binary: ours=%v err=%v", ours, err)
	}
	runningAs(t, bin)
	out, ours, err := Uninstall(once)
	if err != nil || !ours {
		t.Fatalf("uninstall: ours=%v err=%v", ours, err)
	}
	if strings.Contains(string(out), "aisan-dev") {
		t.Fatalf("uninstall left the hook:\n%s", out)
	}
	if !isOurs(json.RawMessage(`{"type":"command","command":"/opt/aisan/aisan-dev","args":["guard"]}`), Hook{}) {
		t.Errorf("the exec form from the running binary is not ours")
	}
	if isOurs(json.RawMessage(`{"type":"command","command":"/usr/bin/aisan-dev guard"}`), Hook{}) {
		t.Errorf("another aisan-dev is ours")
	}
}

func TestFind(t *testing.T) {
	src := []byte(`{"hooks":{"PreToolUse":[
		{"matcher":"Bash","hooks":[{"type":"command","command":"/home/u/bin/audit.sh"},{"type":"command","command":"'/opt/x y/aisan' guard"}]},
		{"matcher":"Edit","hooks":[{"type":"command","command":"/usr/bin/aisan guard"}]},
		{"hooks":[{"type":"command","command":"/usr/local/bin/aisan","args":["guard"]}]},
		{"matcher":"Bash","hooks":[{"type":"command","command":"/usr/local/bin/aisan-guard","timeout":30}]}
	]}}`)
	got, err := Find(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Handler{
		{Command: "'/opt/x y/aisan' guard", Binary: "/opt/x y/aisan", Argv: []string{"/opt/x y/aisan", "guard"}},
		{Command: "/usr/local/bin/aisan", Args: []string{"guard"}, Binary: "/usr/local/bin/aisan", Argv: []string{"/usr/local/bin/aisan", "guard"}},
		{Command: "/usr/local/bin/aisan-guard", Binary: "/usr/local/bin/aisan-guard", Argv: []string{"/usr/local/bin/aisan-guard"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Find:\n got %+v\nwant %+v", got, want)
	}
	if _, err := Find([]byte("{,}")); err == nil {
		t.Errorf("Find of a broken file succeeded")
	}
}

func writeGolden(t *testing.T, c goldenCase, out []byte, err error) {
	t.Helper()
	var files []txtar.File
	for _, f := range c.ar.Files {
		if f.Name != "out" && f.Name != "error" {
			files = append(files, f)
		}
	}
	if err != nil {
		files = append(files, txtar.File{Name: "error", Data: []byte(err.Error() + "\n")})
	} else {
		files = append(files, txtar.File{Name: "out", Data: out})
	}
	c.ar.Files = files
	if err := os.WriteFile(c.path, txtar.Format(c.ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutOurs is what src should be after Uninstall: src itself, with any
// hook of ours removed by the uninstall under test. It only serves
// inputs that hold none of ours or a single group of ours.
func withoutOurs(t *testing.T, src []byte) []byte {
	t.Helper()
	out, _, err := Uninstall(src)
	if err != nil {
		t.Fatalf("uninstall of the input: %v", err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return []byte("{}")
	}
	return out
}

// pruned drops a null or empty hooks.PreToolUse and then a null or empty
// hooks: uninstall removes what install added, not what was empty before.
func pruned(t *testing.T, src []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(src, &v); err != nil {
		t.Fatalf("%v in %s", err, src)
	}
	empty := func(x any) bool {
		switch x := x.(type) {
		case nil:
			return true
		case []any:
			return len(x) == 0
		case map[string]any:
			return len(x) == 0
		}
		return false
	}
	if h, ok := v["hooks"].(map[string]any); ok {
		if p, ok := h["PreToolUse"]; ok && empty(p) {
			delete(h, "PreToolUse")
		}
	}
	if h, ok := v["hooks"]; ok && empty(h) {
		delete(v, "hooks")
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v in %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

func TestParseErrorPosition(t *testing.T) {
	for _, tc := range []struct {
		src       string
		line, col int
	}{
		{"{\n  \"a\": 1,\n}\n", 3, 1},
		{"{\n  // comment\n  \"a\": 1\n}", 2, 3},
		{"{\"a\": tru}", 1, 10},
		{"{\"a\": 1", 1, 7},
		{"{} {}", 1, 4},
	} {
		_, _, err := Install([]byte(tc.src), Hook{Binary: testBinary, Timeout: 1})
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Install(%q) error = %v, want a ParseError", tc.src, err)
			continue
		}
		if pe.Line != tc.line || pe.Column != tc.col {
			t.Errorf("Install(%q): line %d, column %d, want line %d, column %d", tc.src, pe.Line, pe.Column, tc.line, tc.col)
		}
	}
}

func TestHookCommand(t *testing.T) {
	for _, tc := range []struct{ bin, want string }{
		{"/usr/local/bin/aisan", "/usr/local/bin/aisan guard"},
		{"/opt/my tools/aisan", "'/opt/my tools/aisan' guard"},
		{"/home/o'neil/bin/aisan", `"/home/o'neil/bin/aisan" guard`},
		{"/x/$HOME/aisan", "'/x/$HOME/aisan' guard"},
	} {
		got, err := Hook{Binary: tc.bin}.Command()
		if err != nil || got != tc.want {
			t.Errorf("Command(%q) = %q, %v; want %q", tc.bin, got, err, tc.want)
		}
		words, ok := simpleCommand(got)
		if !ok || len(words) != 2 || words[0] != tc.bin || words[1] != "guard" {
			t.Errorf("simpleCommand(%q) = %q, %v; want the path back", got, words, ok)
		}
	}
	for _, tc := range []struct{ guard, want string }{
		{"/usr/local/bin/aisan-guard", "/usr/local/bin/aisan-guard"},
		{"/opt/my tools/aisan-guard", "'/opt/my tools/aisan-guard'"},
	} {
		got, err := Hook{Binary: "/usr/local/bin/aisan", Guard: tc.guard}.Command()
		if err != nil || got != tc.want {
			t.Errorf("Command(guard %q) = %q, %v; want %q", tc.guard, got, err, tc.want)
		}
		if words, ok := simpleCommand(got); !ok || len(words) != 1 || words[0] != tc.guard {
			t.Errorf("simpleCommand(%q) = %q, %v; want the path back", got, words, ok)
		}
	}
	if _, err := (Hook{Binary: "aisan"}).Command(); err == nil {
		t.Error("a relative binary was accepted")
	}
	if _, err := (Hook{Binary: "/usr/local/bin/aisan", Guard: "aisan-guard"}).Command(); err == nil {
		t.Error("a relative guard binary was accepted")
	}
	if _, _, err := Install(nil, Hook{Binary: testBinary}); err == nil {
		t.Error("a zero timeout was accepted")
	}
}

func TestIsOurs(t *testing.T) {
	for _, tc := range []struct {
		handler string
		ours    bool
	}{
		{`{"type":"command","command":"/usr/local/bin/aisan guard"}`, true},
		{`{"type":"command","command":"/usr/local/bin/aisan-full guard"}`, true},
		{`{"type":"command","command":"'/opt/x y/aisan' guard","timeout":5}`, true},
		{`{"type":"command","command":"\"/opt/x y/aisan\" guard"}`, true},
		{`{"type":"command","command":"aisan guard"}`, true},
		{`{"type":"command","command":"/usr/bin/aisan","args":["guard"]}`, true},
		{`{"type":"command","command":"/usr/bin/aisan","args":["guard","-v"]}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan guard --strict"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan guard; rm -rf /"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan guard >/tmp/log"}`, false},
		{`{"type":"command","command":"$HOME/bin/aisan guard"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-old guard"}`, false},
		{`{"type":"command","command":"/usr/local/bin/guard aisan"}`, false},
		{`{"type":"http","command":"/usr/local/bin/aisan guard"}`, false},
		{`{"command":"/usr/local/bin/aisan guard"}`, false},
		{`{"type":"command","command":["/usr/local/bin/aisan","guard"]}`, false},
		{`"aisan guard"`, false},
		// The lean guard binary: the hook alone, no subcommand.
		{`{"type":"command","command":"/usr/local/bin/aisan-guard"}`, true},
		{`{"type":"command","command":"'/opt/x y/aisan-guard'","timeout":5}`, true},
		{`{"type":"command","command":"aisan-guard"}`, true},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard","args":[]}`, true},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard","args":null}`, true},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard","args":["guard"]}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard guard"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard --help"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard </dev/null"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard && rm -rf ~"}`, false},
		{`{"type":"command","command":"$HOME/bin/aisan-guard"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan-guard-old"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan"}`, false},
		{`{"type":"command","command":"/usr/local/bin/aisan","args":[]}`, false},
		{`{"type":"http","command":"/usr/local/bin/aisan-guard"}`, false},
	} {
		if got := isOurs(json.RawMessage(tc.handler), Hook{}); got != tc.ours {
			t.Errorf("isOurs(%s) = %v, want %v", tc.handler, got, tc.ours)
		}
	}
	// The binaries being installed are ours whatever they are called, each
	// in its own form only.
	installing := Hook{Binary: "/opt/a/aisan-dev", Guard: "/opt/a/guard-dev"}
	for _, tc := range []struct {
		handler string
		ours    bool
	}{
		{`{"type":"command","command":"/opt/a/aisan-dev guard"}`, true},
		{`{"type":"command","command":"/opt/a/guard-dev"}`, true},
		{`{"type":"command","command":"/opt/a/guard-dev guard"}`, false},
		{`{"type":"command","command":"/opt/a/aisan-dev"}`, false},
	} {
		if got := isOurs(json.RawMessage(tc.handler), installing); got != tc.ours {
			t.Errorf("isOurs(%s) installing %+v = %v, want %v", tc.handler, installing, got, tc.ours)
		}
		if isOurs(json.RawMessage(tc.handler), Hook{}) {
			t.Errorf("isOurs(%s) without installing it = true", tc.handler)
		}
	}
}

func TestDetectLayout(t *testing.T) {
	for _, tc := range []struct {
		src, indent string
		newline     bool
	}{
		{"", "  ", true},
		{"{}", "  ", false},
		{"{\n    \"a\": 1\n}\n", "    ", true},
		{"{\n\t\"a\": 1\n}", "\t", false},
		{"{\r\n  \"a\": 1\r\n}\r\n", "  ", true},
		{`{"a": {"b": 1}}`, "  ", false},
	} {
		l := detectLayout([]byte(tc.src))
		if l.indent != tc.indent || l.newline != tc.newline {
			t.Errorf("detectLayout(%q) = %q, %v; want %q, %v", tc.src, l.indent, l.newline, tc.indent, tc.newline)
		}
	}
}

// FuzzInstall checks, for any input that Install accepts, that the result
// is JSON, loses no key the input had, installs exactly one hook of ours,
// is left alone by a second install, and that Uninstall then removes it.
func FuzzInstall(f *testing.F) {
	paths, _ := filepath.Glob("testdata/merge/*.txtar")
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "in" || file.Name == "out" {
				f.Add(file.Data)
			}
		}
	}
	h := Hook{Binary: "/opt/aisan/bin/aisan", Timeout: DefaultTimeout}
	lean := Hook{Binary: h.Binary, Guard: "/opt/aisan/bin/aisan-guard", Timeout: DefaultTimeout}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, changed, err := Install(src, h)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Install wrote invalid JSON:\n%s", out)
		}
		if !changed && !bytes.Equal(out, src) {
			t.Fatalf("Install reported no change but rewrote the input")
		}
		if missing := lostKeys(src, out); len(missing) > 0 {
			t.Fatalf("Install lost keys %q:\n%s\n->\n%s", missing, src, out)
		}
		d, err := openDoc(out)
		if err != nil {
			t.Fatalf("reopening the output: %v", err)
		}
		want, _ := h.handler()
		if found, exact := d.scan(want); found != 1 || exact != 1 {
			t.Fatalf("after install: %d hooks of ours, %d as wanted; want 1, 1:\n%s", found, exact, out)
		}
		again, changed, err := Install(out, h)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("second install: changed=%v err=%v", changed, err)
		}
		// The lean form installed over it replaces it.
		leanOut, _, err := Install(out, lean)
		if err != nil {
			t.Fatalf("lean install over ours: %v", err)
		}
		d, err = openDoc(leanOut)
		if err != nil {
			t.Fatalf("reopening the lean output: %v", err)
		}
		wantLean, _ := lean.handler()
		if found, exact := d.scan(wantLean); found != 1 || exact != 1 {
			t.Fatalf("after the lean install: %d hooks of ours, %d as wanted; want 1, 1:\n%s", found, exact, leanOut)
		}
		if _, changed, err := Uninstall(leanOut); err != nil || !changed {
			t.Fatalf("uninstall of the lean hook: changed=%v err=%v", changed, err)
		}
		undone, changed, err := Uninstall(out)
		if err != nil || !changed {
			t.Fatalf("uninstall: changed=%v err=%v", changed, err)
		}
		if d, err := openDoc(undone); err != nil {
			t.Fatalf("reopening after uninstall: %v", err)
		} else if found, _ := d.scan(want); found != 0 {
			t.Fatalf("uninstall left %d hooks of ours", found)
		}
	})
}

// lostKeys lists the object keys of src, as paths with array indexes
// erased, that out does not have. Keys inside handlers of ours do not
// count.
func lostKeys(src, out []byte) []string {
	var a, b any
	if len(bytes.TrimSpace(src)) == 0 || json.Unmarshal(src, &a) != nil || json.Unmarshal(out, &b) != nil {
		return nil
	}
	have := map[string]bool{}
	keyPaths(b, "", func(p string) { have[p] = true })
	var missing []string
	keyPaths(a, "", func(p string) {
		if !have[p] {
			missing = append(missing, p)
		}
	})
	sort.Strings(missing)
	return missing
}

func keyPaths(v any, prefix string, emit func(string)) {
	switch v := v.(type) {
	case map[string]any:
		if isOursValue(v) {
			return // ours is rewritten or removed, keys and all
		}
		for k, e := range v {
			p := prefix + "." + k
			emit(p)
			keyPaths(e, p, emit)
		}
	case []any:
		for _, e := range v {
			keyPaths(e, prefix+"[]", emit)
		}
	}
}

// isOursValue reports whether v is a handler of ours, or a matcher group
// holding only handlers of ours.
func isOursValue(v map[string]any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	if isOurs(raw, Hook{}) {
		return true
	}
	hs, ok := v["hooks"].([]any)
	if !ok || len(hs) == 0 {
		return false
	}
	for k := range v {
		if k != "matcher" && k != "hooks" {
			return false
		}
	}
	for _, h := range hs {
		raw, err := json.Marshal(h)
		if err != nil || !isOurs(raw, Hook{}) {
			return false
		}
	}
	return true
}

func TestSelectsBash(t *testing.T) {
	for _, tc := range []struct {
		matcher string
		want    bool
	}{
		{`"Bash"`, true},
		{`""`, true},
		{`"*"`, true},
		{`"Bash|Edit"`, true},
		{`"Edit, Bash"`, true},
		{`"Write"`, false},
		{`"Bas"`, false},
		{`"BashOutput"`, false},
		{`"^Ba.*$"`, true},
		{`"mcp__.*"`, false},
		{`"(unclosed"`, false},
		{`null`, false},
		{`1`, false},
	} {
		if got := selectsBash(json.RawMessage(tc.matcher)); got != tc.want {
			t.Errorf("selectsBash(%s) = %v, want %v", tc.matcher, got, tc.want)
		}
	}
}

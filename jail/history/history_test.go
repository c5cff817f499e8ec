package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func noEnv(string) string { return "" }

func TestKey(t *testing.T) {
	for _, c := range []struct{ slot, kind, want string }{
		{"app-12345678-codex", "codex", "app-12345678-codex"},
		{"app-12345678-codex-2", "codex", "app-12345678-codex"},
		{"app-12345678-codex-17", "codex", "app-12345678-codex"},
		{"app-12345678-codex-02", "codex", "app-12345678-codex-02"},
		{"app-2-12345678-codex", "codex", "app-2-12345678-codex"},
		{"app-12345678-claude-3", "codex", "app-12345678-claude-3"},
		{"job-1", "service", "job-1"},
	} {
		if got := Key(c.slot, c.kind); got != c.want {
			t.Errorf("Key(%q, %q) = %q, want %q", c.slot, c.kind, got, c.want)
		}
	}
}

var newLinesTests = []struct{ name, have, fresh, want string }{
	{"all new", "", "a\nb\n", "a\nb\n"},
	{"some known", "a\nc\n", "a\nb\nc\nd\n", "b\nd\n"},
	{"blank and duplicate dropped", "", "a\n\n  \na\nb", "a\nb\n"},
	{"host without final newline", "a", "a\nb\n", "b\n"},
	{"CRLF", "a\r\n", "a\r\nb\r\n", "b\n"},
}

func TestNewLines(t *testing.T) {
	for _, c := range newLinesTests {
		if got := string(NewLines([]byte(c.have), []byte(c.fresh))); got != c.want {
			t.Errorf("%s: NewLines(%q, %q) = %q, want %q", c.name, c.have, c.fresh, got, c.want)
		}
	}
}

func FuzzNewLines(f *testing.F) {
	for _, c := range newLinesTests {
		f.Add(c.have, c.fresh)
	}
	f.Fuzz(func(t *testing.T, have, fresh string) {
		out := NewLines([]byte(have), []byte(fresh))
		if len(out) > 0 && out[len(out)-1] != '\n' {
			t.Fatalf("output does not end in a newline: %q", out)
		}
		// Merging again adds nothing: every line of fresh is now in.
		merged := have + "\n" + string(out)
		if again := NewLines([]byte(merged), []byte(fresh)); len(again) != 0 {
			t.Fatalf("second merge added %q", again)
		}
	})
}

// Claude filters its up-arrow by project itself: nothing is bound, and an
// earlier version's per-slot copy is merged into the host file.
func TestPrepareClaudeSharesHostFile(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	host := filepath.Join(home, ".claude", "history.jsonl")
	write(t, host, `{"display":"outside","project":"/w"}`+"\n")
	legacy := filepath.Join(state, "history", "w-12345678-claude", "claude-history.jsonl")
	write(t, legacy, `{"display":"outside","project":"/w"}`+"\n"+`{"display":"typed in a jail","project":"/w"}`+"\n")
	binds, err := Prepare(state, "w-12345678-claude", "claude", "/w", DirsFor(home, noEnv))
	if err != nil {
		t.Fatal(err)
	}
	if len(binds) != 0 {
		t.Errorf("claude binds %+v, want none", binds)
	}
	want := `{"display":"outside","project":"/w"}` + "\n" + `{"display":"typed in a jail","project":"/w"}` + "\n"
	if got := read(t, host); got != want {
		t.Errorf("host file %q, want %q", got, want)
	}
	if _, err := os.Lstat(legacy); err == nil {
		t.Errorf("the merged legacy copy is still there")
	}
}

// Codex: one copy per worktree, bound over the host file, whose new lines
// reach the host file once, at the end of the launch or before the next.
func TestCodexCopyMergesBack(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	dirs := DirsFor(home, noEnv)
	if err := os.MkdirAll(dirs.Codex, 0o700); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(dirs.Codex, "history.jsonl")
	b1, err := Prepare(state, "w-12345678-codex", "codex", "/w", dirs)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := Prepare(state, "w-12345678-codex-2", "codex", "/w", dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(b1) != 1 || len(b2) != 1 || b1[0] != b2[0] || b1[0].Dst != host {
		t.Fatalf("binds %+v and %+v, want one shared copy over %s", b1, b2, host)
	}
	if fi, err := os.Stat(host); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host file to bind over: %v %v", fi, err)
	}
	cp := b1[0].Src
	appendTo(t, cp, `{"session_id":"a","ts":1,"text":"one"}`+"\n")
	appendTo(t, host, `{"session_id":"h","ts":2,"text":"outside"}`+"\n")
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); err != nil {
		t.Fatal(err)
	}
	if err := MergeBack(state, "w-12345678-codex-2", "codex", dirs); err != nil {
		t.Fatal(err)
	}
	appendTo(t, cp, `{"session_id":"a","ts":3,"text":"two"}`+"\n"+`{"session_id":"a","ts":4,"text":"torn`)
	// A launcher that died before merging: the next launch merges.
	if _, err := Prepare(state, "w-12345678-codex", "codex", "/w", dirs); err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"h","ts":2,"text":"outside"}` + "\n" +
		`{"session_id":"a","ts":1,"text":"one"}` + "\n" +
		`{"session_id":"a","ts":3,"text":"two"}` + "\n"
	if got := read(t, host); got != want {
		t.Errorf("host file:\n%s\nwant:\n%s", got, want)
	}
	// Codex trimmed its copy (history.max_bytes): nothing comes back twice.
	write(t, cp, `{"session_id":"a","ts":3,"text":"two"}`+"\n")
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); err != nil {
		t.Fatal(err)
	}
	if got := read(t, host); got != want {
		t.Errorf("after a trimmed copy, host file:\n%s\nwant:\n%s", got, want)
	}
	// Trimmed again, now shorter than what was merged: judged whole.
	short := `{"session_id":"a","ts":5,"text":"3"}` + "\n"
	if mark, err := strconv.Atoi(strings.TrimSpace(read(t, markPath(cp)))); err != nil || len(short) >= mark {
		t.Fatalf("the case needs a copy shorter than its merge mark (%d, %v)", mark, err)
	}
	write(t, cp, short)
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); err != nil {
		t.Fatal(err)
	}
	if got := read(t, host); got != want+short {
		t.Errorf("after a copy shorter than its mark, host file:\n%s\nwant:\n%s", got, want+short)
	}
}

func TestPrepareWithoutConfigDir(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	binds, err := Prepare(filepath.Join(dir, "state"), "s-codex", "codex", "/w", DirsFor(home, noEnv))
	if err != nil || len(binds) != 0 {
		t.Fatalf("Prepare without ~/.codex: %+v, %v; want no binds", binds, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex")); err == nil {
		t.Errorf("~/.codex was created")
	}
}

func TestPrepareRefusesOddHostFile(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".codex", "history.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Prepare(filepath.Join(dir, "state"), "s-codex", "codex", "/w", DirsFor(home, noEnv))
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Prepare over a directory: %v", err)
	}
}

// A planted symlink in place of the copy is replaced, never followed.
func TestPrepareReplacesPlantedCopy(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	dirs := DirsFor(home, noEnv)
	os.MkdirAll(dirs.Codex, 0o700)
	target := filepath.Join(dir, "target")
	write(t, target, "secret\n")
	cp := filepath.Join(state, "history", "w-codex", "codex-history.jsonl")
	os.MkdirAll(filepath.Dir(cp), 0o700)
	if err := os.Symlink(target, cp); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(state, "w-codex", "codex", "/w", dirs); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(cp); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("copy is %v, %v; want a regular file", fi, err)
	}
	if got := read(t, filepath.Join(dirs.Codex, "history.jsonl")); got != "" {
		t.Errorf("the symlink's target reached the host file: %q", got)
	}
}

func TestRelocatedConfigDirs(t *testing.T) {
	home := t.TempDir()
	codex := filepath.Join(home, "cx")
	os.MkdirAll(codex, 0o755)
	env := map[string]string{"CODEX_HOME": codex}
	dirs := DirsFor(home, func(k string) string { return env[k] })
	binds, err := Prepare(filepath.Join(home, "state"), "s-codex", "codex", "/w", dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(binds) != 1 || binds[0].Dst != filepath.Join(codex, "history.jsonl") {
		t.Fatalf("binds %+v, want one over $CODEX_HOME/history.jsonl", binds)
	}
	if got := Paths(filepath.Join(home, "state"), "s-codex", "codex", dirs); len(got) != 1 || got[0] != binds[0] {
		t.Fatalf("Paths %+v, want what Prepare bound", got)
	}
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	dirs := DirsFor(home, noEnv)
	os.MkdirAll(dirs.Codex, 0o700)
	os.MkdirAll(dirs.Claude, 0o700)
	line := func(s string) string { return `{"session_id":"s","ts":1,"text":"` + s + `"}` + "\n" }
	write(t, filepath.Join(state, "history", "old-codex", "codex-history.jsonl"), line("old"))
	write(t, filepath.Join(state, "history", "recent-codex", "codex-history.jsonl"), line("recent"))
	write(t, filepath.Join(state, "history", "live-codex", "codex-history.jsonl"), line("live"))
	write(t, filepath.Join(state, "history", "gone-claude", "claude-history.jsonl"), line("legacy claude"))
	write(t, filepath.Join(state, "history", "gone-codex-2", "codex-history.jsonl"), line("legacy codex"))
	past := time.Now().Add(-40 * 24 * time.Hour)
	for _, n := range []string{"old-codex", "live-codex"} {
		os.Chtimes(filepath.Join(state, "history", n, "codex-history.jsonl"), past, past)
	}
	errs := Prune(state, dirs, []string{"live-codex-3"}, 30*24*time.Hour, time.Now())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for n, want := range map[string]bool{"old-codex": false, "recent-codex": true, "live-codex": true, "gone-claude": false, "gone-codex-2": false} {
		_, err := os.Stat(filepath.Join(state, "history", n))
		if (err == nil) != want {
			t.Errorf("history/%s kept: %v, want %v", n, err == nil, want)
		}
	}
	if got, want := read(t, filepath.Join(dirs.Codex, "history.jsonl")), line("legacy codex")+line("old"); got != want && got != line("old")+line("legacy codex") {
		t.Errorf("codex host file %q, want the pruned copies merged", got)
	}
	if got := read(t, filepath.Join(dirs.Claude, "history.jsonl")); got != line("legacy claude") {
		t.Errorf("claude host file %q", got)
	}
}

// Prompts typed in an unjailed codex in the worktree (a subdirectory
// included) join the worktree's copy; those of other directories do not.
func TestCodexCopyAdoptsOutsidePrompts(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	dirs := DirsFor(home, noEnv)
	wt := filepath.Join(dir, "wt")
	os.MkdirAll(filepath.Join(wt, ".git"), 0o755)
	os.MkdirAll(filepath.Join(wt, "sub"), 0o755)
	rollout := func(id, cwd string) {
		write(t, filepath.Join(dirs.Codex, "sessions", "2026", "12", "01", "rollout-2026-12-01T10-00-00-"+id+".jsonl"),
			`{"timestamp":"x","type":"session_meta","payload":{"id":"`+id+`","cwd":"`+cwd+`"}}`+"\n"+`{"type":"other"}`+"\n")
	}
	rollout("here", wt)
	rollout("below", filepath.Join(wt, "sub"))
	rollout("there", wt+"-other")
	line := func(id, text string) string { return `{"session_id":"` + id + `","ts":1,"text":"` + text + `"}` + "\n" }
	host := filepath.Join(dirs.Codex, "history.jsonl")
	write(t, host, line("here", "one")+line("there", "elsewhere")+line("below", "two")+line("unknown", "who knows"))
	binds, err := Prepare(state, "wt-12345678-codex", "codex", filepath.Join(wt, "sub"), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, binds[0].Src), line("here", "one")+line("below", "two"); got != want {
		t.Errorf("copy %q, want %q", got, want)
	}
	// Once looked at, a line is not taken again; new ones are.
	appendTo(t, host, line("here", "three"))
	if _, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, binds[0].Src), line("here", "one")+line("below", "two")+line("here", "three"); got != want {
		t.Errorf("copy %q, want %q", got, want)
	}
	if err := MergeBack(state, "wt-12345678-codex", "codex", dirs); err != nil {
		t.Fatal(err)
	}
	if got := read(t, host); strings.Count(got, "three") != 1 || strings.Count(got, "one") != 1 {
		t.Errorf("merging back duplicated lines: %q", got)
	}
}

// TestMergeKeepsOnlyHistory: what a jailed codex hands back is merged
// into the host's history file only as well-formed history entries;
// everything else is dropped and counted, and the count is reported by
// the launch's merge even when an earlier Prepare did the merging.
func TestMergeKeepsOnlyHistory(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	dirs := DirsFor(home, noEnv)
	os.MkdirAll(dirs.Codex, 0o700)
	host := filepath.Join(dirs.Codex, "history.jsonl")
	binds, err := Prepare(state, "w-12345678-codex", "codex", "/w", dirs)
	if err != nil {
		t.Fatal(err)
	}
	cp := binds[0].Src
	good := `{"session_id":"019a-uuid","ts":1764590000,"text":"fix the build"}` + "\n" +
		`{"conversation_id":"c","ts":0,"text":"other versions name the id so"}` + "\n"
	bad := []string{
		`not json`,
		`["a","list"]`,
		`{"session_id":"s","ts":1,"text":"t","extra":"a planted field"}`,
		`{"session_id":"s","ts":1}`,
		`{"session_id":"s","ts":-1,"text":"t"}`,
		`{"session_id":"s","ts":1.5,"text":"t"}`,
		`{"session_id":"s","ts":"1","text":"t"}`,
		`{"session_id":7,"ts":1,"text":"t"}`,
		`{"session_id":"s","ts":1,"text":"t","text":"a second text"}`,
		`{"session_id":"s","conversation_id":"c","ts":1,"text":"t"}`,
		`{"session_id":"s","ts":1,"text":"t"} trailing`,
		`{"session_id":"` + strings.Repeat("x", 200) + `","ts":1,"text":"t"}`,
		`{"session_id":"s","ts":1,"text":"` + strings.Repeat("y", maxEntryBytes) + `"}`,
	}
	appendTo(t, cp, good+strings.Join(bad, "\n")+"\n\n")
	err = MergeBack(state, "w-12345678-codex", "codex", dirs)
	var de *DroppedError
	if !errors.As(err, &de) || de.N != len(bad) || de.Host != host {
		t.Fatalf("MergeBack: %v, want %d dropped lines reported", err, len(bad))
	}
	if got := read(t, host); got != good {
		t.Errorf("host file:\n%s\nwant only:\n%s", got, good)
	}
	// A launcher that died: Prepare merges, the next MergeBack reports.
	appendTo(t, cp, "garbage\n"+`{"session_id":"a","ts":2,"text":"later"}`+"\n")
	if _, err := Prepare(state, "w-12345678-codex", "codex", "/w", dirs); err != nil {
		t.Fatal(err)
	}
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); !errors.As(err, &de) || de.N != 1 {
		t.Errorf("the drop Prepare saw was not reported: %v", err)
	}
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); err != nil {
		t.Errorf("reported twice: %v", err)
	}
}

// TestMergeIsBoundedPerLaunch: one launch adds at most maxMergeEntries
// entries to the host's history; the rest are dropped and counted.
func TestMergeIsBoundedPerLaunch(t *testing.T) {
	state, dirs, copyPath := codexCopy(t)
	var b strings.Builder
	for i := range maxMergeEntries + 5 {
		fmt.Fprintf(&b, `{"session_id":"s","ts":%d,"text":"prompt %d"}`+"\n", i, i)
	}
	appendTo(t, copyPath, b.String())
	err := MergeBack(state, "w-12345678-codex", "codex", dirs)
	var de *DroppedError
	if !errors.As(err, &de) || de.N != 5 {
		t.Fatalf("MergeBack: %v, want 5 dropped", err)
	}
	if n := strings.Count(read(t, filepath.Join(dirs.Codex, "history.jsonl")), "\n"); n != maxMergeEntries {
		t.Errorf("%d entries merged, want %d", n, maxMergeEntries)
	}
}

// codexFixture is a state dir, a worktree and the agents' directories
// under a home of their own, for codex launches.
func codexFixture(tb testing.TB) (state, wt string, dirs Dirs) {
	tb.Helper()
	dir := tb.TempDir()
	wt = filepath.Join(dir, "wt")
	if err := os.MkdirAll(filepath.Join(wt, ".git"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, "state"), wt, DirsFor(filepath.Join(dir, "home"), noEnv)
}

// codexCopy is a codex slot's history copy, prepared in a fixture.
func codexCopy(tb testing.TB) (state string, dirs Dirs, copyPath string) {
	tb.Helper()
	state, _, dirs = codexFixture(tb)
	if err := os.MkdirAll(dirs.Codex, 0o700); err != nil {
		tb.Fatal(err)
	}
	binds, err := Prepare(state, "w-12345678-codex", "codex", "/w", dirs)
	if err != nil {
		tb.Fatal(err)
	}
	return state, dirs, binds[0].Src
}

// sessionLog writes a Codex session log at rel under the sessions
// directory, whose first line says session id ran in cwd, with pad bytes
// of instructions (as Codex puts them there).
func sessionLog(tb testing.TB, dirs Dirs, rel, id, cwd string, pad int) {
	tb.Helper()
	p := filepath.Join(dirs.Codex, "sessions", rel)
	meta := `{"timestamp":"x","type":"session_meta","payload":{"id":"` + id + `","cwd":"` + cwd + `","instructions":"` + strings.Repeat("x", pad) + `"}}` + "\n"
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(meta), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// historyLine is a line of Codex's history typed in session id.
func historyLine(id, text string) string {
	return `{"session_id":"` + id + `","ts":1,"text":"` + text + `"}` + "\n"
}

// TestAdoptReadsTheLogsNamedForItsSessions: a session log is found by the
// id in its name, as Codex names it, and another log's first line does
// not move a session that one names. (Reading every log, the decoy below,
// walked after the real one, would put "wanted" outside the worktree.)
func TestAdoptReadsTheLogsNamedForItsSessions(t *testing.T) {
	state, wt, dirs := codexFixture(t)
	const wanted, other = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0199a1b2-c3d4-7e5f-8a9b-ffffffffffff"
	sessionLog(t, dirs, "2026/12/01/rollout-2026-12-01T10-00-00-"+wanted+".jsonl", wanted, wt, 4096)
	sessionLog(t, dirs, "2026/12/02/rollout-2026-12-02T10-00-00-"+other+".jsonl", wanted, wt+"-other", 4096)
	// A log named for one session that says it is another is neither's,
	// whichever of the two is looked for.
	const unknown = "0199a1b2-c3d4-7e5f-8a9b-eeeeeeeeeeee"
	sessionLog(t, dirs, "2026/12/03/rollout-2026-12-03T10-00-00-"+other+".jsonl", unknown, wt, 4096)
	sessionLog(t, dirs, "2026/12/04/rollout-2026-12-04T10-00-00-"+unknown+".jsonl", other, wt, 4096)
	write(t, filepath.Join(dirs.Codex, "history.jsonl"), historyLine(wanted, "mine")+historyLine(unknown, "not mine"))
	binds, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, binds[0].Src), historyLine(wanted, "mine"); got != want {
		t.Errorf("copy %q, want %q", got, want)
	}
}

// BenchmarkAdoptAmongManySessions is a codex launch's Prepare after a
// session of its worktree added one line to the host history, with 2,000
// other sessions' logs (each first line 16 KiB of instructions) beside.
func BenchmarkAdoptAmongManySessions(b *testing.B) {
	state, wt, dirs := codexFixture(b)
	id := func(i int) string { return fmt.Sprintf("0199a1b2-c3d4-7e5f-8a9b-%012d", i) }
	for i := range 2000 {
		sessionLog(b, dirs, fmt.Sprintf("2026/%02d/%02d/rollout-2026-12-01T10-00-00-%s.jsonl", 1+i/200, 1+i%28, id(i)), id(i), wt, 16<<10)
	}
	host := filepath.Join(dirs.Codex, "history.jsonl")
	os.WriteFile(host, nil, 0o600)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		f, _ := os.OpenFile(host, os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprintf(f, `{"session_id":"%s","ts":1,"text":"prompt %d"}`+"\n", id(i%2000), i)
		f.Close()
		b.StartTimer()
		if _, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLogID(t *testing.T) {
	for name, want := range map[string]string{
		"rollout-2026-12-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"rollout-2026-12-01T10-00-00-0199A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B.jsonl": "0199A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B",
		"rollout-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl":                     "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"rollout-2026-12-01T10-00-00-here.jsonl":                                 "",
		"rollout-2026-12-01T10-00-00-01HXYZABCDEFGHJKMNPQRSTVWX.jsonl":           "",
		"rollout-2026-12-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g.jsonl": "",
		"rollout-2026-12-01T10-00-00-0199a1b2xc3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl": "",
		"rollout-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b":                           "",
		"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl":                             "",
		"rollout-.jsonl": "",
	} {
		if got := logID(name); got != want {
			t.Errorf("logID(%q) = %q, want %q", name, got, want)
		}
	}
}

// FuzzLogID: an id is the end of the name, before ".jsonl", after a "-",
// and shaped as a UUID; a name is never misread as another's.
func FuzzLogID(f *testing.F) {
	f.Add("rollout-2026-12-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
	f.Add("rollout-2026-12-01T10-00-00-here.jsonl")
	f.Add("rollout-.jsonl")
	f.Fuzz(func(t *testing.T, name string) {
		id := logID(name)
		if id == "" {
			return
		}
		if !strings.HasSuffix(name, "-"+id+".jsonl") || len(id) != 36 || strings.Count(id, "-") != 4 {
			t.Fatalf("logID(%q) = %q", name, id)
		}
		for _, c := range strings.ReplaceAll(id, "-", "") {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				t.Fatalf("logID(%q) = %q", name, id)
			}
		}
	})
}

// TestAdoptAfterTheHostFileShrank: a host file rewritten shorter than
// where the last look stopped is looked at again from its start.
func TestAdoptAfterTheHostFileShrank(t *testing.T) {
	state, wt, dirs := codexFixture(t)
	const here, there = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0199a1b2-c3d4-7e5f-8a9b-ffffffffffff"
	for id, cwd := range map[string]string{here: wt, there: wt + "-other"} {
		sessionLog(t, dirs, "2026/12/01/rollout-2026-12-01T10-00-00-"+id+".jsonl", id, cwd, 0)
	}
	host := filepath.Join(dirs.Codex, "history.jsonl")
	write(t, host, historyLine(there, "a long prompt typed in another worktree")+historyLine(there, "and another"))
	binds, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, binds[0].Src); got != "" {
		t.Fatalf("copy %q, want it empty", got)
	}
	write(t, host, historyLine(here, "mine"))
	if _, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, binds[0].Src), historyLine(here, "mine"); got != want {
		t.Errorf("copy %q, want %q", got, want)
	}
}

// BenchmarkPrepareBesideLongHistory is a codex launch's Prepare when the
// host history (8 MiB, 40,000 prompts) has nothing new since the last.
func BenchmarkPrepareBesideLongHistory(b *testing.B) {
	state, wt, dirs := codexFixture(b)
	var h strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&h, `{"session_id":"0199a1b2-c3d4-7e5f-8a9b-%012d","ts":%d,"text":"%s"}`+"\n", i%500, i, strings.Repeat("p", 150))
	}
	os.MkdirAll(dirs.Codex, 0o700)
	os.WriteFile(filepath.Join(dirs.Codex, "history.jsonl"), []byte(h.String()), 0o600)
	if _, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Prepare(state, "wt-12345678-codex", "codex", wt, dirs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeBackLongCopy is a codex launch's end when its worktree's
// copy (8 MiB, 40,000 prompts) gained nothing since the last merge.
func BenchmarkMergeBackLongCopy(b *testing.B) {
	state, dirs, copyPath := codexCopy(b)
	var c strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&c, `{"session_id":"s","ts":%d,"text":"%s"}`+"\n", i, strings.Repeat("p", 150))
	}
	os.WriteFile(copyPath, []byte(c.String()), 0o600)
	// More than one launch may add: the rest is dropped, and merged.
	var dropped *DroppedError
	if err := MergeBack(state, "w-12345678-codex", "codex", dirs); !errors.As(err, &dropped) {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := MergeBack(state, "w-12345678-codex", "codex", dirs); err != nil {
			b.Fatal(err)
		}
	}
}

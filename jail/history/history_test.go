package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

func TestPrepareSeedsClaudeCopy(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	wt := filepath.Join(dir, "src", "myrepo")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("p", 200<<10) // longer than any Scanner default
	mine := func(display string) string {
		return `{"display":"` + display + `","pastedContents":{},"timestamp":1,"project":"` + wt + `"}`
	}
	lines := []string{
		mine("first"),
		`{"display":"elsewhere","project":"/other/repo"}`,
		`{"display":"torn line","proj`,
		`{"display":"no project"}`,
		``,
		mine(long),
		`{"display":"prefix is not enough","project":"` + wt + `-2"}`,
		mine("last, without newline"),
	}
	hostClaude := filepath.Join(home, ".claude", "history.jsonl")
	hostData := strings.Join(lines, "\n")
	write(t, hostClaude, hostData)
	hostCodex := filepath.Join(home, ".codex", "history.jsonl")
	write(t, hostCodex, `{"session_id":"s","ts":1,"text":"codex prompt"}`+"\n")

	binds, err := Prepare(state, "myrepo-12345678-claude", "claude", wt, DirsFor(home, noEnv))
	if err != nil {
		t.Fatal(err)
	}
	slotDir := filepath.Join(state, "history", "myrepo-12345678-claude")
	want := []Bind{
		{Src: filepath.Join(slotDir, "claude-history.jsonl"), Dst: hostClaude},
		{Src: filepath.Join(slotDir, "codex-history.jsonl"), Dst: hostCodex},
	}
	if !reflect.DeepEqual(binds, want) {
		t.Fatalf("binds = %+v\nwant %+v", binds, want)
	}
	wantClaude := strings.Join([]string{lines[0], lines[2], lines[4], lines[5], lines[7]}, "\n") + "\n"
	if got := read(t, want[0].Src); got != wantClaude {
		t.Errorf("claude copy:\n%.300q\nwant\n%.300q", got, wantClaude)
	}
	if got := read(t, want[1].Src); got != "" {
		t.Errorf("codex copy = %q, want empty", got)
	}
	for _, b := range want {
		if fi, _ := os.Stat(b.Src); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", b.Src, fi.Mode().Perm())
		}
	}
	if got := read(t, hostClaude); got != hostData {
		t.Errorf("host claude history changed")
	}

	// Later launches keep the copy as the agent left it.
	write(t, want[0].Src, "mine\n")
	if _, err := Prepare(state, "myrepo-12345678-claude", "claude", wt, DirsFor(home, noEnv)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, want[0].Src); got != "mine\n" {
		t.Errorf("second launch reseeded the copy: %q", got)
	}
}

// The agent may see the worktree through a symlink or by its real path;
// lines under either belong to it.
func TestPrepareMatchesRealPath(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	host := `{"project":"` + real + `"}` + "\n" + `{"project":"` + link + `"}` + "\n" + `{"project":"/x"}` + "\n"
	write(t, filepath.Join(home, ".claude", "history.jsonl"), host)
	binds, err := Prepare(state, "s", "claude", link+"/", DirsFor(home, noEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"project":"` + real + `"}` + "\n" + `{"project":"` + link + `"}` + "\n"
	if got := read(t, binds[0].Src); got != want {
		t.Errorf("copy = %q, want %q", got, want)
	}
}

func TestPrepareWithoutHostFiles(t *testing.T) {
	dir := t.TempDir()
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	os.Mkdir(home, 0o755)
	binds, err := Prepare(state, "s", "claude", dir, DirsFor(home, noEnv))
	if err != nil || len(binds) != 0 {
		t.Fatalf("Prepare on a bare home = %v, %v; want no binds", binds, err)
	}
	if des, _ := os.ReadDir(home); len(des) != 0 {
		t.Errorf("Prepare created %v in a bare home", des)
	}

	// Config dirs without history files: the launched agent's file is
	// created so it can be bound; the other agent's is left alone.
	os.Mkdir(filepath.Join(home, ".claude"), 0o700)
	os.Mkdir(filepath.Join(home, ".codex"), 0o700)
	binds, err = Prepare(state, "s", "claude", dir, DirsFor(home, noEnv))
	if err != nil {
		t.Fatal(err)
	}
	hostClaude := filepath.Join(home, ".claude", "history.jsonl")
	if len(binds) != 1 || binds[0].Dst != hostClaude {
		t.Fatalf("binds = %+v, want only %s", binds, hostClaude)
	}
	if fi, err := os.Stat(hostClaude); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("host claude history: %v, %v; want an empty 0600 file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "history.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a claude launch created codex's history file: %v", err)
	}
	binds, err = Prepare(state, "t", "codex", dir, DirsFor(home, noEnv))
	if err != nil || len(binds) != 2 {
		t.Fatalf("codex launch: binds %+v, %v; want claude's and codex's", binds, err)
	}
}

func TestPrepareRefusesOddHostFile(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".claude", "history.jsonl"), 0o700)
	if _, err := Prepare(filepath.Join(dir, "state"), "s", "claude", dir, DirsFor(home, noEnv)); err == nil || !strings.Contains(err.Error(), "history.jsonl") {
		t.Errorf("a directory where the history file should be: %v, want an error naming it", err)
	}
}

func noEnv(string) string { return "" }

// TestRelocatedConfigDirs: CLAUDE_CONFIG_DIR and CODEX_HOME move the files
// the agents really use, so the binds must follow.
func TestRelocatedConfigDirs(t *testing.T) {
	home := t.TempDir()
	claude, codex := filepath.Join(home, "cc"), filepath.Join(home, "cx")
	for _, d := range []string{claude, codex, filepath.Join(home, ".claude"), filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"CLAUDE_CONFIG_DIR": claude, "CODEX_HOME": codex}
	dirs := DirsFor(home, func(k string) string { return env[k] })
	binds, err := Prepare(filepath.Join(home, "state"), "s", "codex", t.TempDir(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	var dsts []string
	for _, b := range binds {
		dsts = append(dsts, b.Dst)
	}
	want := []string{filepath.Join(codex, "history.jsonl")}
	if strings.Join(dsts, " ") != strings.Join(want, " ") {
		t.Fatalf("binds over %q, want %q", dsts, want)
	}
	if got := Paths(filepath.Join(home, "state"), "s", "claude", dirs); len(got) != 2 || got[0].Dst != filepath.Join(claude, "history.jsonl") {
		t.Fatalf("Paths: %+v", got)
	}
}

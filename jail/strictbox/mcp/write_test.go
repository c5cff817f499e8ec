package mcp

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var goldenServers = []Server{
	{Name: "files", Client: Codex, Command: "/home/u/.local/bin/files-mcp", Args: []string{"--root", "${PWD}"}, Env: []EnvVar{{"A", "1"}, {"LOG", "${LOG_LEVEL}"}},
		Extra: map[string]any{"startup_timeout_sec": int64(20), "env_vars": []any{"LANG"}}},
	{Name: "git", Command: "uvx", Args: []string{"mcp-server-git"}},
	{Name: "q\"uote<&>", Command: "sh", Args: []string{"-c", "echo \"hi\" && exit"}},
	{Name: "slow", Client: Opencode, Command: "slow-mcp", Extra: map[string]any{"timeout": float64(9000)}},
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", path, diff.Diff("want", want, "got", got))
	}
}

func TestWriterGoldens(t *testing.T) {
	const base = `model_provider = "aisan"

[mcp_servers.stale]
command = "old"

[projects."/work/repo"]
trust_level = "trusted"
`
	tests := []struct {
		name string
		gen  func() ([]byte, error)
	}{
		{"claude.json", func() ([]byte, error) { return ClaudeConfig(goldenServers) }},
		{"claude-empty.json", func() ([]byte, error) { return ClaudeConfig(nil) }},
		{"opencode.json", func() ([]byte, error) { return OpencodeConfig(goldenServers) }},
		{"opencode-empty.json", func() ([]byte, error) { return OpencodeConfig(nil) }},
		{"codex.toml", func() ([]byte, error) { return CodexConfig(nil, goldenServers) }},
		{"codex-merged.toml", func() ([]byte, error) { return CodexConfig([]byte(base), goldenServers) }},
		{"codex-merged-empty.toml", func() ([]byte, error) { return CodexConfig([]byte(base), nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.gen()
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				b, err := tt.gen()
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("output is not deterministic (err %v)", err)
				}
			}
			checkGolden(t, tt.name, a)
		})
	}
}

// The writers' output must read back as the same servers through the
// package's own parsers: what the box reads is what was kept.
func TestWritersRoundTrip(t *testing.T) {
	names := func(imp Import) string {
		var s []string
		for _, x := range imp.Servers {
			s = append(s, x.Name+"="+x.Command+" "+strings.Join(x.Args, " "))
		}
		return strings.Join(s, ";")
	}
	want := names(Import{Servers: goldenServers})
	cl, _ := ClaudeConfig(goldenServers)
	imp, err := ParseClaude(ClaudeFiles{Global: File{Path: "/x", Data: cl}}, "", "")
	if err != nil || names(imp) != want || len(imp.Dropped) != 0 {
		t.Errorf("claude round trip: %v, %q, want %q", err, names(imp), want)
	}
	oc, _ := OpencodeConfig(goldenServers)
	imp, err = ParseOpencode([]File{{Path: "/x", Data: oc}}, "")
	if err != nil || names(imp) != want {
		t.Errorf("opencode round trip: %v, %q", err, names(imp))
	}
	cx, _ := CodexConfig(nil, goldenServers)
	imp, err = ParseCodex(File{Path: "/x", Data: cx}, "")
	if err != nil || names(imp) != want {
		t.Errorf("codex round trip: %v, %q", err, names(imp))
	}
	var doc map[string]any
	if err := toml.Unmarshal(cx, &doc); err != nil {
		t.Fatal(err)
	}
}

func TestCodexConfigRefusesBadBase(t *testing.T) {
	if _, err := CodexConfig([]byte("[x"), nil); err == nil {
		t.Error("a broken base config was accepted")
	}
}

func TestWriteInDir(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteClaude(dir, goldenServers)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(p)
	if err != nil || st.Mode() != 0o600 {
		t.Fatalf("%s: mode %v, err %v; want a 0600 regular file", p, st.Mode(), err)
	}

	// A symlink planted at the target is replaced, and its target is untouched.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Remove(filepath.Join(dir, OpencodeFile))
	if err := os.Symlink(victim, filepath.Join(dir, OpencodeFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteOpencode(dir, goldenServers); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the write followed the symlink: victim now %q", b)
	}
	if st, _ := os.Lstat(filepath.Join(dir, OpencodeFile)); !st.Mode().IsRegular() {
		t.Errorf("the symlink was not replaced by a file: %v", st.Mode())
	}

	// Something that is neither a file nor a link is refused and kept.
	fifo := filepath.Join(dir, ClaudeFile)
	os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteClaude(dir, nil); err == nil || !strings.Contains(err.Error(), "in the way") {
		t.Errorf("writing over a FIFO: %v", err)
	}

	// The directory itself must not be a symlink.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	if _, err := WriteClaude(link, nil); err == nil || !strings.Contains(err.Error(), "refuses symlinks") {
		t.Errorf("writing into a symlinked dir: %v", err)
	}
	if _, err := WriteClaude("rel", nil); err == nil {
		t.Error("a relative dir was accepted")
	}
	if _, err := WriteClaude(filepath.Join(dir, "missing"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing dir: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestWriteCodexMerges(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, CodexFile), []byte("model = \"m\"\n[projects.\"/r\"]\ntrust_level = \"trusted\"\n"), 0o600)
	p, err := WriteCodex(dir, goldenServers[:1])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	var doc struct {
		Model    string
		Projects map[string]map[string]string
		Servers  map[string]map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "m" || doc.Projects["/r"]["trust_level"] != "trusted" || doc.Servers["files"]["command"] != "/home/u/.local/bin/files-mcp" {
		t.Errorf("merged config lost something:\n%s", b)
	}
	// A symlinked config.toml in the box's CODEX_HOME is refused, not read.
	os.Remove(p)
	os.Symlink("/etc/passwd", p)
	if _, err := WriteCodex(dir, nil); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked config.toml: %v", err)
	}
}

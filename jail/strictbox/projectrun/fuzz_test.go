package projectrun

import (
	"path/filepath"
	"testing"
)

// FuzzProjectFiles: whatever a box writes into a project file, each
// reader returns absolute clean paths and never panics.
func FuzzProjectFiles(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"sh \"$CLAUDE_PROJECT_DIR\"/x.sh -c 'a; ./b'"}]}]},"statusLine":{"command":"./s"}}`))
	f.Add([]byte(`{"version":"2.0.0","tasks":[{"type":"shell","command":"./t.sh","args":["${workspaceFolder}/u"],"runOptions":{"runOn":"folderOpen"}}]}`))
	f.Add([]byte(`{"initializeCommand":["./init.sh","x"]}`))
	f.Add([]byte("[hooks]\nStop = [{hooks = [{type = \"command\", command = \"./h.sh\"}]}]\n"))
	readers := map[string]func(string, []byte) []string{
		"/r/.claude/settings.json": ClaudeSettings,
		"/r/.codex/hooks.json":     CodexHooks,
		"/r/.codex/config.toml":    CodexHooks,
		"/r/.vscode/tasks.json":    VSCodeTasks,
		"/r/.devcontainer.json":    Devcontainer,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for path, read := range readers {
			for _, p := range read(path, data) {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p {
					t.Fatalf("%s: %q is not absolute and clean", path, p)
				}
			}
		}
		for _, p := range ShellPaths(string(data), "/r", map[string]string{"CLAUDE_PROJECT_DIR": "/r"}) {
			if !filepath.IsAbs(p) {
				t.Fatalf("ShellPaths: %q is not absolute", p)
			}
		}
	})
}

package projectrun

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkNodeDeps: the walk of a hook (node tools/hook.js) that
// requires one package that depends on 49 others, hoisted, on disk,
// read and listed as a strict launch does (regular files only).
func BenchmarkNodeDeps(b *testing.B) {
	root := b.TempDir()
	write := func(p, data string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("tools/hook.js", "require('dep').run()\n")
	deps := ""
	for i := range 49 {
		if i > 0 {
			deps += ", "
		}
		deps += fmt.Sprintf(`"p%02d": "^1.0.0"`, i)
		write(fmt.Sprintf("node_modules/p%02d/package.json", i), `{"name": "x", "version": "1.0.0", "main": "index.js"}`)
		for j := range 30 {
			write(fmt.Sprintf("node_modules/p%02d/lib/m%02d.js", i, j), "\n")
		}
	}
	write("node_modules/dep/package.json", `{"name": "dep", "dependencies": {`+deps+`}}`)
	read := func(p string) []byte {
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
			return nil
		}
		data, _ := os.ReadFile(p)
		return data
	}
	list := func(dir string) []string {
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			return nil
		}
		es, _ := os.ReadDir(dir)
		out := []string{}
		for _, e := range es {
			if e.Type().IsRegular() {
				out = append(out, e.Name())
			}
		}
		return out
	}
	settings := []byte(hook("node tools/hook.js"))
	pr := Project{Read: read, List: list}
	path := filepath.Join(root, ".claude", "settings.json")
	for b.Loop() {
		ClaudeSettings(path, settings, pr)
	}
}

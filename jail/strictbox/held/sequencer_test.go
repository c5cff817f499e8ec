package held

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzExecLines(f *testing.F) {
	f.Add("pick abc one\nexec make test\nx   ./run.sh  \nbreak\n")
	f.Add("exec\nx\nexecute this\n# exec commented\n")
	f.Fuzz(func(t *testing.T, todo string) {
		for _, l := range execLines([]byte(todo)) {
			word, rest, _ := strings.Cut(l, " ")
			if word != "exec" && word != "x" || strings.TrimSpace(rest) == "" || l != strings.TrimSpace(l) {
				t.Fatalf("execLines: %q is not an exec line", l)
			}
		}
	})
}

// TestTodoUnread: a todo the end cannot read (here a directory where
// git keeps the file) is said, not taken for one without exec lines.
func TestTodoUnread(t *testing.T) {
	gitDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(gitDir, "sequencer", "todo"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := addedExecs(Manifest{GitDir: gitDir})
	if len(got) != 1 || got[0].Todo != filepath.Join(gitDir, "sequencer", "todo") || got[0].Unread == nil {
		t.Fatalf("added execs %+v, want the unreadable todo", got)
	}
	if l := strings.Join(Result{AddedExecs: got}.Lines(gitDir, "s"), "\n"); !strings.Contains(l, "sequencer/todo, which could not be read") {
		t.Errorf("the end does not say the todo could not be read:\n%s", l)
	}
}

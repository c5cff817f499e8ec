package projectrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantNames checks what a reader returned: its files and directories
// exactly, and a note holding each of notes.
func wantNames(t *testing.T, n Names, files, dirs, notes []string) {
	t.Helper()
	if d := cmp.Diff(files, n.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff(dirs, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
	all := strings.Join(n.Notes, "\n")
	for _, want := range notes {
		if !strings.Contains(all, want) {
			t.Errorf("the notes lack %q:\n%s", want, all)
		}
	}
}

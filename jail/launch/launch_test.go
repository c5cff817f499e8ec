package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/boxinit"
)

// TestWriteEnvFile: the box's variables land in a 0600 file, one a line;
// an entry with a newline is refused (it would smuggle another variable
// in).
func TestWriteEnvFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "box.env")
	if err := writeEnvFile(p, []string{"A=1", "B=two"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	if got, err := boxinit.ReadEnvFile(p); err != nil || strings.Join(got, " ") != "A=1 B=two" {
		t.Fatalf("%q %v", got, err)
	}
	if err := writeEnvFile(p, []string{"A=1\nB=2"}); err == nil {
		t.Fatal("an entry with a newline was written")
	}
}

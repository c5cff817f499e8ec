package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunAsUnjailed: what a command sees of how it was started is what it
// would see without aisan. Each case runs the same shell line directly
// and under 'aisan run --', and the two must agree: a stdout redirected
// to a file is that file (not a pipe), a full device reports its error,
// an executable without #! runs under /bin/sh, $PWD keeps the link the
// caller came through, and a script's background job keeps SIGINT and
// SIGQUIT ignored.
func TestRunAsUnjailed(t *testing.T) {
	requireJail(t)
	home, env := testEnv(t)
	dir := filepath.Join(home, "real dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "noshebang"), "echo \"ran $# $*\"\n")
	if err := os.Chmod(filepath.Join(dir, "noshebang"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each line is run by sh -c in the link's directory, PWD set as a
	// shell that cd'd there would; %s is the command prefix, "" or aisan.
	tests := []struct{ name, line string }{
		{"stdout to a file", `%s sh -c 'readlink /proc/self/fd/1; echo more' > out; cat out`},
		{"a full device", `%s sh -c 'echo x' > /dev/full 2>/dev/null; echo "status $?"`},
		{"stdout to the null device", `%s sh -c 'x=$(readlink /proc/$$/fd/1); echo "$x" >&2' > /dev/null; echo "status $?"`},
		{"no #! line", `%s ./noshebang a 'b c'`},
		{"PWD through a link", `%s sh -c 'echo "$PWD"; cd ..; pwd'`},
		{"background job", `%s sh -c 'grep SigIgn /proc/self/status' & wait`},
	}
	aisanCmd := strconv.Quote(aisanBin) + " run --"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(prefix string) string {
				os.Remove(filepath.Join(dir, "out"))
				c := exec.Command("sh", "-c", strings.ReplaceAll(tt.line, "%s", prefix))
				c.Dir = link
				c.Env = append(append(os.Environ(), env...), "PWD="+link)
				out, err := c.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", c.Args, err, out)
				}
				return string(out)
			}
			direct, jailed := run(""), run(aisanCmd)
			if direct != jailed {
				t.Errorf("direct and jailed differ:\ndirect: %q\njailed: %q", direct, jailed)
			}
		})
	}
}

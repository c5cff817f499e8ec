package boxinit

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestShArgv(t *testing.T) {
	got := shArgv("./x", []string{"./x", "a", "b c"})
	want := []string{"/bin/sh", "./x", "a", "b c"}
	if !slices.Equal(got, want) {
		t.Fatalf("shArgv = %q, want %q", got, want)
	}
	if got := shArgv("/p/x", []string{"x"}); !slices.Equal(got, []string{"/bin/sh", "/p/x"}) {
		t.Fatalf("shArgv without arguments = %q", got)
	}
}

// A script without a #! line fails ForkExec with ENOEXEC, and runs
// through shArgv as execvp(3) would run it.
func TestSpawnNoShebang(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "noshebang")
	out := filepath.Join(dir, "out")
	if err := os.WriteFile(script, []byte("echo \"$0 $1\" > \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{script, "arg", out}
	if _, err := Spawn(script, argv, nil, []int{0, 1, 2}, nil); err != syscall.ENOEXEC {
		t.Fatalf("direct spawn: err = %v, want ENOEXEC", err)
	}
	pid, err := Spawn(shPath, shArgv(script, argv), nil, []int{0, 1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := WaitExit(pid); err != nil || code != 0 {
		t.Fatalf("status %d, %v", code, err)
	}
	b, err := os.ReadFile(out)
	if err != nil || string(b) != script+" arg\n" {
		t.Fatalf("script wrote %q (%v), want %q", b, err, script+" arg\n")
	}
}

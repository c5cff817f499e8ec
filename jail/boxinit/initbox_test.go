package boxinit

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReadEnvFile: only a regular 0600 file is read, never through a
// link, and every line must be KEY=VALUE.
func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "env")
	os.WriteFile(good, []byte("AISAN_TOKEN=abc\n\nB=x=y\n"), 0o600)
	got, err := ReadEnvFile(good)
	if err != nil || strings.Join(got, ",") != "AISAN_TOKEN=abc,B=x=y" {
		t.Fatalf("%q %v", got, err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	if _, err := ReadEnvFile(link); err == nil {
		t.Fatal("read through a symlink")
	}
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("A=1\n"), 0o644)
	if _, err := ReadEnvFile(open); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("group-readable file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("A=1\nnoequals\n"), 0o600)
	if _, err := ReadEnvFile(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line: %v", err)
	}
}

// TestReadEnvFileLines: a file's lines as bufio.ScanLines splits them.
func TestReadEnvFileLines(t *testing.T) {
	dir := t.TempDir()
	for i, data := range []string{"A=1", "A=1\r\nB=2\r\n", "\n\nA=1\n\r\nB=\r\r\n", "A=1\nB=2\r", "A=x\ry\n"} {
		path := filepath.Join(dir, strconv.Itoa(i))
		os.WriteFile(path, []byte(data), 0o600)
		got, err := ReadEnvFile(path)
		if want := scanLines(data); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q %v, want %q", data, got, err, want)
		}
	}
}

// scanLines is bufio.Scanner's non-empty lines of data.
func scanLines(data string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(nil, maxEnvFile+1)
	for sc.Scan() {
		if sc.Text() != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

// FuzzEnvLines: no input panics; what is accepted is bufio's split, and
// what is refused names a line that is not KEY=VALUE.
func FuzzEnvLines(f *testing.F) {
	for _, s := range []string{"A=1\n", "A=1\r\nB=2", "\r\n=x\n", "A\n", "A=\r\r\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := envLines("env", data)
		if err != nil {
			if !strings.Contains(err.Error(), "is not KEY=VALUE") {
				t.Fatalf("%q: %v", data, err)
			}
			return
		}
		if want := scanLines(string(data)); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, bufio splits %q", data, got, want)
		}
	})
}

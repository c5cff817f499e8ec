package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// TestMakeInstallFromCheckout: 'make build' in a fresh git checkout
// (today's tree, committed) records its commit, and 'make install' puts
// the manual page where man finds it; man renders it without a warning.
func TestMakeInstallFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds aisan from a fresh checkout")
	}
	for _, tool := range []string{"git", "make", "man"} {
		_, err := exec.LookPath(tool)
		jailtest.Need(t, tool, err)
	}
	root, _ := filepath.Abs("../..")
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8", "MANWIDTH=80")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s %q in %s: %v\n%s%s", name, args, dir, err, out, stderr)
		}
		return string(out)
	}
	files := run(root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	src := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(files, "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		fi, _ := os.Stat(filepath.Join(root, f))
		os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755)
		if err := os.WriteFile(filepath.Join(src, f), data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	run(src, "git", "init", "-q")
	run(src, "git", "add", "-A")
	run(src, "git", "-c", "user.name=aisan test", "-c", "user.email=test@aisan.invalid", "commit", "-qm", "checkout")
	head := strings.TrimSpace(run(src, "git", "rev-parse", "HEAD"))
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command", err)
	run(src, "make", "build", "GO="+gobin)

	out := run(src, filepath.Join(src, "bin", "aisan"), "version")
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "(commit "+head+", ") {
		t.Errorf("aisan version from a checkout of %s:\n%s", head, out)
	}

	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("make install would install bwrap first")
	}
	if _, err := exec.LookPath("xdg-dbus-proxy"); err != nil {
		t.Skip("make install would install xdg-dbus-proxy first")
	}
	dest := t.TempDir()
	run(src, "make", "install", "GO="+gobin, "DESTDIR="+dest, "PREFIX=/usr")
	page := filepath.Join(dest, "usr", "share", "man", "man1", "aisan.1")
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("make install left no manual page: %v", err)
	}
	cmd := exec.Command("man", "--warnings", "-l", "-P", "cat", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=80")
	rendered, err := cmd.Output()
	if err != nil {
		t.Fatalf("man -l %s: %v", page, err)
	}
	if ee := cmd.ProcessState; !ee.Success() || !strings.Contains(string(rendered), "aisan kill") {
		t.Errorf("man -l rendered:\n%s", rendered)
	}
	if warn := manWarnings(t, page); warn != "" {
		t.Errorf("man --warnings: %s", warn)
	}
	// man finds the page by name under the installed prefix.
	cmd = exec.Command("man", "-w", "aisan")
	cmd.Env = append(os.Environ(), "MANPATH="+filepath.Join(dest, "usr", "share", "man"))
	where, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(where)) != page {
		t.Errorf("man -w aisan = %q, %v; want %s", where, err, page)
	}
}

// manWarnings is what man --warnings says on stderr rendering page.
func manWarnings(t *testing.T, page string) string {
	t.Helper()
	cmd := exec.Command("man", "--warnings", "-l", "-P", "cat", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=80")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = nil
	if err := cmd.Run(); err != nil {
		return err.Error() + ": " + stderr.String()
	}
	return stderr.String()
}

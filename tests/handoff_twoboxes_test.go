package tests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHandoffTwoBoxesOneRepo: two strict boxes in one repository, each
// with a mount point for the absent .envrc. The first ends while the
// second runs; the second then writes .envrc. Had the first end removed
// the mount point, the second box's bind mount on it would be gone (an
// unlink detaches it in every namespace) and its write would land in the
// repository, where the host's direnv reads it. The host looks while the
// second box waits, and again after it: the repository never holds the
// write, and the second box's end holds it for review.
func TestHandoffTwoBoxesOneRepo(t *testing.T) {
	repo, _, env := strictRepo(t)
	at := func(name string) string { return filepath.Join(repo, name) }
	waitFor := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(at(name)); err == nil {
				return
			}
		}
		t.Fatalf("%s never appeared", name)
	}
	wait := func(file string) string {
		return `i=0; while [ ! -e ` + file + ` ] && [ $i -lt 800 ]; do sleep 0.05; i=$((i+1)); done; `
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		first <- strict(t, repo, env, nil, "sh", "-c", `: >first-up; `+wait("first-go")+`echo first-done`)
	}()
	waitFor("first-up")
	go func() {
		second <- strict(t, repo, env, nil, "sh", "-c", `: >second-up; `+wait("first-gone")+
			`printf 'echo planted-by-the-box\n' >.envrc && : >second-wrote; `+wait("second-go")+`echo second-done`)
	}()
	waitFor("second-up")
	os.WriteFile(at("first-go"), nil, 0o644)
	r1 := <-first
	if r1.code != 0 || !strings.Contains(r1.stdout, "first-done") {
		t.Fatalf("the first box: exit %d, %q %q", r1.code, r1.stdout, r1.stderr)
	}
	if _, err := os.Lstat(at(".envrc")); err != nil {
		t.Errorf("the first box's end removed the mount point the second box stands on: %v", err)
	}
	os.WriteFile(at("first-gone"), nil, 0o644)
	waitFor("second-wrote")
	if data, err := os.ReadFile(at(".envrc")); err != nil || len(data) != 0 {
		t.Errorf("while the second box runs, the repository's .envrc holds %q (%v): the box's write reached the host", data, err)
	}
	os.WriteFile(at("second-go"), nil, 0o644)
	r2 := <-second
	if r2.code != 0 || !strings.Contains(r2.stdout, "second-done") {
		t.Fatalf("the second box: exit %d, %q %q", r2.code, r2.stdout, r2.stderr)
	}
	if _, err := os.Lstat(at(".envrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after both boxes the repository holds .envrc (%v)", err)
	}
	checkHeld(t, r2, env, slotName(repo, "run")+"-2", []string{".envrc"}, []string{"planted-by-the-box"})
}

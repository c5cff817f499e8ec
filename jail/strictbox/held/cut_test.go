package held

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// collectEnv names the set a re-run of this test binary collects and
// exits, for TestCollectCutShort to kill part-way.
const collectEnv = "AISAN_TEST_HELD_COLLECT"

func TestMain(m *testing.M) {
	if set := os.Getenv(collectEnv); set != "" {
		if _, err := End(set); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCollectCutShort: a collection killed (SIGKILL) part-way through its
// moves leaves its set open, in the open index; the next collection
// finishes it. Every git dir the box planted is then out of the
// repository and named in the set once, with what it held, and nothing
// the set holds was replaced or left unnamed.
func TestCollectCutShort(t *testing.T) {
	const planted = 300
	cut := 0
	for round := 0; round < 30 && cut < 4; round++ {
		repo, set := fixture(t)
		home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
		var want []string
		for i := range planted {
			name := fmt.Sprintf("d%03d", i)
			git := filepath.Join(repo, name, ".git")
			os.MkdirAll(git, 0o755)
			os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tfsmonitor = payload-"+name+"\n"), 0o644)
			want = append(want, git)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), collectEnv+"="+set)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Kill once some moves are made: a few more each round.
		after := 1 + 7*round
	wait:
		for {
			select {
			case <-done:
				done <- nil
				break wait
			default:
			}
			if ents, _ := os.ReadDir(filepath.Join(set, "swept")); len(ents) >= after {
				cmd.Process.Kill()
				break
			}
		}
		<-done
		m, err := ReadManifest(set)
		if err != nil {
			t.Fatal(err)
		}
		if m.State != Open {
			continue // it finished first
		}
		cut++
		if got := openEntries(t, home, repo); len(got) != 1 {
			t.Fatalf("round %d: a cut-short set is not in the open index: %q", round, got)
		}
		if _, err := End(set); err != nil {
			t.Fatalf("round %d: collecting again: %v", round, err)
		}
		m, err = ReadManifest(set)
		if err != nil {
			t.Fatal(err)
		}
		if m.State != Held {
			t.Fatalf("round %d: the set is %s, want held", round, m.State)
		}
		if len(m.Unchecked) != 0 {
			t.Fatalf("round %d: %d paths unchecked, the first %+v", round, len(m.Unchecked), m.Unchecked[0])
		}
		if got := slices.Sorted(slices.Values(m.Swept)); !slices.Equal(got, want) {
			t.Fatalf("round %d (cut after %d moves): the set names %d swept entries, want the %d planted git dirs once each:\n%q", round, after, len(got), len(want), got)
		}
		for n, p := range m.Swept {
			b, err := os.ReadFile(filepath.Join(swept(set, n), "config"))
			if err != nil || !strings.Contains(string(b), "payload-"+filepath.Base(filepath.Dir(p))+"\n") {
				t.Fatalf("round %d: swept/%d, named %s, holds %q (%v)", round, n, p, b, err)
			}
			if _, err := os.Lstat(p); err == nil {
				t.Fatalf("round %d: %s is still in the repository", round, p)
			}
		}
		ents, _ := os.ReadDir(filepath.Join(set, "swept"))
		if unnamed := len(ents) - 2*len(m.Swept); unnamed != 0 {
			t.Fatalf("round %d: swept/ holds %d entries the manifest does not name", round, unnamed)
		}
		if got := openEntries(t, home, repo); len(got) != 0 {
			t.Fatalf("round %d: the collected set is still in the open index: %q", round, got)
		}
	}
	if cut == 0 {
		t.Fatal("no collection was cut short: every one finished before its kill")
	}
	t.Logf("%d collections cut short", cut)
}

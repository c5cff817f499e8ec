package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStateRunDirsHidden: aisan's run directory in the launch's state
// directory and in ~/.aisan, where an aisan without /run/user/UID keeps
// its locks, is an empty read-only tmpfs in every jail, after the state
// directories' read-only binds, even when the launch's own run
// directory is in a runtime directory.
func TestStateRunDirsHidden(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	state := filepath.Join(base, "state")
	rt := filepath.Join(base, "rt")
	for _, d := range []string{filepath.Join(home, ".aisan", "run"), filepath.Join(state, "run"), filepath.Join(rt, "aisan")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Home: home, AisanHome: state, RuntimeDir: rt}
	h.GatherStateDirs()
	got := h.stateRunDirs()
	want := []string{filepath.Join(state, "run"), filepath.Join(home, ".aisan", "run")}
	if !slices.Equal(got, want) {
		t.Fatalf("stateRunDirs = %q, want %q", got, want)
	}
	spec := DenyList(DenyOptions{Command: []string{"true"}, StateDirs: h.StateDirs, RunDir: h.existingRunDir(), StateRunDirs: got})
	for _, d := range want {
		tmpfs := slices.IndexFunc(spec.Mounts, func(m Mount) bool { return m.Kind == Tmpfs && m.Dst == d })
		ro := slices.IndexFunc(spec.Mounts, func(m Mount) bool { return m.Kind == RemountRO && m.Dst == d })
		last := -1
		for i, m := range spec.Mounts {
			if m.Kind == ROBind && slices.Contains(h.StateDirs, m.Dst) {
				last = i
			}
		}
		if tmpfs < 0 || ro < tmpfs || tmpfs < last {
			t.Errorf("%s: tmpfs at %d, read-only at %d, last state bind at %d; want an empty read-only directory over the bind", d, tmpfs, ro, last)
		}
	}

	// Without a runtime directory the launch's run directory is the
	// state directory's, hidden once.
	h.RuntimeDir = ""
	if got := h.stateRunDirs(); !slices.Equal(got, []string{filepath.Join(home, ".aisan", "run")}) {
		t.Errorf("without a runtime directory: stateRunDirs = %q; want only ~/.aisan/run beside the run directory %s", got, h.existingRunDir())
	}
}

// TestTranscriptsHidden: the state directories' transcripts, what every
// slot showed, are an empty read-only tmpfs in every jail, after the
// state directories' read-only binds.
func TestTranscriptsHidden(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	state := filepath.Join(base, "state")
	want := []string{filepath.Join(state, "transcripts"), filepath.Join(home, ".aisan", "transcripts")}
	for _, d := range want {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Home: home, AisanHome: state}
	h.GatherStateDirs()
	got := h.stateSubdirs("transcripts")
	if !slices.Equal(got, want) {
		t.Fatalf("stateSubdirs = %q, want %q", got, want)
	}
	spec := DenyList(DenyOptions{Command: []string{"true"}, StateDirs: h.StateDirs, Transcripts: got})
	last := -1
	for i, m := range spec.Mounts {
		if m.Kind == ROBind && slices.Contains(h.StateDirs, m.Dst) {
			last = i
		}
	}
	for _, d := range want {
		tmpfs := slices.IndexFunc(spec.Mounts, func(m Mount) bool { return m.Kind == Tmpfs && m.Dst == d })
		ro := slices.IndexFunc(spec.Mounts, func(m Mount) bool { return m.Kind == RemountRO && m.Dst == d })
		if tmpfs < 0 || ro < tmpfs || tmpfs < last {
			t.Errorf("%s: tmpfs at %d, read-only at %d, last state bind at %d", d, tmpfs, ro, last)
		}
	}
}

package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGatherStateDirsConfig: the configuration dir is one of aisan's own
// directories, bound read-only like the state dir: where this launch
// reads it ($XDG_CONFIG_HOME/aisan) and where an aisan without the
// variable would (~/.config/aisan), by its real path, and only when it
// exists.
func TestGatherStateDirsConfig(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	real := t.TempDir()
	mkdir := func(p string) string {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	state := mkdir(filepath.Join(home, ".aisan"))
	for _, tt := range []struct {
		name  string
		env   []string
		setup func() []string // the dirs wanted besides the state dir
	}{
		{"none", nil, func() []string { return nil }},
		{"default", nil, func() []string {
			return []string{mkdir(filepath.Join(home, ".config", "aisan"))}
		}},
		{"XDG_CONFIG_HOME and the default", []string{"XDG_CONFIG_HOME=" + xdg}, func() []string {
			return []string{mkdir(filepath.Join(xdg, "aisan")), mkdir(filepath.Join(home, ".config", "aisan"))}
		}},
		{"XDG_CONFIG_HOME relative is ignored", []string{"XDG_CONFIG_HOME=rel"}, func() []string {
			return []string{mkdir(filepath.Join(home, ".config", "aisan"))}
		}},
		{"symlinked: its real path", nil, func() []string {
			target := mkdir(filepath.Join(real, "aisan-config"))
			mkdir(filepath.Join(home, ".config"))
			if err := os.Symlink(target, filepath.Join(home, ".config", "aisan")); err != nil {
				t.Fatal(err)
			}
			return []string{target}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(home, ".config"))
			os.RemoveAll(filepath.Join(xdg, "aisan"))
			want := append([]string{state}, tt.setup()...)
			h := Host{Home: home, AisanHome: state, Env: tt.env}
			h.GatherStateDirs()
			if !slices.Equal(h.StateDirs, want) {
				t.Errorf("StateDirs = %q, want %q", h.StateDirs, want)
			}
			spec := DenyList(DenyOptions{StateDirs: h.StateDirs})
			for _, d := range want {
				if !slices.ContainsFunc(spec.Mounts, func(m Mount) bool {
					return m.Kind == ROBind && m.Src == d && m.Dst == d && m.Pin == PinDir
				}) {
					t.Errorf("%s is not bound read-only, pinned, over itself", d)
				}
			}
		})
	}
}

package jail

import (
	"fmt"
	"github.com/aisan-dev/aisan/jail/agent"
	"os"
	"path/filepath"
)

// pidDirBinds names, for a slot, each agent directory of per-process
// files (the agent table's PIDDirs: Claude Code's <config dir>/sessions,
// where every running claude keeps <pid>.json) and the per-launch
// directory bound over it.
func pidDirBinds(h Host, slotName string) []Mount {
	look := lookupFunc(h.Env)
	getenv := func(k string) string { v, _ := look(k); return v }
	var out []Mount
	for _, a := range agent.All {
		cfg := a.Dir(h.Home, getenv)
		if len(a.PIDDirs) == 0 || !isDir(cfg) {
			continue
		}
		for _, d := range a.PIDDirs {
			out = append(out, Mount{
				Kind: Bind,
				Src:  filepath.Join(h.AisanHome, "pids", slotName, a.Kind+"-"+d),
				Dst:  filepath.Join(cfg, d),
			})
		}
	}
	return out
}

// previewPIDDirs is what a launch would bind, for explain and for jails
// that are not launches (preflight's probe), which create nothing: only
// directories that exist already.
func previewPIDDirs(h Host, slotName string) []Mount {
	var out []Mount
	for _, b := range pidDirBinds(h, slotName) {
		if isDir(b.Src) && isDir(b.Dst) {
			out = append(out, b)
		}
	}
	return out
}

// preparePIDDirs makes each per-launch directory anew (we hold the slot:
// whatever is there belongs to an ended launch, whose PIDs mean nothing
// now) and the agent's own directory if it is missing, so bwrap has a
// mount point and creates nothing on the host itself.
func preparePIDDirs(h Host, slotName string) ([]Mount, error) {
	binds := pidDirBinds(h, slotName)
	for _, b := range binds {
		if err := os.RemoveAll(b.Src); err != nil {
			return nil, fmt.Errorf("clearing %s: %w", b.Src, err)
		}
		if err := os.MkdirAll(b.Src, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", b.Src, err)
		}
		if err := os.MkdirAll(b.Dst, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", b.Dst, err)
		}
	}
	return binds, nil
}

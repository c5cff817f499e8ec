package jail

import (
	"fmt"
	"os"
	"path/filepath"
)

// pidDirBinds names, for a slot, each agent directory of per-process
// files and the per-launch directory bound over it: Claude Code's
// <config dir>/sessions, where every running claude keeps <pid>.json.
func pidDirBinds(h Host, slotName string) []Mount {
	cfg := historyDirs(h).Claude
	if !isDir(cfg) {
		return nil
	}
	return []Mount{{
		Kind: Bind,
		Src:  filepath.Join(h.AisanHome, "pids", slotName, "claude-sessions"),
		Dst:  filepath.Join(cfg, "sessions"),
	}}
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

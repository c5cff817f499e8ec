package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
)

// pidDirBinds names, for a slot, each agent directory of per-process
// files and the per-launch directory bound over it: Claude Code's
// <config dir>/sessions, where every running claude keeps <pid>.json;
// $XDG_RUNTIME_DIR/cc-socks, where it keeps <pid>.sock; and the two homes
// of its background-session daemon, /tmp/cc-daemon-<uid> (the control
// socket and the sessions' ptys) and <config dir>/daemon (its roster and
// state). With those the jail's own, a claude in the jail never reaches
// the host's daemon (whose background sessions run outside every jail):
// it starts a daemon of its own, inside the jail, which then outlives the
// interactive session as it would unjailed (the jail's keeper holds the
// slot meanwhile), shows in 'aisan list' and ends with 'aisan kill'.
func pidDirBinds(h jail.Host, slotName string) []jail.Mount {
	var out []jail.Mount
	for _, a := range agent.All {
		cfg := a.Dir(h.Home, h.Getenv)
		if len(a.PIDDirs) == 0 || !isDir(cfg) {
			continue
		}
		for _, d := range a.PIDDirs {
			base := map[agent.Base]string{agent.InConfig: cfg, agent.InRuntime: h.RuntimeDir, agent.InTmp: "/tmp"}[d.In]
			if base == "" {
				continue
			}
			name := d.Path
			if strings.Contains(name, "%d") {
				name = fmt.Sprintf(name, os.Getuid())
			}
			out = append(out, jail.Mount{
				Kind: jail.Bind,
				Src:  filepath.Join(h.AisanHome, "pids", slotName, a.Kind+"-"+d.Key),
				Dst:  filepath.Join(base, name),
			})
		}
	}
	return out
}

// previewPIDDirs is what a launch would bind, for explain and for jails
// that are not launches (preflight's probe), which create nothing: only
// directories that exist already.
func previewPIDDirs(h jail.Host, slotName string) []jail.Mount {
	var out []jail.Mount
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
func preparePIDDirs(h jail.Host, slotName string) ([]jail.Mount, error) {
	binds := pidDirBinds(h, slotName)
	var out []jail.Mount
	for _, b := range binds {
		if err := os.RemoveAll(b.Src); err != nil {
			return nil, fmt.Errorf("clearing %s: %w", b.Src, err)
		}
		if err := os.MkdirAll(b.Src, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", b.Src, err)
		}
		// A mount point that cannot be made, or is not a directory of
		// ours (in the shared /tmp: another user's, or a symlink planted
		// there), is left alone: nothing is bound over it, and claude
		// refuses such a directory by itself.
		if os.MkdirAll(b.Dst, 0o700) == nil && ownedDir(b.Dst, false) {
			out = append(out, b)
		}
	}
	return out, nil
}

// ownedDir reports whether p is a directory of ours; without follow, p
// itself (a symlink to one is not).
func ownedDir(p string, follow bool) bool {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Package userunit names where the user manager finds aisan's supervisor
// unit and the drop-ins that change it. The installer (package systemd)
// writes there and every deny-list jail keeps what it wrote read-only:
// the manager runs that unit outside any jail, so a jail that could edit
// it, or add a drop-in to it, would choose what runs unjailed at the
// user's next login.
package userunit

import (
	"path/filepath"
	"slices"
	"strings"
)

// WatchName is the supervisor's unit.
const WatchName = "aisan-watch.service"

// Dir is the directory of the user's own unit files:
// $XDG_CONFIG_HOME/systemd/user when the variable is an absolute path,
// else ~/.config/systemd/user; "" when home is not absolute either.
func Dir(getenv func(string) string, home string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "systemd", "user")
	}
	if !filepath.IsAbs(home) {
		return ""
	}
	return DefaultDir(home)
}

// DefaultDir is [Dir] without XDG_CONFIG_HOME: where a user manager
// started without the variable looks.
func DefaultDir(home string) string { return filepath.Join(home, ".config", "systemd", "user") }

// Dirs are the directories under the user's control from which a user
// manager may read the supervisor's definition: the unit directory of
// the configuration home ([Dir] for getenv, and [DefaultDir], since the
// manager was started with an XDG_CONFIG_HOME the caller cannot know),
// the "user.control" directory beside each (where "systemctl --user
// set-property" writes), the one of the data home ($XDG_DATA_HOME, and
// ~/.local/share), and those of the XDG_CONFIG_DIRS and XDG_DATA_DIRS
// entries that lie in home (a flatpak export, for example). A manager
// merges drop-ins for a unit from every directory of its path, wherever
// the unit file is. Each once; relative paths are left out.
func Dirs(getenv func(string) string, home string) []string {
	var out []string
	add := func(d string) {
		if filepath.IsAbs(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	homeAbs := filepath.IsAbs(home)
	var configs []string
	if d := Dir(getenv, home); d != "" {
		configs = append(configs, d)
	}
	if homeAbs {
		configs = append(configs, DefaultDir(home))
	}
	for _, d := range configs {
		add(d)
		add(filepath.Join(filepath.Dir(d), "user.control"))
	}
	if x := getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		add(filepath.Join(x, "systemd", "user"))
	}
	if homeAbs {
		add(filepath.Join(home, ".local", "share", "systemd", "user"))
		for _, v := range []string{"XDG_CONFIG_DIRS", "XDG_DATA_DIRS"} {
			for _, e := range filepath.SplitList(getenv(v)) {
				if e = filepath.Clean(e); filepath.IsAbs(e) && within(e, home) {
					add(filepath.Join(e, "systemd", "user"))
				}
			}
		}
	}
	return out
}

// within reports whether p is home or lies under it (both clean).
func within(p, home string) bool {
	home = filepath.Clean(home)
	return p == home || strings.HasPrefix(p, home+"/") || home == "/"
}

// DropIns are the names of the drop-in directories a manager reads for
// unit: its own (unit.d) and one per prefix of its name that ends in a
// dash (aisan-.service.d for aisan-watch.service), which apply to every
// unit whose name starts so.
func DropIns(unit string) []string {
	out := []string{unit + ".d"}
	name, typ, ok := strings.Cut(unit, ".")
	if !ok {
		return out
	}
	for i := 0; i < len(name)-1; i++ {
		if name[i] == '-' {
			out = append(out, name[:i+1]+"."+typ+".d")
		}
	}
	return out
}

// WatchPaths are the paths in the unit directory dir from which the
// manager reads the supervisor's definition: its unit file and its
// drop-in directories ([DropIns]); for a user.control directory, the
// directory itself. Drop-ins for every service
// (service.d) are left out: they are the user's, for all their units.
func WatchPaths(dir string) []string {
	if filepath.Base(dir) == "user.control" {
		// Only the manager writes here (set-property), and it reads a
		// unit file here before the configuration dir's: a jail that
		// made user.control/aisan-watch.service would replace the unit
		// whole. The directory is taken entire.
		return []string{dir}
	}
	out := []string{filepath.Join(dir, WatchName)}
	for _, d := range DropIns(WatchName) {
		out = append(out, filepath.Join(dir, d))
	}
	return out
}

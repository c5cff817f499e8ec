// Package userunit names where the user manager finds aisan's supervisor
// unit. The installer (package systemd) writes there and every deny-list
// jail keeps what it wrote read-only: the manager runs that unit outside
// any jail, so a jail that could edit it, or add a drop-in to it, would
// choose what runs unjailed at the user's next login.
package userunit

import "path/filepath"

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

// Dirs are the unit directories a user manager may read the user's
// units from: [Dir] for getenv, and [DefaultDir], since the manager was
// started with an XDG_CONFIG_HOME the caller cannot know. Each once;
// none when neither can be named.
func Dirs(getenv func(string) string, home string) []string {
	var out []string
	if d := Dir(getenv, home); d != "" {
		out = append(out, d)
	}
	if filepath.IsAbs(home) {
		if d := DefaultDir(home); len(out) == 0 || out[0] != d {
			out = append(out, d)
		}
	}
	return out
}

// WatchPaths are the paths under the unit directory dir from which the
// manager reads the supervisor's definition: its unit file, its drop-in
// directory, and the drop-in directory "systemctl --user set-property"
// writes (user.control beside dir). Prefix drop-ins (aisan-.service.d)
// and those for every service (service.d) are left out: they are the
// user's, for all units, not aisan's.
func WatchPaths(dir string) []string {
	return []string{
		filepath.Join(dir, WatchName),
		filepath.Join(dir, WatchName+".d"),
		filepath.Join(filepath.Dir(dir), "user.control", WatchName+".d"),
	}
}

package config

import "path/filepath"

// FileName is the configuration file's name in [Dir].
const FileName = "config.toml"

// Dir is the directory the configuration is read from: $XDG_CONFIG_HOME/aisan
// when that variable holds an absolute path, else ~/.config/aisan. Every
// deny-list jail binds it read-only (jail.Host.GatherStateDirs): the
// file sets the next launch's options, strict or not, so no agent may
// write it.
func Dir(getenv func(string) string, home string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "aisan")
	}
	if home == "" {
		return ""
	}
	return DefaultDir(home)
}

// DefaultDir is [Dir] without XDG_CONFIG_HOME: where an aisan started
// without the variable looks.
func DefaultDir(home string) string { return filepath.Join(home, ".config", "aisan") }

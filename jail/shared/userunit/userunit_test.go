package userunit

import (
	"slices"
	"testing"
)

func TestDir(t *testing.T) {
	tests := []struct {
		xdg, home, want string
	}{
		{"", "/home/u", "/home/u/.config/systemd/user"},
		{"/cfg", "/home/u", "/cfg/systemd/user"},
		{"relative", "/home/u", "/home/u/.config/systemd/user"},
		{"/cfg", "", "/cfg/systemd/user"},
		{"", "relative", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return tt.xdg
			}
			return ""
		}
		if got := Dir(getenv, tt.home); got != tt.want {
			t.Errorf("Dir(XDG_CONFIG_HOME=%q, home %q) = %q, want %q", tt.xdg, tt.home, got, tt.want)
		}
	}
}

func TestWatchPaths(t *testing.T) {
	got := WatchPaths("/home/u/.config/systemd/user")
	want := []string{
		"/home/u/.config/systemd/user/aisan-watch.service",
		"/home/u/.config/systemd/user/aisan-watch.service.d",
		"/home/u/.config/systemd/user/aisan-.service.d",
	}
	if !slices.Equal(got, want) {
		t.Errorf("WatchPaths = %q, want %q", got, want)
	}
	if got := WatchPaths("/home/u/.config/systemd/user.control"); !slices.Equal(got, []string{"/home/u/.config/systemd/user.control"}) {
		t.Errorf("WatchPaths of user.control = %q, want the directory itself", got)
	}
}

func TestDropIns(t *testing.T) {
	tests := []struct {
		unit string
		want []string
	}{
		{"aisan-watch.service", []string{"aisan-watch.service.d", "aisan-.service.d"}},
		{"aisan-watch-test-7.service", []string{"aisan-watch-test-7.service.d", "aisan-.service.d", "aisan-watch-.service.d", "aisan-watch-test-.service.d"}},
		{"plain.service", []string{"plain.service.d"}},
		{"trailing-.service", []string{"trailing-.service.d"}},
		{"noext", []string{"noext.d"}},
	}
	for _, tt := range tests {
		if got := DropIns(tt.unit); !slices.Equal(got, tt.want) {
			t.Errorf("DropIns(%q) = %q, want %q", tt.unit, got, tt.want)
		}
	}
}

func TestDirs(t *testing.T) {
	home := []string{
		"/home/u/.config/systemd/user",
		"/home/u/.config/systemd/user.control",
		"/home/u/.local/share/systemd/user",
	}
	tests := []struct {
		env  map[string]string
		home string
		want []string
	}{
		{nil, "/home/u", home},
		{map[string]string{"XDG_CONFIG_HOME": "/home/u/.config", "XDG_DATA_HOME": "/home/u/.local/share"}, "/home/u", home},
		{map[string]string{"XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data"}, "/home/u", append([]string{
			"/cfg/systemd/user", "/cfg/systemd/user.control",
			"/home/u/.config/systemd/user", "/home/u/.config/systemd/user.control",
			"/data/systemd/user",
		}, home[2])},
		{map[string]string{"XDG_CONFIG_HOME": "/cfg"}, "", []string{"/cfg/systemd/user", "/cfg/systemd/user.control"}},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "XDG_DATA_HOME": "rel"}, "/home/u", home},
		// Only the system-wide entries in the home are the user's.
		{map[string]string{
			"XDG_DATA_DIRS":   "/home/u/.local/share/flatpak/exports/share:/usr/local/share:/usr/share:/home/user2/x:rel",
			"XDG_CONFIG_DIRS": "/etc/xdg:/home/u/cfgdirs/",
		}, "/home/u", append(slices.Clone(home), "/home/u/cfgdirs/systemd/user", "/home/u/.local/share/flatpak/exports/share/systemd/user")},
		{map[string]string{"XDG_DATA_DIRS": "/home/u/x"}, "", nil},
		{nil, "", nil},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		if got := Dirs(getenv, tt.home); !slices.Equal(got, tt.want) {
			t.Errorf("Dirs(%v, home %q) =\n%q\nwant\n%q", tt.env, tt.home, got, tt.want)
		}
	}
}

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
		"/home/u/.config/systemd/user.control/aisan-watch.service.d",
	}
	if !slices.Equal(got, want) {
		t.Errorf("WatchPaths = %q, want %q", got, want)
	}
}

func TestDirs(t *testing.T) {
	tests := []struct {
		xdg, home string
		want      []string
	}{
		{"", "/home/u", []string{"/home/u/.config/systemd/user"}},
		{"/home/u/.config", "/home/u", []string{"/home/u/.config/systemd/user"}},
		{"/cfg", "/home/u", []string{"/cfg/systemd/user", "/home/u/.config/systemd/user"}},
		{"/cfg", "", []string{"/cfg/systemd/user"}},
		{"", "", nil},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return tt.xdg
			}
			return ""
		}
		if got := Dirs(getenv, tt.home); !slices.Equal(got, tt.want) {
			t.Errorf("Dirs(XDG_CONFIG_HOME=%q, home %q) = %q, want %q", tt.xdg, tt.home, got, tt.want)
		}
	}
}

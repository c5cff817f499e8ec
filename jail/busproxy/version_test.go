package busproxy

import "testing"

func TestPipelinedAuth(t *testing.T) {
	tests := []struct {
		line      string
		ok, known bool
	}{
		{"xdg-dbus-proxy 0.1.4", false, true},
		{"xdg-dbus-proxy 0.1.5", false, true},
		{"xdg-dbus-proxy 0.1.6", true, true},
		{"xdg-dbus-proxy 0.1.7", true, true},
		{"xdg-dbus-proxy 0.2", true, true},
		{"xdg-dbus-proxy 1.0.0", true, true},
		{"xdg-dbus-proxy 0.0.9", false, true},
		{"xdg-dbus-proxy", false, false},
		{"", false, false},
		{"xdg-dbus-proxy 0.1.x", false, false},
		{"xdg-dbus-proxy 0.1.6.1", false, false},
		{"xdg-dbus-proxy -1.2", false, false},
	}
	for _, tt := range tests {
		ok, known := PipelinedAuth(tt.line)
		if ok != tt.ok || known != tt.known {
			t.Errorf("PipelinedAuth(%q) = %v, %v; want %v, %v", tt.line, ok, known, tt.ok, tt.known)
		}
	}
}

func FuzzPipelinedAuth(f *testing.F) {
	f.Add("xdg-dbus-proxy 0.1.4")
	f.Add("xdg-dbus-proxy 0.1.7")
	f.Fuzz(func(t *testing.T, line string) {
		if ok, known := PipelinedAuth(line); ok && !known {
			t.Errorf("PipelinedAuth(%q): ok without a known version", line)
		}
	})
}

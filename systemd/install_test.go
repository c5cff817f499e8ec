package systemd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWatchUnit(t *testing.T) {
	got, err := WatchUnit("/home/u/bin/aisan", []string{"AISAN_HOME=/home/u/state", "A=1"})
	if err != nil {
		t.Fatal(err)
	}
	// The embedded template with its ExecStart= line replaced and the
	// environment added after it, sorted.
	want := strings.Replace(watchUnitTemplate, "ExecStart=/usr/local/bin/aisan watch\n",
		"ExecStart=/home/u/bin/aisan watch\nEnvironment=A=1\nEnvironment=AISAN_HOME=/home/u/state\n", 1)
	if string(got) != want {
		t.Errorf("WatchUnit:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range []string{"[Install]\n", "WantedBy=default.target\n", "Restart=on-failure\n", "Type=exec\n"} {
		if !strings.Contains(string(got), line) {
			t.Errorf("unit lacks %q", line)
		}
	}
}

// TestWatchUnitTemplate: the file in the repository is a usable unit for
// the default install location, so packagers can ship it as it is.
func TestWatchUnitTemplate(t *testing.T) {
	b, err := os.ReadFile("aisan-watch.service")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != watchUnitTemplate {
		t.Error("the embedded unit differs from aisan-watch.service")
	}
	if strings.Count(watchUnitTemplate, "\nExecStart=") != 1 {
		t.Error("aisan-watch.service must have exactly one ExecStart= line")
	}
	got, err := WatchUnit("/usr/local/bin/aisan", nil)
	if err != nil || string(got) != watchUnitTemplate {
		t.Errorf("WatchUnit for the default path changes the template (err %v)", err)
	}
}

func TestWatchUnitQuoting(t *testing.T) {
	tests := []struct {
		path, env, exec, envLine string
	}{
		{"/opt/ai san/aisan", "", `ExecStart="/opt/ai san/aisan" watch`, ""},
		{"/opt/100%/aisan", "", `ExecStart=/opt/100%%/aisan watch`, ""},
		{"/opt/$HOME/aisan", "", `ExecStart=/opt/$$HOME/aisan watch`, ""},
		{`/opt/q"b\s/aisan`, "", `ExecStart="/opt/q\"b\\s/aisan" watch`, ""},
		{"/a", "AISAN_HOME=/home/u/my state", "", `Environment="AISAN_HOME=/home/u/my state"`},
		{"/a", "X=50%", "", `Environment=X=50%%`},
		{"/a", "X=$Y", "", `Environment=X=$Y`},
	}
	for _, tt := range tests {
		var env []string
		if tt.env != "" {
			env = []string{tt.env}
		}
		got, err := WatchUnit(tt.path, env)
		if err != nil {
			t.Errorf("WatchUnit(%q, %q): %v", tt.path, tt.env, err)
			continue
		}
		for _, line := range []string{tt.exec, tt.envLine} {
			if line != "" && !strings.Contains(string(got), "\n"+line+"\n") {
				t.Errorf("WatchUnit(%q, %q) lacks the line %s:\n%s", tt.path, tt.env, line, got)
			}
		}
	}
}

func TestWatchUnitRejects(t *testing.T) {
	tests := []struct {
		path string
		env  []string
		err  string
	}{
		{"aisan", nil, `aisan binary "aisan": not an absolute path`},
		{"/a\nb", nil, "control character"},
		{"/a", []string{"NOEQUALS"}, `environment entry "NOEQUALS": want KEY=value`},
		{"/a", []string{"=x"}, "want KEY=value"},
		{"/a", []string{"A=b\nExecStartPre=/bin/evil"}, "control character"},
	}
	for _, tt := range tests {
		_, err := WatchUnit(tt.path, tt.env)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("WatchUnit(%q, %q) = %v; want an error containing %q", tt.path, tt.env, err, tt.err)
		}
	}
}

func TestUserUnitDir(t *testing.T) {
	tests := []struct {
		env  func(string) string
		want string
	}{
		{envMap("HOME", "/home/u"), "/home/u/.config/systemd/user"},
		{envMap("HOME", "/home/u", "XDG_CONFIG_HOME", "/cfg"), "/cfg/systemd/user"},
		{envMap("HOME", "/home/u", "XDG_CONFIG_HOME", "relative"), "/home/u/.config/systemd/user"},
		{envMap(), ""},
	}
	for _, tt := range tests {
		got, err := UserUnitDir(tt.env)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("UserUnitDir = %q, %v; want %q", got, err, tt.want)
		}
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "unit.service")
	for _, content := range []string{"one\n", "two\n"} {
		if err := writeAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Errorf("after writing %q: %q, %v", content, b, err)
		}
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

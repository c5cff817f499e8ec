package bindspec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

// TestGoSetting: GOPROXY as go works it out: the variable, else the
// user's go env file ($GOENV, or go/env in the configuration dir; "off"
// for none), else the toolchain's go.env; the last line wins; only a
// regular file is read.
func TestGoSetting(t *testing.T) {
	dir := t.TempDir()
	goroot := filepath.Join(dir, "goroot")
	cfg := filepath.Join(dir, "cfg")
	other := filepath.Join(dir, "other.env")
	for p, content := range map[string]string{
		filepath.Join(goroot, "go.env"): "# the toolchain's\nGOPROXY=https://default.example,direct\nGOTOOLCHAIN=auto\n",
		filepath.Join(cfg, "go", "env"): "GOPROXY=https://first.example\nGOPROXY = https://user.example,off\n",
		other:                           "GOPRIVATE=x\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	facts := Facts{"GOROOT": goroot, "XDG_CONFIG_HOME": cfg}
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"the variable", []string{"GOPROXY=https://env.example"}, "https://env.example"},
		{"the user's go env file", nil, "https://user.example,off"},
		{"GOENV names another file without it", []string{"GOENV=" + other}, "https://default.example,direct"},
		{"GOENV=off", []string{"GOENV=off"}, "https://default.example,direct"},
		{"a FIFO is not read", []string{"GOENV=" + fifo}, "https://default.example,direct"},
		{"an empty variable is unset", []string{"GOPROXY=", "GOENV=off"}, "https://default.example,direct"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := goSetting(jail.Host{Env: tt.env}, facts, "GOPROXY"); got != tt.want {
				t.Errorf("GOPROXY = %q, want %q", got, tt.want)
			}
		})
	}
	if got := goSetting(jail.Host{}, Facts{}, "GOPROXY"); got != "" {
		t.Errorf("no go at all: GOPROXY = %q, want none", got)
	}
}

// TestRealPathAsEvalSymlinks: realPath answers as filepath.EvalSymlinks
// does, for paths that exist, do not, or lead through links.
func TestRealPathAsEvalSymlinks(t *testing.T) {
	d := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(d, "real/sub"), 0o755))
	must(os.WriteFile(filepath.Join(d, "real/sub/f"), nil, 0o644))
	must(os.Symlink("real", filepath.Join(d, "link")))
	must(os.Symlink("link/sub", filepath.Join(d, "chain")))
	must(os.Symlink("nowhere", filepath.Join(d, "dangling")))
	must(os.Symlink("../real/sub/f", filepath.Join(d, "real/up")))
	for _, p := range []string{
		"real", "real/sub/f", "link", "link/sub/f", "chain/f", "real/up",
		"missing", "link/missing", "dangling", "dangling/x", "real/sub/f/x",
	} {
		p = filepath.Join(d, p)
		want, werr := filepath.EvalSymlinks(p)
		got, gerr := realPath(p)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("realPath(%s) = %q, %v; EvalSymlinks: %q, %v", p, got, gerr, want, werr)
		}
	}
}

// TestGOPROXYWithoutCredentials: an address's user and password never
// reach the box; the list's order and separators stay.
func TestGOPROXYWithoutCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://proxy.example,direct":                       "https://proxy.example,direct",
		"https://bot:s3cret@art.example/api/go/v|off":        "https://art.example/api/go/v|off",
		"https://tok@a.example,https://u:p@b.example|direct": "https://a.example,https://b.example|direct",
		"off":                            "off",
		"":                               "",
		"https://u:p@%zz.example,direct": "direct",
		// No scheme: go adds https:// and sends the userinfo.
		"alice:s3cret@proxy.example":      "https://proxy.example",
		"ghp_tok@proxy.example/go,direct": "https://proxy.example/go,direct",
		"proxy.example,u:p@b.example|off": "https://proxy.example,https://b.example|off",
	} {
		if got := withoutUserinfo(in); got != want {
			t.Errorf("withoutUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
	if got := GatherFacts([]string{"GOPROXY=https://bot:s3cret@art.example/go,direct"}, t.TempDir())["GOPROXY"]; got != "https://art.example/go,direct" {
		t.Errorf("the GOPROXY fact: %q, want the address without its token", got)
	}
}

// TestGoBuildSettings: what the user told go with 'go env -w' (build
// tags in GOFLAGS, private modules, the toolchain) is a fact the go spec
// gives the box, with -modcacherw still last in GOFLAGS; a value that
// looks like a secret is none.
func TestGoBuildSettings(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".config")
	os.MkdirAll(filepath.Join(cfg, "go"), 0o755)
	os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOFLAGS=-tags=integration\nGOPRIVATE=corp.example.com/*\nGOTOOLCHAIN=local\nGONOSUMDB=-ldflags=-X=main.key=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\n"), 0o644)
	f := GatherFacts([]string{"PATH=/nonexistent", "XDG_CONFIG_HOME=" + cfg, "GONOPROXY=corp.example.com/internal"}, home)
	for k, want := range map[string]string{"GOFLAGS": "-tags=integration", "GOPRIVATE": "corp.example.com/*", "GOTOOLCHAIN": "local", "GONOPROXY": "corp.example.com/internal", "GONOSUMDB": ""} {
		if f[k] != want {
			t.Errorf("%s = %q, want %q", k, f[k], want)
		}
	}
	s, err := Load(Host{Home: home, Facts: f, System: []string{"/usr"}}, "go")
	if err != nil {
		t.Fatal(err)
	}
	env := s.EnvEntries()
	var flags string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GOFLAGS="); ok {
			flags = v // the last wins in the box
		}
	}
	if flags != "-tags=integration -modcacherw" || !slices.Contains(env, "GOPRIVATE=corp.example.com/*") || slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "GONOSUMDB=") }) {
		t.Errorf("the go spec's env: %q", env)
	}
}

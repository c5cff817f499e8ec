package bindspec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// memHost serves spec files from a map and says every path under /host
// exists (directories) and nothing else does.
func memHost(files map[string]string) Host {
	return Host{
		Home: "/home/u",
		ReadFile: func(p string) ([]byte, error) {
			s, ok := files[p]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return []byte(s), nil
		},
		Stat: func(p string) (fs.FileInfo, error) {
			if p == "/home/u/file" {
				return fakeInfo{dir: false}, nil
			}
			if strings.HasPrefix(p, "/host") || strings.HasPrefix(p, "/home/u") || strings.HasPrefix(p, "/specs") {
				return fakeInfo{dir: true}, nil
			}
			return nil, fs.ErrNotExist
		},
	}
}

type fakeInfo struct{ dir bool }

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return map[bool]fs.FileMode{true: fs.ModeDir}[f.dir] }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		mounts []string // "key value file:line"
		path   []string
		env    []string
		err    string
	}{
		{name: "empty", files: map[string]string{"/specs/a.toml": "# nothing\n"}},
		{name: "keys in order, ~ and relative",
			files:  map[string]string{"/specs/a.toml": "ro = [\n  \"~/bin\",\n  'tools',\n]\nrw = [\"/host/cache\"]\ntmpfs = [\"/scratch\"]\noverlay = [\"/host/pip\"]\npath = [\"~/bin\"]\nenv = [\"A=1\", \"B\"]\nmcp_env = [\"X\"]\nallow_hosts = [\"example.invalid:443\"]\n"},
			mounts: []string{"ro /home/u/bin /specs/a.toml:2", "ro /specs/tools /specs/a.toml:3", "rw /host/cache /specs/a.toml:5", "tmpfs /scratch /specs/a.toml:6", "overlay /host/pip /specs/a.toml:7"},
			path:   []string{"/home/u/bin"}, env: []string{"A=1", "B"}},
		{name: "include first, relative to the includer",
			files: map[string]string{
				"/specs/a.toml":     "ro = [\"/host/a\"]\ninclude = [\"sub/b.toml\"]\n",
				"/specs/sub/b.toml": "ro = [\"x\"]\n",
			},
			mounts: []string{"ro /specs/sub/x /specs/sub/b.toml:1", "ro /host/a /specs/a.toml:1"}},
		{name: "path covered by an include",
			files: map[string]string{
				"/specs/a.toml": "include = [\"b.toml\"]\npath = [\"/host/a/bin\"]\n",
				"/specs/b.toml": "ro = [\"/host/a\"]\n",
			},
			mounts: []string{"ro /host/a /specs/b.toml:1"}, path: []string{"/host/a/bin"}},
		{name: "cycle", files: map[string]string{
			"/specs/a.toml": "include = [\"b.toml\"]\n",
			"/specs/b.toml": "include = [\"a.toml\"]\n",
		}, err: "/specs/b.toml:1: include: include cycle: /specs/a.toml -> /specs/b.toml -> /specs/a.toml"},
		{name: "self include", files: map[string]string{"/specs/a.toml": "include = [\"./a.toml\"]\n"}, err: "include cycle: /specs/a.toml -> /specs/a.toml"},
		{name: "unknown key", files: map[string]string{"/specs/a.toml": "ro = []\n\nbinds = [\"/x\"]\n"}, err: "/specs/a.toml:3: binds: unknown key"},
		{name: "dotted key", files: map[string]string{"/specs/a.toml": "ro.x = [\"/x\"]\n"}, err: "/specs/a.toml:1: ro.x: unknown key"},
		{name: "table", files: map[string]string{"/specs/a.toml": "[ro]\n"}, err: "/specs/a.toml:1: ro: tables are not part"},
		{name: "not an array", files: map[string]string{"/specs/a.toml": "ro = \"/host\"\n"}, err: "/specs/a.toml:1: ro: must be an array of strings"},
		{name: "not a string", files: map[string]string{"/specs/a.toml": "ro = [\n 1,\n]\n"}, err: "/specs/a.toml:2: ro: entries must be strings"},
		{name: "duplicate key", files: map[string]string{"/specs/a.toml": "ro = []\nro = []\n"}, err: "/specs/a.toml:2: ro: listed twice (first on line 1)"},
		{name: "path not covered", files: map[string]string{"/specs/a.toml": "ro = [\"/host/a\"]\npath = [\"/host/ab\"]\n"}, err: "/specs/a.toml:2: path: /host/ab lies under no mount"},
		{name: "missing source", files: map[string]string{"/specs/a.toml": "\nrw = [\"/nope\"]\n"}, err: "/specs/a.toml:2: rw: source /nope: file does not exist"},
		{name: "overlay of a file", files: map[string]string{"/specs/a.toml": "overlay = [\"~/file\"]\n"}, err: "overlay source /home/u/file is not a directory"},
		{name: "twice across keys", files: map[string]string{"/specs/a.toml": "ro = [\"/host/a\"]\nrw = [\"/host/a/\"]\n"}, err: "/specs/a.toml:2: rw: /host/a is already listed under ro at /specs/a.toml:1"},
		{name: "tilde user", files: map[string]string{"/specs/a.toml": "ro = [\"~root/x\"]\n"}, err: "only ~ and ~/"},
		{name: "empty path", files: map[string]string{"/specs/a.toml": "ro = [\"\"]\n"}, err: "/specs/a.toml:1: ro: empty path"},
		{name: "bad env", files: map[string]string{"/specs/a.toml": "env = [\"1X=2\"]\n"}, err: "/specs/a.toml:1: env: \"1X=2\" is not NAME"},
		{name: "mcp_env with a value", files: map[string]string{"/specs/a.toml": "mcp_env = [\n\"GITHUB_TOKEN=x\",\n]\n"}, err: "/specs/a.toml:2: mcp_env: GITHUB_TOKEN=…: give the variable's name alone"},
		{name: "a credential in mcp_env", files: map[string]string{"/specs/a.toml": "mcp_env = [\"sk-ant-api03-abcdefghijklmnop\"]\n"}, err: "/specs/a.toml:1: mcp_env: a value that looks like a credential is not a variable NAME"},
		{name: "a credential with = in mcp_env", files: map[string]string{"/specs/a.toml": "mcp_env = [\"postgres://app:hunter2@db/prod?sslmode=disable\"]\n"}, err: "/specs/a.toml:1: mcp_env: a value that looks like a credential is not a variable NAME"},
		{name: "a padded key in mcp_env", files: map[string]string{"/specs/a.toml": "mcp_env = [\"dGhpcyBpcyBhIHNlY3JldCBrZXkgZm9yIHRlc3Rpbmc=\"]\n"}, err: "/specs/a.toml:1: mcp_env: a value that looks like a credential is not a variable NAME"},
		{name: "empty mcp_env", files: map[string]string{"/specs/a.toml": "mcp_env = [\"\"]\n"}, err: "/specs/a.toml:1: mcp_env: \"\" is not a variable NAME"},
		{name: "bad toml", files: map[string]string{"/specs/a.toml": "ro = [\n\"/a\"\n\"/b\"]\n"}, err: "/specs/a.toml:3: not valid TOML"},
		{name: "missing include", files: map[string]string{"/specs/a.toml": "include = [\"gone.toml\"]\n"}, err: "/specs/gone.toml: reading the bind spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(memHost(tc.files), "/specs/a.toml")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				var be *Error
				if !errors.As(err, &be) || be.File == "" {
					t.Fatalf("error %v is not a *Error naming a file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var mounts []string
			for _, m := range s.Mounts {
				mounts = append(mounts, m.Key+" "+m.Value+" "+m.Where())
			}
			if d := cmp.Diff(tc.mounts, mounts); d != "" {
				t.Errorf("mounts (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.path, s.PathDirs()); d != "" {
				t.Errorf("path (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.env, s.EnvEntries()); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
		})
	}
}

func TestJailMountsSayWhere(t *testing.T) {
	s, err := Load(memHost(map[string]string{"/specs/a.toml": "ro = [\"/host/a\"]\nrw = [\"/host/b\"]\ntmpfs = [\"/t\"]\noverlay = [\"/host/c\"]\n"}), "/specs/a.toml")
	if err != nil {
		t.Fatal(err)
	}
	ms := s.JailMounts()
	if len(ms) != 4 || ms[0].Kind.String() != "ro-bind" || ms[1].Kind.String() != "bind" || ms[2].Kind.String() != "tmpfs" || ms[2].Src != "" || ms[3].Kind.String() != "overlay" {
		t.Fatalf("mounts %+v", ms)
	}
	if ms[1].Why != "bind spec /specs/a.toml:2" {
		t.Fatalf("why %q", ms[1].Why)
	}
}

// TestReadRefusesFIFO: a spec named by mistake that is a FIFO is refused
// at once instead of hanging the launch.
func TestReadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "spec.toml")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(Host{Home: dir}, fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO spec: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO spec hung")
	}
	real := filepath.Join(dir, "real.toml")
	os.WriteFile(real, []byte("ro = [\".\"]\n"), 0o600)
	s, err := Load(Host{Home: dir}, real)
	if err != nil || len(s.Mounts) != 1 || s.Mounts[0].Value != dir {
		t.Fatalf("real file: %+v %v", s, err)
	}
}

// FuzzLoad: any bytes as a spec (including one that includes itself)
// load or fail with a positioned error; nothing panics.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"", "ro = [\"/host\"]\n", "include = [\"a.toml\"]\n", "include = [\"b.toml\"]\n", "[t]\nx=1\n",
		"ro = [\n'~/x',\n]\npath = [\"~/x/bin\"]\nenv=[\"A=1\"]\n", "ro = \"\"\n", "ro = [1, {a=1}]\n",
		"a.b.c = 1\n", "ro = [\"\\u0000\"]\n", "ro=[\"x\"]\nro=[\"y\"]\n", "= 1", "ro = [\n",
		"mcp_env = [\"K=V\"]\nallow_hosts = [\"h\"]\n", "tmpfs = [\"~\"]\noverlay=[\"/host\"]\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		h := memHost(map[string]string{"/specs/a.toml": doc, "/specs/b.toml": "include = [\"a.toml\"]\nro = [\"/host/b\"]\n"})
		s, err := Load(h, "/specs/a.toml")
		if err != nil {
			var be *Error
			if !errors.As(err, &be) || be.File == "" {
				t.Fatalf("error without a file: %v", err)
			}
			return
		}
		for _, m := range s.Mounts {
			if !filepath.IsAbs(m.Value) || m.Line < 1 {
				t.Fatalf("mount entry %+v", m)
			}
		}
	})
}

// TestREADMEExample: the bind spec the README shows loads on a host
// where its paths exist, with every toolchain fact and a usual PATH, and
// nothing in it makes what the host runs writable.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\nA bind spec says what else of the host a box gets.")
	_, rest, ok2 := strings.Cut(rest, "```toml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README's bind spec example is gone")
	}
	h := memHost(map[string]string{"/specs/a.toml": example, "/specs/common.toml": ""})
	h.Facts = GatherFacts([]string{"PATH=/home/u/.local/bin:/home/u/.cargo/bin:/usr/bin"}, "/home/u")
	h.PATH = []string{"/home/u/.local/bin", "/home/u/.cargo/bin", "/usr/bin"}
	h.RealPath = func(p string) (string, error) { return p, nil }
	s, err := Load(h, "/specs/a.toml")
	if err != nil {
		t.Fatalf("the README's example: %v", err)
	}
	for _, m := range s.Mounts {
		if m.Key == KeyRWHostExec {
			t.Errorf("the README's example writes what the host runs: %s", m.Where())
		}
	}
	// Its rw entry pointed at the host's build cache once: that must fail.
	h2 := h
	h2.ReadFile = func(string) ([]byte, error) { return []byte("rw = [\"~/.cache/go-build\"]\n"), nil }
	var he *HostExecError
	if _, err := Load(h2, "/specs/old.toml"); !errors.As(err, &he) {
		t.Errorf("rw of the host's Go build cache: %v", err)
	}
}

// TestLoadHomeName: a spec named "~/…" (from the configuration or a
// variable, which no shell expanded) is the file in the home.
func TestLoadHomeName(t *testing.T) {
	s, err := Load(memHost(map[string]string{"/home/u/specs/db.toml": "env = [\"DB=1\"]\n"}), "~/specs/db.toml")
	if err != nil || len(s.Env) != 1 || s.Files[0] != "~/specs/db.toml" {
		t.Fatalf("~/specs/db.toml: %v %+v", err, s)
	}
}

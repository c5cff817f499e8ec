package bindspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// factHost is a host whose existing paths are exactly exist (and what
// lies under them), with facts and a PATH.
func factHost(facts Facts, exist ...string) Host {
	return Host{
		Home:  "/home/u",
		Facts: facts,
		PATH:  []string{"/home/u/.nvm/versions/node/v22/bin", "/usr/bin"},
		ReadFile: func(p string) ([]byte, error) {
			return nil, fs.ErrNotExist
		},
		Stat: func(p string) (fs.FileInfo, error) {
			for _, e := range exist {
				if within(p, e) {
					return fakeInfo{dir: true}, nil
				}
			}
			return nil, fs.ErrNotExist
		},
		RealPath: func(p string) (string, error) { return p, nil },
		System:   []string{"/usr", "/bin", "/etc"},
	}
}

// userFacts are the facts of a user with Go in /usr/local/go, node from
// nvm, pyenv and rustup, and no uv.
var userFacts = Facts{
	"HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/.config", "XDG_CACHE_HOME": "/home/u/.cache", "XDG_DATA_HOME": "/home/u/.local/share",
	"GOROOT": "/usr/local/go", "GOPATH": "/home/u/go", "GOBIN": "/home/u/go/bin", "GOMODCACHE": "/home/u/go/pkg/mod", "GOCACHE": "/home/u/.cache/go-build",
	"GOPROXY": "https://goproxy.example,direct",
	"GOFLAGS": "-tags=integration", "GOPRIVATE": "corp.example.com/*", "GOTOOLCHAIN": "local",
	"NODE_HOME": "/home/u/.nvm/versions/node/v22", "NVM_DIR": "/home/u/.nvm", "FNM_DIR": "/home/u/.local/share/fnm", "NPM_CACHE": "/home/u/.npm",
	"PYENV_ROOT": "/home/u/.pyenv", "UV_DIR": "", "UV_PYTHON": "/home/u/.local/share/uv/python", "UV_CACHE": "/home/u/.cache/uv", "PIP_CACHE": "/home/u/.cache/pip",
	"RUSTUP_HOME": "/home/u/.rustup", "CARGO_HOME": "/home/u/.cargo",
}

// TestShippedSpecs: each shipped spec, on a host that has some of what it
// names, binds what exists, skips the rest (saying why), and never names
// a host cache read-write.
func TestShippedSpecs(t *testing.T) {
	h := factHost(userFacts, "/usr", "/home/u/go/bin", "/home/u/go/pkg/mod", "/home/u/.nvm/versions/node/v22", "/home/u/.pyenv", "/home/u/.rustup", "/home/u/.cargo")
	for _, tc := range []struct {
		name                      string
		mounts, path, caches, env []string
		skipped                   []string
		provides                  string
	}{
		{name: "go",
			mounts: []string{"ro /home/u/go/bin", "ro /home/u/go/pkg/mod/cache/download"},
			path:   []string{"/usr/local/go/bin", "/home/u/go/bin"},
			caches: []string{"/home/u/.cache/go-build", "/home/u/.cache/go-mod"},
			env: []string{"GOCACHE=/home/u/.cache/go-build", "GOMODCACHE=/home/u/.cache/go-mod", "GOFLAGS=-modcacherw", "GOFLAGS=-tags=integration -modcacherw",
				"GOPROXY=file:///home/u/go/pkg/mod/cache/download,https://goproxy.example,direct", "GOPRIVATE=corp.example.com/*", "GOTOOLCHAIN=local"},
			skipped: []string{"ro /usr/local/go: every box shows it already", "ro /home/u/sdk: it does not exist here",
				"env GONOPROXY={GONOPROXY}: this host has no GONOPROXY", "env GONOSUMDB={GONOSUMDB}: this host has no GONOSUMDB"},
			provides: "go"},
		{name: "node",
			mounts:  []string{"ro /home/u/.nvm/versions/node/v22"},
			path:    []string{"/home/u/.nvm/versions/node/v22/bin"},
			caches:  []string{"/home/u/.npm", "/home/u/.cache/node/corepack"},
			env:     []string{"npm_config_cache=/home/u/.npm", "COREPACK_HOME=/home/u/.cache/node/corepack"},
			skipped: nil, provides: "npm"},
		{name: "python",
			mounts:   []string{"ro /home/u/.pyenv"},
			path:     []string{"/home/u/.pyenv/shims", "/home/u/.pyenv/bin"},
			caches:   []string{"/home/u/.cache/pip", "/home/u/.cache/uv"},
			env:      []string{"PIP_CACHE_DIR=/home/u/.cache/pip", "UV_CACHE_DIR=/home/u/.cache/uv", "PYENV_ROOT=/home/u/.pyenv"},
			skipped:  []string{"ro {UV_DIR}/uv: this host has no UV_DIR", "ro {UV_DIR}/uvx: this host has no UV_DIR", "ro {UV_PYTHON}: this host has no UV_PYTHON (/home/u/.local/share/uv/python does not exist)", "path {UV_DIR}: this host has no UV_DIR", "env UV_PYTHON_INSTALL_DIR={UV_PYTHON}: this host has no UV_PYTHON (/home/u/.local/share/uv/python does not exist)"},
			provides: "pip"},
		{name: "rust",
			mounts:   []string{"ro /home/u/.rustup", "ro /home/u/.cargo/bin"},
			path:     []string{"/home/u/.cargo/bin"},
			caches:   []string{"/home/u/.cargo/registry", "/home/u/.cargo/git"},
			env:      []string{"RUSTUP_HOME=/home/u/.rustup", "CARGO_HOME=/home/u/.cargo"},
			provides: "cargo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(h, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			var mounts, skipped []string
			for _, m := range s.Mounts {
				mounts = append(mounts, m.Key+" "+m.Value)
				if m.Key != KeyRO {
					t.Errorf("%s: a shipped spec binds only read-only, not %s", m.Where(), m.Key)
				}
			}
			for _, sk := range s.Skipped {
				skipped = append(skipped, sk.Key+" "+sk.Value+": "+sk.Why)
			}
			for _, c := range []struct {
				what      string
				want, got []string
			}{{"mounts", tc.mounts, mounts}, {"path", tc.path, s.PathDirs()}, {"caches", tc.caches, s.CachePaths()}, {"env", tc.env, s.EnvEntries()}, {"skipped", tc.skipped, skipped}} {
				if d := cmp.Diff(c.want, c.got); d != "" {
					t.Errorf("%s (-want +got):\n%s", c.what, d)
				}
			}
			if ShippedProvides()[tc.provides] != tc.name {
				t.Errorf("ShippedProvides()[%q] = %q", tc.provides, ShippedProvides()[tc.provides])
			}
			if s.Files[0] != "aisan:"+tc.name+".toml" {
				t.Errorf("files %q", s.Files)
			}
		})
	}
}

// TestShippedOnAnEmptyHost: a host with none of the toolchains gets no
// mount and no path from any shipped spec, and no error.
func TestShippedOnAnEmptyHost(t *testing.T) {
	h := factHost(Facts{"HOME": "/home/u", "GOPATH": "/home/u/go", "GOBIN": "/home/u/go/bin", "GOMODCACHE": "/home/u/go/pkg/mod"}, "/usr")
	s, err := Load(h, Shipped()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Mounts) != 0 || len(s.Path) != 0 {
		t.Fatalf("mounts %+v path %+v", s.Mounts, s.Path)
	}
	if len(s.Caches) == 0 {
		t.Fatal("no caches: the box's own caches do not depend on the host")
	}
}

// TestShippedNames: names and files are told apart; a bare word that is
// neither says what is shipped.
func TestShippedNames(t *testing.T) {
	if got := Shipped(); !slices.Equal(got, []string{"go", "node", "python", "rust"}) {
		t.Fatalf("Shipped() = %q", got)
	}
	h := factHost(userFacts, "/usr")
	_, err := Load(h, "gradle")
	if err == nil || !strings.Contains(err.Error(), "aisan ships no spec by that name (it ships go, node, python, rust)") {
		t.Fatalf("unknown name: %v", err)
	}
	_, err = Load(h, "go.toml")
	if err == nil || strings.Contains(err.Error(), "ships no spec") {
		t.Fatalf("go.toml is a file: %v", err)
	}
}

// TestHostExecTable: an rw entry that is, holds or lies in what the host
// runs is refused with its line and what the host runs there; rw_host_exec
// lets it through; ro and cache are not its business.
func TestHostExecTable(t *testing.T) {
	base := Host{
		Home: "/home/u", Facts: userFacts, PATH: []string{"/opt/tools/bin", "/usr/bin"},
		Stat: func(string) (fs.FileInfo, error) { return fakeInfo{dir: true}, nil },
		RealPath: func(p string) (string, error) {
			if p == "/home/u/.bashrc" {
				return "/home/u/dotfiles/bashrc", nil
			}
			return p, nil
		},
	}
	for _, tc := range []struct {
		spec, err string
	}{
		{spec: "rw = [\"~/.bashrc\"]", err: "/specs/a.toml:2: rw: /home/u/.bashrc would let a box write what the host runs: it is /home/u/.bashrc (bash runs it)"},
		{spec: "rw = [\"~/.config\"]", err: "it is /home/u/.config (it holds the startup files"},
		{spec: "rw = [\"~/.config/fish/functions\"]", err: "lies inside /home/u/.config/fish (fish runs it)"},
		{spec: "rw = [\"~/.config/myapp\"]"},
		{spec: "rw = [\"~\"]", err: "it is /home/u (your home"},
		{spec: "rw = [\"~/.cache\"]", err: "it holds /home/u/.cache/go-build (go links"},
		{spec: "rw = [\"~/.cache/go-build\"]", err: "it is /home/u/.cache/go-build"},
		{spec: "rw = [\"~/go/pkg/mod/cache\"]", err: "lies inside /home/u/go/pkg/mod"},
		{spec: "rw = [\"~/.cargo/registry\"]", err: "lies inside /home/u/.cargo"},
		{spec: "rw = [\"~/.npm\"]", err: "npm installs"},
		{spec: "rw = [\"~/.local/bin\"]", err: "commands on your PATH"},
		{spec: "rw = [\"/opt/tools\"]", err: "it holds /opt/tools/bin (a directory on your PATH)"},
		{spec: "rw = [\"~/.config/systemd/user\"]", err: "systemd user units"},
		{spec: "rw = [\"~/.config/git\"]", err: "git's global config"},
		{spec: "rw = [\"~/.config/aisan\"]", err: "aisan's configuration"},
		{spec: "rw = [\"~/dotfiles\"]", err: "it holds /home/u/.bashrc"},
		{spec: "rw = [\"~/work/data\"]"},
		{spec: "rw_host_exec = [\"~/.bashrc\"]"},
		{spec: "rw_host_exec = [\"~/.config\"]"},
		{spec: "ro = [\"~/.config\"]"},
		{spec: "cache = [\"~/.cache/go-build\"]"},
		{spec: "tmpfs = [\"~/.npm\"]"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			h := base
			h.ReadFile = func(string) ([]byte, error) { return []byte("# a spec\n" + tc.spec + "\n"), nil }
			s, err := Load(h, "/specs/a.toml")
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q (spec %+v)", err, tc.err, s)
			}
			var he *HostExecError
			var be *Error
			if !errors.As(err, &he) || !errors.As(err, &be) || be.Line != 2 || len(be.Hints()) == 0 {
				t.Fatalf("error %#v: not a positioned host-exec refusal with hints", err)
			}
		})
	}
	h := base
	h.ReadFile = func(string) ([]byte, error) { return []byte("rw_host_exec = [\"~/.bashrc\"]\n"), nil }
	s, err := Load(h, "/specs/a.toml")
	if err != nil || len(s.JailMounts()) != 1 || s.JailMounts()[0].Kind.String() != "bind" {
		t.Fatalf("rw_host_exec: %+v %v", s, err)
	}
}

// TestFactsInUserSpecs: a user spec may name facts; one that is no fact,
// or one this host lacks, is an error on its line.
func TestFactsInUserSpecs(t *testing.T) {
	for _, tc := range []struct{ spec, err, mount string }{
		{spec: "ro = [\"{GOROOT}/src\"]", mount: "/usr/local/go/src"},
		{spec: "ro = [\"{GOROOTS}\"]", err: "/specs/a.toml:1: ro: {GOROOTS} is not a fact aisan knows; the facts are HOME, "},
		{spec: "ro = [\"{UV_DIR}\"]", err: "/specs/a.toml:1: ro: this host has no {UV_DIR}"},
		{spec: "cache = [\"/var/cache/x\"]", err: "a cache is a directory inside the box's home"},
		{spec: "cache = [\"~\"]", err: "a cache is a directory inside the box's home"},
		{spec: "provides = [\"a b\"]", err: "is not a command name"},
		{spec: "ro = [\"/opt/x\"]\npath = [\"/usr/local/x/bin\"]", mount: "/opt/x"},
	} {
		h := factHost(userFacts, "/usr", "/opt")
		h.ReadFile = func(string) ([]byte, error) { return []byte(tc.spec + "\n"), nil }
		s, err := Load(h, "/specs/a.toml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || len(s.Mounts) != 1 || s.Mounts[0].Value != tc.mount {
			t.Errorf("%s: %+v %v", tc.spec, s, err)
		}
	}
}

// TestGatherFacts reads facts from a real directory tree: a variable
// wins, a command is followed through its links, and a command that
// resolves to the home (a shim in ~/bin) gives no fact.
func TestGatherFacts(t *testing.T) {
	home := t.TempDir()
	goroot := filepath.Join(home, "sdk", "go1.99")
	os.MkdirAll(filepath.Join(goroot, "bin"), 0o755)
	os.WriteFile(filepath.Join(goroot, "bin", "go"), []byte("#!/bin/sh\n"), 0o755)
	bin := filepath.Join(home, "bin")
	os.MkdirAll(bin, 0o755)
	os.Symlink(filepath.Join(goroot, "bin", "go"), filepath.Join(bin, "go"))
	os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755)
	env := []string{"PATH=relative:" + bin + ":/usr/bin", "GOPATH=" + filepath.Join(home, "gp") + ":/other", "XDG_CACHE_HOME=" + filepath.Join(home, "c")}
	f := GatherFacts(env, home)
	want := map[string]string{
		"HOME": home, "GOROOT": goroot, "GOPATH": filepath.Join(home, "gp"), "GOBIN": filepath.Join(home, "gp", "bin"),
		"GOMODCACHE": filepath.Join(home, "gp", "pkg", "mod"), "GOCACHE": filepath.Join(home, "c", "go-build"),
		"NODE_HOME": "", "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "CARGO_HOME": filepath.Join(home, ".cargo"),
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %q, want %q", k, f[k], v)
		}
	}
	if len(f) != len(factRules) {
		t.Errorf("%d facts for %d rules: %v", len(f), len(factRules), f)
	}
	if got := fmt.Sprint(FactNames()[:2]); got != "[HOME XDG_CONFIG_HOME]" {
		t.Errorf("FactNames starts %s", got)
	}
}

// TestGatherFactsFnm: fnm puts a per-shell link to the version's
// installation on PATH; NODE_HOME is the installation it leads to, which
// lasts beyond the shell.
func TestGatherFactsFnm(t *testing.T) {
	home := t.TempDir()
	inst := filepath.Join(home, ".local", "share", "fnm", "node-versions", "v22.1.0", "installation")
	os.MkdirAll(filepath.Join(inst, "bin"), 0o755)
	os.WriteFile(filepath.Join(inst, "bin", "node"), []byte("#!/bin/sh\n"), 0o755)
	shells := filepath.Join(home, ".local", "state", "fnm_multishells")
	os.MkdirAll(shells, 0o755)
	link := filepath.Join(shells, "12345_1700000000000")
	if err := os.Symlink(inst, link); err != nil {
		t.Fatal(err)
	}
	f := GatherFacts([]string{"PATH=" + filepath.Join(link, "bin") + ":/usr/bin"}, home)
	if f["NODE_HOME"] != inst {
		t.Errorf("NODE_HOME = %q, want %q", f["NODE_HOME"], inst)
	}
}

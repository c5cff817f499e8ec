package strictbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
)

// toolFacts are facts for a box in /w/r whose host has nvm's node first on
// PATH, Go under /usr/local/go and a system node.
func toolFacts() (jail.Host, facts) {
	h := jail.Host{Cwd: "/w/r/sub", Home: "/h", AisanHome: "/h/.aisan", Env: []string{"PATH=/h/.nvm/v99/bin:/usr/local/go/bin:/usr/bin"}}
	f := facts{
		repo: "/w/r", user: "u", stateBase: "r-1-run",
		hostPath: []string{"/h/.nvm/v99/bin", "/usr/local/go/bin", "/usr/bin"},
		found: found{
			"node": {{dir: "/h/.nvm/v99/bin", real: "/h/.nvm/v99/bin/node"}, {dir: "/usr/bin", real: "/usr/bin/node"}},
			"go":   {{dir: "/usr/local/go/bin", real: "/usr/local/go/bin/go"}},
			"make": {{dir: "/usr/bin", real: "/usr/bin/make"}},
		},
	}
	return h, f
}

// TestCommandInTheBoxPath: a command is found on the box's PATH (with the
// host's order kept), not the host's; one the box lacks is refused with
// where the host has it and the spec that brings it.
func TestCommandInTheBoxPath(t *testing.T) {
	h, f := toolFacts()
	for _, tc := range []struct {
		name, cmd string
		edit      func(*Options, *facts)
		err       string
		hint      string
	}{
		{name: "go under /usr is shown", cmd: "go"},
		{name: "a system command", cmd: "make"},
		{name: "nvm's node is not shown", cmd: "node"},
		{name: "missing everywhere", cmd: "cargo", err: `cannot run "cargo": not found in PATH`, hint: "--binds rust brings cargo where this host has it installed"},
		{name: "no spec brings it", cmd: "mytool", err: `cannot run "mytool"`,
			hint: "the box's PATH is /usr/local/go/bin:/usr/bin:/usr/local/bin:/bin; 'aisan explain run --strict' shows what of yours it lacks"},
		{name: "a path needs no lookup", cmd: "./run.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, f := h, f
			f.found = cloneFound(f.found)
			o := Options{}
			if tc.edit != nil {
				tc.edit(&o, &f)
			}
			so, _ := decide(jail.KindRun, []string{tc.cmd}, h, "r-1-run", o, f)
			err := checkCommand(jail.KindRun, tc.cmd, so, f, h.Cwd, o.BindFiles)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var nf *jail.NotFoundError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &nf) || nf.Code() != 127 {
				t.Fatalf("error %v, want %q (127)", err, tc.err)
			}
			var hinted interface{ Hints() []string }
			errors.As(err, &hinted)
			if !slices.Contains(hinted.Hints(), tc.hint) {
				t.Fatalf("hints %q, want %q", hinted.Hints(), tc.hint)
			}
		})
	}
}

func cloneFound(f found) found {
	out := found{}
	for k, v := range f {
		out[k] = slices.Clone(v)
	}
	return out
}

// TestSwapsNamed: nvm's node first on the host's PATH but hidden in the
// box would silently become /usr/bin/node: the launch names it, with the
// spec that brings the host's; once a spec shows it, no swap is left.
func TestSwapsNamed(t *testing.T) {
	h, f := toolFacts()
	so, _ := decide(jail.KindRun, []string{"sh"}, h, "r-1-run", Options{}, f)
	notes := swapNotes(swaps(so, f), nil)
	want := "in the box, node is /usr/bin/node, not /h/.nvm/v99/bin/node as on your PATH; --binds node brings yours"
	if len(notes) != 1 || notes[0] != want {
		t.Fatalf("notes %q, want %q", notes, want)
	}
	o := Options{Binds: []jail.Mount{{Kind: jail.ROBind, Src: "/h/.nvm/v99", Dst: "/h/.nvm/v99"}}}
	f.binds = o.Binds
	so, _ = decide(jail.KindRun, []string{"sh"}, h, "r-1-run", o, f)
	if ss := swaps(so, f); len(ss) != 0 {
		t.Fatalf("swaps with nvm's node shown: %+v", ss)
	}
	// With the node spec loaded, a swap left (another node of a spec's
	// path first) is named without suggesting the spec again.
	if n := swapNotes([]swap{{name: "node", host: "/a/node", box: "/b/node"}}, []string{"aisan:node.toml"}); n[0] != "in the box, node is /b/node, not /a/node as on your PATH" {
		t.Fatalf("note %q", n)
	}
	if got := so.PATH(); !strings.HasPrefix(got, "/h/.nvm/v99/bin:/usr/local/go/bin:") {
		t.Fatalf("PATH %s does not keep the host's order", got)
	}
}

// TestRelativeCommands: ./run.sh and .venv/bin/python resolve against the
// working directory; what lies in the repository needs no bind (a
// read-only bind over it would make it read-only), what lies elsewhere is
// bound.
func TestRelativeCommands(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".venv", "bin"), 0o755)
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("/usr/bin/env", filepath.Join(repo, ".venv", "bin", "python"))
	os.WriteFile(filepath.Join(repo, "notexec"), nil, 0o644)
	tools := t.TempDir()
	os.WriteFile(filepath.Join(tools, "t"), []byte("#!/bin/sh\n"), 0o755)
	h := jail.Host{Cwd: repo, Home: "/h", AisanHome: "/h/.aisan", Env: []string{"PATH=/usr/bin"}}
	for _, tc := range []struct {
		cmd   string
		tools []string
		err   string
	}{
		{cmd: "./run.sh"}, {cmd: "run.sh", err: "not found in PATH"}, {cmd: ".venv/bin/python"},
		{cmd: filepath.Join(tools, "t"), tools: []string{tools}},
		{cmd: "./gone", err: `cannot run "./gone": no such file or directory`},
		{cmd: "./notexec", err: "permission denied"},
	} {
		f := facts{repo: repo}
		err := gatherCommand(&f, jail.KindRun, tc.cmd, h, Options{})
		var so jail.StrictOptions
		if err == nil {
			so, _ = decide(jail.KindRun, []string{tc.cmd}, h, "r-1-run", Options{}, f)
			err = checkCommand(jail.KindRun, tc.cmd, so, f, h.Cwd, nil)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.cmd, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		if !slices.Equal(so.ToolDirs, tc.tools) {
			t.Errorf("%s: tool dirs %q, want %q", tc.cmd, so.ToolDirs, tc.tools)
		}
		for _, m := range jail.Strict(so).Mounts {
			if !filepath.IsAbs(m.Dst) {
				t.Errorf("%s: mount %+v is not absolute", tc.cmd, m)
			}
		}
	}
}

// TestCacheMounts: each cache is a directory in aisan's state, per
// repository, mirroring its path in the home; the box never gets the
// host's.
func TestCacheMounts(t *testing.T) {
	h, f := toolFacts()
	f.cacheBase = "r-1234"
	o := Options{Caches: []Cache{{Path: "/h/.cache/go-build", Why: "aisan:go.toml:15"}, {Path: "/h/.npm", Why: "aisan:node.toml:10"}}}
	so, _ := decide(jail.KindRun, []string{"go"}, h, "r-1-run", o, f)
	var got []string
	for _, m := range so.Binds {
		got = append(got, m.Kind.String()+" "+m.Src+" "+m.Dst)
	}
	want := []string{"bind /h/.aisan/cache/r-1234/.cache/go-build /h/.cache/go-build", "bind /h/.aisan/cache/r-1234/.npm /h/.npm"}
	if !slices.Equal(got, want) {
		t.Fatalf("binds %q, want %q", got, want)
	}
	spec := jail.Strict(so)
	for _, m := range spec.Mounts {
		if m.Kind == jail.ROBind && m.Dst == h.AisanHome {
			t.Fatalf("the caches made aisan's state read-only again over the home: %+v", spec.Mounts)
		}
	}
}

// TestPathCommandKeepsPATH: a command named by its path (.venv/bin/python,
// ./run.sh) does not put its directory on the box's PATH: on the host the
// shell does not either, so the venv's pip would shadow the host's for
// what the command starts, and the launch would warn of a swap that no
// spec undoes. A command looked up on PATH keeps its directory there.
func TestPathCommandKeepsPATH(t *testing.T) {
	repo := t.TempDir()
	venv := filepath.Join(repo, ".venv", "bin")
	os.MkdirAll(venv, 0o755)
	os.Symlink("/usr/bin/env", filepath.Join(venv, "python"))
	os.WriteFile(filepath.Join(venv, "pip"), []byte("#!"+filepath.Join(venv, "python")+"\n"), 0o755)
	os.WriteFile(filepath.Join(venv, "pytest"), []byte("#!"+filepath.Join(venv, "python")+"\n"), 0o755)
	h := jail.Host{Cwd: repo, Home: "/h", AisanHome: "/h/.aisan", Env: []string{"PATH=/usr/bin:/bin"}}
	for _, cmd := range []string{".venv/bin/python", ".venv/bin/pytest", filepath.Join(venv, "pytest")} {
		f := facts{repo: repo}
		if err := gatherCommand(&f, jail.KindRun, cmd, h, Options{}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		so, _ := decide(jail.KindRun, []string{cmd}, h, "r-1-run", Options{}, f)
		if p := so.PATH(); strings.Contains(p, venv) {
			t.Errorf("%s: the box's PATH %s holds the venv's bin", cmd, p)
		}
		for _, s := range swaps(so, f) {
			if within(s.box, venv) {
				t.Errorf("%s: swap named: %+v", cmd, s)
			}
		}
	}
	// Looked up on PATH, the directory is on the box's PATH.
	f := facts{repo: repo}
	h.Env = []string{"PATH=" + venv + ":/usr/bin"}
	if err := gatherCommand(&f, jail.KindRun, "pytest", h, Options{}); err != nil {
		t.Fatal(err)
	}
	so, _ := decide(jail.KindRun, []string{"pytest"}, h, "r-1-run", Options{}, f)
	if p := so.PATH(); !strings.HasPrefix(p, venv+":") {
		t.Errorf("pytest from PATH: the box's PATH %s lacks %s first", p, venv)
	}
}

// TestSpecNote: a run of a command a shipped spec provides, without that
// spec, names it; with the spec, by path, or for an agent, nothing.
func TestSpecNote(t *testing.T) {
	goSpec := bindspec.ShippedFile("go")
	for _, tt := range []struct {
		kind  jail.Kind
		name  string
		files []string
		want  string
	}{
		{jail.KindRun, "go", nil, "--binds go brings them"},
		{jail.KindRun, "npm", []string{goSpec}, "--binds node brings them"},
		{jail.KindRun, "go", []string{goSpec}, ""},
		{jail.KindRun, "./go", nil, ""},
		{jail.KindRun, "make", nil, ""},
		{jail.KindClaude, "claude", nil, ""},
	} {
		got := strings.Join(specNote(tt.kind, tt.name, tt.files), "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s %q: %q, want %q", tt.kind, tt.name, tt.files, got, tt.want)
		}
	}
}

// TestProjectBinHints: a command the box's PATH lacks that the project
// has in its virtualenv or node_modules (found from the working
// directory up to the repository) is named with the path that runs it;
// a spec already loaded is not offered again.
func TestProjectBinHints(t *testing.T) {
	repo := t.TempDir()
	sub := filepath.Join(repo, "packages", "web")
	os.MkdirAll(filepath.Join(repo, ".venv", "bin"), 0o755)
	os.MkdirAll(filepath.Join(sub, "node_modules", ".bin"), 0o755)
	os.WriteFile(filepath.Join(repo, ".venv", "bin", "pytest"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("/usr/bin/env", filepath.Join(repo, ".venv", "bin", "python"))
	os.WriteFile(filepath.Join(sub, "node_modules", ".bin", "vitest"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(repo, ".venv", "bin", "notexec"), nil, 0o644)
	for _, tc := range []struct {
		cmd, cwd string
		files    []string
		want     string
		not      string
	}{
		{cmd: "pytest", cwd: repo, want: "this project's virtualenv has pytest: run it by its path, .venv/bin/pytest"},
		{cmd: "pytest", cwd: sub, want: "this project's virtualenv has pytest: run it by its path, ../../.venv/bin/pytest"},
		{cmd: "python", cwd: repo, files: []string{bindspec.ShippedFile("python")},
			want: "this project's virtualenv has python: run it by its path, .venv/bin/python", not: "--binds python"},
		{cmd: "python", cwd: repo, want: "--binds python brings python where this host has it installed"},
		{cmd: "vitest", cwd: sub, want: "this project's node_modules has vitest: run it by its path, node_modules/.bin/vitest, or npx vitest"},
		{cmd: "vitest", cwd: repo, not: "vitest: run it"},
		{cmd: "notexec", cwd: repo, not: "run it by its path"},
	} {
		f := facts{repo: repo, found: found{}}
		h := jail.Host{Cwd: tc.cwd, Home: "/h", AisanHome: "/h/.aisan", Env: []string{"PATH=/usr/bin"}}
		so, _ := decide(jail.KindRun, []string{tc.cmd}, h, "r-1-run", Options{}, f)
		err := checkCommand(jail.KindRun, tc.cmd, so, f, tc.cwd, tc.files)
		var hinted interface{ Hints() []string }
		if !errors.As(err, &hinted) {
			t.Fatalf("%s in %s: error %v", tc.cmd, tc.cwd, err)
		}
		hints := strings.Join(hinted.Hints(), "\n")
		if tc.want != "" && !slices.Contains(hinted.Hints(), tc.want) {
			t.Errorf("%s in %s: hints %q, want %q", tc.cmd, tc.cwd, hints, tc.want)
		}
		if tc.not != "" && strings.Contains(hints, tc.not) {
			t.Errorf("%s in %s: hints %q, do not want %q", tc.cmd, tc.cwd, hints, tc.not)
		}
	}
}

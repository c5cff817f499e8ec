package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseShebang(t *testing.T) {
	tests := []struct{ head, want string }{
		{"#!/bin/sh\necho", "/bin/sh"},
		{"#! /usr/bin/python3 -u\n", "/usr/bin/python3"},
		{"#!/usr/bin/env node\n", "node"},
		{"#!/usr/bin/env -S node --no-warnings\n", "node"},
		{"#!/usr/bin/env -Snode\n", "node"},
		{"#!/usr/bin/env -i PATH=/x python3\n", "python3"},
		{"#!/usr/bin/env\n", ""},
		{"#!\n", ""},
		{"#!/bin/bash\r\n", "/bin/bash"},
		{"\x7fELF\x02", ""},
		{"", ""},
		{"#!/opt/x", "/opt/x"},
	}
	for _, tt := range tests {
		if got := ParseShebang([]byte(tt.head)); got != tt.want {
			t.Errorf("ParseShebang(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

func TestBindRoot(t *testing.T) {
	present := map[string]bool{
		"/h/venv/pyvenv.cfg": true, "/h/.pyenv/versions/3.12/lib": true, "/h/.local/lib": true,
		"/h/lib": true, "/opt/tool/lib": true, "/usr/local/lib": true,
	}
	exists := func(p string) bool { return present[p] }
	tests := []struct {
		file string
		want []string
	}{
		{"/h/.npm-global/lib/node_modules/pkg/bin/cli.js", []string{"/h/.npm-global/lib/node_modules"}},
		{"/h/.npm-global/lib/node_modules/@s/pkg/dist/cli.js", []string{"/h/.npm-global/lib/node_modules"}},
		{"/h/x/node_modules/a/node_modules/b/cli.js", []string{"/h/x/node_modules"}},
		{"/h/x/node_modules/cli.js", []string{"/h/x/node_modules"}},
		{"/h/node_modules", []string{"/h/node_modules"}},
		{"/h/venv/bin/srv", []string{"/h/venv"}},
		{"/h/.pyenv/versions/3.12/bin/python3.12", []string{"/h/.pyenv/versions/3.12/bin/python3.12", "/h/.pyenv/versions/3.12/lib"}},
		{"/h/.local/bin/tool", []string{"/h/.local/bin/tool"}},
		{"/h/bin/tool", []string{"/h/bin/tool"}},
		{"/opt/tool/bin/tool", []string{"/opt/tool/bin/tool", "/opt/tool/lib"}},
		{"/usr/local/bin/tool", []string{"/usr/local/bin/tool"}},
		{"/bin/tool", []string{"/bin/tool"}},
		{"/h/go/bin/tool", []string{"/h/go/bin/tool"}},
	}
	for _, tt := range tests {
		if got := BindRoot(tt.file, "/h", exists); !slices.Equal(got, tt.want) {
			t.Errorf("BindRoot(%q) = %q, want %q", tt.file, got, tt.want)
		}
	}
}

func resolveTree(t *testing.T) (root string, h ResolveHost) {
	root = t.TempDir()
	H := root + "/home"
	writeTree(t, root, map[string]string{
		"usr/bin/python3": "\x7fELF",
		"usr/bin/node":    "\x7fELF",
		"usr/bin/sh":      "\x7fELF",
		// pipx: a link in ~/.local/bin into a venv whose python links to /usr.
		"home/.local/bin/pytool":                         "->../share/pipx/venvs/pytool/bin/pytool",
		"home/.local/share/pipx/venvs/pytool/pyvenv.cfg": "home = /usr/bin",
		"home/.local/share/pipx/venvs/pytool/bin/pytool": "#!" + H + "/.local/share/pipx/venvs/pytool/bin/python\n",
		"home/.local/share/pipx/venvs/pytool/bin/python": "->" + root + "/usr/bin/python3",
		// npm global with a scoped package and an env shebang.
		"home/.npm-global/bin/jstool":                                "->../lib/node_modules/@acme/jstool/dist/cli.js",
		"home/.npm-global/lib/node_modules/@acme/jstool/dist/cli.js": "#!/usr/bin/env node\n",
		// a venv whose interpreter is a pyenv build under home.
		"home/.pyenv/versions/3.12/bin/python3.12": "\x7fELF",
		"home/.pyenv/versions/3.12/lib/":           "",
		"home/venvs/v/pyvenv.cfg":                  "",
		"home/venvs/v/bin/python":                  "->" + H + "/.pyenv/versions/3.12/bin/python3.12",
		"home/venvs/v/bin/srv":                     "#!" + H + "/venvs/v/bin/python\n",
		// pip install --user
		"home/.local/bin/usersite":                  "#!" + root + "/usr/bin/python3\n",
		"home/.local/lib/python3.11/site-packages/": "",
		"home/bin/plain":                            "\x7fELF",
		"home/.ssh/tool":                            "\x7fELF",
		"home/bin/sshlink":                          "->" + H + "/.ssh/tool",
		"repo/run.sh":                               "#!" + H + "/secret/interp\n",
		"repo/ok.sh":                                "#!/usr/bin/env sh\n",
		"repo/escape":                               "->" + H + "/bin/plain",
		"home/secret/interp":                        "\x7fELF",
		"home/notes.txt":                            "-rw",
		"home/bin/loop1":                            "#!" + H + "/bin/loop2\n",
		"home/bin/loop2":                            "#!" + H + "/bin/loop1\n",
		"home/bin/noint":                            "#!/usr/bin/env nosuchinterp\n",
	})
	if err := os.Chmod(H+"/notes.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	h = ResolveHost{
		PATH:    H + "/.local/bin:" + H + "/.npm-global/bin:relative:" + root + "/usr/bin:" + H + "/bin",
		Covered: func(p string) bool { return under(p, []string{root + "/usr", root + "/repo", "/usr", "/bin"}) },
		Check: func(p string) error {
			if strings.Contains(p, "/.ssh/") {
				return fmt.Errorf("%s is a credential path", p)
			}
			return nil
		},
		Home:    H,
		Project: root + "/repo",
		Repo:    root + "/repo",
	}
	return root, h
}

func TestResolve(t *testing.T) {
	root, h := resolveTree(t)
	H := root + "/home"
	src := Source{File: H + "/.claude.json"}
	servers := []Server{
		{Name: "py", Source: src, Command: "pytool"},
		{Name: "js", Source: src, Command: "jstool"},
		{Name: "venv", Source: src, Command: H + "/venvs/v/bin/srv"},
		{Name: "user", Source: src, Command: "usersite"},
		{Name: "plain", Source: src, Command: "plain"},
		{Name: "plain2", Source: src, Command: "plain"},
		{Name: "repo", Source: Source{File: root + "/repo/.mcp.json", InRepo: true}, Command: "./ok.sh"},
		{Name: "sys", Source: src, Command: "sh"},
	}
	res := Resolve(servers, h)
	if len(res.Unrunnable) != 0 {
		t.Fatalf("unrunnable: %+v", res.Unrunnable)
	}
	rel := func(s string) string { return strings.ReplaceAll(s, root, "$ROOT") }
	var binds []string
	for _, b := range res.Binds {
		binds = append(binds, rel(b))
	}
	wantBinds := []string{
		"$ROOT/home/.local/bin/usersite",
		"$ROOT/home/.local/lib/python3.11",
		"$ROOT/home/.local/share/pipx/venvs/pytool",
		"$ROOT/home/.npm-global/lib/node_modules",
		"$ROOT/home/.pyenv/versions/3.12/bin/python3.12",
		"$ROOT/home/.pyenv/versions/3.12/lib",
		"$ROOT/home/bin/plain",
		"$ROOT/home/venvs/v",
	}
	if d := cmp.Diff(wantBinds, binds); d != "" {
		t.Errorf("binds (-want +got):\n%s", d)
	}
	var links []string
	for _, l := range res.Symlinks {
		links = append(links, rel(l.Path)+" -> "+l.Target)
	}
	wantLinks := []string{
		"$ROOT/home/.local/bin/pytool -> ../share/pipx/venvs/pytool/bin/pytool",
		"$ROOT/home/.npm-global/bin/jstool -> ../lib/node_modules/@acme/jstool/dist/cli.js",
	}
	if d := cmp.Diff(wantLinks, links); d != "" {
		t.Errorf("symlinks (-want +got):\n%s", d)
	}
	var chains []string
	for _, c := range res.Commands {
		var ch []string
		for _, p := range c.Chain {
			ch = append(ch, rel(p))
		}
		chains = append(chains, c.Server+": "+strings.Join(ch, " "))
	}
	wantChains := []string{
		"py: $ROOT/home/.local/bin/pytool $ROOT/home/.local/share/pipx/venvs/pytool/bin/pytool $ROOT/home/.local/share/pipx/venvs/pytool/bin/python $ROOT/usr/bin/python3",
		"js: $ROOT/home/.npm-global/bin/jstool $ROOT/home/.npm-global/lib/node_modules/@acme/jstool/dist/cli.js $ROOT/usr/bin/node",
		"venv: $ROOT/home/venvs/v/bin/srv $ROOT/home/venvs/v/bin/python $ROOT/home/.pyenv/versions/3.12/bin/python3.12",
		"user: $ROOT/home/.local/bin/usersite $ROOT/usr/bin/python3",
		"plain: $ROOT/home/bin/plain",
		"plain2: $ROOT/home/bin/plain",
		"repo: $ROOT/repo/ok.sh $ROOT/usr/bin/sh",
		"sys: $ROOT/usr/bin/sh",
	}
	if d := cmp.Diff(wantChains, chains); d != "" {
		t.Errorf("chains (-want +got):\n%s", d)
	}
}

// TestResolveDrops: a server whose command cannot run in the box is
// dropped with its reason (naming it and its file), and what fixes it
// when a bind spec line would; nothing is bound for it, and the servers
// beside it resolve as before.
func TestResolveDrops(t *testing.T) {
	root, h := resolveTree(t)
	H := root + "/home"
	writeTree(t, root, map[string]string{"home/.cargo/bin/cargotool": "\x7fELF", "home/.cargo/bin/nodeish": "#!/usr/bin/env nvmnode\n", "home/.nvm/bin/nvmnode": "\x7fELF"})
	h.HostPATH = H + "/.cargo/bin:" + H + "/.nvm/bin:/usr/bin"
	src := Source{File: "/h/.codex/config.toml"}
	repoSrc := Source{File: root + "/repo/opencode.json", InRepo: true}
	tests := []struct {
		name     string
		server   Server
		notFound bool
		want     string
		fix      string
	}{
		{"not on PATH", Server{Name: "gone", Client: Codex, Source: src, Command: "nosuch"}, true,
			`codex mcp server "gone" (declared in /h/.codex/config.toml): command "nosuch" is not on the box PATH`, ""},
		{"on the host PATH only", Server{Name: "cargo", Client: Claude, Source: src, Command: "cargotool"}, true,
			`command "cargotool" is not on the box PATH`, `cargotool is in ~/.cargo/bin on the host: ro = ["~/.cargo/bin"] and path = ["~/.cargo/bin"] in a bind spec (--binds FILE) let the box run it`},
		{"an interpreter on the host PATH only", Server{Name: "nvm", Client: Claude, Source: src, Command: H + "/.cargo/bin/nodeish"}, true,
			`interpreter "nvmnode"`, `nvmnode is in ~/.nvm/bin on the host: ro = ["~/.nvm/bin"] and path = ["~/.nvm/bin"]`},
		{"a variable", Server{Name: "v", Source: src, Command: "${BIN}/x"}, true, "variable reference", ""},
		{"missing absolute", Server{Name: "a", Source: src, Command: H + "/nope"}, true, "no such file", ""},
		{"a missing interpreter", Server{Name: "i", Source: src, Command: "noint"}, true, `interpreter "nosuchinterp"`, ""},
		{"an interpreter loop", Server{Name: "l", Source: src, Command: "loop1"}, true, "nested interpreters", ""},
		{"credential path", Server{Name: "c", Source: src, Command: "sshlink"}, false, `mcp server "c" (declared in /h/.codex/config.toml): ` + H + `/.ssh/tool is a credential path`, ""},
		{"a repo script's interpreter", Server{Name: "r", Source: src, Command: root + "/repo/run.sh"}, true, "aisan binds nothing that a file a box can write names", ""},
		{"a repo link out", Server{Name: "e", Source: src, Command: root + "/repo/escape"}, true, "aisan binds nothing that a file a box can write names", ""},
		{"a repo config's absolute command", Server{Name: "x", Source: repoSrc, Command: H + "/bin/plain"}, true, "aisan binds nothing that a file a box can write names", ""},
		{"a directory", Server{Name: "d", Source: src, Command: H + "/bin"}, true, "not a regular file", ""},
		{"not executable", Server{Name: "x", Source: src, Command: H + "/notes.txt"}, true, "not executable", ""},
	}
	fine := Resolve([]Server{{Name: "fine", Command: "sh"}, {Name: "plain", Command: "plain"}}, h)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Resolve([]Server{{Name: "fine", Command: "sh"}, tt.server, {Name: "plain", Command: "plain"}}, h)
			if len(res.Unrunnable) != 1 {
				t.Fatalf("unrunnable %+v, want the one server", res.Unrunnable)
			}
			u := res.Unrunnable[0]
			var nf *NotFoundError
			if err := u.Err; !strings.Contains(err.Error(), tt.want) || errors.As(err, &nf) != tt.notFound {
				t.Fatalf("err = %v; want one containing %q (NotFoundError %v)", err, tt.want, tt.notFound)
			}
			if u.Server != tt.server.Name || u.Source != tt.server.Source || u.Why == "" || strings.Contains(u.Why, "mcp server") {
				t.Errorf("unrunnable %+v names the wrong server, or its why repeats the name", u)
			}
			if tt.notFound && (nf.Server != tt.server.Name || nf.File != tt.server.Source.File) {
				t.Errorf("NotFoundError names %q/%q", nf.Server, nf.File)
			}
			if !strings.Contains(u.Fix, tt.fix) || (tt.fix == "") != (u.Fix == "") {
				t.Errorf("fix %q, want %q", u.Fix, tt.fix)
			}
			if d := cmp.Diff(fine.Binds, res.Binds); d != "" {
				t.Errorf("a dropped server changed the binds (-want +got):\n%s", d)
			}
			if d := cmp.Diff(fine.Symlinks, res.Symlinks); d != "" {
				t.Errorf("a dropped server changed the links (-want +got):\n%s", d)
			}
			if len(res.Commands) != 2 {
				t.Errorf("commands %+v, want the two others", res.Commands)
			}
		})
	}
	// A repo config may still name a command on the box PATH: the PATH, not
	// the repository, decides where that points.
	if res := Resolve([]Server{{Name: "ok", Source: repoSrc, Command: "plain"}}, h); len(res.Unrunnable) != 0 {
		t.Errorf("a PATH command from a repo config: %+v", res.Unrunnable)
	}
	if res := Resolve([]Server{{Name: "gone", Command: "nosuch"}}, h); len(res.Unrunnable) != 1 || !errors.Is(res.Unrunnable[0].Err, fs.ErrNotExist) {
		t.Errorf("not found does not wrap fs.ErrNotExist: %+v", res.Unrunnable)
	}
}

func TestNeedsNetwork(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-everything"}, "runs npx"},
		{"/usr/bin/npx", []string{"pkg"}, "runs npx"},
		{"uvx", []string{"mcp-server-git"}, "runs uvx"},
		{"pipx", []string{"run", "x"}, "runs pipx run"},
		{"pnpm", []string{"dlx", "x"}, "runs pnpm dlx"},
		{"npm", []string{"exec", "--", "x"}, "runs npm exec"},
		{"uv", []string{"tool", "run", "x"}, "runs uv tool"},
		{"uv", []string{"run", "--with", "x", "y"}, "runs uv run"},
		{"docker", []string{"run", "-i", "--rm", "img"}, "runs docker"},
		{"deno", []string{"run", "-A", "npm:pkg"}, "runs deno on npm:"},
		{"uv", []string{"run", "server.py"}, ""},
		{"npm", []string{"run", "mcp"}, ""},
		{"node", []string{"server.js"}, ""},
		{"deno", []string{"run", "server.ts"}, ""},
		{"/home/u/.local/bin/my-mcp", nil, ""},
	} {
		if got := NeedsNetwork(Server{Command: tt.cmd, Args: tt.args}); !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("NeedsNetwork(%s %q) = %q, want %q…", tt.cmd, tt.args, got, tt.want)
		}
	}
}

// TestResolveBoxWritable: a directory a box can write outside the
// repository (a bind spec's rw slice, now or at an earlier launch) is
// the box's choice as the repository is: a link or a "#!" line planted
// there binds nothing new, and neither does a command named by a config
// file there; what the box shows already still runs.
func TestResolveBoxWritable(t *testing.T) {
	root, h := resolveTree(t)
	H := root + "/home"
	writeTree(t, root, map[string]string{
		"home/rw/linked":    "->" + H + "/secret/interp",
		"home/rw/shebang":   "#!" + H + "/secret/interp\n",
		"home/rw/envsh":     "#!/usr/bin/env sh\n",
		"home/rw/usr":       "->" + root + "/usr/bin/node",
		"home/via/":         "",
		"home/via/rwdir":    "->" + H + "/rw",
		"home/rw/conf.json": "{}",
	})
	rw := H + "/rw"
	h.PATH = rw + ":" + h.PATH
	h.Writable = func(p string) bool { return p == rw || strings.HasPrefix(p, rw+"/") }
	covered := h.Covered
	h.Covered = func(p string) bool { return covered(p) || p == rw || strings.HasPrefix(p, rw+"/") }
	src := Source{File: "/h/.codex/config.toml"}
	for _, tt := range []struct {
		name string
		s    Server
		want string // "" runs
	}{
		{"a planted link out", Server{Name: "l", Source: src, Command: "linked"}, "aisan binds nothing that a file a box can write names"},
		{"a planted interpreter", Server{Name: "s", Source: src, Command: rw + "/shebang"}, "aisan binds nothing that a file a box can write names"},
		{"through a link to the place", Server{Name: "v", Source: src, Command: H + "/via/rwdir/shebang"}, "aisan binds nothing that a file a box can write names"},
		{"a config there naming a path", Server{Name: "c", Source: Source{File: rw + "/conf.json"}, Command: H + "/bin/plain"}, "aisan binds nothing that a file a box can write names"},
		{"an env interpreter on the PATH", Server{Name: "e", Source: src, Command: "envsh"}, ""},
		{"a link to what the box shows", Server{Name: "u", Source: src, Command: "usr"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := Resolve([]Server{tt.s}, h)
			if tt.want == "" {
				if len(res.Unrunnable) != 0 || len(res.Binds) != 0 {
					t.Fatalf("unrunnable %+v, binds %q; want it to run with nothing bound", res.Unrunnable, res.Binds)
				}
				return
			}
			if len(res.Unrunnable) != 1 || !strings.Contains(res.Unrunnable[0].Err.Error(), tt.want) {
				t.Fatalf("unrunnable %+v; want one saying %q", res.Unrunnable, tt.want)
			}
			if len(res.Binds) != 0 || len(res.Symlinks) != 0 {
				t.Errorf("binds %q, links %+v for a box's choice", res.Binds, res.Symlinks)
			}
		})
	}
}

package protect

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
)

func items(p Plan) string {
	var b strings.Builder
	for _, it := range p.Items {
		b.WriteString(it.How.String() + " " + it.Path)
		if it.Dir {
			b.WriteString("/")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestMake(t *testing.T) {
	for _, tc := range []struct {
		name  string
		facts Facts
		want  string
		err   string
	}{
		{"existing is copied, absent is created", Facts{Found: []PathFact{
			{Path: "/r/.claude", Exists: true, Dir: true, Files: 2},
			{Path: "/r/.envrc"},
			{Path: "/r/.vscode", Dir: true},
		}}, "copy /r/.claude/\ncreate /r/.envrc\ncreate /r/.vscode/\n", ""},
		{"a parent before what lies in it", Facts{Steer: []PathFact{
			{Path: "/r/.git/modules/sub/config", Exists: true, Files: 1},
			{Path: "/r/.git/modules", Exists: true, Dir: true, Shadowed: true, Live: []string{"sub"}},
		}}, "shadow /r/.git/modules/\ncopy /r/.git/modules/sub/config\n", ""},
		{"too large is read-only", Facts{Found: []PathFact{{Path: "/r/.opencode", Exists: true, Dir: true, Files: MaxCopyFiles + 1}}},
			"read-only /r/.opencode/\n", ""},
		{"held trees past the copy budget in all are read-only", Facts{Steer: []PathFact{
			{Path: "/r/node_modules/a", Exists: true, Dir: true, Files: MaxSteerFiles / 2, Bytes: 1},
			{Path: "/r/node_modules/b", Exists: true, Dir: true, Files: MaxSteerFiles / 2},
			{Path: "/r/node_modules/c", Exists: true, Dir: true, Files: 1},
			{Path: "/r/node_modules/d", Exists: true, Files: 1, Bytes: 1},
			{Path: "/r/node_modules/e"},
			{Path: "/r/x", Exists: true, Dir: true, Files: 0, Bytes: MaxSteerBytes},
		}}, "copy /r/node_modules/a/\ncopy /r/node_modules/b/\nread-only /r/node_modules/c/\nread-only /r/node_modules/d\ncreate /r/node_modules/e\nread-only /r/x/\n", ""},
		{"sockets are masked, but not inside a copy", Facts{
			Found:   []PathFact{{Path: "/r/.vscode", Exists: true, Dir: true, Files: 1}},
			Sockets: []string{"/r/tmux.sock", "/r/.vscode/ipc.sock"},
		}, "copy /r/.vscode/\nmask /r/tmux.sock\n", ""},
		{"a nested repository is pinned, a pointer read-only", Facts{NestedGit: []PathFact{
			{Path: "/r/vendor/x/.git", Exists: true, Dir: true},
			{Path: "/r/sub/.git", Exists: true},
		}}, "read-only /r/sub/.git\npin /r/vendor/x/.git/\n", ""},
		{"a symlink is refused", Facts{Found: []PathFact{{Path: "/r/.claude", Exists: true, Link: true}}}, "", "is a symlink"},
		{"what this user cannot create needs no mount point", Facts{Found: []PathFact{{Path: "/r/.envrc", Sealed: true}}}, "", ""},
		{"something odd is masked", Facts{Found: []PathFact{{Path: "/r/.envrc", Exists: true, Other: true}}}, "mask /r/.envrc\n", ""},
		{"the parents of a nested .claude are pinned up to the repository", Facts{Repo: "/r", Found: []PathFact{
			{Path: "/r/pkgs/a/.claude", Exists: true, Dir: true, Files: 1},
			{Path: "/r/pkgs/b/.envrc", Exists: true, Files: 1},
			{Path: "/r/.mcp.json"},
		}}, "create /r/.mcp.json\npin /r/pkgs/\npin /r/pkgs/a/\ncopy /r/pkgs/a/.claude/\npin /r/pkgs/b/\ncopy /r/pkgs/b/.envrc\n", ""},
		{"a nested repository's parents, and its git dir's up to the pinned .git", Facts{Repo: "/r", Mounted: []string{"/r", "/r/.git"},
			NestedGit: []PathFact{{Path: "/r/lib/sub/.git", Exists: true, Dir: true}},
			Steer: []PathFact{
				{Path: "/r/.git/hooks", Dir: true},
				{Path: "/r/.git/objects/info/alternates"},
				{Path: "/r/lib/sub/.git/config", Exists: true, Files: 1},
				{Path: "/r/lib/sub/.git/objects/info/alternates"},
			}},
			"create /r/.git/hooks/\npin /r/.git/objects/\npin /r/.git/objects/info/\ncreate /r/.git/objects/info/alternates\n" +
				"pin /r/lib/\npin /r/lib/sub/\npin /r/lib/sub/.git/\ncopy /r/lib/sub/.git/config\npin /r/lib/sub/.git/objects/\npin /r/lib/sub/.git/objects/info/\ncreate /r/lib/sub/.git/objects/info/alternates\n", ""},
		{"a hooksPath made for the run gets its parent pinned too", Facts{Repo: "/r", Steer: []PathFact{{Path: "/r/.husky/_", Dir: true}}},
			"pin /r/.husky/\ncreate /r/.husky/_/\n", ""},
		{"a shadow's live entries are mount points already", Facts{Repo: "/r", Mounted: []string{"/r", "/r/.git"}, Steer: []PathFact{
			{Path: "/r/.git/modules", Exists: true, Dir: true, Shadowed: true, Live: []string{"m"}},
			{Path: "/r/.git/modules/m/objects/info/alternates"},
		}}, "shadow /r/.git/modules/\npin /r/.git/modules/m/objects/\npin /r/.git/modules/m/objects/info/\ncreate /r/.git/modules/m/objects/info/alternates\n", ""},
		{"a socket's directory is not pinned, nor is a path outside the box's mounts", Facts{Repo: "/r", Mounted: []string{"/r", "/c"},
			Sockets: []string{"/r/run/a/tmux.sock"},
			Steer:   []PathFact{{Path: "/c/objects/info/alternates", Exists: true, Files: 1}, {Path: "/elsewhere/x/hooks", Exists: true, Dir: true, Files: 1}},
		}, "pin /c/objects/\npin /c/objects/info/\ncopy /c/objects/info/alternates\ncopy /elsewhere/x/hooks/\nmask /r/run/a/tmux.sock\n", ""},
		{"nothing inside a copy, so no parent there", Facts{Repo: "/r", Found: []PathFact{
			{Path: "/r/.vscode", Exists: true, Dir: true, Files: 3},
			{Path: "/r/.vscode/x/.envrc", Exists: true, Files: 1},
		}}, "copy /r/.vscode/\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Make(tc.facts)
			if tc.err != "" {
				var le *LinkError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &le) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := items(p); got != tc.want {
				t.Errorf("items:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestCheckRoot(t *testing.T) {
	shared := []string{"/tmp", "/var/tmp", "/dev/shm", "/run/user/1000"}
	for _, tc := range []struct {
		dirs []string
		bad  bool
	}{
		{[]string{"/tmp", "/tmp"}, true},
		{[]string{"/", "/"}, true},
		{[]string{"/run/user/1000", "/run/user/1000"}, true},
		{[]string{"/run", "/run"}, true},
		{[]string{"/home/u/proj", "/home/u/proj/sub"}, false},
		{[]string{"/tmp/proj", "/tmp/proj"}, false},
		{[]string{"/dev", "/dev"}, true},
		{[]string{"/tmpfoo", "/tmpfoo"}, false},
	} {
		err := CheckRoot(tc.dirs, shared)
		if (err != nil) != tc.bad {
			t.Errorf("%q: %v, want refused=%v", tc.dirs, err, tc.bad)
		}
		if err != nil && (!errors.Is(err, ErrShared) || !strings.Contains(err.Error(), "cd into a project")) {
			t.Errorf("%q: %v", tc.dirs, err)
		}
	}
}

// TestGather: a walk finds sockets and protected names at any depth,
// nested repositories, and not what lies in a git dir or a protected
// directory; the root's candidates are listed whether or not they exist.
func TestGather(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{".git/hooks", "a/b/.claude", "a/.vscode/deep", "n/.git", ".git/x/.claude"} {
		os.MkdirAll(filepath.Join(r, d), 0o755)
	}
	os.WriteFile(filepath.Join(r, "a/b/.envrc"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(r, ".mcp.json"), []byte("{}"), 0o644)
	for _, s := range []string{"a/b/ctl.sock", ".git/fsmonitor.ipc", "a/.vscode/deep/in.sock"} {
		l, err := net.Listen("unix", filepath.Join(r, s))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	f, err := Gather(r, GitFacts{GitDir: filepath.Join(r, ".git"), CommonDir: filepath.Join(r, ".git")})
	if err != nil {
		t.Fatal(err)
	}
	found := existing(f, r)
	if got := strings.Join(found, " "); got != ".mcp.json a/.vscode a/b/.claude a/b/.envrc" {
		t.Errorf("found %q", got)
	}
	var socks []string
	for _, s := range f.Sockets {
		socks = append(socks, strings.TrimPrefix(s, r+"/"))
	}
	if got := strings.Join(socks, " "); got != ".git/fsmonitor.ipc a/b/ctl.sock" {
		t.Errorf("sockets %q", got)
	}
	if len(f.NestedGit) != 1 || f.NestedGit[0].Path != filepath.Join(r, "n/.git") {
		t.Errorf("nested %+v", f.NestedGit)
	}
	if n := len(RootCandidates(r, nil, nil)); len(f.Found) != n+3 { // the root's candidates, a/b's two and a's one
		t.Errorf("found %d entries, want the root's %d candidates and 3 more", len(f.Found), n)
	}
	// What the box plants is new; what was there is not.
	os.MkdirAll(filepath.Join(r, "x/y/.opencode"), 0o755)
	os.MkdirAll(filepath.Join(r, "m/.git"), 0o755)
	p, _ := Make(f)
	known := p.Known
	for _, it := range p.Items {
		known = append(known, it.Path)
	}
	got := NewSince(r, known, GitFacts{GitDir: filepath.Join(r, ".git")}, Span{}).Paths
	if want := []string{filepath.Join(r, "m/.git"), filepath.Join(r, "x/y/.opencode")}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("new since: %q, want %q", got, want)
	}
}

// FuzzCheckRoot: any paths decide without a panic, and a refusal names
// a shared directory within the refused one.
func FuzzCheckRoot(f *testing.F) {
	f.Add("/tmp", "/tmp")
	f.Add("/", "/run/user/1")
	f.Add("/home/u/x", "/tmp")
	f.Fuzz(func(t *testing.T, dir, shared string) {
		err := CheckRoot([]string{dir}, []string{shared})
		var se *SharedError
		if err != nil && (!errors.As(err, &se) || !within(se.Shared, se.Dir)) {
			t.Fatalf("%v", err)
		}
	})
}

// TestTableIsACopy: the walk looks names up in the table built once, so
// what a caller does with Table's rows must not reach it.
func TestTableIsACopy(t *testing.T) {
	rows := Table()
	if len(rows) == 0 {
		t.Fatal("empty table")
	}
	name := rows[0].Name
	rows[0].Name = "not-a-protected-name"
	if !IsProtectedName(name) || IsProtectedName("not-a-protected-name") {
		t.Errorf("changing Table's rows changed the lookup of %q", name)
	}
	for _, r := range Table() {
		name := r.Name
		if r.Suffix {
			name = "x" + name
		}
		got, ok := ruleFor(name)
		if !ok {
			t.Errorf("ruleFor(%q) finds no row", name)
			continue
		}
		// A name's first row speaks for it.
		for _, first := range Table() {
			if first.Name == r.Name && first.Suffix == r.Suffix {
				if got != first {
					t.Errorf("ruleFor(%q) = %+v, want the first row %+v", r.Name, got, first)
				}
				break
			}
		}
	}
}

// TestTableOneRowPerAgentName: a name several agents read (.agents/) is
// one row naming them all, so the root gets one candidate for it.
func TestTableOneRowPerAgentName(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Table() {
		if !r.Suffix && r.InDeps && seen[r.Name] {
			t.Errorf("two agent rows for %s", r.Name)
		}
		seen[r.Name] = true
	}
	n := 0
	for _, c := range RootCandidates("/r", nil, nil) {
		if c.Path == "/r/.agents" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("RootCandidates lists /r/.agents %d times, want once", n)
	}
}

// BenchmarkGather walks a repository of 200 directories of 40 files
// each, a protected name among them now and then: every entry's name is
// looked up in the table.
func BenchmarkGather(b *testing.B) {
	r := b.TempDir()
	for i := range 200 {
		d := filepath.Join(r, "pkg", strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 40 {
			if err := os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(j)+".go"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if i%50 == 0 {
			os.WriteFile(filepath.Join(d, ".envrc"), nil, 0o644)
		}
	}
	for b.Loop() {
		if _, err := Gather(r, GitFacts{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGatherNested: a nested repository's git dir gets the root's
// protections (the audit's D4: a commondir planted there ran its config
// on host git status at the root), and so does a git dir in the
// repository that a nested .git file points at.
func TestGatherNested(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r string)
		watch []string // relative to the repository
		steer []string
		// hooks are the hook directories HookLoads is asked about, each
		// with the working tree git runs them in (dir@root); trees the
		// nested working trees with their index's git dir (root@gitdir).
		// OUT stands for a directory outside the repository.
		hooks, trees []string
		err          string
	}{
		{name: "a nested repository", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "sub/.git/hooks"), 0o755)
			os.WriteFile(filepath.Join(r, "sub/.git/config"), []byte("[include]\n\tpath = ../more.gitconfig\n"), 0o644)
		}, watch: []string{"sub/.git/commondir", "sub/.git/rebase-merge", "sub/.git/rebase-apply", "sub/.git/sequencer"}, steer: []string{"sub/.git/config", "sub/.git/hooks", "sub/.git/info", "sub/.git/config.worktree", "sub/.git/worktrees", "sub/more.gitconfig"},
			hooks: []string{"sub/.git/hooks@sub"}, trees: []string{"sub@sub/.git"}},
		{name: "a nested repository's core.hooksPath", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "sub/.git"), 0o755)
			os.WriteFile(filepath.Join(r, "sub/.git/config"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644)
		}, watch: []string{"sub/.git/commondir", "sub/.git/rebase-merge", "sub/.git/rebase-apply", "sub/.git/sequencer"}, steer: []string{"sub/.git/config", "sub/.githooks"},
			hooks: []string{"sub/.git/hooks@sub", "sub/.githooks@sub"}, trees: []string{"sub@sub/.git"}},
		{name: "a planted commondir is refused", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "sub/.git"), 0o755)
			os.WriteFile(filepath.Join(r, "sub/.git/commondir"), []byte("c2\n"), 0o644)
		}, err: "commondir exists"},
		{name: "a pointer to a git dir in the repository", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "gd"), 0o755)
			os.MkdirAll(filepath.Join(r, "co"), 0o755)
			os.WriteFile(filepath.Join(r, "co/.git"), []byte("gitdir: ../gd\n"), 0o644)
		}, watch: []string{"gd/commondir", "gd/rebase-merge", "gd/rebase-apply", "gd/sequencer"}, steer: []string{"gd/config", "gd/hooks"},
			hooks: []string{"gd/hooks@co"}, trees: []string{"co@gd"}},
		{name: "a pointer to nothing in the repository is refused", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "co"), 0o755)
			os.WriteFile(filepath.Join(r, "co/.git"), []byte("gitdir: ../gd\n"), 0o644)
		}, err: "does not exist"},
		{name: "a bare repository in the repository", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "fixtures/repo.git/objects"), 0o755)
			os.MkdirAll(filepath.Join(r, "fixtures/repo.git/refs/heads"), 0o755)
			os.WriteFile(filepath.Join(r, "fixtures/repo.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(r, "fixtures/repo.git/config"), []byte("[core]\n\tbare = true\n"), 0o644)
		}, watch: []string{"fixtures/repo.git/commondir", "fixtures/repo.git/rebase-merge", "fixtures/repo.git/rebase-apply", "fixtures/repo.git/sequencer"}, steer: []string{"fixtures/repo.git/config", "fixtures/repo.git/hooks", "fixtures/repo.git/info"}},
		{name: "a pointer into the root's git dir is the root's", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, ".git/modules/m"), 0o755)
			os.MkdirAll(filepath.Join(r, "m"), 0o755)
			os.WriteFile(filepath.Join(r, "m/.git"), []byte("gitdir: ../.git/modules/m\n"), 0o644)
		}, hooks: []string{".git/modules/m/hooks@m"}, trees: []string{"m@.git/modules/m"}},
		{name: "a pointer to the root's own git dir is no other index", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, "w"), 0o755)
			os.WriteFile(filepath.Join(r, "w/.git"), []byte("gitdir: ../.git\n"), 0o644)
		}, hooks: []string{".git/hooks@w"}},
		{name: "two pointers to one git dir", setup: func(r string) {
			os.MkdirAll(filepath.Join(r, ".git/modules/m"), 0o755)
			for _, w := range []string{"m1", "m2"} {
				os.MkdirAll(filepath.Join(r, w), 0o755)
				os.WriteFile(filepath.Join(r, w, ".git"), []byte("gitdir: ../.git/modules/m\n"), 0o644)
			}
		}, hooks: []string{".git/modules/m/hooks@m1", ".git/modules/m/hooks@m2"}, trees: []string{"m1@.git/modules/m"}},
		{name: "a linked worktree of a repository outside", setup: func(r string) {
			out := filepath.Join(filepath.Dir(r), "out")
			os.MkdirAll(filepath.Join(out, ".git/worktrees/lw"), 0o755)
			os.WriteFile(filepath.Join(out, ".git/worktrees/lw/commondir"), []byte("../..\n"), 0o644)
			os.WriteFile(filepath.Join(out, ".git/config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644)
			os.MkdirAll(filepath.Join(r, "lw"), 0o755)
			os.WriteFile(filepath.Join(r, "lw/.git"), []byte("gitdir: "+filepath.Join(out, ".git/worktrees/lw")+"\n"), 0o644)
		}, hooks: []string{"OUT/.git/hooks@lw", "lw/tools/hooks@lw"}, trees: []string{"lw@OUT/.git/worktrees/lw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := filepath.EvalSymlinks(t.TempDir())
			r := filepath.Join(d, "repo")
			os.MkdirAll(filepath.Join(r, ".git"), 0o755)
			tc.setup(r)
			git := filepath.Join(r, ".git")
			rel := func(p string) string {
				return strings.Replace(strings.TrimPrefix(p, r+"/"), filepath.Join(d, "out"), "OUT", 1)
			}
			var hooks []string
			f, err := Gather(r, GitFacts{GitDir: git, CommonDir: git, Home: r, Global: []string{},
				HookLoads: func(dir, root string) ([]gitpin.Steer, error) {
					hooks = append(hooks, rel(dir)+"@"+rel(root))
					return nil, nil
				}})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var watch, steer []string
			for _, w := range f.Watch {
				watch = append(watch, strings.TrimPrefix(w, r+"/"))
			}
			for _, s := range f.Steer {
				steer = append(steer, strings.TrimPrefix(s.Path, r+"/"))
			}
			if strings.Join(watch, " ") != strings.Join(tc.watch, " ") {
				t.Errorf("watch %q, want %q", watch, tc.watch)
			}
			for _, s := range tc.steer {
				if !slices.Contains(steer, s) {
					t.Errorf("steer lacks %s: %q", s, steer)
				}
			}
			var trees []string
			for _, w := range f.Worktrees {
				trees = append(trees, rel(w.Root)+"@"+rel(w.GitDir))
			}
			if strings.Join(hooks, " ") != strings.Join(tc.hooks, " ") {
				t.Errorf("hook dirs asked about %q, want %q", hooks, tc.hooks)
			}
			if strings.Join(trees, " ") != strings.Join(tc.trees, " ") {
				t.Errorf("nested working trees %q, want %q", trees, tc.trees)
			}
		})
	}
}

// TestRuleForNames: the editors' and hook managers' names are rows, by
// exact name or by how a name ends; near misses are not.
func TestRuleForNames(t *testing.T) {
	for _, tc := range []struct {
		base string
		who  string // "" for no row
	}{
		{".idea", "JetBrains IDEs"},
		{"proj.code-workspace", "VS Code"},
		{"a.b.code-workspace", "VS Code"},
		{".code-workspace", ""}, // no name before the extension: VS Code takes it for none
		{"code-workspace", ""},
		{"foo.code-workspacex", ""},
		{"foo.code-workspace.bak", ""},
		{".pre-commit-config.yaml", "pre-commit"},
		{".husky", "husky"},
		{".pre-commit-config.yml", ""},
		{"lefthook.yml", "lefthook"},
		{".lefthook.yml", "lefthook"},
		{"lefthook.yaml", "lefthook"},
		{".lefthook.yaml", "lefthook"},
		{"lefthook-local.yml", "lefthook"},
		{".lefthook-local.yml", "lefthook"},
		{"lefthook.toml", "lefthook"},
		{".lefthook-local.jsonc", "lefthook"},
		{".lefthook", "lefthook"},
		{".lefthook-local", "lefthook"},
		{"lefthook.yml.orig", ""},
		{"mise.toml", "mise"},
		{".mise.toml", "mise"},
		{"mise.local.toml", "mise"},
		{".mise.local.toml", "mise"},
		{".rtx.toml", "mise"},
		{"mise.dev.toml", "mise"},
		{"mise.dev.local.toml", "mise"},
		{".mise.prod.toml", "mise"},
		{"mise.toml.bak", ""},
		{"mise..toml", "mise"},
		{"xmise.dev.toml", ""},
		{".mise", "mise"},
		{"mise", "mise"},
		{".miserc.toml", "mise"},
		{".tool-versions", "asdf, mise"},
		{"rust-toolchain.toml", "rustup"},
		{"rust-toolchain", "rustup"},
		{".yarnrc.yml", "Yarn"},
		{".yarnrc", "Yarn"},
		{".npmrc", "npm"},
		{".hg", "Mercurial"},
		{"pyvenv.cfg", "Python"},
		{"distutils-precedence.pth", "Python"},
		{".pth", ""},
		{"sitecustomize.py", "Python"},
		{".jj", "Jujutsu"},
		{".nvim.lua", "Neovim"},
		{".nvimrc", "Neovim"},
		{".exrc", "Vim, Neovim"},
		{".vimrc", "Vim"},
		{".lazy.lua", "lazy.nvim"},
		{".dir-locals.el", "Emacs"},
		{".dir-locals-2.el", "Emacs"},
		{".envrc", "direnv"},
		{".gemini", "Gemini CLI"},
		{".cursor", "Cursor"},
		{".aider.conf.yml", "aider"},
		{".vscode", "VS Code"},
		{".agents", "Codex, opencode"},
		{".codex", "Codex"},
		{"main.go", ""},
	} {
		r, ok := ruleFor(tc.base)
		if got := map[bool]string{true: r.Who}[ok]; got != tc.who {
			t.Errorf("ruleFor(%q) = %q, want %q", tc.base, got, tc.who)
		}
		if IsProtectedName(tc.base) != (tc.who != "") {
			t.Errorf("IsProtectedName(%q) = %v", tc.base, !(tc.who != ""))
		}
	}
}

// TestGatherEditorsAndHookManagers: the new rows are found at the root
// and nested, a directory row is taken whole, a suffix row matches any
// name that ends in it but gets no mount point at the root, where an
// absent exact name does; and what the box creates of either is swept.
func TestGatherEditorsAndHookManagers(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	files := []string{
		".idea/watcherTasks.xml", "svc/.idea/workspace.xml",
		"proj.code-workspace", "a/b/team.code-workspace",
		"code-workspace", "foo.code-workspacex",
		"pkg/.pre-commit-config.yaml",
		"lefthook.yml", "svc/.lefthook-local.yml", ".lefthook/pre-commit/lint.sh",
		".config/mise/config.toml", ".config/mise.toml", "tools/.mise.local.toml",
		"x/.exrc", ".nvim.lua", "y/.dir-locals-2.el",
		"src/main.go", "notes/mise.toml.bak",
	}
	for _, f := range files {
		p := filepath.Join(r, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
	f, err := Gather(r, GitFacts{})
	if err != nil {
		t.Fatal(err)
	}
	found := existing(f, r)
	want := []string{
		".config/mise", ".config/mise.toml", ".idea", ".lefthook", ".nvim.lua",
		"a/b/team.code-workspace", "lefthook.yml", "pkg/.pre-commit-config.yaml", "proj.code-workspace",
		"svc/.idea", "svc/.lefthook-local.yml", "tools/.mise.local.toml", "x/.exrc", "y/.dir-locals-2.el",
	}
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Errorf("found %q\nwant  %q", found, want)
	}
	for _, pf := range f.Found {
		if strings.HasSuffix(pf.Path, ".code-workspace") && !strings.Contains(pf.Why, "VS Code") {
			t.Errorf("%s: why %q", pf.Path, pf.Why)
		}
	}
	p, err := Make(f)
	if err != nil {
		t.Fatal(err)
	}
	how := map[string]string{}
	for _, it := range p.Items {
		how[strings.TrimPrefix(it.Path, r+"/")] = it.How.String()
	}
	for path, want := range map[string]string{
		".idea": "copy", "proj.code-workspace": "copy", "a/b/team.code-workspace": "copy",
		// Swept rows: no mount point at the root when absent.
		".pre-commit-config.yaml": "", ".lazy.lua": "", "mise": "", ".dir-locals.el": "",
		"pkg/.pre-commit-config.yaml": "copy", ".config/mise": "copy", "a/b": "pin",
		".idea/watcherTasks.xml": "", "code-workspace": "", "foo.code-workspacex": "", "notes/mise.toml.bak": "",
	} {
		if how[path] != want {
			t.Errorf("%s: %q, want %q", path, how[path], want)
		}
	}
	for h := range how {
		if strings.HasSuffix(h, ".code-workspace") && !slices.Contains([]string{"proj.code-workspace", "a/b/team.code-workspace"}, h) {
			t.Errorf("a mount point planned for a suffix row: %s", h)
		}
	}
	// What the box creates is swept: a new workspace file anywhere, a
	// hook manager's config deeper than the root, and a swept row's file
	// at the root.
	for _, f := range []string{"new.code-workspace", "lib/.lefthook.yaml", "lib/.idea/watcherTasks.xml", "lib/more.code-workspacex", ".pre-commit-config.yaml", ".lazy.lua"} {
		q := filepath.Join(r, f)
		os.MkdirAll(filepath.Dir(q), 0o755)
		os.WriteFile(q, []byte("x\n"), 0o644)
	}
	known := p.Known
	for _, it := range p.Items {
		known = append(known, it.Path)
	}
	var swept []string
	for _, s := range NewSince(r, known, GitFacts{}, Span{}).Paths {
		swept = append(swept, strings.TrimPrefix(s, r+"/"))
	}
	slices.Sort(swept)
	if w := []string{".lazy.lua", ".pre-commit-config.yaml", "lib/.idea", "lib/.lefthook.yaml", "new.code-workspace"}; !slices.Equal(swept, w) {
		t.Errorf("swept %q, want %q", swept, w)
	}
}

// TestWriteTableSuffix: explain shows a suffix row as a pattern.
func TestWriteTableSuffix(t *testing.T) {
	var b strings.Builder
	WriteTable(&b)
	for _, w := range []string{"*.code-workspace", ".idea/", ".pre-commit-config.yaml", ".lefthook/", "mise/"} {
		if !strings.Contains(b.String(), "  "+w+" ") {
			t.Errorf("the table lacks %s:\n%s", w, b.String())
		}
	}
}

// existing lists the found paths that exist, relative to the repository r.
func existing(f Facts, r string) []string {
	var out []string
	for _, pf := range f.Found {
		if pf.Exists {
			out = append(out, strings.TrimPrefix(pf.Path, r+"/"))
		}
	}
	return out
}

// TestSweptForeseenWhereInstalled: a swept row gets its root mount point
// where its tool is installed (mise acts on a new file at the next
// prompt), and only then; rows without a tool stay swept.
func TestSweptForeseenWhereInstalled(t *testing.T) {
	r := t.TempDir()
	names := func(installed func(string) bool) []string {
		var out []string
		for _, c := range RootCandidates(r, installed, nil) {
			out = append(out, filepath.Base(c.Path))
		}
		return out
	}
	none := names(nil)
	withMise := names(func(cmd string) bool { return cmd == "mise" })
	for _, n := range []string{"mise.toml", ".mise.toml", "mise", ".miserc.toml"} {
		if slices.Contains(none, n) {
			t.Errorf("%s is foreseen without mise", n)
		}
		if !slices.Contains(withMise, n) {
			t.Errorf("%s is not foreseen with mise installed", n)
		}
	}
	// mise reads its configs from .config/ at the root as well.
	var inConfig []string
	for _, c := range RootCandidates(r, func(cmd string) bool { return cmd == "mise" }, nil) {
		if filepath.Base(filepath.Dir(c.Path)) == ".config" {
			inConfig = append(inConfig, filepath.Base(c.Path))
		}
	}
	if want := []string{"mise.toml", "mise.local.toml", "mise"}; !slices.Equal(inConfig, want) {
		t.Errorf("foreseen in .config/ with mise installed: %q, want %q", inConfig, want)
	}
	for _, n := range []string{".pre-commit-config.yaml", ".idea", "lefthook.yml"} {
		if slices.Contains(withMise, n) {
			t.Errorf("%s is foreseen with only mise installed", n)
		}
	}
	if !slices.Contains(names(func(cmd string) bool { return cmd == "pre-commit" }), ".pre-commit-config.yaml") {
		t.Error(".pre-commit-config.yaml is not foreseen with pre-commit installed")
	}
	if !slices.Contains(none, ".claude") || !slices.Contains(none, ".envrc") {
		t.Errorf("the agents' and direnv's rows must stay foreseen: %q", none)
	}
	// Through Gather: an absent mise.toml gets a mount point (Create)
	// only where mise is installed.
	for _, tc := range []struct {
		installed func(string) bool
		want      string
	}{{nil, ""}, {func(cmd string) bool { return cmd == "mise" }, "create"}} {
		f, err := Gather(r, GitFacts{Installed: tc.installed})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Make(f)
		if err != nil {
			t.Fatal(err)
		}
		how := ""
		for _, it := range p.Items {
			if it.Path == filepath.Join(r, "mise.toml") {
				how = it.How.String()
			}
		}
		if how != tc.want {
			t.Errorf("mise.toml with installed=%v: %q, want %q", tc.installed != nil, how, tc.want)
		}
	}
}

// TestSweptForeseenWhereInUse: a swept row gets its root mount point
// where another file of its tool is at the root (lefthook merges a new
// lefthook-local.yml over the lefthook.yml it already runs), whether or
// not the tool is on the PATH; a lone file of one tool foresees nothing
// of another's, and nothing deeper than the root counts.
func TestSweptForeseenWhereInUse(t *testing.T) {
	for _, tc := range []struct {
		have []string
		want []string // absent root files that get a mount point
		not  []string // absent root files that stay swept
	}{
		{nil, nil, []string{"lefthook-local.yml", ".lefthook.yml", ".mise.local.toml", ".gvimrc"}},
		{[]string{"lefthook.yml"}, []string{"lefthook-local.yml", ".lefthook-local.toml", ".lefthook"}, []string{".mise.toml", ".idea", ".pre-commit-config.yaml"}},
		{[]string{"mise.toml"}, []string{"mise.local.toml", ".mise.toml", ".miserc.toml"}, []string{"lefthook-local.yml"}},
		{[]string{".vimrc"}, []string{".gvimrc"}, []string{".nvim.lua", "lefthook.yml"}},
		{[]string{"lib/lefthook.yml"}, nil, []string{"lefthook-local.yml"}},
	} {
		r := t.TempDir()
		for _, h := range tc.have {
			os.MkdirAll(filepath.Join(r, filepath.Dir(h)), 0o755)
			os.WriteFile(filepath.Join(r, h), []byte("x\n"), 0o644)
		}
		f, err := Gather(r, GitFacts{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Make(f)
		if err != nil {
			t.Fatal(err)
		}
		created := map[string]bool{}
		for _, it := range p.Items {
			if it.How == Create {
				created[strings.TrimPrefix(it.Path, r+"/")] = true
			}
		}
		for _, w := range tc.want {
			if !created[w] {
				t.Errorf("with %q: %s gets no mount point", tc.have, w)
			}
		}
		for _, n := range tc.not {
			if created[n] {
				t.Errorf("with %q: %s gets a mount point", tc.have, n)
			}
		}
	}
}

// TestGatherLoads: Loads is asked about every .envrc, project MCP file,
// .claude, .codex, .vscode, dev container config and workspace file
// found, and what it names inside the repository, outside what is
// protected already, is steering; its notes are the launch's.
func TestGatherLoads(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(r, "sub"), 0o755)
	for _, d := range []string{"sub/.claude", ".codex", ".vscode", ".devcontainer"} {
		os.MkdirAll(filepath.Join(r, d), 0o755)
	}
	for _, f := range []string{".envrc", ".mcp.json", "sub/opencode.json", "sub/opencode.jsonc", "sub/.devcontainer.json", "README", "sub/p.code-workspace", ".code-workspace"} {
		os.WriteFile(filepath.Join(r, f), []byte("{}"), 0o644)
	}
	var asked []string
	loads := func(p string) ([]gitpin.Steer, error) {
		asked = append(asked, strings.TrimPrefix(p, r+"/"))
		// What lies in a protected directory is held with it; a note
		// holds nothing and is said once.
		return []gitpin.Steer{{Path: p + ".runs", Why: "test"}, {Path: "/elsewhere/x", Why: "test"}, {Path: filepath.Join(r, "sub/.claude/x.sh"), Why: "test"}, {Note: "could not follow"}}, nil
	}
	f, err := Gather(r, GitFacts{Loads: loads})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	if got := strings.Join(asked, " "); got != ".codex .devcontainer .envrc .mcp.json .vscode sub/.claude sub/.devcontainer.json sub/opencode.json sub/opencode.jsonc sub/p.code-workspace" {
		t.Errorf("Loads asked about %q", got)
	}
	var steer []string
	for _, s := range f.Steer {
		steer = append(steer, strings.TrimPrefix(s.Path, r+"/"))
	}
	slices.Sort(steer)
	if got := strings.Join(steer, " "); got != ".codex.runs .devcontainer.runs .envrc.runs .mcp.json.runs .vscode.runs sub/.claude.runs sub/.devcontainer.json.runs sub/opencode.json.runs sub/opencode.jsonc.runs sub/p.code-workspace.runs" {
		t.Errorf("steering %q", got)
	}
	p, err := Make(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Notes, []string{"could not follow"}) {
		t.Errorf("the launch's notes: %q", p.Notes)
	}
}

// TestGatherDepTrees: a package's own editor, direnv and hook-manager
// files in node_modules are no project's: nothing protects them, so no
// directory of the tree is a mount point and npm ci can remove it, and
// the end sweeps none the box made. An agent's project files, and a
// virtual environment's pyvenv.cfg, are protected there as anywhere;
// what a file that a host tool runs puts on PATH in the tree (a root
// .envrc's node_modules/.bin) is held; a protected name that is a link
// there (a package's node_modules/.bin/mise) refuses nothing.
func TestGatherDepTrees(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"node_modules/pkg/.vscode", "node_modules/pkg/.husky", "node_modules/@s/p/node_modules/q/.idea", "node_modules/agent/.claude", "node_modules/py/venv/bin", "node_modules/.bin", "node_modules/@jdxcode/mise/bin", "web/.vscode"} {
		os.MkdirAll(filepath.Join(r, d), 0o755)
	}
	for _, f := range []string{".envrc", "node_modules/pkg/.envrc", "node_modules/pkg/.vscode/tasks.json", "node_modules/pkg/.npmrc", "node_modules/pkg/.tool-versions", "node_modules/py/venv/pyvenv.cfg", "node_modules/@jdxcode/mise/bin/mise"} {
		os.WriteFile(filepath.Join(r, f), []byte("{}"), 0o644)
	}
	os.Symlink("../@jdxcode/mise/bin/mise", filepath.Join(r, "node_modules/.bin/mise"))
	var asked []string
	loads := func(p string) ([]gitpin.Steer, error) {
		asked = append(asked, strings.TrimPrefix(p, r+"/"))
		if p == filepath.Join(r, ".envrc") {
			return []gitpin.Steer{{Path: filepath.Join(r, "node_modules/.bin"), Dir: true, Why: "direnv: layout node"}}, nil
		}
		return nil, nil
	}
	f, err := Gather(r, GitFacts{Loads: loads})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(existing(f, r), " "); got != ".envrc node_modules/agent/.claude node_modules/py/venv/pyvenv.cfg web/.vscode" {
		t.Errorf("found %q", got)
	}
	slices.Sort(asked)
	if got := strings.Join(asked, " "); got != ".envrc node_modules/agent/.claude node_modules/py/venv/pyvenv.cfg web/.vscode" {
		t.Errorf("Loads asked about %q", got)
	}
	p, err := Make(f)
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	var inTree []string
	for _, it := range p.Items {
		if rel := strings.TrimPrefix(it.Path, r+"/"); strings.HasPrefix(rel, "node_modules") {
			inTree = append(inTree, it.How.String()+" "+rel)
		}
	}
	if got, want := strings.Join(inTree, ", "), "pin node_modules, copy node_modules/.bin, pin node_modules/agent, copy node_modules/agent/.claude, pin node_modules/py, pin node_modules/py/venv, copy node_modules/py/venv/pyvenv.cfg"; got != want {
		t.Errorf("items in node_modules: %q, want %q", got, want)
	}

	// What the box makes in the tree is swept only for an agent's row;
	// a link it makes elsewhere that leads into the tree (where the
	// user would open it as a folder or cd into it) is swept too. The
	// user's own link from before is not, nor one leading elsewhere.
	os.MkdirAll(filepath.Join(r, "bin"), 0o755)
	os.Symlink("../node_modules/.bin/mise", filepath.Join(r, "bin/m"))
	start := time.Now()
	// Timestamps come from the kernel's coarse clock, up to a tick
	// behind: what the box makes a tick after the start is dated after it.
	time.Sleep(20 * time.Millisecond)
	os.MkdirAll(filepath.Join(r, "node_modules/new/.vscode"), 0o755)
	os.WriteFile(filepath.Join(r, "node_modules/new/.envrc"), nil, 0o644)
	os.MkdirAll(filepath.Join(r, "node_modules/new/.codex"), 0o755)
	os.Symlink("node_modules/new", filepath.Join(r, "tools"))
	os.Symlink("../tools", filepath.Join(r, "web/tools"))
	os.Symlink(filepath.Join(r, "node_modules/gone"), filepath.Join(r, "gone"))
	os.Symlink("../web", filepath.Join(r, "bin/web"))
	os.Symlink("../tools", filepath.Join(r, "node_modules/new/up"))
	known := p.Known
	for _, it := range p.Items {
		known = append(known, it.Path)
	}
	got := NewSince(r, known, GitFacts{}, Span{Start: start}).Paths
	want := []string{filepath.Join(r, "gone"), filepath.Join(r, "node_modules/new/.codex"), filepath.Join(r, "tools"), filepath.Join(r, "web/tools")}
	if !slices.Equal(got, want) {
		t.Errorf("new since: %q, want %q", got, want)
	}
}

// BenchmarkGatherNodeModules walks a node_modules of 1000 packages of 20
// files each, one in ten shipping its own .vscode of three files.
func BenchmarkGatherNodeModules(b *testing.B) {
	r := b.TempDir()
	for i := range 1000 {
		d := filepath.Join(r, "node_modules", "p"+strconv.Itoa(i), "lib")
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(j)+".js"), nil, 0o644)
		}
		if i%10 == 0 {
			v := filepath.Join(r, "node_modules", "p"+strconv.Itoa(i), ".vscode")
			os.MkdirAll(v, 0o755)
			for _, f := range []string{"tasks.json", "settings.json", "launch.json"} {
				os.WriteFile(filepath.Join(v, f), []byte("{}"), 0o644)
			}
		}
	}
	for b.Loop() {
		f, err := Gather(r, GitFacts{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Make(f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGatherLinkTargets: what a link in a protected directory leads to
// in the repository is held (present or not), unless it is protected
// already; a link to a directory above it is only said.
func TestGatherLinkTargets(t *testing.T) {
	r := t.TempDir()
	for _, d := range []string{".agents/skills", "skills/tidy", ".claude"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".agents/skills/tidy":  "../../skills/tidy",
		".agents/skills/other": filepath.Join(r, ".claude"),
		".agents/up":           "..",
		".claude/cmd.md":       "../docs/cmd.md",
		".claude/outside":      "/etc/hostname",
	} {
		if err := os.Symlink(target, filepath.Join(r, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Gather(r, GitFacts{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PathFact{}
	for _, s := range f.Steer {
		got[strings.TrimPrefix(s.Path, r+"/")] = s
	}
	if s, ok := got["skills/tidy"]; !ok || !s.Exists || !s.Dir {
		t.Errorf("skills/tidy, linked from .agents/skills/tidy: %+v (found %v)", s, ok)
	}
	if s, ok := got["docs/cmd.md"]; !ok || s.Exists || s.Dir {
		t.Errorf("docs/cmd.md, linked from .claude/cmd.md and absent: %+v (found %v)", s, ok)
	}
	if len(got) != 2 {
		t.Errorf("steer = %v, want skills/tidy and docs/cmd.md alone", f.Steer)
	}
	if len(f.Notes) != 1 || !strings.Contains(f.Notes[0], ".agents/up") {
		t.Errorf("notes = %q, want one about .agents/up", f.Notes)
	}
	p, err := Make(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"copy " + filepath.Join(r, "skills/tidy"), "create " + filepath.Join(r, "docs/cmd.md")} {
		if !strings.Contains(items(p), want) {
			t.Errorf("plan lacks %q:\n%s", want, items(p))
		}
	}
}

package strictbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/direnv"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
	"github.com/aisan-dev/aisan/jail/strictbox/projectrun"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"github.com/tailscale/hujson"
)

// systemPrefixes are already visible in every strict box.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

func isSystem(p string) bool {
	for _, s := range systemPrefixes {
		if within(p, s) {
			return true
		}
	}
	return false
}

// toolDirs finds what running name needs beyond the system directories:
// the directory it is found in (put on PATH when onPath is set), the
// package it resolves into (a node_modules tree, a native installer's
// version dir), and its script interpreter, found the same way. A name
// with a slash is a path (relative ones against cwd), any other is looked
// up on the host's PATH. An interpreter named by its path (#!/abs/python)
// does not put its directory on PATH, as the shell would not.
func toolDirs(name, cwd string, env []string, depth int, onPath bool) (ro, path []string, err error) {
	var p string
	switch {
	case filepath.IsAbs(name):
		p = name
	case strings.Contains(name, "/"):
		p = filepath.Join(cwd, name)
	default:
		p, err = lookPathIn(name, env)
		if err != nil {
			return nil, nil, err
		}
	}
	p = filepath.Clean(p)
	if !isSystem(p) {
		ro = append(ro, filepath.Dir(p))
		if onPath {
			path = append(path, filepath.Dir(p))
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, nil, fmt.Errorf("resolving %s: %w", p, err)
	}
	if !isSystem(real) {
		dir := filepath.Dir(real)
		if i := strings.LastIndex(real, "/node_modules/"); i >= 0 {
			dir = real[:i+len("/node_modules")]
		}
		ro = append(ro, dir)
	}
	if depth < 2 {
		if interp := shebang(real); interp != "" {
			iro, ipath, err := toolDirs(interp, cwd, env, depth+1, !strings.Contains(interp, "/"))
			if err != nil {
				return nil, nil, fmt.Errorf("%s runs with %s: %w", p, interp, err)
			}
			ro, path = append(ro, iro...), append(path, ipath...)
		}
	}
	return coverDedup(ro), dedup(path), nil
}

// coverDedup drops directories another in the list already covers.
func coverDedup(dirs []string) []string {
	var out []string
	for _, d := range dedup(dirs) {
		covered := false
		for _, o := range dirs {
			if o != d && within(d, o) {
				covered = true
			}
		}
		if !covered {
			out = append(out, d)
		}
	}
	return out
}

// lookPathIn finds name on the PATH of env, as bindspec.LookPath does.
func lookPathIn(name string, env []string) (string, error) {
	if p := bindspec.LookPath(name, jail.Host{Env: env}.Getenv("PATH")); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%q not found in PATH", name)
}

// shebang returns the interpreter a script names ("node" for
// "#!/usr/bin/env node"), or "".
func shebang(p string) string {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return ""
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" {
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") {
				return f
			}
		}
		return ""
	}
	return fields[0]
}

// rootEntries are the top-level system paths as they are on this host.
func rootEntries() []jail.RootEntry {
	var out []jail.RootEntry
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				out = append(out, jail.RootEntry{Path: p, Link: t})
			}
			continue
		}
		if fi.IsDir() {
			out = append(out, jail.RootEntry{Path: p})
		}
	}
	return out
}

// gitIdentityKeys are the global git settings a box gets: who the user
// is and settings that run nothing and hold no secret.
var gitIdentityKeys = []string{"user.name", "user.email", "init.defaultbranch", "core.autocrlf", "core.eol", "pull.rebase", "merge.conflictstyle", "diff.algorithm"}

// maxEnvrc caps an .envrc read for what it loads.
const maxEnvrc = 1 << 20

// installedIn reports whether a command is on env's PATH, looking each
// name up once: the table asks about a tool once per row it has (mise
// has eleven).
func installedIn(env []string) func(cmd string) bool {
	seen := map[string]bool{}
	return func(cmd string) bool {
		in, ok := seen[cmd]
		if !ok {
			_, err := lookPathIn(cmd, env)
			in = err == nil
			seen[cmd] = in
		}
		return in
	}
}

// projectLoads is what a file found at launch that a host tool approves
// by name or not at all makes it run besides itself: an .envrc's loads
// (envrcLoads), a project MCP file's programs (mcpPrograms; Codex's is
// .codex/config.toml), the scripts Claude's project settings run
// (claudePrograms), VS Code's tasks run on folder open and a dev
// container's initializeCommand (readPrograms), the directories a
// .tool-versions or a rust-toolchain file runs tools from
// (toolVersionsLoads, rustToolchainLoads), the Yarn release and plugins
// a Yarn settings file runs (yarnLoads).
func projectLoads(p, home string) ([]gitpin.Steer, error) {
	pr := hostProject(home)
	switch filepath.Base(p) {
	case ".envrc":
		return envrcLoads(p)
	case ".claude":
		return claudePrograms(p, pr), nil
	case ".codex":
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			return nil, nil
		}
		out := mcpPrograms(filepath.Join(p, "config.toml"), pr)
		return append(out, readPrograms([]string{filepath.Join(p, "hooks.json"), filepath.Join(p, "config.toml")}, projectrun.CodexHooks, pr, "Codex: a file a hook of %s runs, with no question once the hook is trusted")...), nil
	case ".vscode":
		return readPrograms([]string{filepath.Join(p, "tasks.json")}, projectrun.VSCodeTasks, pr, "VS Code: a file a task of %s runs on folder open, with no question once automatic tasks are allowed"), nil
	case ".devcontainer":
		files := []string{filepath.Join(p, "devcontainer.json")}
		if es, err := os.ReadDir(p); err == nil {
			for _, e := range es {
				if e.Type().IsDir() {
					files = append(files, filepath.Join(p, e.Name(), "devcontainer.json"))
				}
			}
		}
		return readPrograms(files, projectrun.Devcontainer, pr, devcontainerWhy), nil
	case ".devcontainer.json":
		return readPrograms([]string{p}, projectrun.Devcontainer, pr, devcontainerWhy), nil
	case ".tool-versions":
		return toolVersionsLoads(p), nil
	case "rust-toolchain.toml", "rust-toolchain":
		return rustToolchainLoads(p), nil
	case ".yarnrc.yml", ".yarnrc":
		return yarnLoads(p), nil
	case "pyvenv.cfg":
		return venvLoads(p), nil
	case ".husky":
		return huskyLoads(p, home), nil
	case "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".rtx.toml", ".rtx.local.toml":
		return readPrograms([]string{p}, projectrun.Mise, pr, miseWhy), nil
	case "mise", ".mise":
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			return nil, nil
		}
		files := []string{filepath.Join(p, "config.toml"), filepath.Join(p, "config.local.toml")}
		if es, err := os.ReadDir(filepath.Join(p, "conf.d")); err == nil {
			for _, e := range es {
				if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".toml") {
					files = append(files, filepath.Join(p, "conf.d", e.Name()))
				}
			}
		}
		return readPrograms(files, projectrun.Mise, pr, miseWhy), nil
	case ".pre-commit-config.yaml":
		return readPrograms([]string{p}, projectrun.PreCommit, pr, "pre-commit: a file a local hook of %s runs, with no question on the next commit"), nil
	case ".opencode":
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			return nil, nil
		}
		var out []gitpin.Steer
		for _, c := range []string{"opencode.json", "opencode.jsonc"} {
			c = filepath.Join(p, c)
			out = slices.Concat(out, mcpPrograms(c, pr), opencodeLoads(c, pr), opencodeCommands(c, pr))
		}
		return out, nil
	case "opencode.json", "opencode.jsonc":
		return slices.Concat(mcpPrograms(p, pr), opencodeLoads(p, pr), opencodeCommands(p, pr)), nil
	}
	for _, pat := range protect.LoadsPatterns {
		if ok, _ := path.Match(pat, filepath.Base(p)); ok {
			return readPrograms([]string{p}, projectrun.Mise, pr, miseWhy), nil
		}
	}
	if protect.LefthookConfig(filepath.Base(p)) {
		return readPrograms([]string{p}, projectrun.Lefthook, pr, "lefthook: a file a command or script of %s runs, with no question on the next commit or push"), nil
	}
	if strings.HasSuffix(p, ".code-workspace") {
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
			return nil, nil
		}
		return readPrograms([]string{p}, projectrun.VSCodeWorkspace, pr, "VS Code: a file a task of the workspace %s runs on folder open, with no question once automatic tasks are allowed"), nil
	}
	return mcpPrograms(p, pr), nil
}

// opencodeLoads is what an opencode config file makes opencode load
// besides its MCP servers: the local plugins it names by path (relative
// to the file), which opencode imports and runs at every start with no
// question, each held with the directory it lies in as a script node
// runs is (a plugin imports its modules from there), and the skill
// directories of skills.paths, whose SKILL.md files it offers the model.
func opencodeLoads(p string, pr projectrun.Project) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	std, err := hujson.Standardize(b)
	if err != nil {
		return nil
	}
	var doc struct {
		Plugin []json.RawMessage `json:"plugin"`
		Skills struct {
			Paths []string `json:"paths"`
		} `json:"skills"`
	}
	if json.Unmarshal(std, &doc) != nil {
		return nil
	}
	dir, root := filepath.Dir(p), filepath.Dir(p)
	if filepath.Base(dir) == ".opencode" {
		root = filepath.Dir(dir)
	}
	local := func(spec string) (string, bool) {
		if u, ok := strings.CutPrefix(spec, "file://"); ok {
			return filepath.Clean(u), filepath.IsAbs(u)
		}
		if filepath.IsAbs(spec) || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") {
			return filepath.Join(dir, spec), true
		}
		return "", false
	}
	var out []gitpin.Steer
	why := "opencode: a plugin " + p + " loads, run at every start with no question"
	for _, raw := range doc.Plugin {
		var spec string
		if json.Unmarshal(raw, &spec) != nil {
			var tuple []json.RawMessage
			if json.Unmarshal(raw, &tuple) != nil || len(tuple) == 0 || json.Unmarshal(tuple[0], &spec) != nil {
				continue
			}
		}
		if f, ok := local(spec); ok {
			out = append(out, namedSteers(projectrun.Program(p, []string{"node", f}, dir, root, pr), why)...)
		}
	}
	for _, d := range doc.Skills.Paths {
		if strings.HasPrefix(d, "~") || strings.Contains(d, "$") {
			continue
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		d = filepath.Clean(d)
		st, err := os.Lstat(d)
		out = append(out, gitpin.Steer{Path: d, Dir: err != nil || st.IsDir(), Why: "opencode: skills " + p + " names, whose SKILL.md files it offers the model"})
	}
	return out
}

// devcontainerWhy says why a file an initializeCommand names is held.
const devcontainerWhy = "dev containers: a file the initializeCommand of %s runs on the host when the container is built or started"

// readPrograms reads each of files that is a regular file in a directory
// found at launch (a link or a FIFO is not read) for the files it makes
// its tool run (names), and keeps those that are regular files, and the
// directories it holds whole, as steering paths; why says why, given the
// file. What names could not follow is said at launch.
func readPrograms(files []string, names func(path string, data []byte, pr projectrun.Project) projectrun.Names, pr projectrun.Project, why string) []gitpin.Steer {
	if len(files) == 0 {
		return nil
	}
	if st, err := os.Lstat(filepath.Dir(files[0])); err != nil || !st.IsDir() {
		return nil
	}
	var out []gitpin.Steer
	for _, p := range files {
		b, err := regfile.Read(p, maxEnvrc)
		if err != nil {
			continue
		}
		out = append(out, namedSteers(names(p, b, pr), fmt.Sprintf(why, p))...)
	}
	return out
}

// miseWhy says why what a mise config names is held.
const miseWhy = "mise: a file %s makes mise run or load on every cd into the project and every prompt there, with no question once it is trusted"

// hostProject is how the readers of projectrun see the host's files.
func hostProject(home string) projectrun.Project {
	return projectrun.Project{Read: readProject, Home: home, List: listProject, Dirs: dirsProject, Link: linkProject}
}

// readProject reads a file a project's command makes its tool read (a
// package.json, a makefile): a regular file, not through a final link.
func readProject(p string) []byte {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	return b
}

// listProject names the regular files of a directory of the project (a
// link is no directory here), or nil.
func listProject(dir string) []string {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := []string{}
	for _, e := range es {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// dirsProject names the directories in a directory of the project (a
// link is none here), or nil.
func dirsProject(dir string) []string {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// linkProject is the target of a symlink of the project, or "".
func linkProject(p string) string {
	t, err := os.Readlink(p)
	if err != nil {
		return ""
	}
	return t
}

// namedSteers are the steering paths of what a project file runs: its
// files that are regular files, its directories that are directories
// (not links), and its notes, said at launch.
func namedSteers(n projectrun.Names, why string) []gitpin.Steer {
	out := regularSteers(n.Files, why)
	out = append(out, missingSteers(n.Programs, why)...)
	out = append(out, lookedSteers(n.Looked, n.Programs, why)...)
	for _, f := range n.Files {
		// A package's command in node_modules/.bin is a link into the
		// package, whose every file it may load: the package is held.
		if !strings.Contains(f, "/node_modules/.bin/") {
			continue
		}
		if st, err := os.Lstat(f); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if t, err := filepath.EvalSymlinks(f); err == nil {
			if d := projectrun.PackageOf(t); d != "" {
				n.Dirs = append(n.Dirs, d)
			}
		}
	}
	progs := n.Programs
	for _, m := range n.Modules {
		if m.Node {
			// Its names are packages, whose links the walk follows
			// (projectrun's linkedDir).
			continue
		}
		// A module or package the scripts import by name that is a link
		// at the root (helpers.py -> vendor/helpers.py): held as a
		// program that is a link is.
		for _, name := range m.Names {
			for _, p := range []string{filepath.Join(m.Path, name+".py"), filepath.Join(m.Path, name)} {
				if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
					progs = append(progs, p)
				}
			}
		}
	}
	n.Dirs = append(n.Dirs, linkDirs(progs)...)
	for _, d := range n.Dirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			if r, err := filepath.EvalSymlinks(d); err == nil && r == d {
				out = append(out, gitpin.Steer{Path: d, Dir: true, Why: why + " (held whole)"})
			}
		}
	}
	for _, m := range n.Modules {
		w := why + " (modules it imports by name from there)"
		switch {
		case m.Site:
			w = why + " (its python's site-packages: what runs as Python starts, and the modules it imports by name from there)"
		case m.Node:
			w = why + " (where node looks for packages its code loads by name that are not there)"
		}
		out = append(out, gitpin.Steer{Path: m.Path, Dir: true, Modules: true, Names: m.Names, Site: m.Site, Node: m.Node, Why: w})
	}
	for _, note := range n.Notes {
		out = append(out, gitpin.Steer{Note: note})
	}
	return out
}

// linkDirs are the directories to hold whole for the programs among ps
// that are links (regularSteers leaves a link): the one it lies in, so
// the box can neither point it elsewhere nor rewrite it, and the one
// its target lies in, for the target and for what an interpreter loads
// from beside it (Python and node look beside the target, not the
// link). A command of node_modules/.bin is namedSteers' own business.
func linkDirs(ps []string) []string {
	var out []string
	for _, p := range ps {
		if strings.Contains(p, "/node_modules/.bin/") {
			continue
		}
		if st, err := os.Lstat(p); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		var ds []string
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			ds = append(ds, d)
		}
		if t, err := filepath.EvalSymlinks(p); err == nil {
			if st, err := os.Stat(t); err == nil && st.Mode().IsRegular() {
				ds = append(ds, filepath.Dir(t))
			} else if err == nil && st.IsDir() {
				// A package that is a link: the package.
				ds = append(ds, t)
			}
		}
		for _, d := range ds {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// claudePrograms reads the project settings in a .claude directory found
// at launch (settings.json, settings.local.json) for the files their
// hooks, status line and helpers run ([projectrun.ClaudeSettings]) that
// are regular files: Claude runs them with no question once the project
// is trusted. A .claude or a settings file that is no directory or
// regular file is not read: its row protects it.
func claudePrograms(dir string, pr projectrun.Project) []gitpin.Steer {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	var out []gitpin.Steer
	for _, n := range []string{"settings.json", "settings.local.json"} {
		p := filepath.Join(dir, n)
		b, err := regfile.Read(p, maxEnvrc)
		if err != nil {
			continue
		}
		out = append(out, namedSteers(projectrun.ClaudeSettings(p, b, pr), "Claude Code: a file a hook or command of "+p+" runs, with no question once the project is trusted")...)
	}
	return out
}

// regularSteers are the paths among ps that are regular files (a final
// link or a FIFO is not followed), as steering paths. A path reached
// through a linked directory is taken where it lies: a file elsewhere in
// the repository is protected there, one outside it is not the box's to
// write (and a mount through the link would fail the launch).
func regularSteers(ps []string, why string) []gitpin.Steer {
	var out []gitpin.Steer
	for _, f := range ps {
		d, err := filepath.EvalSymlinks(filepath.Dir(f))
		if err != nil {
			continue
		}
		f = filepath.Join(d, filepath.Base(f))
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			out = append(out, gitpin.Steer{Path: f, Why: why})
		}
	}
	return out
}

// missingSteers are the programs among ps that do not exist at launch,
// in a directory that does (not through a link): a command that runs
// one once it exists ([ -x ./local.sh ] && ./local.sh) would run what
// the box created there, so the path is held as one the box may create
// only into the review. Those outside the repository are dropped by
// the caller.
func missingSteers(ps []string, why string) []gitpin.Steer {
	var out []gitpin.Steer
	for _, p := range ps {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		d := filepath.Dir(p)
		if r, err := filepath.EvalSymlinks(d); err != nil || r != d {
			continue
		}
		out = append(out, gitpin.Steer{Path: p, Why: why + " (missing at launch: what the box creates there is held)"})
	}
	return out
}

// lookedSteers are the directories of the files among ps (the configs
// and lock files a held command's tool looks for by name) that do not
// exist at launch, each with the names missing there (programs are
// missingSteers'). What the box creates by one of those names is swept
// into the review at the end (protect's ModuleDir.Files), rather than
// foreseen with a mount point each. A file a command's words name is
// not among them: it may as well be what the command writes.
func lookedSteers(ps, progs []string, why string) []gitpin.Steer {
	var out []gitpin.Steer
	for _, p := range ps {
		if slices.Contains(progs, p) {
			continue
		}
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		d := filepath.Dir(p)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		i := slices.IndexFunc(out, func(o gitpin.Steer) bool { return o.Path == d })
		if i < 0 {
			i = len(out)
			out = append(out, gitpin.Steer{Path: d, Dir: true, Modules: true, Files: true, Why: why + " (files it looks for there, missing at launch)"})
		}
		if name := filepath.Base(p); !slices.Contains(out[i].Names, name) {
			out[i].Names = append(out[i].Names, name)
		}
	}
	return out
}

// mcpPrograms reads a project MCP file found at launch for the files in
// it its servers name ([mcp.ProjectPrograms]) that are regular files,
// and what those programs run in turn, read as a hook's command is
// ([projectrun.Program]: a shell script's sources, the directory a
// python or node script loads its modules from): a host client starts
// those servers with no question about what they run. One that is not
// a regular file is not read: its row protects it.
func mcpPrograms(p string, pr projectrun.Project) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	why := "MCP: a file a server of " + p + " runs, started by the host client with no question once the server is approved"
	out := regularSteers(mcp.ProjectPrograms(p, b), why)
	for _, c := range mcp.ProjectCommands(p, b) {
		for _, st := range namedSteers(projectrun.Program(p, c.Argv, c.Dir, c.Root, pr), why) {
			// A directory swept for names (Modules) may come once per
			// command, each with its own names.
			if st.Path == "" || st.Modules || !slices.ContainsFunc(out, func(o gitpin.Steer) bool { return o.Path == st.Path }) {
				out = append(out, st)
			}
		}
	}
	return out
}

// opencodeCommands is what the formatters and language servers of an
// opencode config file run: opencode starts a formatter on each file it
// edits and a language server as it opens one, with no question, in
// the project's directory. A section that is not a table of commands
// (formatter: false) names none.
func opencodeCommands(p string, pr projectrun.Project) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	std, err := hujson.Standardize(b)
	var doc map[string]json.RawMessage
	if err != nil || json.Unmarshal(std, &doc) != nil {
		return nil
	}
	root := filepath.Dir(p)
	if filepath.Base(root) == ".opencode" {
		root = filepath.Dir(root)
	}
	var out []gitpin.Steer
	for _, section := range []string{"formatter", "lsp"} {
		var entries map[string]struct {
			Command []string `json:"command"`
		}
		if json.Unmarshal(doc[section], &entries) != nil {
			continue
		}
		why := "opencode: a file a " + section + " command of " + p + " runs, started with no question as opencode edits or opens a file"
		var names []string
		for name := range entries {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if argv := entries[name].Command; len(argv) > 0 {
				out = append(out, namedSteers(projectrun.Program(p, argv, root, root, pr), why)...)
			}
		}
	}
	return out
}

// repoPathDirs splits the host's PATH into the directories outside the
// repository and those in it (but the repository itself), each as its
// real path.
func repoPathDirs(path []string, repo string) (outside, in []string) {
	for _, d := range path {
		if !filepath.IsAbs(d) {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			real = filepath.Clean(d)
		}
		if real != repo && within(real, repo) {
			in = append(in, real)
			continue
		}
		outside = append(outside, d)
	}
	return outside, in
}

// pathDirsHeld reports whether the box sees each of dirs (the
// repository's directories on the host's PATH) only as a copy held for
// review or read-only: what it writes there never reaches the host's
// next command. The last item that covers a directory (the items are in
// mount order) decides, and nothing below it may be the host's again (a
// Pin or a Shadow's live entries).
func pathDirsHeld(dirs []string, plan protect.Plan) bool {
	safe := func(h protect.How) bool { return h == protect.Copy || h == protect.Create || h == protect.ReadOnly }
	for _, d := range dirs {
		held := false
		for _, it := range plan.Items {
			switch {
			case within(d, it.Path):
				held = safe(it.How)
			case within(it.Path, d) && !safe(it.How) && it.How != protect.Mask:
				return false
			}
		}
		if !held {
			return false
		}
	}
	return true
}

// envrcLoads reads an .envrc found at launch for what it makes direnv
// load ([direnv.Loads]), as steering paths. One that is not a regular
// file (a link, a FIFO) is not read, and loads nothing that can be known:
// its row protects it all the same.
func envrcLoads(p string) ([]gitpin.Steer, error) {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil, nil
	}
	loads, err := direnv.Loads(p, b)
	if err != nil {
		return nil, fmt.Errorf("strict mode cannot tell what %s makes direnv load, so it cannot protect it: %w", p, err)
	}
	out := make([]gitpin.Steer, len(loads))
	seen := map[string]bool{}
	for i, l := range loads {
		out[i] = gitpin.Steer{Path: l.Path, Dir: l.Dir, Why: "direnv: " + l.Why + " (" + p + "); the .envrc's approval covers it"}
		if strings.HasSuffix(l.Path, ".nix") {
			out = append(out, nixLoads(l.Path, p, seen)...)
		}
	}
	return out, nil
}

// maxNixFiles bounds the nix files one .envrc's shell is followed
// through.
const maxNixFiles = 64

// nixLoads are what the nix file f (a flake or shell.nix the .envrc at
// envrc uses) names by a relative path, and what the nix files among
// them name in turn: direnv evaluates them on every cd into the project
// whose .envrc is approved, and the shell they make runs its shellHook
// in the user's shell.
func nixLoads(f, envrc string, seen map[string]bool) []gitpin.Steer {
	if seen[f] || len(seen) >= maxNixFiles {
		return nil
	}
	seen[f] = true
	b, err := regfile.Read(f, maxEnvrc)
	if err != nil {
		return nil
	}
	var out []gitpin.Steer
	for _, rel := range direnv.NixPaths(b) {
		q := filepath.Join(filepath.Dir(f), rel)
		if st, err := os.Lstat(q); err == nil && st.IsDir() {
			// A directory is imported through its default.nix, a local
			// flake input through its flake.nix; held whole, a source
			// tree (src = ./src) would be the box's to edit only for
			// review.
			for _, n := range []string{"default.nix", "flake.nix", "flake.lock"} {
				if fi, err := os.Lstat(filepath.Join(q, n)); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				out = append(out, gitpin.Steer{Path: filepath.Join(q, n), Why: "direnv: a nix file " + f + " names, which the nix shell the .envrc (" + envrc + ") uses reads; the .envrc's approval covers it"})
				out = append(out, nixLoads(filepath.Join(q, n), envrc, seen)...)
			}
			continue
		}
		if fi, err := os.Lstat(q); err != nil || !fi.Mode().IsRegular() {
			// Not there (a mount point made for it would be an empty
			// file nix reads), or not a file.
			continue
		}
		out = append(out, gitpin.Steer{Path: q, Why: "direnv: a path " + f + " names, which the nix shell the .envrc (" + envrc + ") uses reads; the .envrc's approval covers it"})
		if strings.HasSuffix(q, ".nix") {
			out = append(out, nixLoads(q, envrc, seen)...)
		}
	}
	return out
}

// gitIdentity builds the box's gitconfig from the user's global one, as
// git reads it in the repository whose git dir is gitDir (includes and
// the includeIf.gitdir: that match it followed), or returns nil when it
// sets none of gitIdentityKeys.
func gitIdentity(home, xdgConfig, gitDir string) []byte {
	files := []string{filepath.Join(home, ".config", "git", "config")}
	if xdgConfig != "" {
		files[0] = filepath.Join(xdgConfig, "git", "config")
	}
	files = append(files, filepath.Join(home, ".gitconfig"))
	settings := gitpin.ReadIdentity(home, gitDir, files...)
	var b bytes.Buffer
	for _, k := range gitIdentityKeys {
		v, ok := gitpin.Lookup(settings, k)
		if !ok || strings.ContainsAny(v, "\n\"\\") {
			continue
		}
		sec, name, _ := strings.Cut(k, ".")
		fmt.Fprintf(&b, "[%s]\n\t%s = \"%s\"\n", sec, name, v)
	}
	if b.Len() == 0 {
		return nil
	}
	return append([]byte("# Generated by aisan for a strict box: identity and harmless settings only.\n"), b.Bytes()...)
}

// maxPreferences caps what is read of the agent's own settings file.
const maxPreferences = 4 << 20

// codexPreferences are the user's safe Codex settings in m (plain
// strings of the keys named) as -c overrides.
func codexPreferences(m map[string]any, keys []string) []string {
	var out []string
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok || strings.ContainsAny(v, "\"\\\n\r\t") {
			continue
		}
		out = append(out, k+"=\""+v+"\"")
	}
	return out
}

// existingCredentials are the credential paths that exist here, and the
// real paths they resolve to.
func existingCredentials(home string, env []string) []string {
	var out []string
	for _, c := range agent.Credentials(home, jail.Host{Env: env}.Getenv) {
		if _, err := os.Lstat(c); err != nil {
			continue
		}
		out = append(out, c)
		if r, err := filepath.EvalSymlinks(c); err == nil && r != c {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// facts is what a strict box is decided from, read from the host once by
// gather: its repository's git layout, the agent's binaries, the user's
// identity, the system's top-level paths, the credentials that exist, the
// bind specs' sources as bwrap will see them, and the agent's own
// instruction files and settings.
type facts struct {
	repo      string
	git       gitpin.Plan
	xdgConfig string
	// guard is how what host tools run appears in the box (protect),
	// held the set its copies will live in (held).
	guard protect.Plan
	held  string
	// toolRO and toolPath are the agent's directories (toolDirs), as
	// the host finds it; none when the host does not.
	toolRO, toolPath []string
	// hostPath are the host's PATH directories that exist, in order;
	// found is where the command and the toolchains' commands are, in
	// those and the other directories the box's PATH may hold.
	hostPath []string
	found    found
	// cacheBase names the repository's caches in aisan's state.
	cacheBase   string
	user        string
	root        []jail.RootEntry
	credentials []string
	// binds are the bind specs' mounts, their sources resolved through
	// every symlink: the credentials are checked against what bwrap binds.
	binds []jail.Mount
	// gitconfig is the generated gitconfig's content, nil for none.
	gitconfig []byte
	// stateBase names the agent's state directory for this repository
	// (slot.BaseName of it: the worktree root's real path).
	stateBase string
	// configDir is the agent's host configuration directory; the
	// instruction files and preferences are those found there.
	configDir                      string
	instructions, homeInstructions []string
	codexRules                     []string
	preferences                    []string
	// codexPolicy is what Codex's box takes of the user's settings that
	// decide what it runs without asking, read from codexConfig.
	codexPolicy codexPolicy
	codexConfig string
	// netBinds are what name resolution needs under /run with --net.
	netBinds []string
}

// gather reads what a strict box of kind running command in the slot
// named is decided from, on host h. sweep, when not nil, is given the
// repository before anything in it is read.
func gather(kind jail.Kind, command []string, h jail.Host, slotName string, o Options, sweep func(repo string)) (facts, error) {
	var f facts
	f.repo = gitpin.Find(h.Cwd)
	if f.repo == "" {
		f.repo = h.Cwd
	}
	if r, err := filepath.EvalSymlinks(f.repo); err == nil {
		f.repo = r
	}
	if f.xdgConfig = h.Getenv("XDG_CONFIG_HOME"); !filepath.IsAbs(f.xdgConfig) {
		f.xdgConfig = ""
	}
	if err := protect.CheckRoot([]string{f.repo, h.Cwd}, sharedDirs(h)); err != nil {
		return f, err
	}
	if sweep != nil {
		sweep(f.repo)
	}
	// A box writes its repository as a bind spec's rw entry writes its
	// source: the same table says where it may not.
	hf := o.Facts
	if hf == nil {
		hf = bindspec.GatherFacts(h.Env, h.Home)
	}
	// A directory of the repository on the host's PATH is checked once
	// the protections are planned: direnv's PATH_add puts one there, and
	// the box sees it as a copy held for review.
	hostPATH := filepath.SplitList(h.Getenv("PATH"))
	outside, inRepo := repoPathDirs(hostPATH, f.repo)
	workdir := bindspec.Host{Home: h.Home, Facts: hf, PATH: outside, System: systemPrefixes}
	if err := bindspec.CheckWorkdir([]string{f.repo, h.Cwd}, workdir); err != nil {
		return f, err
	}
	launch.Trace("workdir checked")
	git, err := gitpin.Make(f.repo, h.Home, f.xdgConfig)
	if err != nil {
		return f, fmt.Errorf("strict mode cannot protect this repository's git metadata: %w", err)
	}
	f.git = git
	launch.Trace("git planned")
	pf, err := protect.Gather(f.repo, protect.GitFacts{GitDir: git.GitDir, CommonDir: git.CommonDir, Steer: git.Steer, Watch: git.Watch,
		Home: h.Home, Global: gitpin.GlobalFiles(h.Home, f.xdgConfig),
		Installed: installedIn(h.Env),
		Loads:     func(p string) ([]gitpin.Steer, error) { return projectLoads(p, h.Home) },
		Hooks:     git.HookDirs,
		HookLoads: func(d, root string) ([]gitpin.Steer, error) { return hookLoads(d, root, h.Home), nil }})
	if err != nil {
		return f, err
	}
	launch.Trace(fmt.Sprintf("repository walked: %d entries, %d sockets", pf.Entries, len(pf.Sockets)))
	pf.Mounted = gitMounted(f.repo, git)
	if f.guard, err = protect.Make(pf); err != nil {
		return f, err
	}
	if !pathDirsHeld(inRepo, f.guard) {
		workdir.PATH = hostPATH
		if err := bindspec.CheckWorkdir([]string{f.repo, h.Cwd}, workdir); err != nil {
			return f, err
		}
	}
	f.held = held.NewSetDir(h.AisanHome, slotName, time.Now())
	if err := gatherCommand(&f, kind, command[0], h, o); err != nil {
		return f, err
	}
	f.user = currentUser(h.Getenv)
	f.root = rootEntries()
	f.credentials = existingCredentials(h.Home, h.Env)
	for _, m := range o.Binds {
		if m.Src != "" {
			if r, err := filepath.EvalSymlinks(m.Src); err == nil {
				m.Src = r
			}
		}
		f.binds = append(f.binds, m)
	}
	f.gitconfig = gitIdentity(h.Home, f.xdgConfig, f.git.GitDir)
	if a, ok := agent.ByKind(string(kind)); ok {
		if f.stateBase, err = slot.BaseName(f.repo, string(kind)); err != nil {
			return f, err
		}
		f.configDir = a.Dir(h.Home, h.Getenv)
		for _, rel := range a.Instructions {
			if _, err := os.Stat(filepath.Join(f.configDir, rel)); err == nil {
				f.instructions = append(f.instructions, rel)
			}
		}
		for _, rel := range a.HomeInstructions {
			if _, err := os.Stat(filepath.Join(h.Home, rel)); err == nil {
				f.homeInstructions = append(f.homeInstructions, rel)
			}
		}
		if a.Kind == agent.Codex.Kind {
			f.codexConfig = filepath.Join(f.configDir, "config.toml")
			profile, _, named := codexProfileArg(command[1:])
			if named && profile == "" {
				return f, jail.WithHints(errors.New("codex --profile: no profile named"), "--profile NAME takes "+filepath.Join(f.configDir, "NAME.config.toml"))
			}
			if profile != "" {
				f.codexConfig += " and " + filepath.Join(f.configDir, profile+".config.toml")
			}
			if f.preferences, f.codexPolicy, err = codexSettings(f.configDir, profile, a.Preferences, []string{h.Cwd, f.repo}); err != nil {
				return f, err
			}
			if !f.codexPolicy.Trusted && !f.codexPolicy.Untrusted {
				// The box marks the project trusted, for Codex's
				// defaults; but Codex reads a project's own .codex only
				// once the user trusted the project, so one with a .codex
				// the user has not trusted is untrusted in the box.
				if d := codexProjectDir(h.Cwd, f.repo); d != "" {
					f.codexPolicy.Untrusted, f.codexPolicy.ProjectOff, f.codexPolicy.TrustDir = true, d, f.repo
				}
			}
			f.codexRules = codexRulesFiles(filepath.Join(f.configDir, "rules"))
		}
	}
	if o.Net {
		if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && within(r, "/run") {
			f.netBinds = append(f.netBinds, filepath.Dir(r))
		}
	}
	return f, nil
}

// gitMounted are the paths a box has as mount points before the
// protections: the repository and the git pins (a sealed directory's
// holes too). protect.Make pins the directories above a protected path
// up to the nearest of them.
func gitMounted(repo string, git gitpin.Plan) []string {
	out := []string{repo}
	for _, p := range git.Pins {
		out = append(out, p.Path)
		out = append(out, p.Holes...)
	}
	return out
}

// decide is the strict preset's options for an agent of kind running
// command on host h in the slot named, from what the user asked (o) and
// what gather found: it reads nothing. secret are the variables whose
// values it took from the host.
func decide(kind jail.Kind, command []string, h jail.Host, slotName string, o Options, f facts) (so jail.StrictOptions, secret []string) {
	var pins []jail.Mount
	for _, p := range f.git.Pins {
		switch p.Kind {
		case gitpin.RW:
			pins = append(pins, jail.Mount{Kind: jail.Bind, Src: p.Path, Dst: p.Path, Why: p.Why})
		case gitpin.RO:
			pins = append(pins, jail.Mount{Kind: jail.ROBind, Src: p.Path, Dst: p.Path, Why: p.Why})
		case gitpin.Seal:
			pins = append(pins, jail.Mount{Kind: jail.Seal, Dst: p.Path, Holes: slices.Clone(p.Holes), Why: p.Why})
		}
	}
	so = jail.StrictOptions{
		Kind: kind, Slot: slotName, Command: codexCommand(kind, command),
		Repo: f.repo, Cwd: h.Cwd, Home: h.Home, User: f.user,
		HostEnv: h.Env, Root: f.root, PathDirs: f.toolPath, HostPath: f.hostPath,
		GitPins: pins, Protect: remountCovered(protectMounts(f.guard, f.held, h.MaskFile(slotName)), pins),
		BindPath: slices.Clone(o.BindPath), Net: o.Net,
		SkipPermissions: o.SkipPermissions, Forbidden: f.credentials,
		AisanState: []string{h.AisanHome}, Binds: slices.Clone(f.binds), NetBinds: f.netBinds,
	}
	if h.RuntimeDir != "" {
		so.AisanState = append(so.AisanState, filepath.Join(h.RuntimeDir, "aisan"))
	}
	so.AisanRun = h.AisanRunDirs()
	so.Binds = append(so.Binds, cacheMounts(h.AisanHome, f.cacheBase, h.Home, o.Caches)...)
	// The command's directories, unless the box shows them already (the
	// repository, a bind spec's ro, the system's): a read-only bind over
	// a script in the repository would make its directory read-only.
	for _, d := range f.toolRO {
		if !so.Shows(d) {
			so.ToolDirs = append(so.ToolDirs, d)
		}
	}
	if f.gitconfig != nil {
		so.GitConfig = filepath.Join(h.SlotDir(slotName), "gitconfig")
	}
	for _, e := range slices.Concat(o.BindEnv, o.Env) {
		name, value, hasValue := strings.Cut(e, "=")
		if !hasValue {
			v, ok := h.LookupEnv(name)
			if !ok {
				continue
			}
			value = v
			secret = append(secret, name)
		}
		so.ExtraEnv = append(so.ExtraEnv, name+"="+value)
	}
	if _, ok := agent.ByKind(string(kind)); ok {
		so.StateDir = filepath.Join(h.AisanHome, "state", f.stateBase)
		so.ConfigDir = f.configDir
		so.Instructions, so.HomeInstructions = f.instructions, f.homeInstructions
		so.Preferences = slices.Concat(f.preferences, f.codexPolicy.Overrides)
		so.CodexUntrusted = f.codexPolicy.Untrusted
		so.CodexRules = f.codexRules
	}
	return so, secret
}

// codexCommand is command without Codex's --profile, whose settings
// come in as overrides: Codex would layer a profile of that name from
// the box's own home, where a box writes. Another agent's is command.
func codexCommand(kind jail.Kind, command []string) []string {
	if kind != jail.KindCodex || len(command) == 0 {
		return slices.Clone(command)
	}
	_, rest, _ := codexProfileArg(command[1:])
	return append([]string{command[0]}, rest...)
}

// sharedDirs are where other programs keep sockets and state by design:
// a strict box neither starts in one nor binds one as its repository.
// Each is given as named and as its real path.
func sharedDirs(h jail.Host) []string {
	dirs := []string{"/tmp", "/var/tmp", "/dev/shm", h.RuntimeDir, fmt.Sprintf("/run/user/%d", os.Getuid())}
	if rt := h.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		dirs = append(dirs, filepath.Clean(rt))
	}
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		out = append(out, d)
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			out = append(out, r)
		}
	}
	return out
}

// protectMounts turns the protections into mounts: a held item's copy in
// the set, a shadow's live entries bound back from the host, sockets
// masked with the empty file mask.
func protectMounts(p protect.Plan, set, mask string) []jail.Mount {
	var out []jail.Mount
	for n, it := range p.Items {
		switch it.How {
		case protect.Copy, protect.Create:
			out = append(out, jail.Mount{Kind: jail.Bind, Src: held.Work(set, n), Dst: it.Path, Why: "protected, held for review (" + it.How.String() + "): " + it.Why})
		case protect.Shadow:
			out = append(out, jail.Mount{Kind: jail.Bind, Src: held.Work(set, n), Dst: it.Path, Why: "protected, new entries held for review: " + it.Why})
			for _, l := range it.Live {
				q := filepath.Join(it.Path, l)
				out = append(out, jail.Mount{Kind: jail.Bind, Src: q, Dst: q, Why: "git: an existing submodule's git dir, live"})
			}
		case protect.Pin:
			out = append(out, jail.Mount{Kind: jail.Bind, Src: it.Path, Dst: it.Path, Why: it.Why})
		case protect.ReadOnly:
			out = append(out, jail.Mount{Kind: jail.ROBind, Src: it.Path, Dst: it.Path, Why: "protected, read-only: " + it.Why})
		case protect.Mask:
			out = append(out, jail.Mount{Kind: jail.ROBind, Src: mask, Dst: it.Path, Why: it.Why})
		}
	}
	return out
}

// remountCovered appends again each git pin that a protection mounted
// after it covers without mounting it itself: a bind over a directory
// shows the host's directory, without the mounts made in it before. (The
// plan covers the one kind this can be, a nested checkout's gitdir
// pointer below a pinned parent, by listing it too; this keeps it so.)
func remountCovered(protect, pins []jail.Mount) []jail.Mount {
	out := protect
	for _, g := range pins {
		covered, again := false, false
		for _, m := range protect {
			switch {
			case m.Dst == g.Dst, within(m.Dst, g.Dst):
				// Mounted again, or it holds a protection that
				// mounting it again would hide.
				again = true
			case within(g.Dst, m.Dst):
				covered = true
			}
		}
		if covered && !again {
			out = append(out, g)
		}
	}
	return out
}

func currentUser(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return getenv("USER")
}

// planEgress gives each endpoint a socket in the slot's run directory and
// a loopback port, picked anew for every launch: the box's network
// namespace is its own, so any port is free there, and nothing outside
// can count on one.
//
// With the host network (net) a built-in endpoint gets neither: its host
// side listens on the host's loopback. A raw relay is planned as in a box
// of its own, and Validate refuses it.
func planEgress(reqs []EgressRequest, slotDir string, net bool, slotName string) ([]jail.Endpoint, error) {
	var out []jail.Endpoint
	used := map[int]bool{}
	names := map[string]bool{}
	for _, r := range reqs {
		if names[r.Name] {
			return nil, fmt.Errorf("--egress %s is given twice", r.Name)
		}
		names[r.Name] = true
		e := r.endpoint(slotName)
		if net && r.Backend != "" {
			out = append(out, e)
			continue
		}
		port := 0
		for port == 0 || used[port] {
			port = 20000 + rand.IntN(40000)
		}
		used[port] = true
		e.Port = port
		e.Socket = filepath.Join(slotDir, "egress", strings.ReplaceAll(r.Name, ":", "-")+".sock")
		if r.Backend == "" {
			fi, err := os.Stat(r.Socket)
			if err != nil {
				return nil, fmt.Errorf("--egress %s: %w", r.Name, err)
			}
			if fi.Mode().Type() != fs.ModeSocket {
				return nil, fmt.Errorf("--egress %s: %s is not a Unix socket", r.Name, r.Socket)
			}
			e.Source = r.Socket
			if r.Ino != 0 {
				if st, ok := fi.Sys().(*syscall.Stat_t); !ok || uint64(st.Dev) != r.Dev || st.Ino != r.Ino {
					return nil, fmt.Errorf("--egress %s: %s is no longer the socket that was checked (something on its path was replaced since); launch again", r.Name, r.Socket)
				}
				e.SourceDev, e.SourceIno = r.Dev, r.Ino
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// dedup drops empty and repeated entries, keeping the first of each.
func dedup(s []string) []string {
	seen := map[string]bool{"": true}
	return slices.DeleteFunc(slices.Clone(s), func(x string) bool {
		dup := seen[x]
		seen[x] = true
		return dup
	})
}

// codexRulesFiles are the names of the regular *.rules files in dir, the
// ones Codex loads.
func codexRulesFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".rules") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && fi.Mode().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

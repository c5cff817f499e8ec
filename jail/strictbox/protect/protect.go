// Package protect decides what of a repository a strict box may not
// change behind the user's back: the paths a host tool runs or obeys
// without asking the next time the user works there, and the Unix sockets
// through which a box could drive a host program.
//
// # Threat
//
// A strict box writes the repository. The user's next unjailed claude,
// codex or opencode in it runs the project's hooks, plugins and MCP
// servers; host git runs hooks and the programs its config names; direnv,
// VS Code and dev containers obey their files. Each of them runs with
// every credential the box was kept from. And a Unix socket under the
// repository (a tmux server's, an agent's) answers any process that can
// reach its path, network namespace or not.
//
// # Rules
//
//   - One table ([Table]) names what is protected: the agents' project
//     files (jail/agent, one row per agent), the editors' and
//     environment tools' files, and what git reads to decide what to run
//     (jail/gitpin's Steer). A name matches at any depth; a few rows
//     match how a name ends (a VS Code workspace's *.code-workspace),
//     looked at after the exact names. Inside an installed dependency
//     tree ([DepTrees]) only [Rule.InDeps] rows match: the other tools
//     never read a package's own copy of their files.
//   - What exists at launch is copied into aisan's state (jail/held) and
//     the copy is bound read-write over it: the box works on the copy,
//     and its changes are held for review when it ends.
//   - What does not exist at launch, at the repository's root or in a git
//     dir, gets an empty copy bound over an empty mount point made for the
//     box's run and removed after it. Deeper, and for a row matched by
//     how a name ends, where no mount point can be foreseen, what the box
//     creates is swept into the review when it ends ([Plan.Known] says
//     what was there before).
//   - A file a held command's tool looks for by name (its config, its
//     lock file) that is missing at launch gets no mount point either:
//     what the box creates by that name is swept at the end
//     ([ModuleDir.Files]). No sweep follows a link the box made on the
//     way to what it sweeps: the link is swept instead (jail/held).
//   - A copied path is a mount point, so the box can neither rename it
//     aside nor replace it; a nested repository's .git is made one too.
//   - So is every directory between a protected path and the repository
//     (or git dir) it lies in: the end trusts what it finds at a path that
//     was protected at launch by its name, and renaming a parent would
//     carry the protected path away and leave its name free for the
//     box's own. A mount point cannot be renamed, removed or replaced
//     (EBUSY), nor can anything above it. The cost is that a rename
//     between two such directories fails with EXDEV, as between any two
//     mounts (mv copies instead; git mv fails).
//   - Every Unix socket found under the repository (and a linked
//     worktree's common git dir) is masked with an empty read-only file.
//   - A tree too large to copy is bound read-only instead, and the launch
//     says so. A protected name that is a symlink is refused: a mount on
//     it would land on its target.
//   - Facts are gathered once ([Gather], a walk bounded by
//     [MaxEntries]); [Make] decides from them alone.
package protect

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/agent"
)

// Rule is one row of the table: a name a host tool runs or obeys.
type Rule struct {
	// Name is the entry's base name, or with Suffix, how it ends.
	Name string
	// Suffix is set for a row whose names vary: it matches every base
	// name that ends in Name after at least one other character. No
	// mount point can be foreseen for it, so it protects what exists at
	// launch, and what the box creates is swept into the review when it
	// ends, as deeper down for any row.
	Suffix bool
	// Glob is set for a row whose Name is a pattern (path.Match's) a
	// name of its tool's may vary by: mise.dev.toml for MISE_ENV=dev.
	// Like a Suffix row, it protects what exists at launch and sweeps
	// what the box creates.
	Glob bool
	// Swept is set for a row whose name gets no mount point at the
	// repository's root when it is absent at launch, unless its tool is
	// at work there ([RootCandidates]): what the box creates there is
	// swept into the review when it ends, as deeper down. Each
	// mount point is a file made in the user's repository and a mount,
	// on every launch; the rows kept foreseen are the agents' own and
	// the most common tools'. The cost of sweeping: a file the box
	// creates is live on the host until the box ends.
	Swept bool
	// Tool, for a Swept row, names the command that reads it: where it
	// is installed (on the host's PATH) the row is foreseen after all,
	// since the tool may act on a new file while the box still runs
	// (mise runs a project's hooks and env scripts at the next prompt
	// in it). So is a row one of whose Who's other files is at the root.
	Tool string
	// ConfigDir is set for a row its tool also reads from .config/ at
	// the directory it looks in (mise's .config/mise.toml and
	// .config/mise/): where the row is foreseen at the root, so is
	// that path.
	ConfigDir bool
	// Dir is set for a directory, taken whole.
	Dir bool
	// InDeps is set for a row matched inside a dependency tree too
	// ([DepTrees]): an agent looks for its project files in the
	// directories it works in, an installed package's among them, and
	// an editor's Python support looks for virtual environments (and
	// starts their python) all over the folder it opens. The other
	// rows' tools read their files where the user works (the folder an
	// editor opens, the directories a shell's cwd lies in, the
	// repository's own hooks), never from inside an installed package:
	// there such a name is the package's own file, which the package
	// manager removes and remakes with the tree.
	InDeps bool
	// Who is the tool that reads it.
	Who string
	// Why says what the tool does with it.
	Why string
}

// others are the rows that belong to no agent. A function, not a
// package variable: the front links this package, and a variable would
// be built on every start of it, strict box or not.
func others() []Rule {
	return slices.Concat([]Rule{
		{Name: ".envrc", Who: "direnv", Why: "a shell script run on cd once allowed"},
		{Name: ".vscode", Dir: true, Who: "VS Code", Why: "tasks run on folder open, launch configurations, settings naming programs"},
		{Name: ".devcontainer", Dir: true, Who: "dev containers", Why: "the container and the commands built and run for the project"},
		{Name: ".devcontainer.json", Who: "dev containers", Why: "the same, as one file"},
		{Name: ".zed", Dir: true, Who: "Zed", Why: "project settings naming programs (language servers' binaries, external formatters run on save) and tasks"},
		{Name: ".helix", Dir: true, Who: "Helix", Why: "languages.toml naming the language servers and formatters it starts when a file opens"},
		{Name: ".code-workspace", Suffix: true, Who: "VS Code", Why: "a workspace file: tasks run on folder open, settings naming programs (one there at launch is copied, a new one swept at the end)"},
		{Name: ".idea", Swept: true, Dir: true, Who: "JetBrains IDEs", Why: "File Watchers (watcherTasks.xml) run programs on save; run configurations (Startup Tasks run some on open), SDK and interpreter paths"},
		{Name: ".vimrc", Swept: true, Who: "Vim", Why: "sourced from the directory it starts in when 'exrc' is set, unrestricted in a file the user owns"},
		{Name: ".gvimrc", Swept: true, Who: "Vim", Why: "the same, for the GUI"},
		{Name: ".exrc", Swept: true, Who: "Vim, Neovim", Why: "the same; Neovim asks again whenever the file changed"},
		{Name: ".nvimrc", Swept: true, Who: "Neovim", Why: "sourced with 'exrc' once trusted (it asks again whenever the file changed)"},
		{Name: ".nvim.lua", Swept: true, Who: "Neovim", Why: "the same, in Lua"},
		{Name: ".lazy.lua", Swept: true, Who: "lazy.nvim", Why: "plugin specs, Lua it runs at start once trusted (it asks again whenever the file changed)"},
		{Name: ".dir-locals.el", Swept: true, Who: "Emacs", Why: "local variables for every file opened below; eval forms and risky values it runs once marked safe"},
		{Name: ".dir-locals-2.el", Swept: true, Who: "Emacs", Why: "the same, a second file"},
		{Name: ".gemini", Swept: true, Tool: "gemini", Dir: true, Who: "Gemini CLI", Why: "project settings (MCP servers it starts, hooks it runs, tools it allows) and a .env it loads, in a folder it trusts; commands"},
		{Name: ".cursor", Swept: true, Tool: "cursor-agent", Dir: true, Who: "Cursor", Why: "hooks.json commands run around its agent's steps, mcp.json servers it starts, rules"},
		{Name: ".aider.conf.yml", Swept: true, Tool: "aider", Who: "aider", Why: "the lint and test commands it runs after each edit, files it reads"},
		{Name: ".husky", Swept: true, Dir: true, Who: "husky", Why: "the scripts its hooks in .husky/_ (core.hooksPath) run on commit, push, checkout"},
		{Name: ".pre-commit-config.yaml", Swept: true, Tool: "pre-commit", Who: "pre-commit", Why: "the hooks its installed git hook runs on commit (a local hook runs any command)"},
	}, lefthookRows(), []Rule{
		{Name: ".lefthook", Swept: true, Dir: true, Who: "lefthook", Why: "scripts its config runs from its installed git hook"},
		{Name: ".lefthook-local", Swept: true, Dir: true, Who: "lefthook", Why: "the same, for the local config"},
		{Name: "mise.toml", Swept: true, Tool: "mise", ConfigDir: true, Who: "mise", Why: "[hooks] and env directives (_.source runs a script) it obeys on cd into a trusted project or below"},
		{Name: ".mise.toml", Swept: true, Tool: "mise", Who: "mise", Why: "the same"},
		{Name: "mise.local.toml", Swept: true, Tool: "mise", ConfigDir: true, Who: "mise", Why: "the same, merged over it"},
		{Name: ".mise.local.toml", Swept: true, Tool: "mise", Who: "mise", Why: "the same"},
		{Name: ".rtx.toml", Swept: true, Tool: "mise", Who: "mise", Why: "the same, under its old name"},
		{Name: ".rtx.local.toml", Swept: true, Tool: "mise", Who: "mise", Why: "the same"},
		{Name: "mise.*.toml", Glob: true, Who: "mise", Why: "an environment's config (MISE_ENV=NAME reads mise.NAME.toml and mise.NAME.local.toml): the same, merged over it"},
		{Name: ".mise.*.toml", Glob: true, Who: "mise", Why: "the same"},
		{Name: ".mise", Swept: true, Tool: "mise", Dir: true, Who: "mise", Why: "config.toml as above, and its file tasks"},
		{Name: "mise", Swept: true, Tool: "mise", ConfigDir: true, Dir: true, Who: "mise", Why: "config.toml and conf.d/ as above, here and as .config/mise/"},
		{Name: ".miserc.toml", Swept: true, Tool: "mise", Who: "mise", Why: "settings read before the config: which config files it loads (env, ceiling paths)"},
		{Name: ".tool-versions", Swept: true, Tool: "asdf", Who: "asdf, mise", Why: "the tool versions for every command here and below: a path: version runs the tool from the directory it names"},
		{Name: "rust-toolchain.toml", Swept: true, Tool: "rustup", Who: "rustup", Why: "the toolchain for cargo, rustc and the rest here and below: a [toolchain] path runs them from the directory it names"},
		{Name: "rust-toolchain", Swept: true, Tool: "rustup", Who: "rustup", Why: "the same, under its older name"},
		{Name: ".yarnrc.yml", Swept: true, Tool: "yarn", Who: "Yarn", Why: "yarnPath, the file every yarn command here and below runs as yarn itself, and the plugins it loads"},
		{Name: ".yarnrc", Swept: true, Tool: "yarn", Who: "Yarn", Why: "yarn-path, the same for Yarn 1"},
		{Name: "pyvenv.cfg", Swept: true, InDeps: true, Who: "Python", Why: "marks a virtual environment: its bin (the python an editor's Python extension starts on folder open, the activate scripts a shell sources) is held with it"},
		{Name: ".pth", Suffix: true, Who: "Python", Why: "a path file in site-packages: its import lines run at every start of that python (one there at launch is copied, a new one swept at the end)"},
		{Name: "sitecustomize.py", Swept: true, Who: "Python", Why: "imported by every start of a python whose path holds it"},
		{Name: "usercustomize.py", Swept: true, Who: "Python", Why: "the same, for the user site"},
		{Name: ".hg", Swept: true, Tool: "hg", Dir: true, Who: "Mercurial", Why: "hgrc's hooks and Python extensions, which every hg command there runs (a shell prompt's status among them) for a file the user owns"},
		{Name: ".jj", Swept: true, Tool: "jj", Dir: true, Who: "Jujutsu", Why: "repo/config.toml: the commands jj fix, diff and merge tools and aliases run (jj before its secure config reads it from the repository)"},
		{Name: ".npmrc", Swept: true, Who: "npm", Why: "the project's npm settings, over the user's own: ignore-scripts, script-shell and node-options decide what npm install and npm run execute"},
	})
}

// lefthookRows are lefthook's config files: every name it looks up (in
// the directory and in .config/), in every format, and those of the
// -local config it merges over it.
func lefthookRows() []Rule {
	var out []Rule
	for _, local := range []string{"", "-local"} {
		for _, dot := range []string{"", "."} {
			for _, ext := range []string{"yml", "yaml", "toml", "json", "jsonc"} {
				why := "the same"
				switch {
				case len(out) == 0:
					why = "the commands and scripts its installed git hook runs on commit, push, checkout"
				case local != "" && dot == "" && ext == "yml":
					why = "the same, merged over the main config"
				}
				out = append(out, Rule{Name: dot + "lefthook" + local + "." + ext, Swept: true, Who: "lefthook", Why: why})
			}
		}
	}
	return out
}

// LefthookConfig reports whether base is one of lefthook's config
// names (lefthookRows).
func LefthookConfig(base string) bool {
	return slices.ContainsFunc(lefthookRows(), func(r Rule) bool { return r.Name == base })
}

// Table is every row: the agents' first, in jail/agent's order.
func Table() []Rule { return slices.Clone(table()) }

// table is the table, built once: the walk looks up the name of every
// entry of the repository (rowByName), tens of thousands in a real one.
var table = sync.OnceValue(func() []Rule {
	var out []Rule
	at := map[string]int{}
	for _, a := range agent.All {
		for _, f := range a.ProjectFiles {
			// A name more agents read is one row, the first agent's
			// reason, naming every reader: one mount point, one plan item.
			if i, ok := at[f.Name]; ok {
				out[i].Who += ", " + a.Name
				continue
			}
			at[f.Name] = len(out)
			out = append(out, Rule{Name: f.Name, Dir: f.Dir, InDeps: true, Who: a.Name, Why: f.Why})
		}
	}
	return append(out, others()...)
})

// rowByName indexes the table's exact names; a name's first row wins.
var rowByName = sync.OnceValue(func() map[string]Rule {
	m := map[string]Rule{}
	for _, r := range table() {
		if _, dup := m[r.Name]; !dup && !r.Suffix && !r.Glob {
			m[r.Name] = r
		}
	}
	return m
})

// suffixRows are the table's Suffix and Glob rows, tried in order after
// the exact names: a handful, each a string comparison or a match.
var suffixRows = sync.OnceValue(func() []Rule {
	var out []Rule
	for _, r := range table() {
		if r.Suffix || r.Glob {
			out = append(out, r)
		}
	}
	return out
})

// GitRows are the table's git rows, for explain: what jail/gitpin lists
// in every git dir.
var GitRows = []Rule{
	{Name: ".git/config, config.worktree", Who: "git", Why: "programs named in config (core.fsmonitor, pagers, drivers, hooksPath), and the files it includes from the repository"},
	{Name: ".git/hooks, core.hooksPath", Dir: true, Who: "git", Why: "hooks run by commit, merge, checkout, push"},
	{Name: ".git/info, objects/info/alternates", Who: "git", Why: "exclude, attributes, sparse-checkout; other object stores"},
	{Name: ".git/modules", Dir: true, Who: "git", Why: "submodule git dirs: a new one with a gitlink runs its config on git status"},
	{Name: ".git pointers", Who: "git", Why: "a .git file, commondir, gitdir: read-only (a new commondir is swept)"},
	{Name: ".git/objects", Who: "git", Why: "objects are read by name, not hashed again: one that changed during the run and does not hash to its name (loose, or a pack, multi-pack-index or commit-graph git's verify refuses) is swept, and written back from the working tree where that has its content"},
	{Name: ".git/NAME (a ref)", Who: "git", Why: "a file at the top of a git dir that reads as a ref (or a directory holding one, or a link): git takes .git/origin/main for origin/main before any ref; one the box makes or changes is swept"},
	{Name: "nested .git", Who: "git", Why: "a nested repository's git dir: its steering files as above, what its hooks run in its working tree followed, its index entries of what is held put back at the end; a new one is swept"},
}

// ruleFor returns the row whose name is base: an exact name's, else the
// first Suffix row base ends in or Glob row it matches.
func ruleFor(base string) (Rule, bool) {
	if r, ok := rowByName()[base]; ok {
		return r, true
	}
	for _, r := range suffixRows() {
		if r.Suffix && len(base) > len(r.Name) && strings.HasSuffix(base, r.Name) {
			return r, true
		}
		if ok, _ := path.Match(r.Name, base); r.Glob && ok {
			return r, true
		}
	}
	return Rule{}, false
}

// How is how a protected path appears in the box.
type How int

const (
	// Copy binds a copy of the path, made at launch, over it.
	Copy How = iota + 1
	// Create binds an empty copy over a mount point made for the box's
	// run (and removed after it) where nothing exists.
	Create
	// Shadow binds a copy of a directory over it, with each of its live
	// entries bound back from the host: only new entries are the box's.
	Shadow
	// Pin binds the path over itself, read-write: a mount point the box
	// cannot rename aside (a nested repository's .git, a directory above
	// a protected path).
	Pin
	// ReadOnly binds the path over itself, read-only.
	ReadOnly
	// Mask binds an empty read-only file over a socket.
	Mask
)

func (h How) String() string {
	switch h {
	case Copy:
		return "copy"
	case Create:
		return "create"
	case Shadow:
		return "shadow"
	case Pin:
		return "pin"
	case ReadOnly:
		return "read-only"
	case Mask:
		return "mask"
	}
	return "invalid"
}

// Item is one planned protection.
type Item struct {
	// Path is the host path, absolute.
	Path string
	// Dir is set for a directory.
	Dir bool
	How How
	// Live are a Shadow's entries that stay the host's.
	Live []string `json:",omitempty"`
	// Why is the reason, for explain.
	Why string
}

// Held reports whether the box's changes to the item are held for
// review (it works on a copy).
func (i Item) Held() bool { return i.How == Copy || i.How == Create || i.How == Shadow }

// Plan is how a repository's protected paths appear in a box.
type Plan struct {
	// Items are the protections, in mount order: a directory before what
	// lies in it.
	Items []Item
	// Known are the protected entries and nested .git entries that
	// existed at launch: anything else of the kind found after the box
	// is the box's, and swept into the review.
	Known []string
	// Watch are paths absent at launch that the end sweeps into the
	// review when the box leaves them (jail/gitpin's).
	Watch []string
	// Modules are the directories a held script's Python loads modules
	// from by name that are not held whole: what the box adds there
	// that Python may import is swept too ([SweepModules]).
	Modules []ModuleDir
	// Notes are what the launch tells the user (a tree bound read-only).
	Notes []string
	// Worktrees are the repositories nested in the box's (Facts'): the
	// end puts back their index entries of what it holds, as it does
	// the repository's own.
	Worktrees []Worktree
}

// Worktree is a repository nested in the box's: a nested checkout, a
// submodule, a linked worktree of another repository.
type Worktree struct {
	// Root is its working tree; GitDir the git dir that holds its index.
	Root, GitDir string
}

// Limits on what is copied at launch. Beyond them a tree is bound
// read-only: a copy per launch would cost too much.
const (
	MaxCopyFiles = 2000
	MaxCopyBytes = 32 << 20
)

// Limits on what the steering paths copy in all (see [Make]): a copy
// costs about a millisecond a file on a slow disk, on every launch.
const (
	MaxSteerFiles = 500
	MaxSteerBytes = 32 << 20
)

// PathFact is what Gather found at one path.
type PathFact struct {
	Path string
	// Exists, and as what: a directory, a symlink, or Other (neither a
	// directory nor a regular file nor a symlink).
	Exists, Dir, Link, Other bool
	// Files and Bytes measure a tree (stopping past the copy limits).
	Files int
	Bytes int64
	// Live are a directory of git dirs' entries (jail/gitpin's).
	Live []string
	// Shadowed marks a directory of git dirs.
	Shadowed bool
	// Sealed is an absent path whose directory this user cannot write:
	// the box, which writes as this user, cannot create it either.
	Sealed bool
	Why    string
}

// Facts are what a launch gathered about a repository.
type Facts struct {
	Repo string
	// Entries is how many directory entries the walk saw.
	Entries int
	// Sockets are the Unix sockets found.
	Sockets []string
	// Found are the protected names found by the walk, and the roots'
	// own candidates (present or not).
	Found []PathFact
	// Steer are git's steering paths (jail/gitpin's and those of nested
	// repositories), present or not.
	Steer []PathFact
	// NestedGit are .git entries below the repository's root.
	NestedGit []PathFact
	// Worktrees are the repositories nested in it (those of NestedGit
	// whose git dir exists, wherever it lies).
	Worktrees []Worktree
	// Watch are jail/gitpin's watched files.
	Watch []string
	// Modules are the directories a held script's Python loads modules
	// from by name that are not held whole, with their importable
	// entries at launch.
	Modules []ModuleDir
	// Notes are what [GitFacts.Loads] could not follow, for the launch
	// to say.
	Notes []string
	// Mounted are the paths the box has as mount points whatever Make
	// plans: the repository itself and jail/gitpin's pins (its git dirs).
	// The directories above a protected path are pinned up to the
	// nearest of them (Repo counts when Mounted is empty).
	Mounted []string
}

// LinkError is a protected name that is a symlink.
type LinkError struct{ Path string }

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symlink: strict mode protects what host tools run there with a mount, which would land on the link's target", e.Path)
}

// Hints says what to do.
func (e *LinkError) Hints() []string {
	return []string{"replace the link with a copy of its target (or remove it), then start the box again"}
}

// Make plans the protections from gathered facts alone.
func Make(f Facts) (Plan, error) {
	var p Plan
	p.Watch = slices.Clone(f.Watch)
	p.Modules = slices.Clone(f.Modules)
	p.Notes = slices.Clone(f.Notes)
	p.Worktrees = slices.Clone(f.Worktrees)
	add := func(pf PathFact, pin How) error {
		switch {
		case pf.Exists && pf.Link:
			return &LinkError{Path: pf.Path}
		case pf.Exists && pf.Other:
			p.Items = append(p.Items, Item{Path: pf.Path, How: Mask, Why: pf.Why + " (not a file or directory: masked)"})
		case pf.Exists && (pf.Files > MaxCopyFiles || pf.Bytes > MaxCopyBytes):
			p.Items = append(p.Items, Item{Path: pf.Path, Dir: pf.Dir, How: ReadOnly, Why: pf.Why + " (too large to copy: read-only)"})
			p.Notes = append(p.Notes, fmt.Sprintf("%s is bound read-only in the box: it is too large to copy for review (more than %d files or %d MiB)", pf.Path, MaxCopyFiles, MaxCopyBytes>>20))
		case pf.Exists && pf.Shadowed:
			p.Items = append(p.Items, Item{Path: pf.Path, Dir: true, How: Shadow, Live: slices.Clone(pf.Live), Why: pf.Why})
		case pf.Exists:
			p.Items = append(p.Items, Item{Path: pf.Path, Dir: pf.Dir, How: pin, Why: pf.Why})
		case pf.Sealed:
		default:
			p.Items = append(p.Items, Item{Path: pf.Path, Dir: pf.Dir, How: Create, Why: pf.Why})
		}
		return nil
	}
	for _, pf := range f.Found {
		if err := add(pf, Copy); err != nil {
			return Plan{}, err
		}
		if pf.Exists {
			p.Known = append(p.Known, pf.Path)
		}
	}
	// The steering paths include the trees held for what the project's
	// scripts load (node packages and what they depend on, a venv's
	// modules), which can be many, and every copy is paid on every launch:
	// past MaxSteerFiles or MaxSteerBytes copied in all, the rest are
	// bound read-only, which holds them as well but leaves them
	// unwritable.
	var files, over int
	var bytes int64
	for _, pf := range f.Steer {
		if pf.Exists && !pf.Link && !pf.Other && !pf.Shadowed && pf.Files <= MaxCopyFiles && pf.Bytes <= MaxCopyBytes {
			if files+pf.Files > MaxSteerFiles || bytes+pf.Bytes > MaxSteerBytes {
				p.Items = append(p.Items, Item{Path: pf.Path, Dir: pf.Dir, How: ReadOnly, Why: pf.Why + " (too much to copy in all: read-only)"})
				if over++; over == 1 {
					p.Notes = append(p.Notes, fmt.Sprintf("%s and the paths held after it are bound read-only in the box: together with those before them they are too much to copy for review on every launch (more than %d files or %d MiB)", pf.Path, MaxSteerFiles, MaxSteerBytes>>20))
				}
				continue
			}
			files, bytes = files+pf.Files, bytes+pf.Bytes
		}
		if err := add(pf, Copy); err != nil {
			return Plan{}, err
		}
	}
	for _, g := range f.NestedGit {
		p.Known = append(p.Known, g.Path)
		switch {
		case g.Link:
			return Plan{}, &LinkError{Path: g.Path}
		case g.Dir:
			p.Items = append(p.Items, Item{Path: g.Path, Dir: true, How: Pin, Why: "git: a nested repository's git dir, a mount point so it cannot be renamed aside"})
		default:
			p.Items = append(p.Items, Item{Path: g.Path, How: ReadOnly, Why: "git: a nested checkout's gitdir pointer"})
		}
	}
	sockets := map[string]bool{}
	for _, s := range f.Sockets {
		sockets[s] = true
		p.Items = append(p.Items, Item{Path: s, How: Mask, Why: "socket: a host program's, not connectable from the box"})
	}
	// A socket or a nested repository inside a copied tree is the copy's
	// business (the copy has neither).
	p.Items = slices.DeleteFunc(p.Items, func(it Item) bool {
		for _, o := range p.Items {
			if o.Path != it.Path && (o.How == Copy || o.How == Create) && o.Dir && within(it.Path, o.Path) {
				return true
			}
		}
		return false
	})
	p.Items = append(p.Items, parents(p.Items, sockets, f.Mounted, f.Repo)...)
	slices.SortStableFunc(p.Items, func(a, b Item) int { return comparePaths(a.Path, b.Path) })
	p.Items = slices.CompactFunc(p.Items, func(a, b Item) bool { return a.Path == b.Path })
	slices.Sort(p.Known)
	return p, nil
}

// parentWhy is a pinned parent's reason, for explain.
const parentWhy = "a directory above a protected path: a mount point, so the box cannot rename it and plant its own in its place"

// parents pins the directories between each protected item (but a
// socket's mask: renaming a socket's directory moves the mask with it)
// and the nearest mount point above it: an item, a Shadow's live entry,
// or one of mounted (or repo). A directory that lies in none of those is
// outside what the box sees writable, and left alone. Parents of a path
// made for the run (Create) may not exist yet: jail/held makes them
// with the path, before the box starts.
func parents(items []Item, sockets map[string]bool, mounted []string, repo string) []Item {
	roots := slices.Clone(mounted)
	if repo != "" {
		roots = append(roots, repo)
	}
	stop := map[string]bool{}
	for _, r := range roots {
		stop[filepath.Clean(r)] = true
	}
	for _, it := range items {
		stop[it.Path] = true
		for _, l := range it.Live {
			stop[filepath.Join(it.Path, l)] = true
		}
	}
	inRoot := func(d string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return within(d, r) })
	}
	var out []Item
	for _, it := range items {
		if it.How == Mask && sockets[it.Path] {
			continue
		}
		for d := filepath.Dir(it.Path); !stop[d] && inRoot(d); d = filepath.Dir(d) {
			stop[d] = true
			out = append(out, Item{Path: d, Dir: true, How: Pin, Why: parentWhy})
		}
	}
	return out
}

// comparePaths orders paths so that a directory comes before what lies
// in it.
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// SharedError is a box asked to start in a directory where other
// programs keep their sockets and state.
type SharedError struct {
	Dir, Shared string
}

func (e *SharedError) Error() string {
	what := "is"
	if e.Dir != e.Shared {
		what = "holds"
	}
	return fmt.Sprintf("a strict box does not start in %s: it %s %s, where other programs keep sockets a box could drive; cd into a project and start it there", e.Dir, what, e.Shared)
}

// ErrShared matches a [SharedError].
var ErrShared = errors.New("a shared runtime directory")

func (e *SharedError) Is(target error) bool { return target == ErrShared }

// CheckRoot refuses a repository or working directory that is, or holds,
// one of shared (/tmp, /var/tmp, /dev/shm, the user's runtime
// directory…), each given as the caller found it and as its real path.
func CheckRoot(dirs, shared []string) error {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, s := range shared {
			if s != "" && within(s, d) {
				return &SharedError{Dir: d, Shared: s}
			}
		}
	}
	return nil
}

func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// IsProtectedName reports whether base is a name of the table.
func IsProtectedName(base string) bool {
	_, ok := ruleFor(base)
	return ok
}

// DepTrees are the names of the directories a package manager fills with
// installed packages, and removes and remakes whole (npm ci): below one,
// only [Rule.InDeps] rows are protected. What in such a tree a host tool
// does run (a package's command that an .envrc puts on PATH, or that a
// folder-open task or an agent's hook runs) is a steering path of the
// file that runs it ([GitFacts.Loads]), held all the same.
var DepTrees = []string{"node_modules"}

// protectedIn reports whether base is a name of the table in a
// directory below a dependency tree (deps) or not.
func protectedIn(base string, deps bool) bool {
	r, ok := ruleFor(base)
	return ok && (!deps || r.InDeps)
}

// RootCandidates are the table's paths at dir, for Gather: at the
// repository's root, each gets a mount point when it does not exist. A
// Suffix row names no path, and a Swept row wants none unless its tool
// is at work here: its Tool installed (installed may be nil: nothing
// is), or another of its tool's files at the root (inUse holds the Who
// of the rows found there: lefthook merges a new lefthook-local.yml
// over the lefthook.yml it runs on every commit).
func RootCandidates(dir string, installed func(cmd string) bool, inUse map[string]bool) []PathFact {
	var out []PathFact
	for _, r := range table() {
		if r.Suffix || r.Glob || (r.Swept && !inUse[r.Who] && (r.Tool == "" || installed == nil || !installed(r.Tool))) {
			continue
		}
		out = append(out, PathFact{Path: filepath.Join(dir, r.Name), Dir: r.Dir, Why: r.Who + ": " + r.Why})
		if r.ConfigDir {
			out = append(out, PathFact{Path: filepath.Join(dir, ".config", r.Name), Dir: r.Dir, Why: r.Who + ": " + r.Why + " (read from .config/ too)"})
		}
	}
	return out
}

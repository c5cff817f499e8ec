package bindspec

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What the host executes, kept out of a box's writable reach.
//
// A box that can write a file the host runs (a shell's rc file, a user
// unit, a command on PATH, a build cache the host's compiler links from)
// acts on the host the next time the user logs in, opens a shell or
// builds. So an rw entry that is, holds or lies inside one of these is
// refused, naming the line, unless the spec lists it under rw_host_exec,
// which says that this is meant. ro, overlay (writes vanish), tmpfs and
// cache (a directory of the box's own) need no such care.

// reach is how far a host-exec entry reaches.
type reach int

const (
	// itself: the path and every directory above it (binding one of
	// those read-write lets the box replace the path).
	itself reach = iota
	// tree: also everything inside it.
	tree
)

// hostExec is one row of the table: a path (with ~ and {FACT}), how far
// it reaches, and who runs it.
type hostExec struct {
	path  string
	reach reach
	why   string
}

// hostExecTable is the one list of what the host executes from the
// user's home. The host's PATH directories are added to it at load time.
var hostExecTable = []hostExec{
	// The home holds every startup file below: a box that may write it
	// may write them all, and files no row names yet.
	{"~", itself, "your home: shells, git and desktop programs run the startup files in it"},
	// Shells read these at start.
	{"~/.profile", itself, "login shells run it"},
	{"~/.bashrc", itself, "bash runs it"},
	{"~/.bash_profile", itself, "bash runs it"},
	{"~/.bash_login", itself, "bash runs it"},
	{"~/.bash_logout", itself, "bash runs it"},
	{"~/.zshenv", itself, "zsh runs it"},
	{"~/.zshrc", itself, "zsh runs it"},
	{"~/.zprofile", itself, "zsh runs it"},
	{"~/.zlogin", itself, "zsh runs it"},
	{"~/.zlogout", itself, "zsh runs it"},
	{"~/.oh-my-zsh", tree, "zsh runs it"},
	{"~/.kshrc", itself, "ksh runs it"},
	{"~/.mkshrc", itself, "mksh runs it"},
	{"~/.tcshrc", itself, "tcsh runs it"},
	{"~/.cshrc", itself, "csh runs it"},
	{"~/.xprofile", itself, "the display manager runs it"},
	{"~/.xinitrc", itself, "startx runs it"},
	{"~/.xsession", itself, "the display manager runs it"},
	{"~/.pam_environment", itself, "PAM reads it at login"},
	{"~/.ssh/rc", itself, "sshd runs it at login"},
	// ~/.config as a whole holds the startup files of shells and desktop
	// programs; the known ones inside it are listed for what they are.
	{"{XDG_CONFIG_HOME}", itself, "it holds the startup files of shells, editors and desktop programs"},
	{"{XDG_CONFIG_HOME}/fish", tree, "fish runs it"},
	{"{XDG_CONFIG_HOME}/zsh", tree, "zsh runs it"},
	{"{XDG_CONFIG_HOME}/bash", tree, "bash runs it"},
	{"{XDG_CONFIG_HOME}/systemd", tree, "systemd user units: the user manager runs them"},
	{"{XDG_CONFIG_HOME}/autostart", tree, "the desktop session runs it"},
	{"{XDG_CONFIG_HOME}/environment.d", tree, "the user manager reads it into every session"},
	{"{XDG_CONFIG_HOME}/git", tree, "git's global config and hooks: git runs what they name"},
	{"{XDG_CONFIG_HOME}/nvim", tree, "neovim runs it"},
	{"{XDG_CONFIG_HOME}/direnv", tree, "direnv runs it in every directory"},
	{"{XDG_CONFIG_HOME}/go", tree, "go reads its environment from it"},
	{"{XDG_CONFIG_HOME}/aisan", tree, "aisan's configuration: it decides what every box gets"},
	{"~/.gitconfig", itself, "git's global config: git runs what it names"},
	{"{GIT_CONFIG_GLOBAL}", itself, "git's global config, as GIT_CONFIG_GLOBAL names it: git runs what it names"},
	{"{GIT_CONFIG_SYSTEM}", itself, "git's system config, as GIT_CONFIG_SYSTEM names it: git runs what it names"},
	{"~/.vimrc", itself, "vim runs it"},
	{"~/.vim", tree, "vim runs it"},
	{"~/.emacs", itself, "emacs runs it"},
	{"~/.emacs.d", tree, "emacs runs it"},
	{"{XDG_DATA_HOME}/systemd", tree, "systemd user units: the user manager runs them"},
	{"{XDG_DATA_HOME}/applications", tree, "desktop entries: the desktop runs what they name"},
	{"~/.local/bin", tree, "commands on your PATH"},
	{"~/bin", tree, "commands on your PATH"},
	// The toolchains' caches and homes: the host's builds link and run
	// what is there without checking it again.
	{"{GOCACHE}", tree, "go links what its build cache holds"},
	{"{GOMODCACHE}", tree, "go builds the modules there without checking them again"},
	{"{GOBIN}", tree, "go install puts commands there"},
	{"{CARGO_HOME}", tree, "cargo's home: its commands, registry and config"},
	{"{RUSTUP_HOME}", tree, "rustup's toolchains"},
	{"{NPM_CACHE}", tree, "npm installs from its cache without fetching again"},
	{"{NVM_DIR}", tree, "nvm's node versions and their global packages"},
	{"{FNM_DIR}", tree, "fnm's node versions"},
	{"{PYENV_ROOT}", tree, "pyenv's pythons and shims"},
	{"{PIP_CACHE}", tree, "pip installs wheels from its cache"},
	{"{UV_CACHE}", tree, "uv installs from its cache"},
	{"{UV_PYTHON}", tree, "uv's pythons"},
	{"~/.gradle", tree, "gradle runs its init scripts"},
	{"~/.m2", tree, "maven builds with what its repository holds"},
}

// HostExecError is an rw entry that would let a box write what the host
// runs.
type HostExecError struct {
	// Entry is the rw entry, Path the host-executed path it reaches and
	// Why who runs it.
	Entry Entry
	Path  string
	Why   string
}

func (e *HostExecError) Error() string {
	what := "holds " + e.Path
	switch {
	case e.Path == e.Entry.Value:
		what = "is " + e.Path
	case within(e.Entry.Value, e.Path):
		what = "lies inside " + e.Path
	}
	return fmt.Sprintf("%s would let a box write what the host runs: it %s (%s)", e.Entry.Value, what, e.Why)
}

// Hints says what to use instead.
func (e *HostExecError) Hints() []string {
	return []string{
		"give the box its own directory with cache = [...] (kept per repository in aisan's state), or use ro, tmpfs or overlay",
		"if the box really must write it, list it under rw_host_exec instead of rw",
	}
}

// hostExecPaths is the table with ~ and facts expanded, and the host's
// PATH directories: rows whose facts the host lacks are left out.
// pathWhy is the host-exec table's reason for a directory on PATH.
const pathWhy = "a directory on your PATH"

func hostExecPaths(home string, facts Facts, path []string) []hostExec {
	var out []hostExec
	for _, r := range hostExecTable {
		p, missing, err := expandFacts(r.path, facts)
		if err != nil || len(missing) > 0 {
			continue
		}
		if p, err = expandHome(p, home); err != nil || !filepath.IsAbs(p) {
			continue
		}
		out = append(out, hostExec{path: filepath.Clean(p), reach: r.reach, why: r.why})
	}
	for _, d := range path {
		if filepath.IsAbs(d) {
			out = append(out, hostExec{path: filepath.Clean(d), reach: tree, why: pathWhy})
		}
	}
	return out
}

// checkHostExec refuses e when it reaches a path of table (see
// reachesHostExec).
func checkHostExec(e Entry, table []hostExec, realPath func(string) (string, error)) error {
	if r, ok := reachesHostExec(e.Value, table, realPath); ok {
		return &HostExecError{Entry: e, Path: r.path, Why: r.why}
	}
	return nil
}

// reachesHostExec returns the first row of table that a box writing p
// reaches: p is the row's path, holds it, or (for a tree) lies inside
// it. Each side is compared as named and as its real path (realPath), so
// a link does not hide one: a dotfiles repository that ~/.gitconfig links
// into holds ~/.gitconfig.
func reachesHostExec(p string, table []hostExec, realPath func(string) (string, error)) (hostExec, bool) {
	names := func(p string) []string {
		out := []string{p}
		if r, err := realPath(p); err == nil && r != p {
			out = append(out, r)
		}
		return out
	}
	srcs := names(p)
	for _, r := range table {
		for _, t := range names(r.path) {
			for _, s := range srcs {
				if within(t, s) || (r.reach == tree && within(s, t)) {
					return r, true
				}
			}
		}
	}
	return hostExec{}, false
}

// WorkdirError is a strict box asked to start where it could write what
// the host runs: its repository (or working directory) is, holds or lies
// inside a path of the host-exec table.
type WorkdirError struct {
	// Dir is the repository or working directory, Path the host-executed
	// path it reaches and Why who runs it.
	Dir, Path, Why string
	// Link is set when Path is a link into Dir.
	Link bool
	// Venv is set when Path is the bin directory of a Python
	// virtualenv (its parent holds pyvenv.cfg): one the user's shell
	// activated.
	Venv bool
}

func (e *WorkdirError) Error() string {
	what := "holds " + e.Path
	switch {
	case e.Link:
		what = "is where " + e.Path + " links to"
	case e.Dir == e.Path:
		what = "is " + e.Path
	case within(e.Dir, e.Path):
		what = "lies inside " + e.Path
	}
	return fmt.Sprintf("a strict box does not start in %s: it %s (%s), and a box writes its repository, so the host would run what the box left there", e.Dir, what, e.Why)
}

// Hints says what to do instead.
func (e *WorkdirError) Hints() []string {
	ro := "to let a box read this directory, bind it read-only from a bind spec (ro = [\"" + e.Dir + "\"]) and start it elsewhere"
	if e.Why != pathWhy || e.Link || e.Path == e.Dir || !within(e.Path, e.Dir) {
		return []string{"cd into a project directory and start the box there", ro}
	}
	// An activated virtualenv of this project: the project is the right
	// place, the PATH is not.
	if e.Venv {
		rel, err := filepath.Rel(e.Dir, e.Path)
		if err != nil {
			rel = e.Path
		}
		return []string{
			"it is the virtualenv your shell activated: run 'deactivate', then start the box, which runs the virtualenv's commands by their path (" + filepath.Join(rel, "python") + ", " + filepath.Join(rel, "pytest") + ") or after activating it inside (sh -c '. " + filepath.Join(rel, "activate") + " && pytest')",
			"or let the project's .envrc put it on PATH (PATH_add " + rel + "): a strict box holds what an .envrc puts on PATH for review",
		}
	}
	return []string{
		"cd into a project directory and start the box there", ro,
		"in a project: take " + e.Path + " off your PATH, or let the project's .envrc put it there (PATH_add): a strict box holds what an .envrc puts on PATH for review",
	}
}

// CheckWorkdir refuses a strict box's repository or working directory
// (dirs, each as the caller found it; "" is skipped) that a box writing
// it would reach a path the host executes, by the same table and rule as
// an rw entry of a bind spec: the home itself, ~/.config, a shell's rc
// file, ~/.gitconfig, a PATH directory, a toolchain's cache… It also
// refuses dirs when a link directly inside one of the table's trees (but
// those under h.System) resolves into one of them. h gives the home,
// facts, PATH, System, RealPath and ReadDir as for [Load].
func CheckWorkdir(dirs []string, h Host) error {
	if h.RealPath == nil {
		h.RealPath = realPath
	}
	if h.ReadDir == nil {
		h.ReadDir = os.ReadDir
	}
	table := hostExecPaths(h.Home, h.Facts, h.PATH)
	// Every row's real path is looked up once, not once per directory
	// (the repository and the working directory are often one).
	known := map[string]struct {
		p   string
		err error
	}{}
	realPath := func(p string) (string, error) {
		r, ok := known[p]
		if !ok {
			r.p, r.err = h.RealPath(p)
			known[p] = r
		}
		return r.p, r.err
	}
	var clean []string
	for _, d := range dirs {
		if d == "" || slices.Contains(clean, filepath.Clean(d)) {
			continue
		}
		d = filepath.Clean(d)
		clean = append(clean, d)
		if r, ok := reachesHostExec(d, table, realPath); ok {
			_, err := os.Stat(filepath.Join(filepath.Dir(r.path), "pyvenv.cfg"))
			venv := err == nil && r.why == pathWhy && filepath.Base(r.path) == "bin"
			return &WorkdirError{Dir: d, Path: r.path, Why: r.why, Venv: venv}
		}
	}
	if len(clean) == 0 {
		return nil
	}
	// A dotfiles repository is often linked in file by file, below a
	// directory the host runs from (~/.local/bin/x, ~/.config/git/config):
	// the rows' real paths do not show it, their entries' links do.
	for _, r := range table {
		if r.reach != tree || slices.ContainsFunc(h.System, func(s string) bool { return within(r.path, s) }) {
			continue
		}
		ents, err := h.ReadDir(r.path)
		if err != nil {
			continue
		}
		for i, e := range ents {
			if i >= maxLinkScan {
				break
			}
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			link := filepath.Join(r.path, e.Name())
			real, err := h.RealPath(link)
			if err != nil {
				continue
			}
			for _, d := range clean {
				if within(real, d) {
					return &WorkdirError{Dir: d, Path: link, Why: r.why, Link: true}
				}
			}
		}
	}
	return nil
}

// realPath is filepath.EvalSymlinks answering a path that does not
// exist with one lstat, not one per component: most rows of the
// host-exec table name tools this host does not have, and every strict
// launch resolves all of them (about 450 lstats for a hundred rows).
// Lstat follows every link but the last, so it fails exactly where
// EvalSymlinks would; a path that is there is resolved as before.
func realPath(p string) (string, error) {
	if _, err := os.Lstat(p); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// maxLinkScan bounds the entries of one directory looked at for links
// into the repository: a cache's top level can be large, and a
// directory of startup files is not.
const maxLinkScan = 4096

// HostExecTable lists the table's rows as written ("PATH  (why)"), for
// the README and explain.
func HostExecTable() []string {
	var out []string
	for _, r := range hostExecTable {
		p := r.path
		if r.reach == tree {
			p += "/…"
		}
		out = append(out, fmt.Sprintf("%s (%s)", p, strings.TrimSpace(r.why)))
	}
	return out
}

package strictbox

// The box's toolchains: its PATH, the command looked up on it, and the
// caches it keeps.
//
// Rules:
//   - The box's PATH keeps the host's order for every directory the box
//     shows (jail.StrictOptions.PATH); a command is looked up on that PATH,
//     as the box's init will, not on the host's.
//   - A command the host finds in a directory the box does not show is
//     bound read-only with what it resolves to (toolDirs), so that it runs
//     the same inside; one given as a path (./run.sh, .venv/bin/python)
//     resolves against the working directory, and needs no bind where the
//     box shows it already (the repository).
//   - When a toolchain command (what the shipped specs provide) would run
//     another program in the box than on the host (nvm's node replaced by
//     /usr/bin/node), the launch says so and names the spec that brings
//     the host's.
//   - A cache (a bind spec's cache entry) is a directory of the box's own
//     in aisan's state, per repository, bound at its path in the box's
//     home: never the host's cache, which the host's builds trust.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
)

// Cache is a directory in the box's home that the box keeps as its own.
type Cache struct {
	// Path is where the box sees it (inside its home).
	Path string
	// Why is the bind spec line that asked for it.
	Why string
}

// SystemDirs are the directories every strict box shows, read-only: a
// bind spec's path entry under one needs no mount of its own.
func SystemDirs() []string { return slices.Clone(systemPrefixes) }

// cacheRoot is where a repository's caches live inside aisan's state.
func cacheRoot(aisanHome, base string) string {
	return filepath.Join(aisanHome, "cache", base)
}

// cacheMounts binds each cache's directory in aisan's state at its path
// in the box: the directory mirrors the path inside the home (bindspec
// keeps caches there), so two caches never share one.
func cacheMounts(aisanHome, base, home string, caches []Cache) []jail.Mount {
	var out []jail.Mount
	for _, c := range caches {
		rel, err := filepath.Rel(home, c.Path)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			rel = strings.TrimPrefix(filepath.Clean(c.Path), "/")
		}
		src := filepath.Join(cacheRoot(aisanHome, base), rel)
		out = append(out, jail.Mount{Kind: jail.Bind, Src: src, Dst: c.Path, Why: "cache: the box's own, kept for this repository in aisan's state (" + c.Why + ")"})
	}
	return out
}

// makeCacheDirs creates the caches' directories before the box starts
// (bwrap binds only what exists).
func makeCacheDirs(aisanHome string, mounts []jail.Mount) error {
	root := filepath.Join(aisanHome, "cache")
	for _, m := range mounts {
		if m.Kind != jail.Bind || !within(m.Src, root) || m.Src == root {
			continue
		}
		if err := makeStateDir(aisanHome, m.Src); err != nil {
			return fmt.Errorf("the box's cache %s: %w", m.Dst, err)
		}
	}
	return nil
}

// hit is where a command is found: in dir, resolving to real.
type hit struct{ dir, real string }

// found are, for the command and the toolchains' commands, every
// directory the box's PATH may hold that has them, in the order looked at.
type found map[string][]hit

// in is where name is found in dir ("" for nowhere).
func (f found) in(name, dir string) string {
	for _, h := range f[name] {
		if h.dir == dir {
			return h.real
		}
	}
	return ""
}

// first is where name is found first on path: its directory and what it
// resolves to.
func (f found) first(name string, path []string) (dir, real string) {
	for _, d := range path {
		if r := f.in(name, d); r != "" {
			return d, r
		}
	}
	return "", ""
}

// gatherCommand reads what running name in a box needs from the host: the
// host's PATH, the command as the host finds it and the directories it
// needs (toolDirs), and where it and the toolchains' commands are in every
// directory the box's PATH may hold.
func gatherCommand(f *facts, kind jail.Kind, name string, h jail.Host, o Options) error {
	for _, d := range filepath.SplitList(h.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(f.hostPath, d) {
			f.hostPath = append(f.hostPath, d)
		}
	}
	host := name
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			host = filepath.Join(h.Cwd, name)
		}
		if err := checkPath(host, name, kind); err != nil {
			return err
		}
	} else {
		host, _ = lookPathIn(name, h.Env)
	}
	if host != "" {
		var err error
		// A command the user names by its path (./run.sh, .venv/bin/python)
		// runs as the shell runs it: its directory is not put on the
		// box's PATH, where it would shadow the host's pip or python for
		// everything the command starts. An agent's directory is.
		onPath := kind != jail.KindRun || !strings.Contains(name, "/")
		if f.toolRO, f.toolPath, err = toolDirs(host, h.Cwd, h.Env, 0, onPath); err != nil {
			return &jail.NotFoundError{Name: name, Kind: kind, Why: err.Error()}
		}
	}
	dirs := dedup(slices.Concat(f.hostPath, o.BindPath, f.toolPath, []string{"/usr/local/bin", "/usr/bin", "/bin"}))
	names := slices.Collect(func(yield func(string) bool) {
		for n := range bindspec.ShippedProvides() {
			if !yield(n) {
				return
			}
		}
	})
	if !strings.Contains(name, "/") {
		names = append(names, name)
	}
	f.found = found{}
	for _, n := range dedup(names) {
		for _, d := range dirs {
			p := filepath.Join(d, n)
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			f.found[n] = append(f.found[n], hit{dir: d, real: real})
		}
	}
	if len(o.Caches) > 0 {
		base, err := slot.BaseName(f.repo, string(jail.KindRun))
		if err != nil {
			return err
		}
		f.cacheBase = strings.TrimSuffix(base, "-"+string(jail.KindRun))
	}
	return nil
}

// checkPath checks a command given as a path the way the shell would.
func checkPath(p, name string, kind jail.Kind) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return &jail.NotFoundError{Name: name, Kind: kind, Why: "no such file or directory"}
	case fi.IsDir():
		return &jail.NotFoundError{Name: name, Kind: kind, Why: "is a directory"}
	case fi.Mode()&0o111 == 0:
		return &jail.NotFoundError{Name: name, Kind: kind, Why: "permission denied"}
	}
	return nil
}

// checkCommand refuses a command name the box's PATH does not find (the
// host's PATH does not either: what it finds, toolDirs binds), saying
// which shipped spec brings it where it is installed off the PATH
// (unless files, the bind specs loaded, hold it already) and where the
// project in cwd has one of its own.
func checkCommand(kind jail.Kind, name string, so jail.StrictOptions, f facts, cwd string, files []string) error {
	if strings.Contains(name, "/") {
		return nil
	}
	path := so.BoxPath()
	if d, _ := f.found.first(name, path); d != "" {
		return nil
	}
	var hints []string
	if spec := bindspec.ShippedProvides()[name]; spec != "" && !slices.Contains(files, bindspec.ShippedFile(spec)) {
		hints = append(hints, "--binds "+spec+" brings "+name+" where this host has it installed")
	}
	hints = append(hints, projectBinHints(name, cwd, f.repo)...)
	hints = append(hints, "the box's PATH is "+strings.Join(path, ":")+"; 'aisan explain run --strict' shows what of yours it lacks")
	return jail.WithHints(&jail.NotFoundError{Name: name, Kind: kind}, hints...)
}

// projectBins are a project's own directories of commands that its
// tools put on PATH only when asked (a virtualenv once activated, npm
// for its scripts and npx): a box's PATH has them when the host's has.
var projectBins = []struct{ dir, what, also string }{
	{".venv/bin", "virtualenv", ""},
	{"venv/bin", "virtualenv", ""},
	{"node_modules/.bin", "node_modules", ", or npx %s"},
}

// projectBinHints names the nearest of the project's own commands called
// name, looking in cwd and each directory above it up to repo: the box
// runs it by its path, relative to cwd.
func projectBinHints(name, cwd, repo string) []string {
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		for _, b := range projectBins {
			p := filepath.Join(d, b.dir, name)
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
				continue
			}
			rel, err := filepath.Rel(cwd, p)
			if err != nil {
				rel = p
			}
			also := ""
			if b.also != "" {
				also = fmt.Sprintf(b.also, name)
			}
			return []string{fmt.Sprintf("this project's %s has %s: run it by its path, %s%s", b.what, name, rel, also)}
		}
		if repo == "" || d == repo || !within(d, repo) || d == filepath.Dir(d) {
			return nil
		}
	}
}

// swap is a toolchain command that runs another program in the box than
// on the host.
type swap struct{ name, host, box string }

// swaps lists the toolchain commands the box's PATH resolves to another
// program than the host's.
func swaps(so jail.StrictOptions, f facts) []swap {
	path := so.BoxPath()
	var out []swap
	for name := range f.found {
		_, host := f.found.first(name, f.hostPath)
		_, box := f.found.first(name, path)
		if host != "" && box != "" && host != box {
			out = append(out, swap{name: name, host: host, box: box})
		}
	}
	slices.SortFunc(out, func(a, b swap) int { return strings.Compare(a.name, b.name) })
	return out
}

// swapNotes are the lines that name each swap and the spec that brings
// the host's program, unless the box has it already (files: the bind
// specs loaded).
func swapNotes(ss []swap, files []string) []string {
	var out []string
	for _, s := range ss {
		line := fmt.Sprintf("in the box, %s is %s, not %s as on your PATH", s.name, s.box, s.host)
		if spec := bindspec.ShippedProvides()[s.name]; spec != "" && !slices.Contains(files, bindspec.ShippedFile(spec)) {
			line += "; --binds " + spec + " brings yours"
		}
		out = append(out, line)
	}
	return out
}

// specNote is the line that names the shipped spec for the command a
// run starts (go, npm, cargo) when no spec brings it (files: the bind
// specs loaded): without it the box runs the host's program with nothing
// else of its toolchain (an empty module or package cache, none of the
// user's settings), and what it then fetches is refused.
func specNote(kind jail.Kind, name string, files []string) []string {
	if kind != jail.KindRun || strings.Contains(name, "/") {
		return nil
	}
	spec := bindspec.ShippedProvides()[name]
	if spec == "" || slices.Contains(files, bindspec.ShippedFile(spec)) {
		return nil
	}
	return []string{fmt.Sprintf("%s runs in the box without its toolchain's caches and settings; --binds %s brings them (aisan explain shows what it adds)", name, spec)}
}

// pathProviders maps each host PATH directory the box does not show to
// the shipped spec that would show it here; loading them reads the
// host's facts (facts, or gathered anew when nil).
func pathProviders(h jail.Host, facts bindspec.Facts, missing []string) map[string]string {
	out := map[string]string{}
	if len(missing) == 0 {
		return out
	}
	if facts == nil {
		facts = bindspec.GatherFacts(h.Env, h.Home)
	}
	for _, name := range bindspec.Shipped() {
		s, err := bindspec.Load(bindspec.Host{Home: h.Home, Facts: facts, System: systemPrefixes}, name)
		if err != nil {
			continue
		}
		for _, d := range missing {
			if out[d] != "" {
				continue
			}
			if slices.Contains(s.PathDirs(), d) {
				out[d] = name
				continue
			}
			for _, m := range s.Mounts {
				if m.Key == bindspec.KeyRO && within(d, m.Value) {
					out[d] = name
				}
			}
		}
	}
	return out
}

// missingPath are the host's PATH directories the box does not show.
func missingPath(so jail.StrictOptions) []string {
	path := so.BoxPath()
	var out []string
	for _, d := range so.HostPath {
		if !slices.Contains(path, d) {
			out = append(out, d)
		}
	}
	return out
}

// explainPath renders the box's PATH and the host's directories it lacks,
// with the spec that brings each (the swaps are the plan's warnings).
func explainPath(w io.Writer, so jail.StrictOptions, providers map[string]string) {
	fmt.Fprintf(w, "\nPATH in the box (your PATH's order, for every directory the box shows):\n")
	for _, d := range so.BoxPath() {
		fmt.Fprintf(w, "  %s\n", d)
	}
	missing := missingPath(so)
	if len(missing) > 0 {
		fmt.Fprintf(w, "\nyour PATH directories the box does not show:\n")
		for _, d := range missing {
			how := "no shipped spec brings it: a bind spec with ro and path does"
			if spec := providers[d]; spec != "" {
				how = "--binds " + spec
			}
			fmt.Fprintf(w, "  %-40s %s\n", d, how)
		}
	}
}

// toolchainPlan is what Prepare adds for the box's toolchains: notes for
// the launch, and the PATH section of explain.
type toolchainPlan struct {
	notes   []string
	explain string
}

// planToolchain checks that the box's PATH finds the command, names the
// toolchain commands the box would swap, and (for explain, dry) renders
// the PATH section with the spec that brings each missing directory.
func planToolchain(kind jail.Kind, name string, h jail.Host, so jail.StrictOptions, f facts, o Options, dry bool) (toolchainPlan, error) {
	if err := checkCommand(kind, name, so, f, h.Cwd, o.BindFiles); err != nil {
		return toolchainPlan{}, err
	}
	ss := swaps(so, f)
	var notes []string
	if !slices.ContainsFunc(ss, func(s swap) bool { return s.name == name }) {
		// A swapped command's line names the spec already.
		notes = specNote(kind, name, o.BindFiles)
	}
	p := toolchainPlan{notes: append(notes, swapNotes(ss, o.BindFiles)...)}
	if dry {
		var w strings.Builder
		explainPath(&w, so, pathProviders(h, o.Facts, missingPath(so)))
		p.explain = w.String()
	}
	return p, nil
}

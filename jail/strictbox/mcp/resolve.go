package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// ResolveHost holds what [Resolve] needs to know about the host and the box.
type ResolveHost struct {
	// PATH is the box's PATH. Its directories are host directories that
	// the box shows at the same place.
	PATH string
	// HostPATH is the host's PATH, searched only to say which bind spec
	// lines would bring a command the box PATH lacks.
	HostPATH string
	// LookPath finds an executable named name in the directories of path,
	// on the host, and returns where it found it (not resolved). Nil
	// means a plain search for an executable regular file.
	LookPath func(name, path string) (string, error)
	// Covered reports whether the box already shows path, at the same
	// place (the read-only system directories, the repository). Nil means
	// nothing is covered.
	Covered func(path string) bool
	// Check is the credential-path hook: it returns an error for a path
	// that must not be bound into the box. It sees every bind (a
	// directory, often) and every recreated link, so it must refuse a
	// path that is, lies in, or contains a credential path. Nil means no
	// check.
	Check func(path string) error
	// Home is the user's home directory; it is never bound whole.
	Home string
	// Project is the directory relative commands are found from.
	Project string
	// Repo is the repository root. The box can write it, so a path named
	// by a file in it (a command in a repository config, a link or a "#!"
	// line of a file in it) is never bound: it must already be covered.
	Repo string
	// Writable reports whether a box can write a path outside Repo (a
	// directory a bind spec gives a box read-write, now or at an earlier
	// launch; aisan's state). A path named by a file there is never bound
	// either, as for the repository. Nil means only Repo.
	Writable func(path string) bool
}

// Symlink is a link the box needs at Path, pointing to Target (as
// readlink shows it), because the path is not otherwise visible.
type Symlink struct {
	Path   string
	Target string
}

// Resolved is how one server's command was found.
type Resolved struct {
	Server string
	Client Client
	Source Source
	// Path is where the command was found.
	Path string
	// Chain lists every path the resolution went through, in order:
	// links, their targets and interpreters.
	Chain []string
}

// Resolution is what the box needs so that the servers' commands run.
type Resolution struct {
	// Binds are host paths to bind read-only at the same place. They are
	// sorted, and none lies inside another.
	Binds []string
	// Symlinks are links to create in the box, in order, that no bind
	// already provides.
	Symlinks []Symlink
	// Commands has one entry per server that runs, in the order given.
	Commands []Resolved
	// Unrunnable are the servers whose command cannot run in the box, in
	// the order given: nothing is bound for them, and the caller drops
	// them.
	Unrunnable []Unrunnable
}

// Unrunnable is a server whose command cannot run in the box.
type Unrunnable struct {
	Server string
	Client Client
	Source Source
	// Err says why: a *[NotFoundError], or the credential check's
	// refusal, naming the server; Why says it without the name.
	Err error
	Why string
	// Fix are the bind spec lines that would make it run ("" when there
	// are none: a missing file, a path aisan will not bind).
	Fix string
}

// NotFoundError is why a server's command (or its interpreter) cannot be
// found or run in the box.
type NotFoundError struct {
	Server  string
	Client  Client
	File    string
	Command string
	PATH    string
	Err     error
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s mcp server %q (declared in %s): %s", e.Client, e.Server, e.File, e.why())
}

// why is the error without the server's name.
func (e *NotFoundError) why() string {
	var le *lookupError
	if errors.As(e.Err, &le) && le.name == e.Command {
		return fmt.Sprintf("command %q is not on the box PATH (%s)", e.Command, e.PATH)
	}
	return fmt.Sprintf("command %q cannot run in the box: %v", e.Command, e.Err)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// lookupError is a name the box PATH does not hold.
type lookupError struct {
	name string
	err  error
}

func (e *lookupError) Error() string { return e.err.Error() }
func (e *lookupError) Unwrap() error { return e.err }

// maxInterpreters bounds "#!" recursion (a script run by a script run by
// a binary), which also stops loops.
const maxInterpreters = 8

// Resolve finds each server's executable in the box PATH (or at its path,
// for a command with a slash), follows its symlinks, its "#!" line (with
// "/usr/bin/env NAME" looked up in the box PATH again) and the links of
// the interpreter (a virtualenv's bin/python), and returns the binds and
// links the box needs. What a bind covers is decided by [BindRoot]. A
// server whose command cannot be found or run in the box, or whose
// resolution would bind a path h.Check refuses, is listed in
// [Resolution.Unrunnable] with the reason, and nothing is bound for it:
// one server never stops the others, nor the launch.
func Resolve(servers []Server, h ResolveHost) Resolution {
	if h.LookPath == nil {
		h.LookPath = lookPath
	}
	r := &resolver{h: h}
	var res Resolution
	for _, s := range servers {
		rs := Resolved{Server: s.Name, Client: s.Client, Source: s.Source}
		nb, nl := len(r.binds), len(r.links)
		drop := func(err error, why, fix string) {
			r.binds, r.links, r.pending = r.binds[:nb], r.links[:nl], nil
			res.Unrunnable = append(res.Unrunnable, Unrunnable{Server: s.Name, Client: s.Client, Source: s.Source, Err: err, Why: why, Fix: fix})
		}
		notFound := func(err error) {
			nf := &NotFoundError{Server: s.Name, Client: s.Client, File: s.Source.File, Command: s.Command, PATH: h.PATH, Err: err}
			drop(nf, nf.why(), r.fix(err))
		}
		chain, err := r.command(s)
		if err != nil {
			notFound(err)
			continue
		}
		refused := false
		for _, p := range r.pending {
			if h.Check != nil {
				if err := h.Check(p); err != nil {
					drop(fmt.Errorf("%s mcp server %q (declared in %s): %w", s.Client, s.Name, s.Source.File, err), err.Error(), "")
					refused = true
					break
				}
			}
		}
		if refused {
			continue
		}
		r.pending = nil
		rs.Path, rs.Chain = chain[0], chain
		res.Commands = append(res.Commands, rs)
	}
	res.Binds = foldBinds(r.binds)
	for _, l := range r.links {
		if !under(l.Path, res.Binds) && !slices.Contains(res.Symlinks, l) {
			res.Symlinks = append(res.Symlinks, l)
		}
	}
	return res
}

// command resolves one server's command: the chain of paths it runs
// through, its first the command as found.
func (r *resolver) command(s Server) ([]string, error) {
	if strings.Contains(s.Command, "$") {
		return nil, errors.New("it is a variable reference, which aisan does not expand on the host; write the command literally")
	}
	var p string
	if strings.Contains(s.Command, "/") {
		p = s.Command
		if !filepath.IsAbs(p) {
			if r.h.Project == "" {
				return nil, errors.New("a relative command needs the project directory")
			}
			p = filepath.Join(r.h.Project, p)
		}
	} else {
		var err error
		if p, err = r.h.LookPath(s.Command, r.h.PATH); err != nil {
			return nil, &lookupError{name: s.Command, err: err}
		}
	}
	return r.walk(p, 0, (s.Source.InRepo || r.boxWritable(s.Source.File)) && strings.Contains(s.Command, "/"))
}

// fix is the bind spec lines that would let the box PATH find the name a
// lookup missed: its directory on the host PATH, read-only and on the
// box PATH. "" when the host PATH lacks it too, or err is no lookup.
func (r *resolver) fix(err error) string {
	var le *lookupError
	if !errors.As(err, &le) || r.h.HostPATH == "" {
		return ""
	}
	p, err := lookPath(le.name, r.h.HostPATH)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(p)
	if r.h.Home != "" {
		if rel, ok := strings.CutPrefix(dir, r.h.Home+"/"); ok {
			dir = "~/" + rel
		}
	}
	return fmt.Sprintf(`%s is in %s on the host: ro = [%q] and path = [%q] in a bind spec (--binds FILE) let the box run it`, le.name, dir, dir, dir)
}

type resolver struct {
	h       ResolveHost
	binds   []string
	links   []Symlink
	pending []string // paths of the current server, for h.Check
}

// boxWritable reports whether a box can write p, as named or with its
// directory resolved (a link on the way may lead into such a place).
func (r *resolver) boxWritable(p string) bool {
	w := func(p string) bool { return inRepo(p, r.h.Repo) || (r.h.Writable != nil && r.h.Writable(p)) }
	if !filepath.IsAbs(p) {
		return false
	}
	if w(p) {
		return true
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	return err == nil && w(filepath.Join(dir, filepath.Base(p)))
}

func (r *resolver) covered(p string) bool {
	return (r.h.Covered != nil && r.h.Covered(p)) || under(p, r.binds)
}

// walk follows p's symlinks to a regular file, binds what it needs, and
// recurses into its interpreter. boxChosen says that p was named by a file
// the box can write: then nothing is bound for it.
func (r *resolver) walk(p string, depth int, boxChosen bool) ([]string, error) {
	if depth > maxInterpreters {
		return nil, fmt.Errorf("more than %d nested interpreters at %s", maxInterpreters, p)
	}
	chain := []string{p}
	cur := filepath.Clean(p)
	for hops := 0; ; hops++ {
		boxChosen = boxChosen || r.boxWritable(cur)
		if boxChosen && !r.covered(cur) {
			return nil, fmt.Errorf("%s is not visible in the box, and aisan binds nothing that a file a box can write names (the repository, a directory given read-write to a box)", cur)
		}
		if hops > 40 {
			return nil, fmt.Errorf("%s: too many levels of symlinks", p)
		}
		st, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if st.Mode().Type() != fs.ModeSymlink {
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is not a regular file (%s)", cur, st.Mode().Type())
			}
			if st.Mode().Perm()&0o111 == 0 {
				return nil, fmt.Errorf("%s is not executable", cur)
			}
			break
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return nil, err
		}
		if !r.covered(cur) {
			r.links = append(r.links, Symlink{Path: cur, Target: target})
			r.pending = append(r.pending, cur)
		}
		next := target
		if !filepath.IsAbs(next) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
			if err != nil {
				return nil, err
			}
			next = filepath.Join(dir, next)
		}
		cur = filepath.Clean(next)
		chain = append(chain, cur)
	}
	boxChosen = boxChosen || r.boxWritable(cur)
	if !r.covered(cur) {
		for _, b := range BindRoot(cur, r.h.Home, exists) {
			r.binds = append(r.binds, b)
			r.pending = append(r.pending, b)
		}
	}
	interp, err := interpreter(cur)
	if err != nil {
		return nil, err
	}
	if interp == "" {
		return chain, nil
	}
	if !filepath.IsAbs(interp) {
		found, err := r.h.LookPath(interp, r.h.PATH)
		if err != nil {
			return nil, &lookupError{name: interp, err: fmt.Errorf("interpreter %q of %s is not on the box PATH: %w", interp, cur, err)}
		}
		interp = found
		// The box PATH, not the script, chose this file.
		boxChosen = false
	}
	if strings.HasPrefix(filepath.Base(interp), "python") && !boxChosen {
		r.bindUserSite(cur)
	}
	sub, err := r.walk(interp, depth+1, boxChosen)
	if err != nil {
		return nil, fmt.Errorf("interpreter of %s: %w", cur, err)
	}
	return append(chain, sub...), nil
}

// bindUserSite binds ~/.local/lib/python* for a script in ~/.local/bin run
// by python: that is where "pip install --user" puts the modules.
func (r *resolver) bindUserSite(script string) {
	if r.h.Home == "" || filepath.Dir(script) != filepath.Join(r.h.Home, ".local", "bin") {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(r.h.Home, ".local", "lib", "python*"))
	for _, d := range dirs {
		if !r.covered(d) {
			r.binds = append(r.binds, d)
			r.pending = append(r.pending, d)
		}
	}
}

// BindRoot decides what to bind so that the real file f works in the box:
//   - inside node_modules: the outermost node_modules directory, since
//     node finds a package's dependencies by walking up node_modules
//     directories, and npm hoists them beside the package (a flat install
//     keeps @openai/codex's platform binary in a sibling package);
//   - in a bin directory of a virtualenv (a pyvenv.cfg beside it): the
//     virtualenv;
//   - in a bin directory whose parent also has lib (an interpreter or
//     tool prefix such as ~/.pyenv/versions/3.12 or ~/.nvm/versions/node/v22):
//     f and that lib (a Python finds its standard library there), but not
//     the whole prefix, whose etc may hold a config with a token (npmrc);
//     not for home, ~/.local, or a prefix holding home;
//   - otherwise f itself.
//
// exists reports whether a host path exists; it is a parameter so the
// decision can be tested without a filesystem.
func BindRoot(f, home string, exists func(string) bool) []string {
	parts := strings.Split(f, string(filepath.Separator))
	for i, p := range parts[:len(parts)-1] {
		if p == "node_modules" {
			return []string{strings.Join(parts[:i+1], string(filepath.Separator))}
		}
	}
	dir := filepath.Dir(f)
	if filepath.Base(dir) == "bin" {
		prefix := filepath.Dir(dir)
		if exists(filepath.Join(prefix, "pyvenv.cfg")) && safePrefix(prefix, home) {
			return []string{prefix}
		}
		if exists(filepath.Join(prefix, "lib")) && safePrefix(prefix, home) && (home == "" || prefix != filepath.Join(home, ".local")) {
			return []string{f, filepath.Join(prefix, "lib")}
		}
	}
	return []string{f}
}

// safePrefix refuses binding the root, /usr-like system prefixes (which
// the box shows anyway) and home or anything holding it.
func safePrefix(prefix, home string) bool {
	if prefix == "/" || prefix == "/usr" || prefix == "/usr/local" {
		return false
	}
	if home == "" {
		return true
	}
	return !(home == prefix || strings.HasPrefix(home, prefix+"/"))
}

// interpreter returns the program named by f's "#!" line, or "" when f
// has none. "/usr/bin/env [-S] [VAR=x] NAME" gives NAME.
func interpreter(f string) (string, error) {
	fd, err := regfile.Open(f)
	if err != nil {
		return "", err
	}
	defer fd.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(fd, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading %s: %w", f, err)
	}
	return ParseShebang(head[:n]), nil
}

// ParseShebang returns the interpreter a script's first bytes name, or "".
func ParseShebang(head []byte) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(strings.TrimSuffix(string(line), "\r"))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	var rest []string
	for _, f := range fields[1:] {
		// -S splits one argument into several; after Fields they are
		// already split.
		rest = append(rest, strings.Fields(strings.TrimPrefix(f, "-S"))...)
	}
	for _, f := range rest {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue
		}
		return f
	}
	return ""
}

func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", name, fs.ErrNotExist)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// foldBinds sorts binds, removes duplicates and drops any bind inside
// another.
func foldBinds(binds []string) []string {
	s := append([]string(nil), binds...)
	sort.Strings(s)
	var out []string
	for _, b := range s {
		if !under(b, out) {
			out = append(out, b)
		}
	}
	return out
}

package strictbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// goLocal is a directory on the host that a Go module or workspace
// builds from: a replace directive's path, a go.work use entry.
type goLocal struct {
	// File is the go.mod or go.work that names it, What what it says
	// ("replaces example.com/x with ../x", "uses ../x"), Dir the
	// directory, absolute and clean.
	File, What, Dir string
}

// maxGoFile caps a go.mod or go.work read for its local directories.
const maxGoFile = 1 << 20

// goLocalNote names the directories the Go module or workspace in cwd
// builds from that the box does not show (shows; a module that vendors
// its dependencies needs none of its replacements): go fails there with
// "replacement directory … does not exist" or "cannot load module …",
// and a bind spec brings them. The go.mod and go.work read are the
// nearest at or above cwd, up to repo. "" when there is nothing to say.
func goLocalNote(cwd, repo string, shows func(string) bool) string {
	var locals []goLocal
	if mod := nearestFile(cwd, repo, "go.mod"); mod != "" {
		if _, err := os.Stat(filepath.Join(filepath.Dir(mod), "vendor", "modules.txt")); err != nil {
			locals = append(locals, readGoLocal(mod)...)
		}
	}
	if work := nearestFile(cwd, repo, "go.work"); work != "" {
		locals = append(locals, readGoLocal(work)...)
	}
	var what, ro []string
	seen := map[string]bool{}
	for _, l := range locals {
		if fi, err := os.Stat(l.Dir); err != nil || !fi.IsDir() || shows(l.Dir) {
			// One the host lacks fails there too: go says so.
			continue
		}
		what = append(what, l.File+" "+l.What)
		if !seen[l.Dir] {
			seen[l.Dir] = true
			ro = append(ro, strconv.Quote(l.Dir))
		}
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, which the box does not show, so go cannot build there; a bind spec with ro = [%s] (--binds FILE) brings it read-only",
		strings.Join(what, "; "), strings.Join(ro, ", "))
}

// nearestFile is the regular file called name in cwd or the nearest
// directory above it, up to repo (cwd alone when it is not in repo); ""
// for none.
func nearestFile(cwd, repo, name string) string {
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		p := filepath.Join(d, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
		if repo == "" || d == repo || !within(d, repo) || d == filepath.Dir(d) {
			return ""
		}
	}
}

// readGoLocal reads the go.mod or go.work at p (a regular file; one
// that is not is not read) for the local directories it names.
func readGoLocal(p string) []goLocal {
	b, err := regfile.Read(p, maxGoFile)
	if err != nil {
		return nil
	}
	return goLocalDirs(p, b)
}

// goLocalDirs are the local directories the go.mod or go.work at path,
// whose text is data, names: each replace directive whose replacement
// is a path (./x, ../x, /x; Go's own rule), and each use entry of a
// go.work, relative ones taken from the file's directory.
func goLocalDirs(path string, data []byte) []goLocal {
	dir := filepath.Dir(path)
	name := filepath.Base(path)
	var out []goLocal
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		verb := block
		switch {
		case block != "" && fields[0] == ")":
			block = ""
			continue
		case block == "" && (fields[0] == "replace" || fields[0] == "use"):
			verb = fields[0]
			fields = fields[1:]
			if len(fields) == 1 && fields[0] == "(" {
				block = verb
				continue
			}
		case block == "":
			continue
		}
		switch verb {
		case "replace":
			i := slices.Index(fields, "=>")
			if i < 1 || i+1 >= len(fields) {
				continue
			}
			if p, ok := goLocalPath(fields[i+1]); ok {
				out = append(out, goLocal{File: name, What: "replaces " + unquote(fields[0]) + " with " + p, Dir: absFrom(dir, p)})
			}
		case "use":
			if len(fields) == 1 {
				p := unquote(fields[0])
				out = append(out, goLocal{File: name, What: "uses " + p, Dir: absFrom(dir, p)})
			}
		}
	}
	return out
}

// goLocalPath reports whether a replacement is a local path, as Go
// decides it: it starts with ./ or ../ (or is . or ..), or is absolute.
func goLocalPath(s string) (string, bool) {
	s = unquote(s)
	ok := s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || filepath.IsAbs(s)
	return s, ok
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

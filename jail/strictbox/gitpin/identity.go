package gitpin

import (
	"path/filepath"
	"regexp"
	"strings"
)

// ReadIdentity reads the config files paths for plain settings as git
// would see them in the repository whose git dir is gitDir: it follows
// include.path, and includeIf.gitdir:PATTERN.path (gitdir/i: too) when
// the pattern matches gitDir; an includeIf of another condition
// (onbranch:, hasconfig:) is not followed. Users keep their identity
// in such a file (a dotfiles repository's ~/.gitconfig.local, one per
// employer), and a box that lacks it cannot commit. What it reads is
// only ever given to a box by key (the identity and a few harmless
// settings); what git runs is read with [ReadTree]. home expands "~/".
func ReadIdentity(home, gitDir string, paths ...string) []Setting {
	var dirs []string
	if gitDir != "" {
		dirs = append(dirs, filepath.Clean(gitDir))
		if r, err := filepath.EvalSymlinks(gitDir); err == nil && r != dirs[0] {
			dirs = append(dirs, r)
		}
	}
	var out []Setting
	reads := 0
	var read func(path string, depth int)
	read = func(path string, depth int) {
		if reads++; reads > maxIncludeReads {
			return
		}
		data, err := readCapped(path, maxConfig)
		if err != nil {
			return
		}
		for _, s := range parseConfig(data) {
			if !isInclude(s) {
				out = append(out, s)
				continue
			}
			if depth >= maxIncludeDepth {
				continue
			}
			if s.Key != "include.path" && !gitdirMatches(strings.TrimSuffix(strings.TrimPrefix(s.Key, "includeif."), ".path"), filepath.Dir(path), home, dirs) {
				continue
			}
			inc, err := expandPath(s.Value, filepath.Dir(path), home)
			if err != nil {
				continue
			}
			read(inc, depth+1)
		}
	}
	for _, p := range paths {
		read(filepath.Clean(p), 0)
	}
	return out
}

// gitdirMatches reports whether an includeIf condition is gitdir: or
// gitdir/i: with a pattern that matches one of dirs (the git dir, as
// found and resolved), by git's rules: ~/ is the home, ./ the config
// file's directory (dir), a pattern not starting with / matches at any
// depth (**/), and one ending in / matches everything below (**).
func gitdirMatches(cond, dir, home string, dirs []string) bool {
	pat, ok := strings.CutPrefix(cond, "gitdir:")
	fold := false
	if !ok {
		if pat, ok = strings.CutPrefix(cond, "gitdir/i:"); !ok {
			return false
		}
		fold = true
	}
	switch {
	case strings.HasPrefix(pat, "~/"):
		if home == "" {
			return false
		}
		pat = home + pat[1:]
	case strings.HasPrefix(pat, "./"):
		pat = dir + pat[1:]
	}
	if !strings.HasPrefix(pat, "/") {
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	re, err := regexp.Compile(globRegexp(pat, fold))
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if re.MatchString(d) {
			return true
		}
	}
	return false
}

// globRegexp turns a wildmatch pattern with ** into an anchored regular
// expression: **/ is any number of directories, a trailing /** all
// below, * and ? stay within one component; brackets are literal.
func globRegexp(pat string, fold bool) string {
	var b strings.Builder
	b.WriteString("^")
	if fold {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(pat); {
		switch {
		case strings.HasPrefix(pat[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 3
		case strings.HasPrefix(pat[i:], "**"):
			b.WriteString(".*")
			i += 2
		case pat[i] == '*':
			b.WriteString("[^/]*")
			i++
		case pat[i] == '?':
			b.WriteString("[^/]")
			i++
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	return b.String()
}

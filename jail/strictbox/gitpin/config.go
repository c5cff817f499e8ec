package gitpin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
)

// maxConfig caps a git config file read by the host.
const maxConfig = 1 << 20

// Setting is one "section.key" (lower-cased, subsection kept) and value.
type Setting struct {
	Key, Value string
}

// ReadConfig reads the settings of git config files in order (a later
// file wins, as in git), without running git and without following
// include directives: it is used to find a few plain settings (the
// identity), and an included file would only add to what the box is
// refused, never to what it is given. Unreadable files are skipped.
// What decides what git runs is read with [ReadTree] instead.
func ReadConfig(paths ...string) []Setting {
	var out []Setting
	for _, p := range paths {
		data, err := readCapped(p, maxConfig)
		if err != nil {
			continue
		}
		out = append(out, parseConfig(data)...)
	}
	return out
}

// Lookup returns the last value of key, and whether it is set.
func Lookup(s []Setting, key string) (string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Key == key {
			return s[i].Value, true
		}
	}
	return "", false
}

func parseConfig(data []byte) []Setting {
	var out []Setting
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxConfig)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			head := line[1:end]
			name, sub, hasSub := strings.Cut(head, " ")
			section = strings.ToLower(strings.TrimSpace(name))
			if hasSub {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			} else if i := strings.IndexByte(section, '.'); i >= 0 {
				// [section.sub], the old syntax: the subsection is lower-case.
				section = strings.ToLower(section)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if section == "" {
			continue
		}
		k, v, hasValue := strings.Cut(line, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(k))
		if !hasValue {
			out = append(out, Setting{Key: key, Value: "true"})
			continue
		}
		out = append(out, Setting{Key: key, Value: configValue(strings.TrimSpace(v))})
	}
	return out
}

// configValue unquotes a value and drops a trailing comment.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// maxIncludeDepth is git's own limit on nested includes (config.c's
// MAX_INCLUDE_DEPTH): git dies rather than read a file deeper, so no
// deeper file can steer it.
const maxIncludeDepth = 10

// maxIncludeReads bounds the files ReadTree reads: includes can fan out
// (a file naming itself twice doubles the work at every level).
const maxIncludeReads = 1000

// Tree is config files read as git reads them, includes followed.
type Tree struct {
	// Settings are in git's order: an included file's settings stand
	// where its include directive does.
	Settings []Setting
	// Included are the files the includes name, existing or not, as
	// absolute clean paths, each once, in the order first met.
	Included []string
}

// ReadTree reads the config files paths as git does, following
// include.path and every includeIf.*.path to git's depth limit. Every
// condition is taken as true: one false now may hold later (another
// branch, another remote), and a file that is protected but not read
// costs nothing. home expands "~/". A missing or unreadable file is
// skipped, as git skips a missing include; an include path that cannot
// be resolved is an error, since what git would read there is unknown.
func ReadTree(home string, paths ...string) (Tree, error) {
	var t Tree
	listed := map[string]bool{}
	onStack := map[string]bool{}
	reads := 0
	var read func(path string, depth int) error
	read = func(path string, depth int) error {
		if onStack[path] {
			// A cycle: git dies at the depth limit, and this file's
			// includes are being followed already.
			return nil
		}
		// git follows symlinks here (~/.gitconfig is often one); a
		// protected file that is a link is refused by jail/protect.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil
		}
		data, err := readCapped(real, maxConfig)
		if err != nil {
			return nil
		}
		if reads++; reads > maxIncludeReads {
			return fmt.Errorf("the git config includes reached from %s name more than %d files; strict mode cannot tell which of them git reads: remove the repeated includes", paths[0], maxIncludeReads)
		}
		onStack[path] = true
		defer delete(onStack, path)
		for _, s := range parseConfig(data) {
			t.Settings = append(t.Settings, s)
			if !isInclude(s) {
				continue
			}
			inc, err := expandPath(s.Value, filepath.Dir(path), home)
			if err != nil {
				return fmt.Errorf("%s in %s: %w; strict mode cannot tell what git reads there: make the path absolute or relative", s.Key, path, err)
			}
			if !listed[inc] {
				listed[inc] = true
				t.Included = append(t.Included, inc)
			}
			if depth < maxIncludeDepth {
				if err := read(inc, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, p := range paths {
		if err := read(filepath.Clean(p), 0); err != nil {
			return Tree{}, err
		}
	}
	return t, nil
}

// isInclude reports whether s is an include directive (include.path,
// includeIf.<condition>.path).
func isInclude(s Setting) bool {
	if s.Value == "" || !strings.HasSuffix(s.Key, ".path") {
		return false
	}
	return s.Key == "include.path" || strings.HasPrefix(s.Key, "includeif.")
}

// expandPath is the absolute path a config path value names, as git's
// interpolate_path expands it: "~/" and "~user/" to home directories, a
// relative path from dir.
func expandPath(v, dir, home string) (string, error) {
	switch {
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return "", errors.New("no home directory is known to expand ~")
		}
		return filepath.Join(home, strings.TrimPrefix(v, "~")), nil
	case strings.HasPrefix(v, "~"):
		name, rest, _ := strings.Cut(v[1:], "/")
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("expanding ~%s: %w", name, err)
		}
		return filepath.Join(u.HomeDir, rest), nil
	case strings.HasPrefix(v, "%(prefix)/"):
		return "", errors.New("a %(prefix)/ path depends on where git is installed")
	case filepath.IsAbs(v):
		return filepath.Clean(v), nil
	}
	return filepath.Join(dir, v), nil
}

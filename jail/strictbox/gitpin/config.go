package gitpin

import (
	"bufio"
	"bytes"
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
// include directives: it is used to find a few plain settings (identity,
// core.hooksPath), and an included file would only add to what the box
// is refused, never to what it is given. Unreadable files are skipped.
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

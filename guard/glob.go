package guard

// Globs and brace expansion, worked out on command words and operator
// patterns so that p{k..k}ill and /usr/bin/pk?ll name pkill.

import (
	"path"
	"strconv"
	"strings"
)

// globMatch reports whether a shell pattern matches all of s. The guard
// only uses it on short values; path.Match's special '/' does not matter
// for command names.
func globMatch(pat, s string) bool {
	if !hasGlob(pat) {
		return unescapePattern(pat) == s
	}
	ok, err := path.Match(pat, s)
	return err == nil && ok
}

// hasGlob reports whether a pattern has an unescaped glob character.
func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// expandBraces performs bash brace expansion of the comma form on a
// pattern, giving at most limit words.
func expandBraces(p string, limit int) []string {
	if len(p) > 1024 {
		return []string{p} // no command name is this long; keep the scan linear
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			i++
			continue
		}
		if p[i] != '{' {
			continue
		}
		depth, j := 0, i
		var commas []int
	scan:
		for ; j < len(p); j++ {
			switch p[j] {
			case '\\':
				j++
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					break scan
				}
			case ',':
				if depth == 1 {
					commas = append(commas, j)
				}
			}
		}
		if j >= len(p) {
			continue
		}
		pre, post := p[:i], p[j+1:]
		var items []string
		if len(commas) == 0 {
			var ok bool
			if items, ok = braceSequence(p[i+1:j], limit); !ok {
				continue
			}
		} else {
			start := i + 1
			for _, end := range append(commas, j) {
				items = append(items, p[start:end])
				start = end + 1
			}
		}
		var out []string
		for _, item := range items {
			for _, e := range expandBraces(pre+item+post, limit-len(out)) {
				out = append(out, e)
				if len(out) >= limit {
					return out
				}
			}
		}
		return out
	}
	return []string{p}
}

// braceSequence expands the body of {a..b} and {a..b..step}: integers or
// single letters. A long integer sequence keeps its ends and any 0 or -1
// in it, the values that matter to kill, before the rest.
func braceSequence(body string, limit int) ([]string, bool) {
	parts := strings.Split(body, "..")
	if len(parts) != 2 && len(parts) != 3 {
		return nil, false
	}
	step := int64(1)
	if len(parts) == 3 {
		n, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			return nil, false
		}
		if n < 0 {
			n = -n
		}
		if n != 0 {
			step = n
		}
	}
	a, errA := strconv.ParseInt(parts[0], 10, 64)
	b, errB := strconv.ParseInt(parts[1], 10, 64)
	if errA == nil && errB == nil {
		width := 0
		for _, p := range parts[:2] {
			if d := strings.TrimPrefix(p, "-"); len(d) > 1 && d[0] == '0' {
				width = max(width, len(p))
			}
		}
		format := func(n int64) string {
			s := strconv.FormatInt(n, 10)
			for len(s) < width {
				if s[0] == '-' {
					s = "-0" + s[1:]
				} else {
					s = "0" + s
				}
			}
			return s
		}
		lo, hi := min(a, b), max(a, b)
		var out []string
		seen := make(map[int64]bool)
		add := func(n int64) {
			if n >= lo && n <= hi && (n-a)%step == 0 && !seen[n] && len(out) < limit {
				seen[n] = true
				out = append(out, format(n))
			}
		}
		if (hi-lo)/step >= int64(limit) {
			add(a)
			add(a + (b-a)/step*step)
			add(0)
			add(-1)
		}
		dir := step
		if b < a {
			dir = -step
		}
		for n, i := a, 0; i < limit && n >= lo && n <= hi; n, i = n+dir, i+1 {
			add(n)
		}
		return out, true
	}
	if len(parts[0]) != 1 || len(parts[1]) != 1 || !isLetter(parts[0][0]) || !isLetter(parts[1][0]) {
		return nil, false
	}
	x, y := int64(parts[0][0]), int64(parts[1][0])
	dir := step
	if y < x {
		dir = -step
	}
	var out []string
	for n := x; len(out) < limit && (dir > 0 && n <= y || dir < 0 && n >= y); n += dir {
		out = append(out, string(rune(n)))
	}
	return out, true
}

// globNames returns the names in specialNames that a command-word pattern
// could match by basename.
func globNames(p string) []string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	p = strings.ReplaceAll(p, "[!", "[^")
	var out []string
	for _, name := range specialNames {
		if ok, err := path.Match(p, name); err == nil && ok {
			out = append(out, name)
		}
	}
	return out
}

package direnv

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// nixPath finds the relative path literals of a nix expression: ./x and
// ../x, as written (a path may also sit in a string, as "${./x}").
var nixPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9._+\-/~])(\.\.?/[A-Za-z0-9._+\-/]*)`)
})

// NixPaths are the relative paths a nix file (its text) names: what a
// flake or shell.nix the .envrc uses imports, reads or runs (a shellHook
// read from a script, a module of the shell), each once, in order. The
// project's own directory (./.) is not among them: nix takes it whole as
// the flake's source, which cannot be held.
func NixPaths(text []byte) []string {
	var out []string
	for _, m := range nixPath().FindAllSubmatch(text, -1) {
		p := strings.TrimRight(string(m[1]), "/")
		if p == "." || p == ".." || strings.Trim(p, "./") == "" || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

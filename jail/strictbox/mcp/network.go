package mcp

import (
	"path/filepath"
	"slices"
	"strings"
)

// Package runners fetch the package they are told to run when it is not
// installed, each time or into a cache: a box without a network cannot.
// A runner is named by its command, and for a package manager by the
// subcommand that runs a package.
var (
	fetchers    = []string{"npx", "pnpx", "bunx", "uvx"}
	fetchVerbs  = map[string][]string{"npm": {"exec", "x"}, "pnpm": {"dlx"}, "yarn": {"dlx"}, "bun": {"x"}, "pipx": {"run"}}
	engines     = []string{"docker", "podman", "nerdctl"}
	denoFetched = []string{"npm:", "jsr:", "http:", "https:"}
)

// NeedsNetwork says why server s needs the network to start ("runs npx,
// which fetches its package when it is not installed"), or "" when
// nothing in its command says so. It judges the command as written, the
// way the client will start it.
func NeedsNetwork(s Server) string {
	name := filepath.Base(s.Command)
	first := ""
	for _, a := range s.Args {
		if !strings.HasPrefix(a, "-") {
			first = a
			break
		}
	}
	switch {
	case slices.Contains(fetchers, name):
		return "runs " + name + ", which fetches its package when it is not installed"
	case slices.Contains(fetchVerbs[name], first):
		return "runs " + name + " " + first + ", which fetches its package when it is not installed"
	case name == "uv" && (first == "tool" || first == "run" && slices.Contains(s.Args, "--with")):
		return "runs uv " + first + ", which fetches its packages when they are not installed"
	case slices.Contains(engines, name):
		return "runs " + name + ", whose engine (and the registry its images come from) the box does not reach"
	case name == "deno":
		for _, a := range s.Args {
			for _, p := range denoFetched {
				if strings.HasPrefix(a, p) {
					return "runs deno on " + p + " code, which it fetches when it is not cached"
				}
			}
		}
	}
	return ""
}

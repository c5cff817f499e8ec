package strictbox

import (
	"fmt"
	"slices"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
	"github.com/aisan-dev/aisan/jail/strictbox/truststore"
)

// mcpClients are the agents whose local MCP servers a strict box imports.
var mcpClients = map[jail.Kind]mcp.Client{jail.KindClaude: mcp.Claude, jail.KindCodex: mcp.Codex, jail.KindOpencode: mcp.Opencode}

// planMCP decides, without writing anything, which of the user's local
// MCP servers the box starts, and applies that to o: the agent's options
// (Claude's --mcp-config … --strict-mcp-config), its environment
// (opencode's OPENCODE_CONFIG) and read-only binds of each server's
// executable and what it resolves to. It returns the options the launch
// repeats for real (writing the client's config into the state dir) once
// the state dir exists, and what explain shows of the plan (nil when the
// agent imports none). Remote servers are not offered in the box; none
// are with --no-mcp (none).
func planMCP(kind jail.Kind, h jail.Host, o *jail.StrictOptions, allowEnv []string, none bool) (*mcp.Options, []string, error) {
	client, ok := mcpClients[kind]
	if !ok || o.StateDir == "" {
		return nil, nil, nil
	}
	boxPath := o.PATH()
	visible := boxShows(*o)
	writable, err := boxCanWrite(*o)
	if err != nil {
		return nil, nil, fmt.Errorf("importing the user's MCP servers: %w", err)
	}
	opts := mcp.Options{
		Client: client,
		Host: mcp.Host{
			Home: h.Home, Project: h.Cwd, Repo: o.Repo,
			ClaudeConfigDir: h.Getenv("CLAUDE_CONFIG_DIR"), CodexHome: h.Getenv("CODEX_HOME"),
			XDGConfigHome: h.Getenv("XDG_CONFIG_HOME"), OpencodeConfig: h.Getenv("OPENCODE_CONFIG"),
			OpencodeConfigContent: h.Getenv("OPENCODE_CONFIG_CONTENT"),
		},
		AllowEnv:    slices.Clone(allowEnv),
		StateDir:    o.StateDir,
		BoxStateDir: o.StateDir,
		Resolve: mcp.ResolveHost{
			PATH: boxPath, HostPATH: h.Getenv("PATH"),
			Covered: visible,
			Check:   func(p string) error { return exposes(p, o.Forbidden) },
			Home:    h.Home, Project: h.Cwd, Repo: o.Repo,
			Writable: writable,
		},
		None:   none,
		Net:    o.Net,
		DryRun: true,
	}
	p, err := mcp.Prepare(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("importing the user's MCP servers: %w", err)
	}
	o.AgentArgs = append(o.AgentArgs, p.Args...)
	o.ExtraEnv = append(o.ExtraEnv, p.Env...)
	for _, b := range p.Binds {
		o.Binds = append(o.Binds, jail.Mount{Kind: jail.ROBind, Src: b, Dst: b, Why: "MCP: a local server's executable or what it resolves to, read-only"})
	}
	for _, l := range p.Symlinks {
		o.Binds = append(o.Binds, jail.Mount{Kind: jail.Symlink, Src: l.Target, Dst: l.Path, Why: "MCP: a link a local server's command goes through"})
	}
	opts.DryRun = false
	// Not nil: explain shows the section whenever the agent imports.
	lines := []string{}
	if none {
		lines = append(lines, "none imported (--no-mcp)")
	}
	if p.Summary != "" {
		lines = append(lines, p.Summary)
	}
	lines = append(lines, mcp.Explain(p.Import)...)
	lines = append(lines, p.Lines...)
	return &opts, lines, nil
}

// boxShows is what a box of o shows of the host at the same place, as
// planned so far: the system directories, the repository, the agent's
// directories and every bind.
func boxShows(o jail.StrictOptions) func(p string) bool {
	shown := slices.Concat([]string{"/usr", "/etc", o.Repo}, o.ToolDirs)
	for _, r := range o.Root {
		// /bin, /lib… as the box has them (the merged-/usr links too).
		shown = append(shown, r.Path)
	}
	for _, m := range o.Binds {
		if m.Kind == jail.Bind || m.Kind == jail.ROBind || m.Kind == jail.Overlay {
			shown = append(shown, m.Dst)
		}
	}
	return func(p string) bool {
		for _, c := range shown {
			if within(p, c) {
				return true
			}
		}
		return false
	}
}

// boxCanWrite reports whether some box can write a path: this box's
// read-write binds, every place a strict box was given read-write before
// (trust's record) and aisan's state. A link or "#!" line there was
// perhaps written by a box, and must not choose what the next one is
// shown of the host.
func boxCanWrite(o jail.StrictOptions) (func(p string) bool, error) {
	store, err := truststore.Open()
	if err != nil {
		return nil, err
	}
	places, err := store.Places(boxWritable(jail.Strict(o))...)
	if err != nil {
		return nil, err
	}
	return func(p string) bool {
		_, ok := places.Holder(p)
		return ok
	}, nil
}

// exposes refuses a path to bind that is, holds or lies in one of the
// credential paths.
func exposes(p string, credentials []string) error {
	for _, f := range credentials {
		if within(f, p) || within(p, f) {
			return fmt.Errorf("%s would expose the credential %s", p, f)
		}
	}
	return nil
}

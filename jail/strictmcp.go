package jail

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
)

// mcpClients are the agents whose local MCP servers a strict box imports.
var mcpClients = map[Kind]mcp.Client{KindClaude: mcp.Claude, KindCodex: mcp.Codex, KindOpencode: mcp.Opencode}

// planMCP decides, without writing anything, which of the user's local
// MCP servers the box starts, and applies that to o: the agent's options
// (Claude's --mcp-config … --strict-mcp-config), its environment
// (opencode's OPENCODE_CONFIG) and read-only binds of each server's
// executable and what it resolves to. It returns the options the launch
// repeats for real (writing the client's config into the state dir) once
// the state dir exists, and the plan for explain. Remote servers are not
// offered in the box.
func planMCP(kind Kind, h Host, o *StrictOptions, sr *StrictRequest, getenv func(string) string) (*mcp.Options, *mcp.Plan, error) {
	client, ok := mcpClients[kind]
	if !ok || o.StateDir == "" {
		return nil, nil, nil
	}
	boxPath := strings.Join(dedup(slices.Concat(o.PathDirs, o.BindPath, []string{"/usr/local/bin", "/usr/bin", "/bin"})), ":")
	covered := slices.Concat([]string{"/usr", "/etc", o.Repo}, o.ToolDirs)
	for _, r := range o.Root {
		// /bin, /lib… as the box has them (the merged-/usr links too).
		covered = append(covered, r.Path)
	}
	for _, m := range o.Binds {
		if m.Kind == Bind || m.Kind == ROBind || m.Kind == Overlay {
			covered = append(covered, m.Dst)
		}
	}
	opts := mcp.Options{
		Client: client,
		Host: mcp.Host{
			Home: h.Home, Project: h.Cwd, Repo: o.Repo,
			ClaudeConfigDir: getenv("CLAUDE_CONFIG_DIR"), CodexHome: getenv("CODEX_HOME"),
			XDGConfigHome: getenv("XDG_CONFIG_HOME"), OpencodeConfig: getenv("OPENCODE_CONFIG"),
			OpencodeConfigContent: getenv("OPENCODE_CONFIG_CONTENT"),
		},
		AllowEnv:    slices.Clone(sr.MCPEnv),
		StateDir:    o.StateDir,
		BoxStateDir: o.StateDir,
		Resolve: mcp.ResolveHost{
			PATH: boxPath,
			Covered: func(p string) bool {
				for _, c := range covered {
					if within(p, c) {
						return true
					}
				}
				return false
			},
			Check: func(p string) error {
				for _, f := range o.Forbidden {
					if within(f, p) || within(p, f) {
						return fmt.Errorf("%s would expose the credential %s", p, f)
					}
				}
				return nil
			},
			Home: h.Home, Project: h.Cwd, Repo: o.Repo,
		},
		DryRun: true,
	}
	p, err := mcp.Prepare(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("importing the user's MCP servers: %w", err)
	}
	o.AgentArgs = append(o.AgentArgs, p.Args...)
	o.ExtraEnv = append(o.ExtraEnv, p.Env...)
	for _, b := range p.Binds {
		o.Binds = append(o.Binds, Mount{Kind: ROBind, Src: b, Dst: b, Why: "MCP: a local server's executable or what it resolves to, read-only"})
	}
	for _, l := range p.Symlinks {
		o.Binds = append(o.Binds, Mount{Kind: Symlink, Src: l.Target, Dst: l.Path, Why: "MCP: a link a local server's command goes through"})
	}
	opts.DryRun = false
	return &opts, &p, nil
}

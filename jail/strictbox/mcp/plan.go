package mcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Options is what [Prepare] needs for one box.
type Options struct {
	Client Client
	Host   Host
	// AllowEnv is the bind spec's mcp_env list: env variable names whose
	// secret-looking values may still be copied into the box.
	AllowEnv []string
	// StateDir is the strict state dir of (repository, agent) on the host;
	// BoxStateDir is where the box sees it (equal when bound in place).
	StateDir    string
	BoxStateDir string
	// Resolve describes the box PATH and what the box already shows.
	Resolve ResolveHost
	// None imports nothing (--no-mcp): the client's config is still
	// written, empty, so that the box's client reads no other.
	None bool
	// Net says the box keeps the host network: then servers that fetch
	// at start are not reported as needing it.
	Net bool
	// OpencodePermission is the user's permission block that opencode's
	// file carries beside the servers (JSON; nil for none).
	OpencodePermission json.RawMessage
	// DryRun reads, decides and resolves but writes nothing (explain).
	DryRun bool
}

// Plan is what the launcher applies to the box for the imported servers.
type Plan struct {
	// Import is the import after [FilterEnv].
	Import   Import
	Withheld []Withheld
	Passed   []Passed
	// ConfigPath is the written file on the host ("" on a dry run).
	ConfigPath string
	// Args are appended to the agent's argv (Claude: --mcp-config FILE
	// --strict-mcp-config, always, so that Claude reads no other MCP
	// configuration in the box).
	Args []string
	// Env are "NAME=value" entries for the box environment (opencode:
	// OPENCODE_CONFIG). Codex reads the servers from CODEX_HOME/config.toml,
	// which the caller already points at the state dir.
	Env []string
	// Binds and Symlinks come from [Resolve].
	Binds    []string
	Symlinks []Symlink
	// Summary is the one launch line ([Summary]); Lines is the detailed
	// report for the launch and explain: dropped servers, withheld and
	// allowed secret-looking variables ([Lines]). No values.
	Summary string
	Lines   []string
}

// OpencodeBoxSettings are what the box's first opencode config layer
// sets besides the servers and the user's permission block. snapshot is
// off: opencode keeps its snapshots in a git directory of its data,
// which is the box's to write, and runs git there itself at every step,
// outside its permission rules; the config of that directory (a
// core.fsmonitor, a filter with info/attributes, a commondir pointing
// elsewhere) would choose what git runs, at once and at every later
// launch. git has no switch to leave a repository's own config unread,
// so no list of keys pinned from outside would hold. A project whose
// own config turns snapshots on gets them, as the user chose; the
// launch clears what the last one left (see seedState).
var OpencodeBoxSettings = map[string]any{"snapshot": false}

// Prepare runs the whole import for one client: load the host files,
// filter secret-looking env, resolve the executables, and (unless
// DryRun) write the client's config into StateDir. For Codex, call it
// after whatever else writes StateDir/config.toml, since it merges into
// that file.
//
// Nothing of the user's makes it fail: a host file that cannot be read
// imports nothing from that client, and a server that cannot run in the
// box is dropped; both are reported in [Plan.Lines]. It fails only on the
// options and on writing the box's own file.
func Prepare(o Options) (Plan, error) {
	var p Plan
	var load func(Host) (Import, error)
	var write func(string, []Server) (string, error)
	var file string
	switch o.Client {
	case Claude:
		load, write, file = LoadClaude, WriteClaude, ClaudeFile
	case Codex:
		load, write, file = LoadCodex, WriteCodex, CodexFile
	case Opencode:
		load, file = LoadOpencode, OpencodeFile
		write = func(dir string, s []Server) (string, error) {
			return writeOpencode(dir, s, o.OpencodePermission, OpencodeBoxSettings)
		}
	default:
		return p, fmt.Errorf("mcp import: unknown client %q", o.Client)
	}
	if !filepath.IsAbs(o.StateDir) || !filepath.IsAbs(o.BoxStateDir) {
		return p, fmt.Errorf("mcp import: state dir %q (box %q) is not absolute", o.StateDir, o.BoxStateDir)
	}
	imp := Import{Client: o.Client}
	var unread []string
	if !o.None {
		var err error
		if imp, err = load(o.Host); err != nil {
			imp = Import{Client: o.Client}
			unread = append(unread, fmt.Sprintf("%s: no mcp server imported: %v; fix the file (or pass --no-mcp)", o.Client, err))
		}
	}
	p.Import, p.Withheld, p.Passed = FilterEnv(imp, o.AllowEnv)
	res := Resolve(p.Import.Servers, o.Resolve)
	p.Import = dropUnrunnable(p.Import, res.Unrunnable)
	p.Binds, p.Symlinks = res.Binds, res.Symlinks
	p.Summary = Summary(p.Import)
	p.Lines = append(unread, Lines(p.Import, p.Withheld, p.Passed)...)
	if !o.Net {
		for _, s := range p.Import.Servers {
			if why := NeedsNetwork(s); why != "" {
				p.Lines = append(p.Lines, fmt.Sprintf("%s mcp server %q from %s %s; the box has no network, so it starts only if that is installed already (name its command instead) or --allow-host lets the box reach it", s.Client, s.Name, s.Source.File, why))
			}
		}
	}
	boxFile := filepath.Join(o.BoxStateDir, file)
	switch o.Client {
	case Claude:
		p.Args = ClaudeArgs(boxFile)
	case Opencode:
		p.Env = []string{"OPENCODE_CONFIG=" + boxFile}
	}
	if !o.DryRun {
		var err error
		if p.ConfigPath, err = write(o.StateDir, p.Import.Servers); err != nil {
			return p, err
		}
	}
	return p, nil
}

// dropUnrunnable moves the servers that cannot run in the box from
// imp's kept ones to its dropped ones, with why and the fix.
func dropUnrunnable(imp Import, bad []Unrunnable) Import {
	if len(bad) == 0 {
		return imp
	}
	out := imp
	out.Servers = nil
	out.Dropped = slices.Clone(imp.Dropped)
	for _, s := range imp.Servers {
		i := slices.IndexFunc(bad, func(u Unrunnable) bool { return u.Server == s.Name })
		if i < 0 {
			out.Servers = append(out.Servers, s)
			continue
		}
		out.Dropped = append(out.Dropped, Dropped{Name: s.Name, Client: s.Client, Source: s.Source,
			Reason: "cannot run in the box", Detail: bad[i].Why, Fix: bad[i].Fix})
	}
	return out
}

// Explain returns one line per kept server for explain: where it came
// from, its command and arguments, and its env with secret-looking values
// (and arguments) shown as "[redacted]".
func Explain(imp Import) []string {
	var out []string
	for _, s := range imp.Servers {
		r := Redacted(s)
		var b strings.Builder
		fmt.Fprintf(&b, "%s mcp server %q from %s: %q", s.Client, s.Name, s.Source.File, append([]string{r.Command}, r.Args...))
		for _, e := range r.Env {
			fmt.Fprintf(&b, " %s=%q", e.Name, e.Value)
		}
		out = append(out, b.String())
	}
	return out
}

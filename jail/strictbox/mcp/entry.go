package mcp

import (
	"fmt"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/secret"
)

// Client names an agent CLI whose MCP declarations this package reads.
type Client string

// The clients this package knows.
const (
	Claude   Client = "claude"
	Codex    Client = "codex"
	Opencode Client = "opencode"
)

// Source says where an entry was declared.
type Source struct {
	// File is the host path of the file that declared the entry, or a
	// pseudo-name such as "$OPENCODE_CONFIG_CONTENT".
	File string
	// Scope is the client's word for the level: "user", "local" (a
	// per-project entry in ~/.claude.json), "project" (.mcp.json or a
	// project opencode config), "config" (Codex), "global" (opencode).
	Scope string
	// InRepo is true when File lies inside the repository, which the box
	// can write.
	InRepo bool
}

func (s Source) String() string {
	return s.File
}

// EnvVar is one environment variable of a server, as written in the host
// file (never expanded).
type EnvVar struct {
	Name  string
	Value string
}

// Server is a kept stdio server declaration.
type Server struct {
	Name    string
	Client  Client
	Source  Source
	Command string
	Args    []string
	// Env is sorted by name.
	Env []EnvVar
	// Extra holds the client-specific keys that are copied verbatim into
	// the written config (Codex timeouts and tool tables, opencode's
	// timeout). It never holds env or credentials.
	Extra map[string]any
}

// Dropped is a declaration that is not imported, with the reason.
type Dropped struct {
	Name   string
	Client Client
	Source Source
	// Reason is a short phrase such as "remote (http)", "disabled" or
	// "not approved in host settings".
	Reason string
	// Detail is the whole reason when the phrase is not all of it
	// (a server that cannot run in the box says why), and Fix what
	// would make it run; both "" when there is nothing more to say.
	Detail, Fix string
}

// Import is what a parser found in one client's host configuration.
type Import struct {
	Client  Client
	Servers []Server
	Dropped []Dropped
}

// Withheld is an env variable of a kept server that looked like a secret
// and was not allowed, so it was removed from the written config.
type Withheld struct {
	Server string
	Client Client
	Source Source
	Name   string
	// Why says what made it look like a secret: "name" or "value".
	Why string
}

// Passed is a secret-looking env variable that the allow-list let through.
type Passed struct {
	Server string
	Client Client
	Source Source
	Name   string
}

// Lines returns the launch and explain report for an import and the result
// of [FilterEnv]: one line per dropped server, per withheld variable and per
// server that receives allowed secret-looking variables. Values never
// appear. The lines carry no prefix; the caller adds one.
func Lines(imp Import, withheld []Withheld, passed []Passed) []string {
	var out []string
	for _, d := range imp.Dropped {
		line := fmt.Sprintf("%s mcp server %q from %s not imported: %s", d.Client, d.Name, d.Source.File, d.Reason)
		if d.Detail != "" {
			line += ": " + d.Detail
		}
		if d.Fix != "" {
			line += "; " + d.Fix
		}
		out = append(out, line)
	}
	for _, w := range withheld {
		out = append(out, fmt.Sprintf("%s mcp server %q from %s: env %s looks like a secret (by its %s) and is not copied; allow it with mcp_env", w.Client, w.Server, w.Source.File, w.Name, w.Why))
	}
	for _, s := range imp.Servers {
		for i, a := range s.Args {
			if secret.Arg(a) {
				out = append(out, fmt.Sprintf("%s mcp server %q from %s: argument %d looks like a secret and is copied as written; move it into env and allow it with mcp_env", s.Client, s.Name, s.Source.File, i+1))
			}
		}
	}
	byServer := map[string][]string{}
	var order []Passed
	for _, p := range passed {
		if _, ok := byServer[p.Server]; !ok {
			order = append(order, p)
		}
		byServer[p.Server] = append(byServer[p.Server], p.Name)
	}
	for _, p := range order {
		out = append(out, fmt.Sprintf("%s mcp server %q from %s receives env %s (allowed by mcp_env)", p.Client, p.Server, p.Source.File, strings.Join(byServer[p.Server], ", ")))
	}
	return out
}

// Redacted returns a copy of s whose env values and arguments that look
// like secrets are replaced by "[redacted]", for explain.
func Redacted(s Server) Server {
	c := s
	c.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		c.Args[i] = a
		if secret.Arg(a) {
			c.Args[i] = "[redacted]"
		}
	}
	c.Env = make([]EnvVar, len(s.Env))
	for i, e := range s.Env {
		c.Env[i] = e
		if _, looks := secret.Looks(e.Name, e.Value); looks {
			c.Env[i].Value = "[redacted]"
		}
	}
	return c
}

// Summary is the one launch line for an import: the kept servers and the
// dropped ones with their reason and file. It is "" when the client
// declares no servers at all.
func Summary(imp Import) string {
	if len(imp.Servers) == 0 && len(imp.Dropped) == 0 {
		return ""
	}
	kept := make([]string, len(imp.Servers))
	for i, s := range imp.Servers {
		kept[i] = s.Name
	}
	line := fmt.Sprintf("%s: %d mcp server(s) start in the box", imp.Client, len(imp.Servers))
	if len(kept) > 0 {
		line += " (" + strings.Join(kept, ", ") + ")"
	}
	if len(imp.Dropped) > 0 {
		drops := make([]string, len(imp.Dropped))
		for i, d := range imp.Dropped {
			drops[i] = fmt.Sprintf("%s (%s; %s)", d.Name, d.Reason, d.Source.File)
		}
		line += "; not imported: " + strings.Join(drops, ", ")
	}
	return line
}

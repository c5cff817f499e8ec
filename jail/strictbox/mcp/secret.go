package mcp

import (
	"slices"

	"github.com/aisan-dev/aisan/jail/shared/secret"
)

// FilterEnv removes from every server the env variables that look like
// secrets, unless allow names the variable (the bind spec's mcp_env list,
// exact names). It returns the filtered import, what was withheld and the
// allowed secret-looking variables each server receives. imp is not
// modified.
func FilterEnv(imp Import, allow []string) (Import, []Withheld, []Passed) {
	out := imp
	out.Servers = make([]Server, len(imp.Servers))
	var withheld []Withheld
	var passed []Passed
	for i, s := range imp.Servers {
		c := s
		c.Env = nil
		for _, e := range s.Env {
			why, looks := secret.Looks(e.Name, e.Value)
			switch {
			case !looks:
				c.Env = append(c.Env, e)
			case slices.Contains(allow, e.Name):
				c.Env = append(c.Env, e)
				passed = append(passed, Passed{Server: s.Name, Client: s.Client, Source: s.Source, Name: e.Name})
			default:
				withheld = append(withheld, Withheld{Server: s.Name, Client: s.Client, Source: s.Source, Name: e.Name, Why: why})
			}
		}
		out.Servers[i] = c
	}
	return out, withheld, passed
}

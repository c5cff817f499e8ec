package mcp

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Secret detection rules. A value is treated as a secret when
//   - its variable name contains one of secretNameParts (case-insensitive),
//     unless the value is only a reference such as "${NAME}" (or
//     opencode's "{env:NAME}" and "{file:PATH}"), which the client
//     expands in the box from the box's own environment and files; or
//   - the value itself looks like a credential: a known key prefix, a
//     PEM block, a JWT, or a long run of key-alphabet characters mixing
//     letters and digits.
// False positives cost the user one mcp_env entry; false negatives leak a
// secret into a file the box can read, so the rules lean towards flagging.

var secretNameParts = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE"}

var secretPrefixes = []string{
	"sk-", "sk_", "pk_live_", "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "AKIA", "ASIA", "AIza", "ya29.", "hf_", "npm_",
	"dop_v1_", "shpat_", "sq0atp-", "SG.", "-----BEGIN",
}

var (
	// A reference to another variable, expanded (if at all) in the box.
	// opencode spells it {env:NAME}, or {file:PATH} for a file read in the box.
	refOnly = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\$(\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)|\{env:[A-Za-z_][A-Za-z0-9_]*\}|\{file:[^}]+\})$`)
	})
	jwt = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$`)
	})
	keyish = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9+/=_.\-]{32,}$`) })
)

// LooksSecret reports whether an env variable looks like it carries a
// secret, and whether the name or the value gave it away.
func LooksSecret(name, value string) (why string, secret bool) {
	if valueLooksSecret(value) {
		return "value", true
	}
	if value == "" || refOnly().MatchString(value) {
		return "", false
	}
	upper := strings.ToUpper(name)
	for _, p := range secretNameParts {
		if strings.Contains(upper, p) {
			return "name", true
		}
	}
	return "", false
}

// argLooksSecret checks an argument, alone or as the value of
// --name=value (where the name counts as an env name would).
func argLooksSecret(a string) bool {
	if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
		_, secret := LooksSecret(strings.TrimLeft(name, "-"), v)
		return secret
	}
	return valueLooksSecret(a)
}

func valueLooksSecret(v string) bool {
	v = strings.TrimSpace(v)
	for _, p := range secretPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return true
		}
	}
	if jwt().MatchString(v) {
		return true
	}
	if keyish().MatchString(v) && !strings.HasPrefix(v, "/") {
		var letter, digit bool
		for _, r := range v {
			switch {
			case r >= '0' && r <= '9':
				digit = true
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
				letter = true
			}
		}
		return letter && digit
	}
	return false
}

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
			why, secret := LooksSecret(e.Name, e.Value)
			switch {
			case !secret:
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

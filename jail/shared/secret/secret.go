// Package secret tells whether a value a user wrote into an agent's
// configuration looks like a credential, so that a strict box can leave
// it out: an MCP server's environment and arguments, a permission rule, a
// hook's command line.
//
// A value is treated as a secret when
//   - its variable name contains one of nameParts (case-insensitive),
//     unless the value is only a reference such as "${NAME}" (or
//     opencode's "{env:NAME}" and "{file:PATH}"), which the client
//     expands in the box from the box's own environment and files; or
//   - the value itself looks like a credential: a known key prefix, a
//     PEM block, a JWT, or a long run of key-alphabet characters mixing
//     letters and digits.
//
// False positives cost the user one allow-list entry or a rule left on
// the host; false negatives leak a secret into a file the box can read,
// so the rules lean towards flagging.
//
// It is a leaf (standard library only), shared by the strict box's MCP
// import and the import of the user's agent rules.
package secret

import (
	"regexp"
	"strings"
	"sync"
)

var nameParts = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE"}

var prefixes = []string{
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
	// name=value or --name=value, the way a command line assigns.
	assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-{0,2}[A-Za-z_][A-Za-z0-9_.-]*=`) })
	// A URL with a password: scheme://user:password@host.
	urlPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`://[^/@\s:]*:[^/@\s]+@`) })
)

// Looks reports whether a variable looks like it carries a secret, and
// whether the name or the value gave it away.
func Looks(name, value string) (why string, secret bool) {
	if Value(value) {
		return "value", true
	}
	if value == "" || refOnly().MatchString(value) {
		return "", false
	}
	upper := strings.ToUpper(name)
	for _, p := range nameParts {
		if strings.Contains(upper, p) {
			return "name", true
		}
	}
	return "", false
}

// Arg checks one command-line argument, alone or as the value of
// --name=value (where the name counts as a variable's would).
func Arg(a string) bool {
	if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
		_, s := Looks(strings.TrimLeft(name, "-"), v)
		return s
	}
	return Value(a)
}

// Value reports whether v itself looks like a credential.
func Value(v string) bool {
	v = strings.TrimSpace(v)
	if urlPassword().MatchString(v) {
		// postgres://app:pw@db/prod: the password is in the address.
		return true
	}
	for _, p := range prefixes {
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

// Text reports whether free text (a permission rule, a hook's command
// line, a URL) holds something that looks like a credential: a URL with a
// password, a word that looks like one, or an assignment (NAME=value,
// --name=value) whose name or value does.
func Text(s string) bool {
	if urlPassword().MatchString(s) {
		return true
	}
	words := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune("\"'`()[],;|&<>", r)
	})
	for _, w := range words {
		if assignment().MatchString(w) {
			// By its name only when the value is one: a pattern
			// (TOKEN=*) or a reference names no secret.
			name, v, _ := strings.Cut(w, "=")
			if why, s := Looks(strings.TrimLeft(name, "-"), v); s && (why == "value" || len(v) >= 4 && !strings.ContainsAny(v, "*?$")) {
				return true
			}
			continue
		}
		if Value(w) {
			return true
		}
	}
	return false
}

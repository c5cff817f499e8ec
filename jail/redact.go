package jail

import (
	"regexp"
	"strings"
	"sync"
)

// redactedValue stands for a value explain does not print.
const redactedValue = "<redacted>"

// secretName matches variable names that conventionally hold credentials:
// ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, …
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|COOKIE|PRIVATE|_AUTH$|^AUTH_|_PAT$|^PAT_)`)
})

// secretValue matches values that look like credentials whatever their
// variable is called: well-known key prefixes, and URLs with a password.
var secretValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(sk-|sk_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abpr]-|AKIA|ASIA|AIza|ya29\.|eyJ)|://[^/@\s]+:[^/@\s]+@`)
})

// IsSecret reports whether an environment entry should not be printed.
func IsSecret(name, value string) bool {
	if value == "" {
		return false
	}
	return secretName().MatchString(name) || secretValue().MatchString(value)
}

// redactEnv returns KEY=VALUE with the value replaced when it is secret.
func redactEnv(kv string) string {
	k, v, ok := strings.Cut(kv, "=")
	if ok && IsSecret(k, v) {
		return k + "=" + redactedValue
	}
	return kv
}

// redactOptions returns bwrap options with the values of secret
// --setenv entries replaced.
func redactOptions(opts []string) []string {
	out := make([]string, len(opts))
	copy(out, opts)
	for i := 0; i+2 < len(out); i++ {
		if out[i] == "--setenv" && IsSecret(out[i+1], out[i+2]) {
			out[i+2] = redactedValue
			i += 2
		}
	}
	return out
}

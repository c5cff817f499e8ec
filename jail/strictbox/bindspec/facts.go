package bindspec

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/secret"
)

// Facts are what a spec's {NAME} stands for on this host: where each
// toolchain, cache and configuration directory lives here. A name the
// host has no value for maps to "".
type Facts map[string]string

// factRule says where one fact comes from: the host variable env when it
// holds an absolute path, else the real path of the command cmd found
// first on the host's PATH, up directories above it, else def (which may
// name earlier facts and "~"). A setting (not a path) comes from read
// alone.
type factRule struct {
	name string
	env  string
	cmd  string
	up   int
	def  string
	read func(h jail.Host, f Facts) string
}

// factRules are the facts, in the order they are worked out: a default
// names only facts above it. They follow each tool's own rules for its
// directories (the variable, then its default).
var factRules = []factRule{
	{name: "HOME"},
	{name: "XDG_CONFIG_HOME", env: "XDG_CONFIG_HOME", def: "~/.config"},
	{name: "XDG_CACHE_HOME", env: "XDG_CACHE_HOME", def: "~/.cache"},
	{name: "XDG_DATA_HOME", env: "XDG_DATA_HOME", def: "~/.local/share"},
	{name: "GOROOT", env: "GOROOT", cmd: "go", up: 2},
	{name: "GOPATH", env: "GOPATH", def: "~/go"},
	{name: "GOBIN", env: "GOBIN", def: "{GOPATH}/bin"},
	{name: "GOMODCACHE", env: "GOMODCACHE", def: "{GOPATH}/pkg/mod"},
	{name: "GOCACHE", env: "GOCACHE", def: "{XDG_CACHE_HOME}/go-build"},
	// Where the host's go fetches modules from, as go itself would
	// work it out: a box that may reach it (--allow-host) uses the
	// same proxy, the user's own or the toolchain's default; never the
	// credentials a proxy's address may carry.
	{name: "GOPROXY", read: func(h jail.Host, f Facts) string { return withoutUserinfo(goSetting(h, f, "GOPROXY")) }},
	// The settings the user gave go (go env -w, or the variable) that
	// change what a build does: its flags (build tags), which modules
	// are private (no proxy, no checksum database) and which toolchain
	// runs. One that looks like it holds a secret is left out.
	{name: "GOFLAGS", read: plainGoSetting("GOFLAGS")},
	{name: "GOPRIVATE", read: plainGoSetting("GOPRIVATE")},
	{name: "GONOPROXY", read: plainGoSetting("GONOPROXY")},
	{name: "GONOSUMDB", read: plainGoSetting("GONOSUMDB")},
	{name: "GOTOOLCHAIN", read: plainGoSetting("GOTOOLCHAIN")},
	{name: "NODE_HOME", cmd: "node", up: 2},
	{name: "NVM_DIR", env: "NVM_DIR", def: "~/.nvm"},
	{name: "FNM_DIR", env: "FNM_DIR", def: "{XDG_DATA_HOME}/fnm"},
	{name: "NPM_CACHE", env: "npm_config_cache", def: "~/.npm"},
	{name: "PYENV_ROOT", env: "PYENV_ROOT", def: "~/.pyenv"},
	{name: "UV_DIR", cmd: "uv", up: 1},
	{name: "UV_PYTHON", env: "UV_PYTHON_INSTALL_DIR", def: "{XDG_DATA_HOME}/uv/python"},
	{name: "UV_CACHE", env: "UV_CACHE_DIR", def: "{XDG_CACHE_HOME}/uv"},
	{name: "PIP_CACHE", env: "PIP_CACHE_DIR", def: "{XDG_CACHE_HOME}/pip"},
	{name: "RUSTUP_HOME", env: "RUSTUP_HOME", def: "~/.rustup"},
	{name: "CARGO_HOME", env: "CARGO_HOME", def: "~/.cargo"},
	// git's global and system config when a variable moves them (no
	// default: ~/.gitconfig and /etc/gitconfig have rows of their own).
	{name: "GIT_CONFIG_GLOBAL", env: "GIT_CONFIG_GLOBAL"},
	{name: "GIT_CONFIG_SYSTEM", env: "GIT_CONFIG_SYSTEM"},
}

// FactNames lists the facts a spec may name, in the table's order.
func FactNames() []string {
	var out []string
	for _, r := range factRules {
		out = append(out, r.name)
	}
	return out
}

// GatherFacts works the facts out for the user whose home is home and
// whose environment is env: it reads variables, looks commands up on the
// PATH in env and follows their symbolic links. A fact found from a
// command is never "/", the home or a directory above it: a tool that
// resolves there (a shim manager's binary in ~/bin) names no install
// directory a spec could bind.
func GatherFacts(env []string, home string) Facts {
	h := jail.Host{Env: env}
	f := Facts{}
	for _, r := range factRules {
		if r.name == "HOME" {
			f[r.name] = home
			continue
		}
		if r.read != nil {
			f[r.name] = r.read(h, f)
			continue
		}
		if v := firstPath(h.Getenv(r.env)); r.env != "" && v != "" {
			f[r.name] = v
			continue
		}
		if r.cmd != "" {
			f[r.name] = commandDir(r.cmd, h.Getenv("PATH"), r.up, home)
			continue
		}
		if r.def != "" {
			v, missing, err := expandFacts(r.def, f)
			if err == nil && len(missing) == 0 {
				if v, err = expandHome(v, home); err == nil {
					f[r.name] = v
				}
			}
		}
		if _, ok := f[r.name]; !ok {
			f[r.name] = ""
		}
	}
	return f
}

// settingFact reports whether the fact name is a setting, not a path.
func settingFact(name string) bool {
	i := slices.IndexFunc(factRules, func(r factRule) bool { return r.name == name })
	return i >= 0 && factRules[i].read != nil
}

// plainGoSetting reads the go setting key (goSetting), "" when it looks
// like it holds a secret.
func plainGoSetting(key string) func(jail.Host, Facts) string {
	return func(h jail.Host, f Facts) string {
		v := goSetting(h, f, key)
		if secret.Text(v) {
			return ""
		}
		return v
	}
}

// goSetting reads a go environment setting the way go does: the host
// variable, else the user's go env file ($GOENV, or go/env in the
// configuration dir; "off" reads none), else the toolchain's go.env in
// {GOROOT}. Only regular files are read, and only their first 64 KiB.
func goSetting(h jail.Host, f Facts, key string) string {
	if v, ok := h.LookupEnv(key); ok && v != "" {
		return v
	}
	var files []string
	switch envFile := h.Getenv("GOENV"); {
	case envFile == "off":
	case filepath.IsAbs(envFile):
		files = append(files, envFile)
	case f["XDG_CONFIG_HOME"] != "":
		files = append(files, filepath.Join(f["XDG_CONFIG_HOME"], "go", "env"))
	}
	if f["GOROOT"] != "" {
		files = append(files, filepath.Join(f["GOROOT"], "go.env"))
	}
	for _, file := range files {
		if v, ok := envFileValue(file, key); ok {
			return v
		}
	}
	return ""
}

// withoutUserinfo drops the user and password from each address of a
// GOPROXY list (entries separated by "," or "|"): a company proxy's
// address often carries its token (https://user:token@proxy/), and no
// credential of the host's may reach a box.
func withoutUserinfo(list string) string {
	var b strings.Builder
	for list != "" {
		i := strings.IndexAny(list, ",|")
		entry, sep := list, ""
		if i >= 0 {
			entry, sep, list = list[:i], list[i:i+1], list[i+1:]
		} else {
			list = ""
		}
		if goImpliesHTTPS(entry) {
			// go reads "user:token@proxy.example" as https://user:token@proxy.example
			// (modfetch: a word with "." or ":" and no ":/" gets https://),
			// so parse it as go will use it, or its userinfo would pass as
			// an opaque URL.
			entry = "https://" + entry
		}
		if u, err := url.Parse(entry); err == nil && u.User != nil {
			u.User = nil
			entry = u.String()
		} else if err != nil && strings.Contains(entry, "@") {
			// Not an address aisan can read: leave it out, with its
			// separator, rather than pass on what may be a secret.
			continue
		}
		b.WriteString(entry + sep)
	}
	return strings.TrimRight(b.String(), ",|")
}

// goImpliesHTTPS reports whether go's module fetcher prefixes entry with
// "https://" (cmd/go/internal/modfetch): it names a host ("." or ":"),
// not a complete URL (":/") nor a file path.
func goImpliesHTTPS(entry string) bool {
	return strings.ContainsAny(entry, ".:/") && !strings.Contains(entry, ":/") && !strings.HasPrefix(entry, "/")
}

// envFileValue is key's value in a go env file (KEY=VALUE lines, the
// last one winning), and whether the file sets it.
func envFileValue(file, key string) (string, bool) {
	b, err := regfile.ReadNamed(file, 64<<10)
	if err != nil {
		return "", false
	}
	var v string
	var ok bool
	for _, line := range strings.Split(string(b), "\n") {
		k, val, found := strings.Cut(strings.TrimSpace(line), "=")
		if found && strings.TrimSpace(k) == key {
			v, ok = strings.TrimSpace(val), true
		}
	}
	return v, ok
}

// firstPath is the first entry of a list variable (GOPATH), when it is an
// absolute path.
func firstPath(v string) string {
	v, _, _ = strings.Cut(v, string(os.PathListSeparator))
	if !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}

// commandDir is the directory up levels above the real path of cmd, found
// first on path; "" when there is none or it is too broad to bind.
func commandDir(cmd, path string, up int, home string) string {
	p := LookPath(cmd, path)
	if p == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	for range up {
		real = filepath.Dir(real)
	}
	if real == "/" || (home != "" && within(home, real)) {
		return ""
	}
	return real
}

// LookPath finds the executable name on path (a PATH value) as a shell
// would, ignoring entries that are not absolute; "" when there is none.
func LookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

var factRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Z][A-Z0-9_]*)\}`) })

// expandFacts replaces every {NAME} in s with its fact. A name that is
// no fact is an error (a typo must not bind something else); a fact the
// host has no value for is listed in missing.
func expandFacts(s string, f Facts) (out string, missing []string, err error) {
	var bad string
	out = factRef().ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		if !slices.ContainsFunc(factRules, func(r factRule) bool { return r.name == name }) {
			if bad == "" {
				bad = name
			}
			return m
		}
		v := f[name]
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	if bad != "" {
		return "", nil, &unknownFactError{name: bad}
	}
	return out, missing, nil
}

type unknownFactError struct{ name string }

func (e *unknownFactError) Error() string {
	return "{" + e.name + "} is not a fact aisan knows; the facts are " + strings.Join(FactNames(), ", ")
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

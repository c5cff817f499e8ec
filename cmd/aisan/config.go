package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/config"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
	"github.com/aisan-dev/aisan/jail/strictbox/truststore"
	"github.com/aisan-dev/aisan/systemd"
)

// configVar is the AISAN_* variable that sets key too, "" when none
// does. (Switches, not maps, here and in keyOfFlag: a package-level map
// is built at every start of aisan, before main.)
func configVar(key string) string {
	switch key {
	case "strict":
		return envStrict
	case "binds":
		return "AISAN_BINDS"
	case "allow_hosts":
		return "AISAN_ALLOW_HOSTS"
	case "limits":
		return systemd.EnvLimits
	case "bus_talk":
		return busproxy.EnvTalk
	}
	return ""
}

// limitFlags are the options the limits key (and AISAN_LIMITS) stands
// for as a whole.
var limitFlags = []string{"memory-max", "cpu-quota", "tasks-max"}

// keyOfFlag is the configuration key of a launcher option.
func keyOfFlag(name string) string {
	if slices.Contains(limitFlags, name) {
		return "limits"
	}
	if name == "allow-host" { // the one key whose name is not the flag's
		return "allow_hosts"
	}
	return strings.ReplaceAll(name, "-", "_")
}

// configKeys are the keys of the configuration: every option some
// launcher takes (so an option added to the launchers is a key at once),
// limits and bus_talk.
func configKeys() []config.Key {
	var keys []config.Key
	add := func(k config.Key) {
		if !slices.ContainsFunc(keys, func(o config.Key) bool { return o.Name == k.Name }) {
			k.Var = configVar(k.Name)
			keys = append(keys, k)
		}
	}
	for _, kind := range []jail.Kind{jail.KindRun, jail.KindClaude, jail.KindCodex, jail.KindOpencode} {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		var lf launcherFlags
		lf.register(fs, kind)
		fs.VisitAll(func(f *flag.Flag) {
			switch {
			case f.Name == "explain":
			case slices.Contains(limitFlags, f.Name):
				add(config.Key{Name: "limits", Kind: config.String})
			default:
				add(config.Key{Name: keyOfFlag(f.Name), Kind: flagKind(f)})
			}
		})
	}
	add(config.Key{Name: "bus_talk", Kind: config.List})
	// The strict options in their help's order, then the others.
	rank := func(k config.Key) int {
		for i, o := range strictOptions {
			if keyOfFlag(o.name) == k.Name {
				return i
			}
		}
		return len(strictOptions)
	}
	slices.SortStableFunc(keys, func(a, b config.Key) int { return rank(a) - rank(b) })
	return keys
}

// flagKind is the kind of value an option takes.
func flagKind(f *flag.Flag) config.Kind {
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		return config.Bool
	}
	if _, ok := f.Value.(*listFlag); ok {
		return config.List
	}
	return config.String
}

// configPath is the configuration file's name.
func configPath() (string, error) {
	home, err := os.UserHomeDir()
	if x := os.Getenv("XDG_CONFIG_HOME"); err != nil && !filepath.IsAbs(x) {
		return "", fmt.Errorf("finding the configuration: %w", err)
	}
	return filepath.Join(config.Dir(os.Getenv, home), config.FileName), nil
}

// loadConfig reads the configuration, when there is one, through the
// trust check: a configuration where a strict box can write could set the
// next box's options, so it is read only when no box can, or as the user
// approved it.
func loadConfig(keys []config.Key) (*config.File, error) {
	path, err := configPath()
	if err != nil {
		return nil, err
	}
	f, err := trust.ReadFile(path, trust.MaxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, withHint(fmt.Errorf("reading the configuration: %w", err), "make "+path+" a regular file of at most 1 MiB, or move it away")
	}
	store, err := truststore.Open()
	if err != nil {
		return nil, err
	}
	// Only where boxes were given read-write: the file does not lie in
	// the repository of the launch about to start.
	places, err := store.Places()
	if err != nil {
		return nil, err
	}
	if err := store.Check("the configuration", f, places); err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	c, err := config.Parse(path, f.Data, keys, home)
	if err != nil {
		return nil, withHint(err, "fix the configuration; 'aisan config --help' lists its keys")
	}
	return c, nil
}

// launchRepo is the repository a launch from here runs in, by its real
// path: the worktree's root, or the directory itself outside git.
func launchRepo() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(wd); err == nil {
		wd = r
	}
	repo := gitpin.Find(wd)
	if repo == "" {
		return wd
	}
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		return r
	}
	return repo
}

// sameRepo reports whether a section's path names repo, a real path.
func sameRepo(section, repo string) bool {
	if section == repo {
		return true
	}
	r, err := filepath.EvalSymlinks(section)
	return err == nil && r == repo
}

// settings resolves the configuration for a launch from here, given the
// keys its command line set.
func settings(keys []config.Key, flags map[string][]string) ([]config.Setting, *config.File, string, error) {
	c, err := loadConfig(keys)
	if err != nil {
		return nil, nil, "", err
	}
	repo := launchRepo()
	ss, err := config.Resolve(c, keys, config.Inputs{Flags: flags, LookupEnv: os.LookupEnv, Repo: repo, Same: sameRepo})
	return ss, c, repo, err
}

// applyConfig fills in the options a launcher's command line left unset:
// from the AISAN_* variables, then the configuration (see config). It is
// the one place where defaults reach a launcher's flags: strict first, the
// strict options only for a strict launch (a configured bind spec does not
// turn a deny-list launch into an error), limits and bus_talk as their
// variables.
func (lf *launcherFlags) applyConfig(fs *flag.FlagSet) error {
	given := map[string][]string{}
	fs.Visit(func(f *flag.Flag) { given[keyOfFlag(f.Name)] = []string{f.Value.String()} })
	ss, _, _, err := settings(configKeys(), given)
	if err != nil {
		return err
	}
	if s, _ := config.Lookup(ss, "strict"); s.Source.From != config.FromFlag && s.Source.From != config.Unset {
		lf.strict = s.Bool()
		lf.configured = append(lf.configured, "strict ("+s.Source.String()+")")
	}
	for _, s := range ss {
		switch s.Source.From {
		case config.FromFlag, config.Unset:
			continue
		}
		switch s.Key {
		case "strict":
			continue
		case "limits":
			lf.limits, lf.limitsFrom = strings.Join(s.Values, " "), s.Source.String()
			continue
		case "bus_talk":
			if s.Source.From != config.FromEnv {
				os.Setenv(busproxy.EnvTalk, strings.Join(s.Values, " "))
			}
			continue
		}
		name := flagOfKey(fs, s.Key)
		if name == "" || (!lf.strict && isStrictOption(name)) {
			continue
		}
		for _, v := range s.Values {
			if s.Key == "binds" {
				v = specFromFile(v, s.Source)
			}
			if err := fs.Set(name, v); err != nil {
				return withHint(fmt.Errorf("%s: %s = %q: %w", s.Source, s.Key, v, err), "fix it; 'aisan config' shows where each option comes from")
			}
		}
		lf.configured = append(lf.configured, s.Key+" ("+s.Source.String()+")")
	}
	return nil
}

// specFromFile resolves a bind spec the configuration names by a relative
// path against the configuration's directory, so that it means the same
// file in every repository; shipped names, absolute paths and ~/… stay.
func specFromFile(v string, src config.Source) string {
	if src.From != config.FromRepo && src.From != config.FromDefaults {
		return v
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || bindspec.IsShipped(p) || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") {
			continue
		}
		parts[i] = filepath.Join(filepath.Dir(src.File), p)
	}
	return strings.Join(parts, ",")
}

// flagOfKey is the option of fs a key sets; "" when fs has none (a key
// for another launcher).
func flagOfKey(fs *flag.FlagSet, key string) string {
	var name string
	fs.VisitAll(func(f *flag.Flag) {
		if keyOfFlag(f.Name) == key && !slices.Contains(limitFlags, f.Name) {
			name = f.Name
		}
	})
	return name
}

// isStrictOption reports whether the option needs --strict.
func isStrictOption(name string) bool {
	return name != "strict" && slices.ContainsFunc(strictOptions, func(o strictOption) bool { return o.name == name })
}

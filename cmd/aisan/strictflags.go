package main

import (
	"flag"
	"fmt"

	"github.com/aisan-dev/aisan/jail"
)

// envStrict makes strict mode the default (the shell functions set it).
const envStrict = "AISAN_STRICT"

// listFlag is a repeatable string option.
type listFlag []string

func (l *listFlag) String() string { return fmt.Sprint(*l) }

func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// strictFlags are the strict-mode options of every launcher.
type strictFlags struct {
	strict          bool
	net             bool
	skipPermissions bool
	binds           listFlag
	env             listFlag
	egress          listFlag
	allowHosts      listFlag
	mcpEnv          listFlag
	noMCP           bool
	apiKey          bool
	vertex          bool
	budget          string
	rate            string
}

// registerStrict adds the strict-mode options the launcher of kind
// honours (see strictOptions).
func (f *strictFlags) registerStrict(fs *flag.FlagSet, kind jail.Kind) {
	// AISAN_STRICT and the configuration come in through applyConfig.
	vars := map[string]func(name string){
		"strict":           func(n string) { fs.BoolVar(&f.strict, n, false, "") },
		"net":              func(n string) { fs.BoolVar(&f.net, n, false, "") },
		"skip-permissions": func(n string) { fs.BoolVar(&f.skipPermissions, n, false, "") },
		"binds":            func(n string) { fs.Var(&f.binds, n, "") },
		"env":              func(n string) { fs.Var(&f.env, n, "") },
		"egress":           func(n string) { fs.Var(&f.egress, n, "") },
		"allow-host":       func(n string) { fs.Var(&f.allowHosts, n, "") },
		"mcp-env":          func(n string) { fs.Var(&f.mcpEnv, n, "") },
		"no-mcp":           func(n string) { fs.BoolVar(&f.noMCP, n, false, "") },
		"api-key":          func(n string) { fs.BoolVar(&f.apiKey, n, false, "") },
		"vertex":           func(n string) { fs.BoolVar(&f.vertex, n, false, "") },
		"budget":           func(n string) { fs.StringVar(&f.budget, n, "", "") },
		"rate":             func(n string) { fs.StringVar(&f.rate, n, "", "") },
	}
	for _, o := range strictOptions {
		if o.honours(kind) {
			vars[o.name](o.name)
		}
	}
}

// needsStrict refuses the strict-mode options a deny-list launch was
// given.
func (f *strictFlags) needsStrict() error {
	for _, o := range []struct {
		name string
		set  bool
	}{{"net", f.net}, {"skip-permissions", f.skipPermissions}, {"binds", len(f.binds) > 0}, {"env", len(f.env) > 0}, {"egress", len(f.egress) > 0}, {"allow-host", len(f.allowHosts) > 0}, {"mcp-env", len(f.mcpEnv) > 0}, {"no-mcp", f.noMCP}, {"api-key", f.apiKey}, {"vertex", f.vertex}, {"budget", f.budget != ""}, {"rate", f.rate != ""}} {
		if o.set {
			return withHint(usageErr("--%s needs --strict", o.name), "add --strict (or set AISAN_STRICT=1)")
		}
	}
	return nil
}

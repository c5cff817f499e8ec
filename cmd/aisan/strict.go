package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

// envStrict makes strict mode the default (the shell functions set it).
const envStrict = "AISAN_STRICT"

// listFlag is a repeatable string option.
type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
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
	apiKey          bool
	vertex          bool
	budget          string
	rate            string
}

// registerStrict adds the strict-mode options the launcher of kind
// honours (see strictOptions).
func (f *strictFlags) registerStrict(fs *flag.FlagSet, kind jail.Kind) {
	if v, err := strconv.ParseBool(os.Getenv(envStrict)); err == nil {
		f.strict = v
	}
	vars := map[string]func(name string){
		"strict":           func(n string) { fs.BoolVar(&f.strict, n, f.strict, "") },
		"net":              func(n string) { fs.BoolVar(&f.net, n, false, "") },
		"skip-permissions": func(n string) { fs.BoolVar(&f.skipPermissions, n, false, "") },
		"binds":            func(n string) { fs.Var(&f.binds, n, "") },
		"env":              func(n string) { fs.Var(&f.env, n, "") },
		"egress":           func(n string) { fs.Var(&f.egress, n, "") },
		"allow-host":       func(n string) { fs.Var(&f.allowHosts, n, "") },
		"mcp-env":          func(n string) { fs.Var(&f.mcpEnv, n, "") },
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

// boxOptions turns the strict options of the launcher of kind into a
// strict box's, or nil for a deny-list jail. Bind specs are read here, so a broken one stops
// the launch before anything starts.
func (f *strictFlags) boxOptions(kind jail.Kind) (*strictbox.Options, error) {
	if !f.strict {
		for _, o := range []struct {
			name string
			set  bool
		}{{"net", f.net}, {"skip-permissions", f.skipPermissions}, {"binds", len(f.binds) > 0}, {"env", len(f.env) > 0}, {"egress", len(f.egress) > 0}, {"allow-host", len(f.allowHosts) > 0}, {"mcp-env", len(f.mcpEnv) > 0}, {"api-key", f.apiKey}, {"vertex", f.vertex}, {"budget", f.budget != ""}, {"rate", f.rate != ""}} {
			if o.set {
				return nil, withHint(usageErr("--%s needs --strict", o.name), "add --strict (or set AISAN_STRICT=1)")
			}
		}
		return nil, nil
	}
	if f.vertex && f.apiKey {
		return nil, withHint(usageErr("--vertex and --api-key exclude each other"), "--vertex uses the host's Google credentials; --api-key an Anthropic API key")
	}
	r := &strictbox.Options{Net: f.net, SkipPermissions: f.skipPermissions, BindFiles: f.binds, MCPEnv: f.mcpEnv, APIKey: f.apiKey}
	if f.vertex {
		r.Model = "vertex"
	}
	if f.budget != "" {
		n, _, err := egress.ParseTokens(f.budget, false)
		if err != nil {
			return nil, withHint(usageErr("--budget: %v", err), "--budget 2M caps the box at two million tokens; 'aisan allow SLOT --budget +N' raises it while it runs")
		}
		r.Budget = n
	}
	if f.rate != "" {
		rt, burst, err := egress.ParseRate(f.rate)
		if err != nil {
			return nil, withHint(usageErr("--rate: %v", err), fmt.Sprintf("the default is %s", egress.FormatRate(egress.DefaultRate, egress.DefaultBurst)))
		}
		r.Rate, r.Burst = float64(rt), burst
	}
	for _, e := range f.env {
		if !bindspec.ValidEnv(e) {
			return nil, withHint(usageErr("--env %q: not NAME or NAME=VALUE", e), "NAME is letters, digits and _, not starting with a digit")
		}
		r.Env = append(r.Env, e)
	}
	for _, e := range f.egress {
		er, err := strictbox.ParseEgress(e)
		if err != nil {
			return nil, withHint(usageErr("%v", err), "aisan run --help lists the options")
		}
		if er.TakesFile() {
			// FILE as the user meant it: relative to where they are.
			if abs, err := filepath.Abs(er.Param); err == nil {
				er.Param = abs
			}
		}
		r.Egress = append(r.Egress, er)
	}
	if err := hostproxy.CheckNet(f.net, f.allowHosts, "--allow-host"); err != nil {
		return nil, withHint(usageErr("%v", err), "use either --net or --allow-host")
	}
	allow := append([]string(nil), f.allowHosts...)
	if len(f.binds) > 0 {
		home, _ := os.UserHomeDir()
		read, err := trustedReader("bind spec")
		if err != nil {
			return nil, err
		}
		spec, err := bindspec.Load(bindspec.Host{Home: home, ReadFile: read}, f.binds...)
		var refused *trust.RefusedError
		if errors.As(err, &refused) {
			return nil, refused
		}
		if err != nil {
			return nil, withHint(err, "fix the bind spec; its keys are "+strings.Join(bindspec.Keys(), ", ")+" ('aisan help "+string(kind)+"' and the README's strict section say what each does)")
		}
		r.Binds, r.BindPath, r.BindEnv = spec.JailMounts(), spec.PathDirs(), spec.EnvEntries()
		for _, e := range spec.MCPEnv {
			r.MCPEnv = append(r.MCPEnv, e.Value)
		}
		for _, e := range spec.AllowHosts {
			if err := hostproxy.CheckNet(f.net, []string{e.Value}, e.Where()+" (allow_hosts)"); err != nil {
				return nil, withHint(err, "use either --net or allow_hosts")
			}
			allow = append(allow, e.Value)
		}
	}
	if len(allow) > 0 {
		list, err := hostproxy.ParseList(allow)
		if err != nil {
			return nil, withHint(usageErr("%v", err), "a pattern is a host name (example.com), one leading wildcard label (*.example.com), either with :PORT, or an exact ADDRESS:PORT")
		}
		r.AllowHosts = list.Strings()
	}
	return r, nil
}

//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/shared/secret"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

// strictMode is the strict box the flags ask for.
func (lf *launcherFlags) strictMode(kind jail.Kind) (launch.Mode, error) {
	opts, err := lf.boxOptions(kind)
	if err != nil {
		return nil, err
	}
	opts.Rules = boxRules(kind)
	return &strictbox.Box{Options: *opts, FinishCommand: receiptFinisher()}, nil
}

// boxOptions turns the strict options of the launcher of kind into a
// strict box's. Bind specs are read here, so a broken one stops the
// launch before anything starts.
func (f *strictFlags) boxOptions(kind jail.Kind) (*strictbox.Options, error) {
	if f.vertex && f.apiKey {
		return nil, withHint(usageErr("--vertex and --api-key exclude each other"), "--vertex uses the host's Google credentials; --api-key an Anthropic API key")
	}
	r := &strictbox.Options{Net: f.net, SkipPermissions: f.skipPermissions, MCPEnv: f.mcpEnv, NoMCP: f.noMCP, APIKey: f.apiKey}
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
	for _, n := range f.mcpEnv {
		// Never echo a value: it may be the very secret.
		name, _, value := strings.Cut(n, "=")
		if value && bindspec.ValidEnv(name) && !secret.Value(name) {
			return nil, withHint(usageErr("--mcp-env %s=…: give the variable's name alone", name), "--mcp-env NAME lets the MCP servers keep their own value of NAME in the box")
		}
		if value || !bindspec.ValidEnv(n) {
			shown := strconv.Quote(n)
			// An "=" that follows no NAME is inside a value (a padded
			// base64 key, an address's ?sslmode=): not echoed either.
			if value || secret.Value(n) {
				// A credential given where its name goes: not echoed.
				shown = "(a value that looks like a credential)"
			}
			return nil, withHint(usageErr("--mcp-env %s: not a variable NAME", shown), "NAME is letters, digits and _, not starting with a digit")
		}
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
	if binds := bindNames(f.binds); len(binds) > 0 {
		home, _ := os.UserHomeDir()
		read, err := trustedReader("bind spec")
		if err != nil {
			return nil, err
		}
		env := os.Environ()
		r.Facts = bindspec.GatherFacts(env, home)
		spec, err := bindspec.Load(bindspec.Host{Home: home, ReadFile: read, Facts: r.Facts,
			PATH: filepath.SplitList(os.Getenv("PATH")), System: strictbox.SystemDirs()}, binds...)
		var refused *trust.RefusedError
		if errors.As(err, &refused) {
			return nil, refused
		}
		var hostExec *bindspec.HostExecError
		if errors.As(err, &hostExec) {
			return nil, err
		}
		if err != nil {
			return nil, withHint(err, "fix the bind spec; its keys are "+strings.Join(bindspec.Keys(), ", ")+" ('aisan help "+string(kind)+"' and the README's strict section say what each does)")
		}
		r.BindFiles = spec.Files
		r.Binds, r.BindPath, r.BindEnv = spec.JailMounts(), spec.PathDirs(), spec.EnvEntries()
		for _, c := range spec.Caches {
			r.Caches = append(r.Caches, strictbox.Cache{Path: c.Value, Why: "bind spec " + c.Where()})
		}
		for _, e := range spec.MCPEnv {
			r.MCPEnv = append(r.MCPEnv, e.Value)
		}
		for _, e := range spec.AllowHosts {
			if _, err := hostproxy.ParsePattern(e.Value); err != nil {
				return nil, withHint(fmt.Errorf("%s: allow_hosts: %w", e.Where(), err), "fix the bind spec: a pattern is a host name (example.com), one leading wildcard label (*.example.com), either with :PORT, or an exact ADDRESS:PORT")
			}
			if err := hostproxy.CheckNet(f.net, []string{e.Value}, e.Where()+" (allow_hosts)"); err != nil {
				return nil, withHint(err, "use either --net or allow_hosts")
			}
			allow = append(allow, e.Value)
		}
	}
	if err := checkRawSockets(r); err != nil {
		return nil, err
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

// checkRawSockets checks each raw egress socket of r, once its bind
// spec is read: a raw line to the user manager or a bus would hand the
// box the host, and a path through a link in what the box writes (its
// worktree, the spec's rw binds and caches) is the box's to re-point.
// The box's relay uses the resolved path.
func checkRawSockets(r *strictbox.Options) error {
	home, _ := slot.Home()
	var writable []string
	if cwd, err := os.Getwd(); err == nil {
		if cwd, err = filepath.EvalSymlinks(cwd); err == nil {
			writable = append(writable, slot.WorktreeRoot(cwd))
		}
	}
	for _, m := range r.Binds {
		if m.Kind == jail.Bind {
			writable = append(writable, m.Src)
		}
	}
	for _, c := range r.Caches {
		writable = append(writable, c.Path)
	}
	for i, er := range r.Egress {
		if er.Socket == "" {
			continue
		}
		real, dev, ino, err := strictbox.CheckRawSocketID(er.Name, er.Socket, strictbox.SocketHost{Getenv: os.Getenv, AisanHome: home, UID: os.Getuid(), Writable: writable})
		if err != nil {
			return err
		}
		r.Egress[i].Socket, r.Egress[i].Dev, r.Egress[i].Ino = real, dev, ino
	}
	return nil
}

// bindNames are the --binds values, each split at its commas: "go,node"
// names two shipped specs (a file whose name holds a comma cannot be
// given).
func bindNames(values []string) []string {
	var out []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

func runReceipt(_ context.Context, args []string) error {
	os.Exit(strictbox.FinishReceipt(args))
	return nil
}

// receiptFinisher is the argv that finishes a receipt: this binary's
// hidden command (nil when this binary cannot be named: the receipt is
// then finished in the launch).
func receiptFinisher() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, receiptCommand}
}

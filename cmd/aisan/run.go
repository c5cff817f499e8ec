package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/hooks/opencode"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/systemd"
)

// strictOption is one strict-mode option of the launchers: its lines in
// the help, and the launchers that honour it (nil: all of them). Only
// those get it, in their help and in their flag set.
type strictOption struct {
	name string
	help string
	only []jail.Kind
}

var strictOptions = []strictOption{
	{name: "strict", help: `
  --strict             only the repository, system directories, the agent
                       and what bind specs name; no network route; no
                       credential`},
	// The keys are bindspec's own list (see strictHelp).
	{name: "binds", help: `
  --binds SPEC         add a bind spec (repeatable): a shipped one by name (SHIPPED; go,node for two), or a TOML file with the keys KEYS (the README's strict section shows them); a file that lies where a box can write needs 'aisan trust FILE'`},
	{name: "env", help: `
  --env NAME[=VALUE]   pass a variable into the box (repeatable)`},
	{name: "egress", help: `
  --egress NAME=SOCKET relay loopback port AISAN_EGRESS_<NAME> in the box to
                       a host Unix socket (repeatable)`},
	{name: "allow-host", help: `
  --allow-host PATTERN let the box reach this host (example.com,
                       *.example.com, host:PORT, ADDRESS:PORT) through an
                       HTTP proxy on the host that resolves and checks each
                       name (repeatable; also allow_hosts in a bind spec;
                       'aisan allow SLOT --host' grants one while it runs)`},
	{name: "api-key", only: []jail.Kind{jail.KindClaude}, help: `
  --api-key            reach Anthropic with an API key
                       (AISAN_ANTHROPIC_KEY_COMMAND, AISAN_ANTHROPIC_KEY_FILE
                       or ANTHROPIC_API_KEY on the host) instead of the
                       Claude login`},
	{name: "vertex", only: []jail.Kind{jail.KindClaude}, help: `
  --vertex             reach Anthropic's models on Google Cloud's Vertex AI
                       (--egress vertex) with tokens the host mints from
                       its Application Default Credentials
                       (ANTHROPIC_VERTEX_PROJECT_ID, CLOUD_ML_REGION,
                       AISAN_VERTEX_IMPERSONATE) instead of the Claude login`},
	{name: "mcp-env", only: []jail.Kind{jail.KindClaude, jail.KindCodex, jail.KindOpencode}, help: `
  --mcp-env NAME       let the user's MCP servers receive variable NAME even
                       when its value looks secret (repeatable; also mcp_env)`},
	{name: "no-mcp", only: []jail.Kind{jail.KindClaude, jail.KindCodex, jail.KindOpencode}, help: `
  --no-mcp             import none of the user's MCP servers into the box`},
	{name: "budget", help: `
  --budget TOKENS      refuse model calls once they used TOKENS (500k, 2M),
                       counting input, output and cache; 'aisan allow SLOT
                       --budget +N' raises it while the box runs`},
	{name: "rate", help: `
  --rate N/s[,BURST]   the box's request rate to its model backends
                       (default 2/s,60; 'aisan allow SLOT --rate' changes
                       it while the box runs)`},
	{name: "net", help: `
  --net                keep the host network (LAN, VPN, host services)`},
	{name: "skip-permissions", only: []jail.Kind{jail.KindClaude, jail.KindCodex}, help: `
  --skip-permissions   add the agent's own "no approval prompts" option`},
}

// honours reports whether the launcher of kind takes o.
func (o strictOption) honours(kind jail.Kind) bool {
	return o.only == nil || slices.Contains(o.only, kind)
}

// strictHelp lists the strict-mode options the launcher of kind takes.
func strictHelp(kind jail.Kind) string {
	var b strings.Builder
	b.WriteString("\nStrict mode (an allow-list box; AISAN_STRICT=1 makes it the default):")
	for _, o := range strictOptions {
		if !o.honours(kind) {
			continue
		}
		if !strings.Contains(o.help, "KEYS") {
			b.WriteString(o.help)
			continue
		}
		text := strings.Replace(strings.TrimPrefix(o.help, "\n"), "KEYS", strings.Join(bindspec.Keys(), ", "), 1)
		text = strings.Replace(text, "SHIPPED", strings.Join(bindspec.Shipped(), ", "), 1)
		b.WriteString("\n" + fillOption(text, 23, 76))
	}
	return b.String() + "\n"
}

// fillOption wraps an option's one-line help at width, its continuation
// lines indented to column indent.
func fillOption(line string, indent, width int) string {
	head, text := line[:indent], line[indent:]
	var b strings.Builder
	b.WriteString(head)
	col := indent
	for i, w := range strings.Fields(text) {
		if i > 0 && col+1+len(w) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// launcherUsage is the help of the launcher of kind.
func launcherUsage(kind jail.Kind) string {
	if kind == jail.KindRun {
		return fmt.Sprintf(runUsage, strictHelp(kind))
	}
	return fmt.Sprintf(agentUsage, kind, strictHelp(kind))
}

const runUsage = `
Usage: aisan run [options] [--] COMMAND [ARG...]

Runs COMMAND in a deny-list jail: the host as it is (files, network,
devices, $HOME, /tmp, agent sockets), except that the command cannot see
or signal processes outside the jail, write cgroups, or reach systemd
(the session bus is filtered, the user manager's socket hidden).

Options end at "--" or at the first argument that is not an aisan option;
everything after reaches COMMAND unchanged.

Options:
  --explain            print the jail's Spec and bwrap argv, then exit
  --memory-max SIZE    cap memory (e.g. 4G), through the jail's systemd scope
  --cpu-quota PERCENT  cap CPU (e.g. 150%%)
  --tasks-max N        cap the number of tasks
  -h, --help           show this help
%[1]s
The exit status is COMMAND's (128+N when it dies of signal N).

Example:
  aisan run -- make test
  aisan run --strict --binds go -- go test ./...
`

const agentUsage = `
Usage: aisan %[1]s [options] [--] [ARG...]

Runs %[1]s in a deny-list jail, in the current directory, with ARG...
passed to it unchanged. Inside, everything works as outside (login,
settings, $HOME, network, ssh-agent), except that %[1]s cannot see or
signal processes outside its jail, write cgroups, or reach systemd.

Options end at "--" or at the first argument that is not an aisan option;
everything after reaches %[1]s unchanged: 'aisan %[1]s -- --help' shows
%[1]s's own help.

Options:
  --explain            print the jail's Spec and bwrap argv, then exit
  --memory-max SIZE    cap memory (e.g. 4G), through the jail's systemd scope
  --cpu-quota PERCENT  cap CPU (e.g. 150%%)
  --tasks-max N        cap the number of tasks
  -h, --help           show this help
%[2]s
Example:
  aisan %[1]s -- --continue
  aisan %[1]s --strict --egress db=/run/user/1000/db.sock
`

const explainUsage = `
Usage: aisan explain KIND [--strict ...] [--] [ARG...]
       aisan explain --policy BACKEND

Prints what 'aisan KIND ARG...' would run, without running it: the slot,
the namespaces, every mount in the order bwrap applies them, the
environment changes, the session bus decision, and the exact bwrap argv.
KIND is run, claude, codex or opencode; the launcher's options (--strict,
--binds, --egress, ...) apply. A box that would be refused prints why and
exits non-zero.

With --policy, prints the table of request bodies strict mode lets the
backend's endpoint pass (anthropic, vertex, codex, openai,
openai-compatible): every field and type at its position; whatever it
does not list is refused, naming its JSON path.

Example:
  aisan explain claude --continue
  aisan explain claude --strict
  aisan explain --policy anthropic
`

func runRun(ctx context.Context, args []string) error {
	return launchOrExplain(ctx, jail.KindRun, args, false)
}

func runClaude(ctx context.Context, args []string) error {
	return launchOrExplain(ctx, jail.KindClaude, args, false)
}

func runCodex(ctx context.Context, args []string) error {
	return launchOrExplain(ctx, jail.KindCodex, args, false)
}

func runOpencode(ctx context.Context, args []string) error {
	return launchOrExplain(ctx, jail.KindOpencode, args, false)
}

func runExplain(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		showHelp(explainUsage)
		return errHelpShown
	}
	if len(args) == 0 {
		return withHint(usageErr("explain: no kind given"), "aisan explain run|claude|codex|opencode [args...]")
	}
	if args[0] == "--policy" || strings.HasPrefix(args[0], "--policy=") {
		if v, ok := strings.CutPrefix(args[0], "--policy="); ok {
			return explainPolicy(append([]string{v}, args[1:]...))
		}
		return explainPolicy(args[1:])
	}
	kind := jail.Kind(args[0])
	switch kind {
	case jail.KindRun, jail.KindClaude, jail.KindCodex, jail.KindOpencode:
	default:
		return withHint(usageErr("explain: unknown kind %q", args[0]), "aisan explain run|claude|codex|opencode [args...]")
	}
	return launchOrExplain(ctx, kind, args[1:], true)
}

// launcherFlags are the options every launcher accepts.
type launcherFlags struct {
	explain   bool
	memoryMax string
	cpuQuota  string
	tasksMax  string
	strictFlags
	// limits are the default caps (AISAN_LIMITS' format) and limitsFrom
	// where they came from (applyConfig); "" reads AISAN_LIMITS.
	limits, limitsFrom string
	// configured names the options set from a variable or the
	// configuration, for errors.
	configured []string
}

func (lf *launcherFlags) register(fs *flag.FlagSet, kind jail.Kind) {
	fs.BoolVar(&lf.explain, "explain", false, "")
	lf.registerLimits(fs)
	lf.registerStrict(fs, kind)
}

// registerLimits adds the resource-limit options alone.
func (lf *launcherFlags) registerLimits(fs *flag.FlagSet) {
	fs.StringVar(&lf.memoryMax, "memory-max", "", "")
	fs.StringVar(&lf.cpuQuota, "cpu-quota", "", "")
	fs.StringVar(&lf.tasksMax, "tasks-max", "", "")
}

func launchOrExplain(ctx context.Context, kind jail.Kind, args []string, explain bool) error {
	name := string(kind)
	// The help is put together only when it is shown: every launch
	// parses these flags, few ask for --help.
	fs := newFlagSetFunc(name, func() string { return launcherUsage(kind) })
	var lf launcherFlags
	lf.register(fs, kind)
	rest, err := splitLauncherArgs(fs, args, kind == jail.KindRun)
	if err != nil {
		return err
	}
	if err := lf.handOverEarly(); err != nil {
		return err
	}
	if err := lf.applyConfig(fs); err != nil {
		return err
	}
	if kind == jail.KindRun && len(rest) == 0 {
		return withHint(usageErr("run: no command given"), "aisan run [options] -- COMMAND [ARG...]")
	}
	limits, err := parseLimits(lf)
	if err != nil {
		return err
	}
	req := jail.Request{Kind: kind, Args: rest, Limits: limits, Say: say(os.Stderr)}
	mode, err := lf.mode(kind)
	if err != nil {
		if len(lf.configured) > 0 {
			return withHint(err, "set from the environment or the configuration: "+strings.Join(lf.configured, ", ")+"; 'aisan config' shows them")
		}
		return err
	}
	if explain || lf.explain {
		return launchError(launch.Explain(os.Stdout, req, mode))
	}
	status, err := launch.Launch(ctx, req, mode, launch.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	if err != nil {
		return launchError(err)
	}
	return exitStatus(status)
}

// splitLauncherArgs consumes aisan's own options from the front of args
// and returns the rest untouched. Parsing stops at "--" (dropped) or at the
// first argument that is not one of fs's options, so that an agent option
// such as --continue passes through without a "--". With strictOpts (run,
// whose COMMAND is never an option) an unknown option is an error.
func splitLauncherArgs(fs *flag.FlagSet, args []string, strictOpts bool) ([]string, error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:], nil
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.Usage()
			return nil, errHelpShown
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return args[i:], nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil && strictOpts {
			return nil, unknownOption(fs, name)
		}
		if f == nil {
			return args[i:], nil
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, withHint(usageErr("%s: option --%s needs a value", fs.Name(), name), fmt.Sprintf("run 'aisan %s --help' for usage", fs.Name()))
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, withHint(usageErr("%s: bad value %q for --%s: %v", fs.Name(), value, name, err), fmt.Sprintf("run 'aisan %s --help' for usage", fs.Name()))
		}
	}
	return nil, nil
}

func parseLimits(lf launcherFlags) (jail.Limits, error) {
	text, from := lf.limits, lf.limitsFrom
	if from == "" {
		text, from = os.Getenv(systemd.EnvLimits), systemd.EnvLimits
	}
	defaults, err := systemd.ParseLimits(text)
	if err != nil {
		return jail.Limits{}, withHint(fmt.Errorf("%s: %w", from, err), "fix or unset it, e.g. memory=4G cpu=200% tasks=512")
	}
	var flags systemd.Limits
	for _, f := range []struct {
		name, value string
		parse       func(string) (uint64, error)
		into        *uint64
	}{
		{"memory-max", lf.memoryMax, systemd.ParseMemory, &flags.MemoryMax},
		{"cpu-quota", lf.cpuQuota, systemd.ParseCPUQuota, &flags.CPUQuotaPerSecUSec},
		{"tasks-max", lf.tasksMax, systemd.ParseTasks, &flags.TasksMax},
	} {
		if f.value == "" {
			continue
		}
		v, err := f.parse(f.value)
		if err != nil {
			return jail.Limits{}, withHint(usageErr("--%s %s: %v", f.name, f.value, err), "run 'aisan run --help' for usage")
		}
		*f.into = v
	}
	return jail.Limits(defaults.Merge(flags)), nil
}

// launchError adds a hint to the launch errors that carry none.
func launchError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, jail.ErrNoCwd) {
		return withHint(err, "cd to a directory that exists and try again")
	}
	return err
}

// mode is the box the flags ask for: a strict box, or the deny-list jail
// with what the agent's kind adds to it (opencode's kill rules, which
// package hooks knows and the jail does not).
func (lf *launcherFlags) mode(kind jail.Kind) (launch.Mode, error) {
	if lf.strict {
		return lf.strictMode(kind)
	}
	if err := lf.needsStrict(); err != nil {
		return nil, err
	}
	if kind != jail.KindOpencode {
		return launch.Deny{}, nil
	}
	cwd, err := os.Getwd()
	if err == nil {
		cwd, err = filepath.EvalSymlinks(cwd)
	}
	if err != nil {
		// The launch says the directory is gone.
		return launch.Deny{}, nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	env, err := opencodeEnv(home, cwd, os.Getenv)
	return launch.Deny{Env: env}, err
}

// opencodeEnv adds aisan's kill rules to a jailed opencode's permissions,
// after every rule of the user's (opencode has no command hooks).
func opencodeEnv(home, cwd string, getenv func(string) string) ([]string, error) {
	// Both steps fail on the user's files or variables, which they fix.
	fail := func(err error) error {
		return fmt.Errorf("%w (aisan adds its kill rules after opencode's own, so it reads them all: fix it, or unset it)", err)
	}
	setup, err := opencode.Gather(home, cwd, getenv)
	if err != nil {
		return nil, fail(err)
	}
	v, set, err := opencode.Permission(setup)
	switch {
	case err != nil:
		return nil, fail(err)
	case !set:
		return nil, nil
	}
	return []string{"OPENCODE_PERMISSION=" + v}, nil
}

package strictbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// Options are what the user asked of a strict box, beyond the agent and
// its arguments: the command layer parses them from its flags and the
// bind specs.
type Options struct {
	// Binds, BindPath and BindEnv come from the bind spec files
	// BindFiles (loaded by the caller with strictbox/bindspec).
	Binds     []jail.Mount
	BindPath  []string
	BindEnv   []string
	BindFiles []string
	// Net keeps the host network.
	Net bool
	// Env are --env entries: NAME=VALUE, or NAME for the host's value.
	Env []string
	// SkipPermissions adds the agent's no-prompt option.
	SkipPermissions bool
	// Egress are the --egress endpoints asked for.
	Egress []EgressRequest
	// AllowHosts are the host allow-list's patterns (--allow-host and the
	// bind specs' allow_hosts), as hostproxy.ParseList normalised them;
	// none: no host proxy.
	AllowHosts []string
	// MCPEnv names environment variables of the user's MCP servers whose
	// secret-looking values may be copied into the box (--mcp-env and
	// the bind specs' mcp_env).
	MCPEnv []string
	// NoMCP imports none of the user's MCP servers (--no-mcp).
	NoMCP bool
	// Rules reads the user's own agent rules for the box; nil for none.
	Rules AgentRules
	// APIKey reaches Anthropic with an API key instead of the login.
	APIKey bool
	// Model is the model backend the agent is given instead of its
	// default one ("vertex" for --vertex); "" for the default.
	Model string
	// Budget caps the tokens the box's model calls may use (--budget), 0
	// for no cap; Rate and Burst are its request rate (--rate), 0 for
	// the default. All three can be changed while it runs.
	Budget int64
	Rate   float64
	Burst  int
	// Caches are the bind specs' cache entries: directories in the box's
	// home it keeps as its own, per repository (toolchain.go).
	Caches []Cache
	// Facts are the host's facts the bind specs were loaded with
	// (bindspec.GatherFacts); nil when none were, and gathered when
	// explain needs them.
	Facts bindspec.Facts
}

// modeName is a strict box's mode, as the slot's record and a keeper
// know it.
const modeName = "strict"

// Box is a strict box's mode ([launch.Mode]) for one launch: Prepare
// gathers what its plan is decided from, Serve starts its host side.
// What Prepare found for Serve stays in the Box, so a Box serves one
// launch.
type Box struct {
	Options
	// FinishCommand is the argv (the receipt's path is appended) that
	// completes a launch's receipt once the box ended, so that the
	// launch need not wait for git ([FinishReceipt]); nil does it in
	// process.
	FinishCommand []string

	// Set by Prepare, for Serve.
	egress    *boxEgress
	git       gitpin.Plan
	gitconfig []byte
	mcp       *mcp.Options
	guard     protect.Plan
	held      string
	rules     *BoxRules
	// snapshot waits for git's view of the repository at launch, or
	// until ctx is done (false: none was taken).
	snapshot func(ctx context.Context) (*Snapshot, bool)
	repo     string
}

var _ launch.Mode = (*Box)(nil)

// Name is "strict".
func (b *Box) Name() string { return modeName }

// PassFDs is false: a strict box starts from nothing of the host's.
func (b *Box) PassFDs() bool { return false }

// CheckCommand leaves the command to Prepare: the box's PATH, on which
// the init finds it, is known once the box is planned (toolchain.go).
func (b *Box) CheckCommand(string, jail.Kind, jail.Host) error { return nil }

// Prepare gathers what the box's plan is decided from (the repository's
// git layout, the agent's binaries, its instruction files and settings,
// the credentials that exist, the MCP configs), decides the preset's
// options, and plans the egress endpoints: the model endpoint the agent
// needs, a port for each, and (with the host network, unless dry) the
// loopback listeners whose address the client is given as an option.
// It makes nothing on the host but those listeners, which undo closes
// when no service took them.
func (b *Box) Prepare(req jail.Request, h jail.Host, slotName string, dry bool) (jail.Prepared, func(), error) {
	command, err := req.Command()
	if err != nil {
		return jail.Prepared{}, nil, err
	}
	var sweep func(repo string)
	if !dry {
		sweep = func(repo string) { collectStale(h.AisanHome, repo, req.Say) }
	}
	f, err := gather(req.Kind, command, h, slotName, b.Options, sweep)
	if err != nil {
		return jail.Prepared{}, nil, err
	}
	o, secret := decide(req.Kind, command, h, slotName, b.Options, f)
	mcpOpts, mcpExplain, err := planMCP(req.Kind, h, &o, b.MCPEnv, b.NoMCP)
	if err != nil {
		return jail.Prepared{}, nil, err
	}
	b.mcp = mcpOpts
	rulesNote, err := b.planRules(h, &o)
	if err != nil {
		return jail.Prepared{}, nil, err
	}
	tc, err := planToolchain(req.Kind, command[0], h, o, f, b.Options, dry)
	if err != nil {
		return jail.Prepared{}, nil, err
	}
	reqs := slices.Clone(b.Egress)
	if !b.Net {
		// Every box without the host network gets the host proxy, with
		// an empty list unless the launch named hosts, so that a host can
		// be granted while it runs. The allow-list rides on the endpoint
		// as its parameter, so explain shows it and the proxy serves
		// exactly it.
		reqs = append(reqs, EgressRequest{Name: hostproxy.Backend, Backend: hostproxy.Backend, Param: strings.Join(b.AllowHosts, " ")})
	}
	b.egress = newBoxEgress(b.APIKey, newSteer(slotName, b.Options, nil))
	reqs, seed, err := b.egress.plan(req.Kind, b.Model, reqs, b.Net, dry, req.Say)
	undo := b.egress.closeEarly
	if err != nil {
		return jail.Prepared{}, undo, err
	}
	slotDir := h.SlotDir(slotName)
	if o.Egress, err = planEgress(reqs, slotDir, b.Net, slotName); err != nil {
		return jail.Prepared{}, undo, err
	}
	o.AgentArgs = append(o.AgentArgs, b.egress.clientArgs(req.Kind, o.Egress, dry)...)
	o.ClaudeSeed = seed
	for _, e := range o.Egress {
		if e.Backend != "" {
			// Built-in backends may hand the agent a token or an address
			// picked at start.
			o.EnvFile = filepath.Join(slotDir, "box.env")
		}
	}
	b.git, b.gitconfig, b.guard, b.held = f.git, f.gitconfig, f.guard, f.held
	notes := slices.Concat(tc.notes, f.guard.Notes, heldTreeNotes(f.repo, f.guard))
	if rulesNote != "" {
		notes = append(notes, rulesNote)
	}
	if n := envrcNote(h.Cwd, slices.Concat(b.Env, b.BindEnv)); n != "" {
		notes = append(notes, n)
	}
	if n := agentRunNote(req.Kind, command); n != "" {
		notes = append(notes, n)
	}
	if n := goLocalNote(h.Cwd, f.repo, func(p string) bool {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return o.Shows(p)
	}); n != "" {
		notes = append(notes, n)
	}
	if n := venvNote(h.Cwd, f.repo, o.Shows, func(d string) string {
		return pathProviders(h, b.Options.Facts, []string{d})[d]
	}); n != "" {
		notes = append(notes, n)
	}
	if n := f.codexPolicy.note(f.codexConfig); n != "" {
		notes = append(notes, n)
	}
	if !dry {
		// For the receipt, beside the rest of the launch; Serve waits
		// for it before the box can change anything.
		b.repo, b.snapshot = o.Repo, startSnapshot(o.Repo, f.git.GitDir != "")
	}
	return jail.Prepared{Strict: &jail.StrictPlan{Options: o, Secret: secret, BindFiles: slices.Clone(b.BindFiles),
		Notes: notes, Explain: tc.explain + explain(mcpExplain, f.guard, f.held) + b.explainLimits(slotName)}}, undo, nil
}

// explainLimits says what limits the box's model calls and what can be
// changed while it runs.
func (b *Box) explainLimits(slotName string) string {
	st := b.egress.steer.State()
	budget := "none (--budget TOKENS sets one)"
	if st.Budget > 0 {
		budget = fmt.Sprintf("%d tokens, counted over every model call (input, output, cache reads and writes)", st.Budget)
	}
	var w strings.Builder
	fmt.Fprintf(&w, "\nlimits (changed while the box runs with 'aisan allow %s ...'):\n", slotName)
	fmt.Fprintf(&w, "  rate        %s requests (--rate N/s,BURST; shared by the box's model backends)\n", st.Rate)
	fmt.Fprintf(&w, "  budget      %s\n", budget)
	if b.Net {
		fmt.Fprintf(&w, "  hosts       every host (--net)\n")
	} else if len(b.AllowHosts) == 0 {
		fmt.Fprintf(&w, "  hosts       none yet (--allow-host PATTERN, or --host PATTERN while it runs)\n")
	} else {
		fmt.Fprintf(&w, "  hosts       %s (more with --host PATTERN while it runs)\n", strings.Join(b.AllowHosts, ", "))
	}
	return w.String()
}

// explain renders what explain shows that only the box's mode knows: the
// MCP import (lines, nil for none), what host tools run and the box's
// held copies.
func explain(mcpLines []string, guard protect.Plan, set string) string {
	var w strings.Builder
	if mcpLines != nil {
		fmt.Fprintf(&w, "\nMCP servers (the user's local ones start inside the box; remote ones are not offered):\n")
		for _, l := range mcpLines {
			fmt.Fprintf(&w, "  %s\n", l)
		}
	}
	fmt.Fprintf(&w, "\nwhat host tools run or obey here, at any depth (in %s, only the rows of the agents and pyvenv.cfg; the box edits copies; 'aisan review' shows what it changed):\n", strings.Join(protect.DepTrees, ", "))
	protect.WriteTable(&w)
	fmt.Fprintf(&w, "\nin this repository (held copies in %s):\n", set)
	protect.Explain(&w, guard)
	return w.String()
}

// Serve does the host-side steps of a strict launch, once the slot's run
// directory exists: the state directory and its seed, the MCP import, the
// generated gitconfig, the copies of what host tools run (held for review
// when the box ends), and the egress services of the built-in endpoints.
func (b *Box) Serve(ctx context.Context, s *jail.Session, _ bool) (_ launch.Services, err error) {
	say := s.Request.Say
	o := s.Strict.Options
	if err := rememberWritable(s.Host.AisanHome, s.Spec); err != nil {
		return nil, err
	}
	if err := makeCacheDirs(s.Host.AisanHome, s.Spec.Mounts); err != nil {
		return nil, err
	}
	if o.StateDir != "" {
		if err := makeStateDir(s.Host.AisanHome, o.StateDir); err != nil {
			return nil, err
		}
		dropped, err := seedState(o, b.rules)
		if err != nil {
			return nil, err
		}
		if len(dropped) > 0 {
			// The names are a box's to choose, and as many as it likes.
			const most = 12
			if len(dropped) > most {
				dropped = append(dropped[:most:most], fmt.Sprintf("and %d more", len(dropped)-most))
			}
			say(jail.Note, "the box's "+string(o.Kind)+" state held settings it does not take from there (an earlier box may have written them), dropped: "+strings.Join(dropped, ", "))
		}
		if n := resumeNote(o.Kind, o.StateDir); n != "" {
			say(jail.Note, n)
		}
		if b.mcp != nil {
			// After the seed: Codex's servers are merged into the
			// config.toml it wrote.
			p, err := mcp.Prepare(*b.mcp)
			if err != nil {
				return nil, fmt.Errorf("importing the user's MCP servers: %w", err)
			}
			if p.Summary != "" {
				say(jail.Plain, p.Summary)
			}
			for _, l := range p.Lines {
				say(jail.Plain, "  "+l)
			}
		}
	}
	if o.GitConfig != "" {
		if err := atomicfile.Write(o.GitConfig, b.gitconfig, atomicfile.Options{Mode: 0o600}); err != nil {
			return nil, err
		}
	}
	svc := &services{egress: b.egress, slot: s.Slot, say: say, controlPath: filepath.Join(s.SlotDir, "control.sock"), finish: b.FinishCommand}
	if len(b.guard.Items) > 0 || len(b.guard.Watch) > 0 || len(b.guard.Modules) > 0 {
		m := held.Manifest{Slot: s.Slot, Kind: string(o.Kind), Repo: o.Repo, Start: time.Now(), Launch: s.Launched,
			Items: b.guard.Items, Known: b.guard.Known, Watch: b.guard.Watch, Modules: b.guard.Modules,
			GitDir: b.git.GitDir, CommonDir: b.git.CommonDir, Exclude: rootMountFiles(b.guard, o.Repo)}
		for _, w := range b.guard.Worktrees {
			m.NestedIndex = append(m.NestedIndex, held.NestedIndex{Root: w.Root, GitDir: w.GitDir})
		}
		if err := held.Prepare(b.held, m); err != nil {
			return nil, err
		}
		svc.held = b.held
		launch.Trace("protected paths copied")
		// A launch that fails from here on removes the run's mount points
		// (and holds nothing: no box ran).
		defer func() {
			if err != nil {
				svc.Stop()
			}
		}()
	}
	if err := b.egress.steer.serve(); err != nil {
		return nil, err
	}
	launch.Trace("steering served")
	if len(s.Spec.Egress) > 0 {
		if err := os.Mkdir(filepath.Join(s.SlotDir, "egress"), 0o700); err != nil {
			return nil, fmt.Errorf("creating the egress socket directory: %w", err)
		}
		for _, e := range s.Spec.Egress {
			if e.Backend != "" {
				svc.eps = append(svc.eps, e)
			}
		}
		runs, err := serveEgress(ctx, b.egress, svc.eps, nil)
		if err != nil {
			b.egress.steer.stop()
			return nil, err
		}
		svc.runs = runs
	}
	if svc.control, err = startControl(b.egress.steer, svc.controlPath, nil); err != nil {
		stopAll(svc.runs)
		b.egress.steer.stop()
		return nil, err
	}
	if b.snapshot != nil {
		// The snapshot runs beside the steps above and bwrap's setup (the
		// run's mount points, which it may see, are aisan's, not the
		// box's); the agent, the first that may change the repository,
		// waits for it (Admitting).
		snapshot, made := b.snapshot, madePaths(b.guard, b.repo)
		svc.startReceipt = func(ctx context.Context) (*receiptOf, bool) {
			snap, ok := snapshot(ctx)
			if !ok {
				return nil, false
			}
			return startReceipt(s.Slot, b.repo, snap, made, svc.held, b.egress), true
		}
	}
	return svc, nil
}

// rootMountFiles are the empty files a box's run makes at the
// repository's root, as git exclude patterns.
func rootMountFiles(p protect.Plan, repo string) []string {
	var out []string
	for _, it := range p.Items {
		if it.How == protect.Create && !it.Dir && filepath.Dir(it.Path) == repo {
			out = append(out, "/"+filepath.Base(it.Path))
		}
	}
	return out
}

// madePaths are the mount points the run makes in the repository, as
// repository paths.
func madePaths(p protect.Plan, repo string) []string {
	var out []string
	for _, it := range p.Items {
		if it.How != protect.Create {
			continue
		}
		if rel, err := filepath.Rel(repo, it.Path); err == nil && filepath.IsLocal(rel) {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

package jail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/aisan-dev/aisan/jail/atomicfile"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/gitpin"
	"github.com/aisan-dev/aisan/jail/mcp"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/pelletier/go-toml/v2"
)

// StrictRequest is what the user asked of a strict box, beyond the agent
// and its arguments.
type StrictRequest struct {
	// Binds, BindPath and BindEnv come from the bind spec files
	// BindFiles (loaded by the caller with jail/bindspec).
	Binds     []Mount
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
	// StartEgress starts the host services of the built-in backends,
	// before the box starts: on each endpoint's Socket, or with the host
	// network (Socket "") on the host's loopback. Nil refuses every
	// built-in backend.
	StartEgress func(ctx context.Context, endpoints []Endpoint) (*EgressRun, error)
	// MCPEnv names environment variables of the user's MCP servers whose
	// secret-looking values may be copied into the box (--mcp-env and
	// the bind specs' mcp_env).
	MCPEnv []string
	// ClientArgs, when set, gives the agent's options that route it to
	// the planned endpoints (Codex's custom provider, as -c overrides);
	// the command layer supplies it, so that the jail knows no backend.
	ClientArgs func(endpoints []Endpoint) []string
	// ClaudeSeed is merged into the box's Claude state before it starts
	// (the approval of the placeholder API key), nil for none.
	ClaudeSeed map[string]any
}

// EgressRun is the host side of a box's built-in endpoints, as
// StartEgress started it.
type EgressRun struct {
	// Env are KEY=VALUE lines for the agent's environment (addresses
	// picked at start, per-box tokens); they reach the init through the
	// 0600 environment file, never an argv.
	Env []string
	// Stop ends every service at once.
	Stop func()
	// Handover readies the services for a keeper, when the box outlives
	// its agent (keeper.go): files are duplicates of their listening
	// sockets, one per endpoint in order, and state is what
	// [KeeperOptions.ResumeEgress] needs besides them (never a
	// credential: the keeper reads those from the host as this process
	// did). Once the keeper serves them, drain ends this process's
	// service: nothing new is accepted, requests in flight are answered
	// until its context is done, and the socket files stay for the
	// keeper. Nil: a box with these endpoints is not kept.
	Handover func() (files []*os.File, state []byte, drain func(context.Context), err error)
}

// StrictPlan is what planning a strict box found, kept for explain and
// for the launch's host-side steps.
type StrictPlan struct {
	Options StrictOptions
	Git     gitpin.Plan
	// GitConfig is the generated gitconfig's content.
	GitConfig []byte
	// Secret are variables whose values explain must not print.
	Secret []string
	// MCP repeats the MCP import for real at launch; MCPPlan is what it
	// decided, for explain. Nil when the agent imports none.
	MCP     *mcp.Options
	MCPPlan *mcp.Plan
	// BwrapVersion is the host's bwrap.
	BwrapVersion [3]int
}

// systemPrefixes are already visible in every strict box.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

func isSystem(p string) bool {
	for _, s := range systemPrefixes {
		if within(p, s) {
			return true
		}
	}
	return false
}

// toolDirs finds what running name needs beyond the system directories:
// the directory it is found in (put on PATH), the package it resolves
// into (a node_modules tree, a native installer's version dir), and its
// script interpreter, found the same way.
func toolDirs(name string, env []string, depth int) (ro, path []string, err error) {
	var p string
	if strings.Contains(name, "/") {
		p = name
	} else {
		p, err = lookPathIn(name, env)
		if err != nil {
			return nil, nil, err
		}
	}
	p = filepath.Clean(p)
	if !isSystem(p) {
		ro = append(ro, filepath.Dir(p))
		path = append(path, filepath.Dir(p))
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, nil, fmt.Errorf("resolving %s: %w", p, err)
	}
	if !isSystem(real) {
		dir := filepath.Dir(real)
		if i := strings.LastIndex(real, "/node_modules/"); i >= 0 {
			dir = real[:i+len("/node_modules")]
		}
		ro = append(ro, dir)
	}
	if depth < 2 {
		if interp := shebang(real); interp != "" {
			iro, ipath, err := toolDirs(interp, env, depth+1)
			if err != nil {
				return nil, nil, fmt.Errorf("%s runs with %s: %w", p, interp, err)
			}
			ro, path = append(ro, iro...), append(path, ipath...)
		}
	}
	return coverDedup(ro), dedup(path), nil
}

// coverDedup drops directories another in the list already covers.
func coverDedup(dirs []string) []string {
	var out []string
	for _, d := range dedup(dirs) {
		covered := false
		for _, o := range dirs {
			if o != d && within(d, o) {
				covered = true
			}
		}
		if !covered {
			out = append(out, d)
		}
	}
	return out
}

func lookPathIn(name string, env []string) (string, error) {
	path, _ := lookupFunc(env)("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH", name)
}

// shebang returns the interpreter a script names ("node" for
// "#!/usr/bin/env node"), or "".
func shebang(p string) string {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return ""
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" {
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") {
				return f
			}
		}
		return ""
	}
	return fields[0]
}

// rootEntries are the top-level system paths as they are on this host.
func rootEntries() []RootEntry {
	var out []RootEntry
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				out = append(out, RootEntry{Path: p, Link: t})
			}
			continue
		}
		if fi.IsDir() {
			out = append(out, RootEntry{Path: p})
		}
	}
	return out
}

// gitIdentityKeys are the global git settings a box gets: who the user
// is and settings that run nothing and hold no secret.
var gitIdentityKeys = []string{"user.name", "user.email", "init.defaultbranch", "core.autocrlf", "core.eol", "pull.rebase", "merge.conflictstyle", "diff.algorithm"}

// gitIdentity builds the box's gitconfig from the user's global one, or
// returns nil when it sets none of gitIdentityKeys.
func gitIdentity(home, xdgConfig string) []byte {
	files := []string{filepath.Join(home, ".config", "git", "config")}
	if xdgConfig != "" {
		files[0] = filepath.Join(xdgConfig, "git", "config")
	}
	files = append(files, filepath.Join(home, ".gitconfig"))
	settings := gitpin.ReadConfig(files...)
	var b bytes.Buffer
	for _, k := range gitIdentityKeys {
		v, ok := gitpin.Lookup(settings, k)
		if !ok || strings.ContainsAny(v, "\n\"\\") {
			continue
		}
		sec, name, _ := strings.Cut(k, ".")
		fmt.Fprintf(&b, "[%s]\n\t%s = \"%s\"\n", sec, name, v)
	}
	if b.Len() == 0 {
		return nil
	}
	return append([]byte("# Generated by aisan for a strict box: identity and harmless settings only.\n"), b.Bytes()...)
}

// codexPreferences are the user's safe Codex settings (plain strings of
// the keys named) as -c overrides. A file that does not parse gives none.
func codexPreferences(path string, keys []string) []string {
	data, err := readStateFile(path)
	if err != nil || len(data) == 0 {
		return nil
	}
	var m map[string]any
	if toml.Unmarshal(data, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok || strings.ContainsAny(v, "\"\\\n\r\t") {
			continue
		}
		out = append(out, k+"=\""+v+"\"")
	}
	return out
}

// existingCredentials are the credential paths that exist here, and the
// real paths they resolve to.
func existingCredentials(home string, env []string) []string {
	look := lookupFunc(env)
	var out []string
	for _, c := range agent.Credentials(home, func(k string) string { v, _ := look(k); return v }) {
		if _, err := os.Lstat(c); err != nil {
			continue
		}
		out = append(out, c)
		if r, err := filepath.EvalSymlinks(c); err == nil && r != c {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// planStrict resolves a strict request on host h for the slot name given.
// It reads the host (and asks bwrap for its version when an overlay
// depends on it) but creates nothing.
func planStrict(req Request, h Host, slotName string) (*Session, error) {
	sr := req.Strict
	command, err := req.Command()
	if err != nil {
		return nil, err
	}
	slotDir := slotRuntimeDir(h, slotName)
	repo := gitpin.Find(h.Cwd)
	if repo == "" {
		repo = h.Cwd
	}
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		repo = r
	}
	look := lookupFunc(h.Env)
	getenv := func(k string) string { v, _ := look(k); return v }
	xdgConfig := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(xdgConfig) {
		xdgConfig = ""
	}
	git, err := gitpin.Make(repo, h.Home, xdgConfig)
	if err != nil {
		return nil, fmt.Errorf("strict mode cannot protect this repository's git metadata: %w", err)
	}
	var pins []Mount
	for _, p := range git.Pins {
		switch p.Kind {
		case gitpin.RW:
			pins = append(pins, Mount{Kind: Bind, Src: p.Path, Dst: p.Path, Why: p.Why})
		case gitpin.RO:
			pins = append(pins, Mount{Kind: ROBind, Src: p.Path, Dst: p.Path, Why: p.Why})
		case gitpin.Seal:
			pins = append(pins, Mount{Kind: Seal, Dst: p.Path, Holes: slices.Clone(p.Holes), Why: p.Why})
		}
	}
	ro, pathDirs, err := toolDirs(command[0], h.Env, 0)
	if err != nil {
		return nil, &NotFoundError{Name: command[0], Kind: req.Kind}
	}
	o := StrictOptions{
		Kind: req.Kind, Slot: slotName, Command: command,
		Repo: repo, Cwd: h.Cwd, Home: h.Home, User: currentUser(getenv),
		HostEnv: h.Env, Root: rootEntries(), ToolDirs: ro, PathDirs: pathDirs,
		GitPins: pins, BindPath: slices.Clone(sr.BindPath), Net: sr.Net,
		SkipPermissions: sr.SkipPermissions, Forbidden: existingCredentials(h.Home, h.Env),
		AisanState: []string{h.AisanHome},
	}
	if h.RuntimeDir != "" {
		o.AisanState = append(o.AisanState, filepath.Join(h.RuntimeDir, "aisan"))
	}
	// Sources are checked against the credentials as bwrap will bind them:
	// through every symlink.
	for _, m := range sr.Binds {
		if m.Src != "" {
			if r, err := filepath.EvalSymlinks(m.Src); err == nil {
				m.Src = r
			}
		}
		o.Binds = append(o.Binds, m)
	}
	gitconfig := gitIdentity(h.Home, xdgConfig)
	if gitconfig != nil {
		o.GitConfig = filepath.Join(slotDir, "gitconfig")
	}
	var secret []string
	for _, e := range slices.Concat(sr.BindEnv, sr.Env) {
		name, value, hasValue := strings.Cut(e, "=")
		if !hasValue {
			v, ok := look(name)
			if !ok {
				continue
			}
			value = v
			secret = append(secret, name)
		}
		o.ExtraEnv = append(o.ExtraEnv, name+"="+value)
	}
	if a, ok := agent.ByKind(string(req.Kind)); ok {
		base, err := slot.BaseName(repo, string(req.Kind))
		if err != nil {
			return nil, err
		}
		o.StateDir = filepath.Join(h.AisanHome, "state", base)
		o.ConfigDir = a.Dir(h.Home, getenv)
		for _, rel := range a.Instructions {
			if _, err := os.Stat(filepath.Join(o.ConfigDir, rel)); err == nil {
				o.Instructions = append(o.Instructions, rel)
			}
		}
		for _, rel := range a.HomeInstructions {
			if _, err := os.Stat(filepath.Join(h.Home, rel)); err == nil {
				o.HomeInstructions = append(o.HomeInstructions, rel)
			}
		}
		if a.Kind == agent.Codex.Kind {
			o.Preferences = codexPreferences(filepath.Join(o.ConfigDir, "config.toml"), a.Preferences)
		}
	}
	mcpOpts, mcpPlan, err := planMCP(req.Kind, h, &o, sr, getenv)
	if err != nil {
		return nil, err
	}
	if sr.Net {
		if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && within(r, "/run") {
			o.NetBinds = append(o.NetBinds, filepath.Dir(r))
		}
	}
	eps, err := planEgress(sr.Egress, slotDir, sr.Net, slotName)
	if err != nil {
		return nil, err
	}
	o.Egress = eps
	if sr.ClientArgs != nil && isAgentKind(req.Kind) {
		o.AgentArgs = append(o.AgentArgs, sr.ClientArgs(eps)...)
	}
	o.ClaudeSeed = sr.ClaudeSeed
	for _, e := range eps {
		if e.Backend != "" {
			// Built-in backends may hand the agent a token or an address
			// picked at start.
			o.EnvFile = filepath.Join(slotDir, "box.env")
		}
	}
	spec := Strict(o)
	// Explain names bwrap's version when an overlay depends on it.
	var version [3]int
	for _, m := range spec.Mounts {
		if m.Kind == Overlay {
			version = h.BwrapVersion
			break
		}
	}
	compiled, err := Compile(spec, h)
	if err != nil {
		return nil, err
	}
	var warnings []string
	if sr.Net {
		warnings = append(warnings, "--net: this box shares the host's network: the internet, the LAN and VPNs, services on the host's loopback, and abstract-namespace sockets (X11's among them) are all reachable; credential files stay unmounted")
	}
	for _, kv := range spec.Env {
		if k, v, _ := strings.Cut(kv, "="); IsSecret(k, v) {
			secret = append(secret, k)
		}
	}
	return &Session{
		Request: req, Host: h, Slot: slotName, SlotDir: slotDir,
		Spec: spec, Compiled: compiled, Warnings: warnings,
		Strict: &StrictPlan{Options: o, Git: git, GitConfig: gitconfig, Secret: secret, BwrapVersion: version, MCP: mcpOpts, MCPPlan: mcpPlan},
	}, nil
}

func currentUser(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return getenv("USER")
}

// planEgress gives each endpoint a socket in the slot's run directory and
// a loopback port, picked anew for every launch: the box's network
// namespace is its own, so any port is free there, and nothing outside
// can count on one.
//
// With the host network (net) a built-in endpoint gets neither: its host
// side listens on the host's loopback. A raw relay is planned as in a box
// of its own, and Validate refuses it.
func planEgress(reqs []EgressRequest, slotDir string, net bool, slotName string) ([]Endpoint, error) {
	var out []Endpoint
	used := map[int]bool{}
	names := map[string]bool{}
	for _, r := range reqs {
		if names[r.Name] {
			return nil, fmt.Errorf("--egress %s is given twice", r.Name)
		}
		names[r.Name] = true
		if net && r.Backend != "" {
			out = append(out, Endpoint{Name: r.Name, Backend: r.Backend, Param: r.Param, Slot: slotName})
			continue
		}
		port := 0
		for port == 0 || used[port] {
			port = 20000 + rand.IntN(40000)
		}
		used[port] = true
		e := Endpoint{Name: r.Name, Backend: r.Backend, Port: port, Param: r.Param, Slot: slotName,
			Socket: filepath.Join(slotDir, "egress", strings.ReplaceAll(r.Name, ":", "-")+".sock")}
		if r.Backend == "" {
			fi, err := os.Stat(r.Socket)
			if err != nil {
				return nil, fmt.Errorf("--egress %s: %w", r.Name, err)
			}
			if fi.Mode().Type() != fs.ModeSocket {
				return nil, fmt.Errorf("--egress %s: %s is not a Unix socket", r.Name, r.Socket)
			}
			e.Source = r.Socket
		}
		out = append(out, e)
	}
	return out, nil
}

// ErrNoBackend is a built-in egress backend that has no host side yet.
var ErrNoBackend = errors.New("this egress backend is not built yet")

// strictHost is what a strict launch started on the host for its box.
type strictHost struct {
	// egress serves the built-in endpoints; nil when there are none.
	egress   *EgressRun
	builtin  []Endpoint
	gitWatch []string
	say      Say
}

// end is what follows the box's end: its services stop, and what it
// left that would redirect host git is moved aside.
func (h *strictHost) end() {
	if h.egress != nil && h.egress.Stop != nil {
		h.egress.Stop()
	}
	for _, m := range gitpin.Sweep(gitpin.Plan{Watch: h.gitWatch}) {
		h.say(Warning, m)
	}
}

// keepable reports whether a keeper could take the box's services over.
func (h *strictHost) keepable() bool {
	return h.egress == nil || h.egress.Handover != nil
}

// handover is the keeper's part of a strict box: what it serves and
// sweeps, the listening sockets it inherits (the caller closes them once
// the keeper has them), and the function that then ends this process's
// own service.
func (h *strictHost) handover() (*keepStrict, []*os.File, func(context.Context), error) {
	ks := &keepStrict{GitWatch: h.gitWatch}
	if h.egress == nil {
		return ks, nil, func(context.Context) {}, nil
	}
	files, state, drain, err := h.egress.Handover()
	if err != nil {
		return nil, nil, nil, err
	}
	if len(files) != len(h.builtin) {
		for _, f := range files {
			f.Close()
		}
		return nil, nil, nil, fmt.Errorf("the egress services handed over %d sockets for %d endpoints", len(files), len(h.builtin))
	}
	ks.Endpoints, ks.State = h.builtin, state
	return ks, files, drain, nil
}

// prepareStrict does the host-side steps of a strict launch, once the
// slot's run directory exists: the state directory and its seed, the
// generated gitconfig, the egress services. What it returns ends them
// after the box, or hands them to a keeper.
func prepareStrict(ctx context.Context, s *Session, say Say) (*strictHost, error) {
	sp := s.Strict
	o := sp.Options
	if err := rememberWritable(s.Host.AisanHome, s.Spec); err != nil {
		return nil, err
	}
	if o.StateDir != "" {
		if err := makeStateDir(s.Host.AisanHome, o.StateDir); err != nil {
			return nil, err
		}
		if err := seedState(o); err != nil {
			return nil, err
		}
		if sp.MCP != nil {
			// After the seed: Codex's servers are merged into the
			// config.toml it wrote.
			p, err := mcp.Prepare(*sp.MCP)
			if err != nil {
				return nil, fmt.Errorf("importing the user's MCP servers: %w", err)
			}
			if p.Summary != "" {
				say(Plain, p.Summary)
			}
			for _, l := range p.Lines {
				say(Plain, "  "+l)
			}
		}
	}
	if o.GitConfig != "" {
		if err := atomicfile.Write(o.GitConfig, sp.GitConfig, atomicfile.Options{Mode: 0o600}); err != nil {
			return nil, err
		}
	}
	host := &strictHost{gitWatch: sp.Git.Watch, say: say}
	var boxEnv []string
	if len(s.Spec.Egress) > 0 {
		if err := os.Mkdir(filepath.Join(s.SlotDir, "egress"), 0o700); err != nil {
			return nil, fmt.Errorf("creating the egress socket directory: %w", err)
		}
		for _, e := range s.Spec.Egress {
			if e.Backend != "" {
				host.builtin = append(host.builtin, e)
			}
		}
		if len(host.builtin) > 0 {
			if s.Request.Strict.StartEgress == nil {
				return nil, fmt.Errorf("--egress %s: %w", host.builtin[0].Name, ErrNoBackend)
			}
			run, err := s.Request.Strict.StartEgress(ctx, host.builtin)
			if err != nil {
				return nil, err
			}
			host.egress, boxEnv = run, run.Env
		}
	}
	if s.Spec.EnvFile != "" {
		var b strings.Builder
		for _, kv := range boxEnv {
			if strings.ContainsAny(kv, "\n\x00") {
				host.end()
				return nil, fmt.Errorf("an egress backend gave an environment entry with a newline")
			}
			b.WriteString(kv + "\n")
		}
		if err := atomicfile.Write(s.Spec.EnvFile, []byte(b.String()), atomicfile.Options{Mode: 0o600}); err != nil {
			host.end()
			return nil, err
		}
	}
	return host, nil
}

// isAgentKind reports whether kind is one of the agent CLIs (not run).
func isAgentKind(kind Kind) bool {
	_, ok := agent.ByKind(string(kind))
	return ok
}

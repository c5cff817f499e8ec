package jail

// Strict mode's box, as pure data.
//
// Rules:
//   - Nothing of the host is visible unless a mount below names it: /usr
//     and /etc read-only, fresh /proc and /dev, empty capped tmpfs /tmp and
//     $HOME, the repository read-write at its real path, the agent's own
//     binaries read-only, a per-(repository, agent) state directory, and
//     what the user's bind specs add.
//   - No mount source is, contains or lies inside a credential path
//     (Spec.Forbidden); Validate refuses the Spec otherwise, naming the
//     mount's reason (a bind spec's file and line).
//   - aisan's own state is never writable: where a writable mount covers
//     it, it is bound read-only again on top, and only the box's own state
//     directory is reopened.
//   - The environment starts empty; every variable is listed here.
//   - Git metadata comes pinned (jail/strictbox/gitpin), after the
//     repository's bind; then what host tools run (jail/strictbox/protect):
//     copies whose changes are held for review, sockets masked; then the
//     user's binds.

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/boxinit"
)

// Sizes of a strict box's scratch file systems.
const (
	StrictTmpSize  = 2 << 30
	StrictHomeSize = 1 << 30
)

// RootEntry is one top-level system path: a symlink into /usr on a
// merged-/usr host, a real directory otherwise.
type RootEntry struct {
	// Path is the absolute path (/bin, /lib64, …).
	Path string
	// Link is the symlink's target when Path is one ("usr/bin"); "" for
	// a real directory, bound read-only.
	Link string `json:",omitempty"`
}

// StrictPlan is a strict box as its mode gathered it, and what planning
// found for explain.
type StrictPlan struct {
	// Options are the preset's inputs.
	Options StrictOptions
	// Secret are variables whose values explain must not print, of those
	// taken from the host's environment (SecretNames adds the
	// secret-looking ones of the Spec).
	Secret []string
	// BindFiles are the bind specs the options came from.
	BindFiles []string
	// Notes are what gathering found that the user should hear (shown
	// as warnings, before the plan's own).
	Notes []string
	// Explain is what explain prints besides the options, rendered by
	// the mode, which alone knows it: the MCP import, what host tools run
	// and the box's held copies.
	Explain string
	// BwrapVersion is the host's bwrap when an overlay depends on it
	// (set by Plan).
	BwrapVersion [3]int
}

// StrictOptions are the inputs of the strict presets: what the user
// asked for and what planning found on the host. The presets read
// nothing else.
type StrictOptions struct {
	// Kind is the agent; KindRun for any command.
	Kind Kind
	// Slot is the slot name, exported as AISAN_JAIL.
	Slot string
	// Command is the argv as the user gave it (the agent's name first).
	Command []string
	// Repo is the repository's real root path, bound read-write.
	Repo string
	// Cwd is the real working directory (Repo or below it).
	Cwd string
	// Home is the user's home directory; an empty tmpfs inside.
	Home string
	// User is the user's login name.
	User string
	// HostEnv is the host environment; only terminal and locale
	// variables are taken from it.
	HostEnv []string
	// Root are the top-level system paths besides /usr and /etc.
	Root []RootEntry
	// ToolDirs are host directories holding the agent's binary, its
	// interpreter and what they resolve to, bound read-only.
	ToolDirs []string
	// PathDirs are the agent's command directories, for PATH.
	PathDirs []string
	// HostPath are the host's PATH directories, in the host's order: the
	// box's PATH keeps those it shows (see PATH).
	HostPath []string
	// GitConfig is a generated gitconfig (identity only) shown at
	// ~/.gitconfig; "" for none.
	GitConfig string
	// GitPins are the repository's git pins (from jail/strictbox/gitpin).
	GitPins []Mount
	// Protect are the mounts that keep what host tools run out of the
	// box's reach (from jail/strictbox/protect): copies held for review, masked
	// sockets.
	Protect []Mount
	// Binds are the bind specs' mounts and the box's own caches;
	// BindPath the specs' path entries.
	Binds    []Mount
	BindPath []string
	// ExtraEnv are NAME=VALUE entries from --env and bind specs.
	ExtraEnv []string
	// AisanState are aisan's own state directories ($AISAN_HOME,
	// $XDG_RUNTIME_DIR/aisan).
	AisanState []string
	// AisanRun are aisan's run directories that exist (the runtime
	// directory's, and "run" in the state directories), where the locks
	// aisan takes are: each that a bind shows the box is an empty
	// directory there, since a box could hold a lock it can open.
	AisanRun []string
	// StateDir is the per-(repository, agent) state directory; "" for
	// none (KindRun).
	StateDir string
	// ConfigDir is the agent's host configuration directory, where
	// Instructions are found.
	ConfigDir string
	// Instructions are the agent's instruction files (relative to
	// ConfigDir) that exist on the host.
	Instructions []string
	// HomeInstructions are the agent's instruction files under $HOME
	// (relative to it) that exist on the host.
	HomeInstructions []string
	// CodexRules are the names of the user's Codex rules files (in
	// ConfigDir/rules), each shown read-only in the box's own rules
	// directory as CodexUserRules(name): Codex appends the approvals the
	// user keeps to default.rules there, which stays the box's.
	CodexRules []string
	// StateRules are files in StateDir (relative to it) that hold the
	// user's rules as aisan seeded them: the box sees them read-only.
	StateRules []string
	// Preferences are the user's safe agent settings, KEY=VALUE (TOML
	// values for Codex), passed on read-only; for Codex also the user's
	// approval policy and sandbox limits.
	Preferences []string
	// CodexUntrusted marks the project untrusted in the box's Codex
	// config, as the user's marks it, instead of trusted.
	CodexUntrusted bool
	// Egress are the loopback endpoints.
	Egress []Endpoint
	// Net keeps the host network.
	Net bool
	// NetBinds are what name resolution needs under /run with Net.
	NetBinds []string
	// SkipPermissions adds the agent's own no-prompt options.
	SkipPermissions bool
	// Forbidden are the host's credential paths.
	Forbidden []string
	// EnvFile is the init's environment file, "" for none.
	EnvFile string
	// AgentArgs are options for the agent that aisan adds, right after
	// its name (Claude's --mcp-config FILE --strict-mcp-config).
	AgentArgs []string
	// ClaudeSeed is merged into the box's .claude.json when it is seeded.
	ClaudeSeed map[string]any
}

// passEnv reports whether a strict box keeps the host's variable name:
// the terminal, the locale (LC_ and capitals or underscores) and the
// time zone. Nothing else crosses.
func passEnv(name string) bool {
	switch name {
	case "TERM", "COLORTERM", "LANG", "LANGUAGE", "TZ":
		return true
	}
	rest, ok := strings.CutPrefix(name, "LC_")
	return ok && rest != "" && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

// SecretNames are the variables of env whose values explain must not
// print: sp.Secret, and every one that looks like a credential
// (IsSecret). Only explain prints a box's environment, so only explain
// asks.
func (sp *StrictPlan) SecretNames(env []string) []string {
	out := slices.Clone(sp.Secret)
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); IsSecret(k, v) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// strictDefaults are variables every strict box sets.
var strictDefaults = []string{
	// git must never prompt (no terminal for a password) or page.
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat",
	"PAGER=cat",
	"TMPDIR=/tmp",
	"SHELL=/bin/sh",
	// npm asks its registry for a newer npm on every run with a fresh
	// cache: a box has no route, so each npm script would end in a
	// refused request and a note to allow the registry it never needed.
	"npm_config_update_notifier=false",
}

// repoWhy is the repository's mount's reason.
const repoWhy = "repo: read-write at its real path"

// Strict is the allow-list box for o.Kind.
func Strict(o StrictOptions) Spec {
	mounts := strictMounts(o)
	a, isAgent := agent.ByKind(string(o.Kind))
	env := []string{
		"HOME=" + o.Home,
		"PATH=" + strings.Join(boxPath(o, mounts), ":"),
	}
	if o.User != "" {
		env = append(env, "USER="+o.User, "LOGNAME="+o.User)
	}
	for _, kv := range o.HostEnv {
		if k, _, _ := strings.Cut(kv, "="); passEnv(k) {
			env = append(env, kv)
		}
	}
	env = append(env, strictDefaults...)
	command := slices.Clone(o.Command)
	if isAgent {
		if o.StateDir != "" {
			env = append(env, a.StateEnv+"="+o.StateDir)
		}
		env = append(env, a.StrictEnv...)
		var pre []string
		if a.Kind == agent.Codex.Kind {
			pre = append(pre, agent.CodexStrictArgs...)
			for _, p := range o.Preferences {
				pre = append(pre, "-c", p)
			}
		}
		if o.SkipPermissions {
			pre = append(pre, a.SkipPermissions...)
		}
		pre = agent.DropRepeatedConfig(append(pre, o.AgentArgs...))
		if len(command) > 0 {
			command = slices.Concat(command[:1], pre, command[1:])
		}
	}
	for _, e := range o.Egress {
		if e.Port != 0 {
			env = append(env, e.Var+"="+e.Address())
		}
	}
	return Spec{
		Namespaces:        Namespaces{PID: true, Net: !o.Net, IPC: true, UTS: true},
		Mounts:            mounts,
		ClearEnv:          true,
		Env:               boxinit.MergeEnv(env, o.ExtraEnv, []string{"AISAN_JAIL=" + o.Slot}),
		Command:           command,
		Cwd:               o.Cwd,
		AsPID1:            true,
		InfoFD:            boxinit.FDInfo,
		Egress:            slices.Clone(o.Egress),
		EnvFile:           o.EnvFile,
		NewSessionKeyring: true,
		DropCaps:          true,
		Forbidden:         slices.Clone(o.Forbidden),
	}
}

// strictMounts are the strict box's mounts, in the order bwrap applies
// them.
func strictMounts(o StrictOptions) []Mount {
	why := func(m Mount, w string) Mount { m.Why = w; return m }
	mounts := []Mount{why(Mount{Kind: ROBind, Src: "/usr", Dst: "/usr"}, "system: programs and libraries")}
	for _, r := range o.Root {
		if r.Link != "" {
			mounts = append(mounts, why(Mount{Kind: Symlink, Src: r.Link, Dst: r.Path}, "system: merged /usr"))
		} else {
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: r.Path, Dst: r.Path}, "system"))
		}
	}
	mounts = append(mounts,
		why(Mount{Kind: ROBind, Src: "/etc", Dst: "/etc"}, "system: configuration"),
		why(Mount{Kind: Proc, Dst: "/proc"}, "system: the box's own processes only"),
		why(Mount{Kind: Dev, Dst: "/dev"}, "system: null, zero, random, tty, pts"),
		why(Mount{Kind: Tmpfs, Dst: "/tmp", Size: StrictTmpSize}, "scratch: empty, gone at exit"),
		why(Mount{Kind: Tmpfs, Dst: o.Home, Size: StrictHomeSize, Mode: 0o700}, "scratch: an empty home, gone at exit"),
	)
	for _, d := range o.ToolDirs {
		mounts = append(mounts, why(Mount{Kind: ROBind, Src: d, Dst: d}, "agent: its binary and what it resolves to"))
	}
	if o.GitConfig != "" {
		mounts = append(mounts, why(Mount{Kind: ROBind, Src: o.GitConfig, Dst: filepath.Join(o.Home, ".gitconfig")}, "git: identity only, generated"))
	}
	if o.Net {
		for _, d := range o.NetBinds {
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: d, Dst: d}, "--net: name resolution"))
		}
	}
	mounts = append(mounts, why(Mount{Kind: Bind, Src: o.Repo, Dst: o.Repo}, repoWhy))
	mounts = append(mounts, o.GitPins...)
	mounts = append(mounts, o.Protect...)
	mounts = append(mounts, o.Binds...)
	for _, d := range o.AisanState {
		// Also over a writable mount inside it (a bind spec's rw entry
		// in ~/.aisan): the state, the trust store with it, is never
		// writable in a box. The box's own state dir is bound after.
		if writableUnder(mounts, d) || writableWithin(mounts, d) {
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: d, Dst: d}, "aisan state: never writable in a box"))
		}
	}
	for _, d := range o.AisanRun {
		if shownUnder(mounts, d) {
			// The box's own (writable: the relays' sockets may be bound
			// below it after).
			mounts = append(mounts, why(Mount{Kind: Tmpfs, Dst: d, Mode: 0o700}, "aisan's locks: never in a box"))
		}
	}
	a, isAgent := agent.ByKind(string(o.Kind))
	if isAgent && o.StateDir != "" {
		mounts = append(mounts, why(Mount{Kind: Bind, Src: o.StateDir, Dst: o.StateDir}, "state: this repository's "+a.Kind+" state"))
		for _, rel := range o.Instructions {
			src := filepath.Join(o.ConfigDir, rel)
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: src, Dst: filepath.Join(o.StateDir, a.StateSub, rel)}, "agent: the user's global instructions, read-only"))
		}
		for _, name := range o.CodexRules {
			src := filepath.Join(o.ConfigDir, "rules", name)
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: src, Dst: filepath.Join(o.StateDir, a.StateSub, "rules", CodexUserRules(name))}, "agent: the user's rules, read-only"))
		}
		for _, rel := range o.StateRules {
			p := filepath.Join(o.StateDir, rel)
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: p, Dst: p}, "agent: the user's rules as seeded, read-only"))
		}
	}
	if isAgent {
		for _, rel := range o.HomeInstructions {
			p := filepath.Join(o.Home, rel)
			mounts = append(mounts, why(Mount{Kind: ROBind, Src: p, Dst: p}, "agent: the user's global instructions, read-only"))
		}
	}
	for _, e := range o.Egress {
		if e.Socket == "" {
			continue // --net: the host listens on its own loopback
		}
		src := e.Source
		if src == "" {
			src = e.Socket
		}
		m := Mount{Kind: ROBind, Src: src, Dst: e.Socket}
		if e.Source != "" && e.SourceIno != 0 {
			// The socket that was checked, by a descriptor: a directory
			// on its path swapped since (by a box writing there) cannot
			// make bwrap bind the session bus instead.
			m.Pin, m.PinDev, m.PinIno = PinSocket, e.SourceDev, e.SourceIno
		}
		mounts = append(mounts, why(m, "egress "+e.Name+": the relay's host socket"))
	}
	if o.EnvFile != "" {
		mounts = append(mounts, why(Mount{Kind: ROBind, Src: o.EnvFile, Dst: o.EnvFile}, "egress: addresses and per-box token, read by the init (0600)"))
	}
	return mounts
}

// systemPath ends every box's PATH.
var systemPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// PATH is the box's search path (see boxPath).
func (o StrictOptions) PATH() string {
	return strings.Join(boxPath(o, strictMounts(o)), ":")
}

// BoxPath is the box's search path, one directory an entry.
func (o StrictOptions) BoxPath() []string { return boxPath(o, strictMounts(o)) }

// Shows reports whether the box shows the host's p: the last mount that
// covers it binds a host path (a tmpfs, or nothing, hides it).
func (o StrictOptions) Shows(p string) bool { return shows(strictMounts(o), p) }

// boxPath is the box's search path, given its mounts: the host's PATH
// order is kept for every entry the box shows (or that the agent's
// directories or a bind spec's path names); what the agent's directories
// and the bind specs add beyond the host's PATH comes first, in their
// order; the system's directories end it.
func boxPath(o StrictOptions, mounts []Mount) []string {
	named := slices.Concat(o.PathDirs, o.BindPath)
	var front, host []string
	for _, d := range named {
		if !slices.Contains(o.HostPath, d) {
			front = append(front, d)
		}
	}
	for _, d := range o.HostPath {
		if slices.Contains(named, d) || shows(mounts, d) {
			host = append(host, d)
		}
	}
	return dedup(slices.Concat(front, host, systemPath))
}

// shows reports whether, under mounts, the box shows the host's p: the
// last mount that covers p binds something of the host's there (a system
// symlink counts: it points into /usr).
func shows(mounts []Mount, p string) bool {
	v := false
	for _, m := range mounts {
		if !within(p, m.Dst) {
			continue
		}
		switch m.Kind {
		case Bind, ROBind, DevBind, Overlay, Symlink:
			v = true
		default:
			v = false
		}
	}
	return v
}

func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// shownUnder reports whether the host's p is in the box: the last mount
// at or above it brings the host's files.
func shownUnder(mounts []Mount, p string) bool {
	shown := false
	for _, m := range mounts {
		if !within(p, m.Dst) {
			continue
		}
		switch m.Kind {
		case Bind, ROBind, Overlay, DevBind:
			shown = true
		case Tmpfs:
			shown = false
		}
	}
	return shown
}

// writableUnder reports whether a writable mount so far covers p.
func writableUnder(mounts []Mount, p string) bool {
	w := false
	for _, m := range mounts {
		if !within(p, m.Dst) {
			continue
		}
		switch m.Kind {
		case Bind, Overlay, Tmpfs:
			w = m.Kind != Tmpfs // a tmpfs hides the host's files
		case ROBind:
			w = false
		}
	}
	return w
}

// writableWithin reports whether a writable mount so far lies inside p.
func writableWithin(mounts []Mount, p string) bool {
	for _, m := range mounts {
		switch m.Kind {
		case Bind, DevBind, Overlay:
			if m.Dst != p && within(m.Dst, p) {
				return true
			}
		case Seal:
			for _, h := range m.Holes {
				if within(h, p) {
					return true
				}
			}
		}
	}
	return false
}

// checkForbidden refuses a mount whose source is, contains or lies inside
// a credential path.
func checkForbidden(s Spec) error {
	for i, m := range s.Mounts {
		switch m.Kind {
		case Bind, ROBind, DevBind, Overlay:
		default:
			continue
		}
		for _, f := range s.Forbidden {
			if within(f, m.Src) || within(m.Src, f) {
				why := m.Why
				if why == "" {
					why = "a mount"
				}
				return &CredentialError{Index: i, Mount: m, Credential: f, msg: fmt.Sprintf("%s: its source %s would expose the credential %s (mount %d, %s %s)", why, m.Src, f, i, m.Kind, m.Dst)}
			}
		}
	}
	return nil
}

// CredentialError is a mount refused because its source holds a
// credential.
type CredentialError struct {
	Index      int
	Mount      Mount
	Credential string
	msg        string
}

func (e *CredentialError) Error() string { return e.msg }

// Hints says what to do instead.
func (e *CredentialError) Hints() []string {
	if e.Mount.Why == repoWhy {
		return []string{
			"cd into a project (a directory that holds no credential) and start the box there",
			"model calls get their credential from the host through --egress; a strict box never holds one",
		}
	}
	return []string{
		"bind the directories the agent needs one by one, none of which holds " + e.Credential,
		"model calls get their credential from the host through --egress; a strict box never holds one",
	}
}

// checkEgress: endpoint names, ports and sockets are sane, each socket is
// mounted read-only, and a raw relay (which cannot require a token) is
// not offered on the host network.
func checkEgress(s Spec) error {
	ports := map[int]string{}
	vars := map[string]string{}
	for _, e := range s.Egress {
		if e.Name == "" {
			return errors.New("an egress endpoint has no name")
		}
		v := e.Var
		if !strings.HasPrefix(v, "AISAN_EGRESS_") {
			return fmt.Errorf("egress %q: its variable %q is not an AISAN_EGRESS_ one", e.Name, v)
		}
		if other, dup := vars[v]; dup {
			return fmt.Errorf("egress %q and %q both map to %s; rename one", other, e.Name, v)
		}
		vars[v] = e.Name
		if !s.Namespaces.Net {
			// The host network: no relay, the host side listens itself.
			if e.Backend == "" {
				return fmt.Errorf("egress %q is a raw relay, which cannot require a token, and --net puts it on the host's loopback for every local process; drop --net or the relay", e.Name)
			}
			if e.Port != 0 || e.Socket != "" || s.EnvFile == "" {
				return fmt.Errorf("egress %q: with the host network an endpoint has no in-box port or socket, and its address comes through the environment file", e.Name)
			}
			continue
		}
		if e.Port <= 0 || e.Port > 65535 || !filepath.IsAbs(e.Socket) {
			return fmt.Errorf("egress %q: needs a port in 1-65535 and an absolute socket path", e.Name)
		}
		if other, dup := ports[e.Port]; dup {
			return fmt.Errorf("egress %q and %q share port %d", other, e.Name, e.Port)
		}
		ports[e.Port] = e.Name
		mounted := false
		for _, m := range s.Mounts {
			if m.Dst == e.Socket {
				mounted = m.Kind == ROBind
			}
		}
		if !mounted {
			return fmt.Errorf("egress %q: its socket %s is not bound read-only into the jail", e.Name, e.Socket)
		}
	}
	return nil
}

// CodexUserRules is the name the user's Codex rules file name has in a
// box's rules directory: never default.rules, which Codex writes.
func CodexUserRules(name string) string { return "aisan-user-" + name }

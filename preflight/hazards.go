package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/aisan-dev/aisan/hooks"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/shared/distro"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/sibling"
	"github.com/aisan-dev/aisan/jail/shared/userunit"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// Hazards: settings under which aisan runs but a promise quietly weakens.

func checkBusAddress(ctx context.Context, e *Env) Finding {
	addr := e.Getenv(busproxy.EnvAddress)
	if addr == "" {
		if rt := e.Getenv("XDG_RUNTIME_DIR"); rt != "" && isSocket(filepath.Join(rt, "bus")) {
			return Finding{Detail: "not set; clients use " + filepath.Join(rt, "bus") + ", a socket path the jail can hide"}
		}
		return Finding{Detail: "not set, and no bus socket in XDG_RUNTIME_DIR"}
	}
	as, err := busproxy.ParseAddress(addr)
	if err != nil {
		return Finding{Status: Fail, Detail: fmt.Sprintf("%s=%q does not parse: %v", busproxy.EnvAddress, addr, err), Fix: "unset " + busproxy.EnvAddress}
	}
	for _, a := range as {
		if addrUnmaskable(a.String()) {
			return Finding{
				Status: Warn,
				Detail: "the session bus is at " + a.String() + ", which no mount can hide: a jailed agent reaches the whole bus there, systemd included",
				Fix:    e.fixAbstract(),
			}
		}
	}
	return Finding{Detail: addr + " (a socket path, which the jail can hide)"}
}

// fixAbstract moves the session bus to a socket path: dbus-user-session
// on Debian and Ubuntu makes the user manager run it at
// $XDG_RUNTIME_DIR/bus, which the other families do by default.
func (e *Env) fixAbstract() string {
	if e.Family == distro.Debian {
		return "sudo apt-get install dbus-user-session   # then log out and in: the bus moves to unix:path=$XDG_RUNTIME_DIR/bus"
	}
	return "run the session bus from the systemd user manager (dbus.socket), at unix:path=$XDG_RUNTIME_DIR/bus, instead of dbus-launch; then log out and in"
}

func checkStateDir(ctx context.Context, e *Env) Finding {
	home, err := slot.Home()
	if err != nil {
		return Finding{Status: Fail, Detail: err.Error(), Fix: e.fixStateDir()}
	}
	if err := slot.CheckHome(home, e.Cwd); err != nil {
		var he *slot.HomeError
		if !errors.As(err, &he) {
			return Finding{Status: Fail, Detail: err.Error(), Fix: e.fixStateDir()}
		}
		where := "the git worktree " + e.tilde(he.Project)
		if he.Jailed {
			where = "this directory, which a jail started here could edit"
		}
		return Finding{Status: Fail, Detail: fmt.Sprintf("%s is inside %s: aisan refuses to run", e.tilde(home), where), Fix: e.fixStateDir()}
	}
	detail := e.tilde(home)
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		detail += " (created at the first launch)"
	}
	return Finding{Detail: detail}
}

// fixStateDir proposes a state dir that passes the same check here: the
// default when it does, else the XDG state dir.
func (e *Env) fixStateDir() string {
	if e.Home != "" {
		if def := filepath.Join(e.Home, ".aisan"); slot.CheckHome(def, e.Cwd) == nil {
			return "unset AISAN_HOME   # the default, ~/.aisan"
		}
		state := e.Getenv("XDG_STATE_HOME")
		if !filepath.IsAbs(state) {
			state = filepath.Join(e.Home, ".local", "state")
		}
		if p := filepath.Join(state, "aisan"); slot.CheckHome(p, e.Cwd) == nil {
			return "export AISAN_HOME=" + e.tilde(p)
		}
	}
	return "export AISAN_HOME=/path/outside/any/git/worktree"
}

// settingsFile is one file an agent reads hooks from.
type settingsFile struct {
	agent string // "Claude Code", "Codex"
	path  string
}

// hookFiles lists where Claude Code and Codex read hooks, for the agents
// whose configuration exists: the user files (hooks.Agents), the project
// files in the working directory and at its worktree root, and Claude
// Code's managed files. Codex's TOML forms (config.toml, requirements.toml)
// are not read: a hook there shows as not installed.
func (e *Env) hookFiles() (claude, codex []settingsFile, present []string) {
	agents := hooks.Agents(e.Home, e.Getenv)
	for _, a := range agents {
		if !a.Present() {
			continue
		}
		switch a.Name {
		case "claude":
			present = append(present, "Claude Code")
			claude = append(claude, settingsFile{"Claude Code", a.File})
		case "codex":
			present = append(present, "Codex")
			codex = append(codex, settingsFile{"Codex", a.File})
		}
	}
	var dirs []string
	if e.Cwd != "" {
		dirs = append(dirs, e.Cwd)
		if root := worktreeRoot(e.Cwd); root != "" && root != e.Cwd {
			dirs = append(dirs, root)
		}
	}
	if len(codex) > 0 {
		// Codex loads a project's hooks.json once the project is trusted.
		for _, d := range dirs {
			codex = append(codex, settingsFile{"Codex", filepath.Join(d, ".codex", "hooks.json")})
		}
	}
	if len(claude) > 0 {
		for _, d := range dirs {
			for _, f := range []string{"settings.json", "settings.local.json"} {
				claude = append(claude, settingsFile{"Claude Code", filepath.Join(d, ".claude", f)})
			}
		}
		claude = append(claude, settingsFile{"Claude Code", "/etc/claude-code/managed-settings.json"})
		managed, _ := filepath.Glob("/etc/claude-code/managed-settings.d/*.json")
		for _, m := range managed {
			claude = append(claude, settingsFile{"Claude Code", m})
		}
	}
	return claude, codex, present
}

// worktreeRoot is the nearest directory at or above dir holding .git.
func worktreeRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// hookState is what one agent's settings files say about the guard.
type hookState struct {
	installed string      // the first file holding the hook
	disabled  string      // the first file with "disableAllHooks": true
	broken    []string    // files that do not parse
	handlers  []foundHook // the hooks of ours that run for Bash, in every file
}

// foundHook is a handler that claims to run the guard, and the file
// holding it.
type foundHook struct {
	hooks.Handler
	file string
}

// maxSettingsRead bounds what preflight reads of a settings or rc file.
const maxSettingsRead = 16 << 20

func readHookState(files []settingsFile) hookState {
	var st hookState
	for _, f := range files {
		// Never from a FIFO a jail put there: preflight would wait for ever.
		src, err := regfile.ReadNamed(f.path, maxSettingsRead)
		if err != nil {
			continue
		}
		// Uninstall finds the hook exactly as install-hook and
		// uninstall-hook do: a change means one of ours is there.
		_, ours, err := hooks.Uninstall(src)
		if err != nil {
			st.broken = append(st.broken, f.path)
			continue
		}
		if ours && st.installed == "" {
			st.installed = f.path
		}
		if hs, err := hooks.Find(src); err == nil {
			for _, h := range hs {
				st.handlers = append(st.handlers, foundHook{h, f.path})
			}
		}
		var top struct {
			DisableAllHooks bool `json:"disableAllHooks"`
		}
		if json.Unmarshal(src, &top) == nil && top.DisableAllHooks && st.disabled == "" {
			st.disabled = f.path
		}
	}
	return st
}

func checkGuardHook(ctx context.Context, e *Env) Finding {
	claude, codex, present := e.hookFiles()
	if len(present) == 0 {
		return Finding{Detail: "no Claude Code or Codex configuration found (nothing to guard yet)"}
	}
	var (
		problems, fixes, ok []string
	)
	addFix := func(f string) {
		if !slices.Contains(fixes, f) {
			fixes = append(fixes, f)
		}
	}
	for _, a := range []struct {
		name  string
		files []settingsFile
	}{{"Claude Code", claude}, {"Codex", codex}} {
		if len(a.files) == 0 {
			continue
		}
		st := readHookState(a.files)
		switch {
		case st.disabled != "":
			problems = append(problems, fmt.Sprintf("%s: disabled by \"disableAllHooks\": true in %s", a.name, e.tilde(st.disabled)))
			fixes = append(fixes, fmt.Sprintf("remove \"disableAllHooks\": true from %s", e.tilde(st.disabled)))
		case len(st.broken) > 0 && st.installed == "":
			problems = append(problems, fmt.Sprintf("%s: %s is not valid JSON", a.name, e.tilde(st.broken[0])))
			fixes = append(fixes, "fix the JSON in "+e.tilde(st.broken[0])+", then: aisan install-hook")
		case st.installed == "":
			problems = append(problems, a.name+": not installed")
			addFix("aisan install-hook")
		default:
			guards, foreign := e.ownGuards(st.handlers)
			if len(foreign) > 0 {
				// A program that only carries aisan's name: the agent
				// runs it before every shell command, and preflight
				// runs none of it.
				problems = append(problems, a.name+": "+foreign[0].why)
				addFix("remove the hook that runs " + e.tilde(foreign[0].bin) + " from " + e.tilde(foreign[0].file) + ", then: aisan install-hook")
				continue
			}
			if why := e.hookRefuses(ctx, guards); why != "" {
				problems = append(problems, a.name+": "+why)
				addFix("aisan install-hook")
				continue
			}
			ok = append(ok, a.name+" ("+e.tilde(st.installed)+")")
		}
	}
	if len(problems) > 0 {
		return Finding{Status: Warn, Detail: strings.Join(problems, "; ") + ": a name-based kill is not explained to the agent", Fix: strings.Join(fixes, "\n")}
	}
	return Finding{Detail: "installed for " + joinAnd(ok)}
}

// hookSample is the hook input preflight feeds the installed hook: a
// command the guard must refuse.
const hookSample = `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"pkill -f aisan-preflight"}}`

// hookTimeout bounds one run of the installed hook. The guard answers in
// milliseconds.
const hookTimeout = 3 * time.Second

// ownGuard is a hook whose program is one of aisan's own binaries, or
// what keeps it from being tried: argv is what preflight runs (the
// trusted binary, then the hook's arguments), why what is wrong with it.
type ownGuard struct {
	argv []string
	why  string
}

// foreignHook is a hook named like aisan's guard whose program is some
// other file.
type foreignHook struct {
	file, bin, why string
}

// ownGuards sorts the hooks that claim to run the guard, without running
// any: those whose program is one of aisan's own binaries (the same file
// as the running aisan or a sibling it trusts; see sibling.Own), those
// whose program is missing or not executable (the agent lets commands
// through), and the foreign ones. A name proves nothing: any jail can
// write a project's .claude or .codex and plant a script called aisan
// there, and preflight runs outside every jail.
func (e *Env) ownGuards(hs []foundHook) (guards []ownGuard, foreign []foreignHook) {
	var own sibling.Own
	var ownErr error
	if e.Self == "" {
		ownErr = errors.New("the running aisan binary cannot be found")
	} else {
		own, ownErr = sibling.Mine(e.Self, hooks.GuardName, sibling.FullName, "aisan")
	}
	for _, h := range hs {
		bin := h.Binary
		if !strings.Contains(bin, "/") {
			// What the shell would find; looking is not running.
			p, err := exec.LookPath(bin)
			if err != nil {
				guards = append(guards, ownGuard{why: fmt.Sprintf("the hook runs %s, which is not in PATH", bin)})
				continue
			}
			bin = p
		}
		st, err := os.Stat(bin)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			guards = append(guards, ownGuard{why: fmt.Sprintf("the hook runs %s, which does not exist", e.tilde(bin))})
			continue
		case err != nil:
			guards = append(guards, ownGuard{why: fmt.Sprintf("the hook runs %s: %v", e.tilde(bin), err)})
			continue
		case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
			guards = append(guards, ownGuard{why: fmt.Sprintf("the hook runs %s, which is not an executable file", e.tilde(bin))})
			continue
		}
		trusted := ""
		if ownErr == nil {
			trusted, err = own.Identify(bin)
		}
		if trusted == "" {
			why := fmt.Sprintf("%s has a hook that runs %s, which is not aisan's guard (not the same file as %s); preflight did not run it",
				e.tilde(h.file), e.tilde(bin), e.tildeAll(own.Paths()))
			switch {
			case ownErr != nil:
				why = fmt.Sprintf("%s has a hook that runs %s, which preflight cannot tell is aisan's guard (%v); preflight did not run it", e.tilde(h.file), e.tilde(bin), ownErr)
			case err != nil:
				why = fmt.Sprintf("%s has a hook that runs %s, which is not aisan's guard (%v); preflight did not run it", e.tilde(h.file), e.tilde(bin), err)
			}
			foreign = append(foreign, foreignHook{file: h.file, bin: bin, why: why})
			continue
		}
		guards = append(guards, ownGuard{argv: append([]string{trusted}, h.Argv[1:]...)})
	}
	return guards, foreign
}

// tildeAll is paths, each as [Env.tilde] shows it, joined with "or".
func (e *Env) tildeAll(paths []string) string {
	var out []string
	for _, p := range paths {
		out = append(out, e.tilde(p))
	}
	if len(out) == 0 {
		return "any binary of aisan's"
	}
	return strings.Join(out, " or ")
}

// hookRefuses runs aisan's own guard the way each hook would, once, on a
// command the guard refuses. It returns "" when one of them refuses it
// (exit status 2), and else what is wrong with the first: the agent lets
// a command through when its hook cannot start, exits with another
// status or times out.
func (e *Env) hookRefuses(ctx context.Context, gs []ownGuard) string {
	if len(gs) == 0 {
		return "the hook's matcher does not select the Bash tool"
	}
	first := ""
	var tried []string
	for _, g := range gs {
		why := g.why
		if why == "" {
			key := strings.Join(g.argv, "\x00")
			if slices.Contains(tried, key) {
				continue
			}
			tried = append(tried, key)
			why = e.runGuard(ctx, g.argv)
		}
		if why == "" {
			return ""
		}
		if first == "" {
			first = why
		}
	}
	return first
}

// runGuard runs argv, whose program is one of aisan's own binaries
// (never a command line from a settings file), with hookSample on stdin
// and expects exit status 2. It returns "" or what went wrong.
func (e *Env) runGuard(ctx context.Context, argv []string) string {
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(hookSample)
	if e.Cwd != "" {
		cmd.Dir = e.Cwd
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("the hook did not answer within %v", hookTimeout)
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		return ""
	case errors.As(err, &ee):
		return fmt.Sprintf("the hook does not refuse pkill: it ends with %s, not exit status 2", ee.ProcessState)
	case err != nil:
		return fmt.Sprintf("the hook does not start: %v", err)
	}
	return "the hook does not refuse pkill: it ends with exit status 0, not 2"
}

// shellRC is a startup file of a shell, and the line that loads aisan's
// integration there.
type shellRC struct {
	shell string
	files []string
	line  string
	rc    string // the file the fix appends to, as the user types it
}

func (e *Env) shellRCs() []shellRC {
	h := e.Home
	zdot := e.Getenv("ZDOTDIR")
	if !filepath.IsAbs(zdot) {
		zdot = h
	}
	conf := e.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(conf) {
		conf = filepath.Join(h, ".config")
	}
	fishConfD, _ := filepath.Glob(filepath.Join(conf, "fish", "conf.d", "*.fish"))
	aisan := e.frontBinary()
	return []shellRC{
		{"bash", []string{filepath.Join(h, ".bashrc"), filepath.Join(h, ".bash_profile"), filepath.Join(h, ".bash_login"), filepath.Join(h, ".profile")},
			`eval "$(` + aisan + ` shell-init bash)"`, "~/.bashrc"},
		{"zsh", []string{filepath.Join(zdot, ".zshrc"), filepath.Join(zdot, ".zprofile"), filepath.Join(zdot, ".zshenv")},
			`eval "$(` + aisan + ` shell-init zsh)"`, e.tilde(filepath.Join(zdot, ".zshrc"))},
		{"fish", append([]string{filepath.Join(conf, "fish", "config.fish")}, fishConfD...),
			aisan + " shell-init fish | source", e.tilde(filepath.Join(conf, "fish", "config.fish"))},
	}
}

// frontBinary is the aisan the rc line should run, by its path: the
// front beside the full binary preflight runs in, or this binary; "aisan"
// when neither is known, or when the path would need quoting in the line
// (the user then writes it in by hand).
func (e *Env) frontBinary() string {
	if e.Self == "" {
		return "aisan"
	}
	p := sibling.Front(e.Self)
	if strings.ContainsFunc(p, needsQuoting) {
		return "aisan"
	}
	return p
}

// needsQuoting reports whether r in a path would need quoting in a shell.
func needsQuoting(r rune) bool {
	return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || unicode.IsLetter(r) || unicode.IsDigit(r))
}

// loadsIntegration reports whether an rc file loads aisan's functions (a
// line, not commented out, that runs "aisan shell-init" or sources the
// shipped aisan.sh or aisan.fish), and whether that line finds aisan by
// name on PATH: "aisan shell-init" with no directory before it, or the
// shipped script, whose functions run "aisan" by name.
func loadsIntegration(src string) (loads, byName bool) {
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "aisan shell-init"); i >= 0 {
			return true, i == 0 || line[i-1] != '/'
		}
		for _, f := range []string{"aisan.sh", "aisan.fish"} {
			if strings.Contains(line, f) && (strings.HasPrefix(line, "source ") || strings.HasPrefix(line, ". ")) {
				return true, true
			}
		}
	}
	return false, false
}

func checkShell(ctx context.Context, e *Env) Finding {
	if e.Home == "" {
		return Finding{Status: Warn, Detail: "no home directory: cannot look for shell startup files", Fix: "export HOME=~" + e.Getenv("USER")}
	}
	shell := filepath.Base(e.Getenv("SHELL"))
	rcs := e.shellRCs()
	var mine *shellRC
	for i := range rcs {
		if rcs[i].shell == shell {
			mine = &rcs[i]
		}
	}
	candidates := rcs
	if mine != nil {
		candidates = []shellRC{*mine}
	}
	for _, rc := range candidates {
		for _, f := range rc.files {
			b, err := regfile.ReadNamed(f, maxSettingsRead)
			if err != nil {
				continue
			}
			loads, byName := loadsIntegration(string(b))
			if !loads {
				continue
			}
			// As root every directory is the jail's to write; the root
			// check says so.
			if byName && e.Euid != 0 {
				if open := hostprog.Claimable("aisan", e.Getenv("PATH")); open != "" {
					return Finding{
						Status: Warn,
						Detail: fmt.Sprintf("loaded from %s by the name aisan, looked up on PATH: a jail can write %s, and an aisan it put there would run, unjailed, in your next shell", e.tilde(f), e.tilde(open)),
						Fix:    fmt.Sprintf("in %s, run aisan by its path: %s", e.tilde(f), rc.line),
					}
				}
			}
			return Finding{Detail: "loaded from " + e.tilde(f)}
		}
	}
	target := rcs[0] // bash, when the login shell is unknown
	what := "no shell startup file loads it"
	if mine != nil {
		target = *mine
		what = "not loaded in " + target.rc + " (" + shell + ")"
	}
	return Finding{
		Status: Warn,
		Detail: what + ": typing claude, codex or opencode runs the agent unjailed",
		Fix:    fmt.Sprintf("echo '%s' >> %s", target.line, target.rc),
	}
}

// Fix command for undelegated controllers: a drop-in for user@.service,
// as systemd's documentation on delegation shows.
const fixDelegate = "sudo mkdir -p /etc/systemd/system/user@.service.d && printf '[Service]\\nDelegate=cpu memory pids\\n' | sudo tee /etc/systemd/system/user@.service.d/delegate.conf && sudo systemctl daemon-reload   # then log out and in"

func checkLimits(ctx context.Context, e *Env) Finding {
	limits, err := systemd.ParseLimits(e.Getenv(systemd.EnvLimits))
	if err != nil {
		return Finding{Status: Warn, Detail: fmt.Sprintf("%s: %v", systemd.EnvLimits, err), Fix: "unset " + systemd.EnvLimits}
	}
	r := e.managerProbe(ctx)
	if r.err != nil {
		return Finding{Detail: "not applicable: no systemd user manager (see above)"}
	}
	delegated, err := r.m.DelegatedControllers(ctx)
	if err != nil {
		return Finding{Status: Warn, Detail: "cannot tell which controllers are delegated: " + err.Error(), Fix: "systemctl --user show -p ControlGroup"}
	}
	v1, _ := systemd.V1Controllers()
	if err := systemd.CheckDelegation(limits, delegated, v1); err != nil {
		var ue *systemd.UndelegatedError
		fix := fixDelegate
		if errors.As(err, &ue) && len(ue.V1) > 0 {
			fix = strings.Join(ue.Hints(), "\n")
		}
		return Finding{Status: Warn, Detail: err.Error() + " (set in " + systemd.EnvLimits + ")", Fix: fix}
	}
	all := systemd.Limits{MemoryMax: 1, CPUQuotaPerSecUSec: 1, TasksMax: 1}
	missing := systemd.MissingControllers(all, delegated)
	if len(missing) == 0 {
		return Finding{Detail: "cpu, memory and pids are delegated: --memory-max, --cpu-quota and --tasks-max take effect"}
	}
	var flags []string
	for _, c := range missing {
		flags = append(flags, map[string]string{"memory": "--memory-max", "cpu": "--cpu-quota", "pids": "--tasks-max"}[c])
	}
	are := "is"
	if len(missing) > 1 {
		are = "are"
	}
	return Finding{Detail: fmt.Sprintf("%s %s not delegated: %s would be ignored, with a warning at launch (no limit set in %s)",
		joinAnd(missing), are, joinAnd(flags), systemd.EnvLimits)}
}

func checkRoot(ctx context.Context, e *Env) Finding {
	if e.Euid != 0 {
		return Finding{Detail: "not root"}
	}
	fix := "run aisan as your own user, not as root"
	if u := e.Getenv("SUDO_USER"); u != "" && u != "root" {
		fix = "exit the sudo shell and run aisan as " + u
	}
	return Finding{
		Status: Warn,
		Detail: "running as root: bwrap builds no user namespace, the jail runs with root's powers, and agents refuse some modes (claude --dangerously-skip-permissions)",
		Fix:    fix,
	}
}

// watchUnits is what preflight reads of the installed supervisor unit.
type watchUnits struct {
	Units []watchUnitFile
	// Missing are the drop-in directories install-service makes that do
	// not exist.
	Missing []string
}

// watchUnitFile is one installed unit file.
type watchUnitFile struct {
	Path string
	Link bool // it is a symbolic link
}

// gatherWatchUnits finds the supervisor's unit in the user's unit
// directories ([userunit.Dirs]), as the jail does, and the drop-in
// directories install-service makes that are missing: in the unit
// file's own directory, and in each of the others the manager reads
// (search, its unit path; nil when it cannot be asked).
func gatherWatchUnits(getenv func(string) string, home string, search []string) watchUnits {
	var w watchUnits
	dirs := userunit.Dirs(getenv, home)
	var need []string
	for _, d := range dirs {
		p := filepath.Join(d, userunit.WatchName)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		w.Units = append(w.Units, watchUnitFile{Path: p, Link: fi.Mode().Type() == fs.ModeSymlink})
		need = append(need, d)
	}
	if len(w.Units) == 0 {
		return w
	}
	for _, d := range systemd.ReadUnitDirs(dirs, search) {
		if !slices.Contains(need, d) {
			need = append(need, d)
		}
	}
	for _, d := range need {
		for _, name := range userunit.DropIns(userunit.WatchName) {
			if fi, err := os.Stat(filepath.Join(d, name)); err != nil || !fi.IsDir() {
				w.Missing = append(w.Missing, filepath.Join(d, name))
			}
		}
	}
	return w
}

// decideWatchUnit says whether every jail can keep the installed
// supervisor unit read-only: the user manager runs it outside any jail.
// A jail binds what exists read-only over itself, so the drop-in
// directories must exist (install-service makes them), and the unit
// file must not be a link (the link itself could be replaced).
func decideWatchUnit(w watchUnits, tilde func(string) string) Finding {
	if len(w.Units) == 0 {
		return Finding{Detail: "aisan-watch.service is not installed ('aisan install-service' installs it)"}
	}
	for _, u := range w.Units {
		if u.Link {
			return Finding{
				Status: Warn,
				Detail: tilde(u.Path) + " is a symbolic link: a jail can replace the link, and the user manager runs the unit outside any jail",
				Fix:    fmt.Sprintf(`cp --remove-destination "$(readlink -f %[1]s)" %[1]s`, tilde(u.Path)),
			}
		}
	}
	if len(w.Missing) > 0 {
		missing := tilde(w.Missing[0]) + " does not exist"
		switch n := len(w.Missing) - 1; n {
		case 0:
		case 1:
			missing += " (nor one other drop-in directory for it)"
		default:
			missing += fmt.Sprintf(" (nor %d other drop-in directories for it)", n)
		}
		return Finding{
			Status: Warn,
			Detail: missing + ": a jail could make it and add lines the user manager runs outside any jail",
			Fix:    "aisan install-service   # makes the drop-in directories, which every jail then keeps read-only",
		}
	}
	return Finding{Detail: tilde(w.Units[0].Path) + " and its drop-in directories are read-only in every jail"}
}

func checkWatchUnit(ctx context.Context, e *Env) Finding {
	var search []string
	if r := e.managerProbe(ctx); r.m != nil {
		search, _ = r.m.UnitPath(ctx)
	}
	return decideWatchUnit(gatherWatchUnits(e.Getenv, e.Home, search), e.tilde)
}

// Package agent is what aisan knows about each agent CLI, as data: where
// it keeps its configuration and history, which variable relocates that
// directory, which files in it are credentials, how to install it, and
// what a strict box must set so that the client starts offline and talks
// only to its loopback endpoint.
//
// It is a leaf: it imports the standard library only and does no I/O, so
// that jail, hooks, preflight and egress can all share one table without
// depending on each other.
//
// # Rules
//
//   - A credential path listed here is never a mount source, nor inside
//     one, in a strict box. The list is global: a Claude box may not bind
//     Codex's login either.
//   - Kill switches are listed per agent as the clients name them; they
//     are set in every strict box, with or without --net, because in
//     --net mode a client that phones home would send the box's proxy
//     token to a host the proxy does not guard.
package agent

import (
	"path/filepath"
	"slices"
)

// Agent is one agent CLI.
type Agent struct {
	// Kind is the launcher's name for it (aisan claude, …).
	Kind string
	// Binary is the command's name on PATH.
	Binary string
	// Name is how people call it ("Claude Code"), for messages.
	Name string
	// ConfigDir is the configuration directory, relative to $HOME.
	ConfigDir string
	// ConfigEnv relocates ConfigDir when set to an absolute path.
	ConfigEnv string
	// History is the prompt-history file's name inside ConfigDir, or "".
	History string
	// PIDDirs are directories where the agent keeps a file per running
	// process, named by its PID, or state of a daemon that must run in
	// the jail that asked for it: every jail numbers its processes from 1,
	// and a jailed agent must never reach a daemon outside, so each launch
	// gets its own directory over these.
	PIDDirs []PIDDir
	// InstallHint is the command that installs the agent.
	InstallHint string
	// Credentials are the credential files, relative to ConfigDir.
	Credentials []string
	// StateEnv is the variable a strict box points at the per-project
	// state directory.
	StateEnv string
	// StateSub is where inside the StateEnv directory the agent keeps its
	// files ("" for the directory itself; opencode's XDG data dir holds
	// an "opencode" directory).
	StateSub string
	// StrictEnv are set in every strict box of this agent: telemetry,
	// update and marketplace kill switches.
	StrictEnv []string
	// Instructions are the user's global instruction files and
	// directories, relative to ConfigDir, that a strict box shows
	// read-only inside its state directory (they carry no secret and run
	// nothing). Codex's rules files are bound one by one instead (see
	// jail.StrictOptions.CodexRules).
	Instructions []string
	// HomeInstructions are instruction files relative to $HOME that a
	// strict box shows read-only at the same place.
	HomeInstructions []string
	// Preferences are settings of the agent's own config file that carry
	// no secret and run nothing, which a strict box passes on read-only
	// (for Codex, as -c overrides that outrank the box's own file).
	Preferences []string
	// SkipPermissions are the agent's own "no approval prompts" options.
	SkipPermissions []string
	// ProjectFiles are what the agent, started in a project directory,
	// runs or obeys there without asking: settings with hooks, MCP
	// servers, plugins. A strict box edits copies of them, held for the
	// user's review (jail/strictbox/protect).
	ProjectFiles []ProjectFile
}

// ProjectFile is one name an agent reads in a project directory (at any
// depth: the directory it starts in, and for most agents its parents up
// to the repository's root). Agents may share a name (.agents/ is a
// layout for skills more than one reads): the protected table keeps one
// row for it.
type ProjectFile struct {
	// Name is the entry's base name.
	Name string
	// Dir is set for a directory, taken whole.
	Dir bool
	// Why says what the agent does with it.
	Why string
}

// PIDDir is one of an agent's per-process directories.
type PIDDir struct {
	// In is what Path is relative to.
	In Base
	// Path is the directory's name there; %d stands for the user's uid.
	Path string
	// Key names the per-launch directory aisan binds over it.
	Key string
}

// Base is a directory agent paths are relative to.
type Base int

// The bases of PIDDir paths.
const (
	InConfig  Base = iota // the agent's configuration directory
	InRuntime             // $XDG_RUNTIME_DIR (skipped when unset)
	InTmp                 // /tmp
)

// Claude is Claude Code.
var Claude = Agent{
	Kind:   "claude",
	Binary: "claude",
	Name:   "Claude Code",
	// sessions/<pid>.json and $XDG_RUNTIME_DIR/cc-socks/<pid>.sock are
	// per process; the background-session daemon keeps its control
	// socket in /tmp/cc-daemon-<uid> and its roster in daemon/.
	PIDDirs: []PIDDir{
		{In: InConfig, Path: "sessions", Key: "sessions"},
		{In: InConfig, Path: "daemon", Key: "daemon"},
		{In: InTmp, Path: "cc-daemon-%d", Key: "daemon-tmp"},
		{In: InRuntime, Path: "cc-socks", Key: "socks"},
	},
	ConfigDir:   ".claude",
	ConfigEnv:   "CLAUDE_CONFIG_DIR",
	History:     "history.jsonl",
	InstallHint: "npm install -g @anthropic-ai/claude-code (or its native installer)",
	Credentials: []string{".credentials.json"},
	StateEnv:    "CLAUDE_CONFIG_DIR",
	StrictEnv: []string{
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_TELEMETRY=1",
	},
	Instructions:    []string{"CLAUDE.md", "agents", "commands", "skills"},
	SkipPermissions: []string{"--permission-mode", "bypassPermissions"},
	ProjectFiles: []ProjectFile{
		{Name: ".claude", Dir: true, Why: "settings whose hooks it runs and whose MCP approvals it follows; commands, agents, skills"},
		{Name: ".mcp.json", Why: "MCP servers it starts once approved by name, or all of them when settings say so"},
	},
}

// Codex is OpenAI's Codex CLI.
var Codex = Agent{
	Kind:        "codex",
	Binary:      "codex",
	Name:        "Codex",
	ConfigDir:   ".codex",
	ConfigEnv:   "CODEX_HOME",
	History:     "history.jsonl",
	InstallHint: "npm install -g @openai/codex",
	Credentials: []string{"auth.json"},
	StateEnv:    "CODEX_HOME",
	// Codex takes its switches as -c options, not variables; see
	// CodexStrictArgs.
	Instructions:    []string{"AGENTS.md"},
	Preferences:     []string{"model", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity"},
	SkipPermissions: []string{"--dangerously-bypass-approvals-and-sandbox"},
	ProjectFiles: []ProjectFile{
		{Name: ".codex", Dir: true, Why: "config.toml of a trusted project (MCP servers it starts, providers), hooks.json, rules, skills"},
		{Name: ".agents", Dir: true, Why: "skills/*/SKILL.md, whose descriptions enter every run's instructions, trusted project or not, and whose bodies and scripts tell it what to run; plugins/marketplace.json, the project's plugin marketplace"},
	},
}

// CodexStrictArgs are the -c overrides that keep Codex from fetching
// plugins, analytics and update notices. They come before the user's
// arguments, which may override them.
var CodexStrictArgs = []string{
	"-c", "analytics.enabled=false",
	"-c", "features.plugins=false",
	"-c", "features.apps=false",
	"-c", "check_for_update_on_startup=false",
	"-c", "feedback.enabled=false",
	"-c", `web_search="disabled"`,
}

// Opencode is opencode.
var Opencode = Agent{
	Kind:        "opencode",
	Binary:      "opencode",
	Name:        "opencode",
	ConfigDir:   ".local/share/opencode",
	ConfigEnv:   "",
	InstallHint: "npm install -g opencode-ai",
	Credentials: []string{"auth.json"},
	StateEnv:    "XDG_DATA_HOME",
	StateSub:    "opencode",
	// opencode reads its global rules from its config dir, which is not
	// where it keeps its data.
	HomeInstructions: []string{".config/opencode/AGENTS.md"},
	StrictEnv: []string{
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"npm_config_offline=true",
	},
	ProjectFiles: []ProjectFile{
		{Name: "opencode.json", Why: "config: MCP servers it starts, plugins it loads"},
		{Name: "opencode.jsonc", Why: "the same, with comments"},
		{Name: ".opencode", Dir: true, Why: "plugins and tools it loads and runs, its own config, agents, commands, skills"},
		{Name: ".agents", Dir: true, Why: "skills/**/SKILL.md it offers the model, whose bodies and scripts tell it what to run"},
	},
}

// All are the agents, in a fixed order.
var All = []Agent{Claude, Codex, Opencode}

// ByKind returns the agent launched as kind.
func ByKind(kind string) (Agent, bool) {
	for _, a := range All {
		if a.Kind == kind {
			return a, true
		}
	}
	return Agent{}, false
}

// Dir is the agent's configuration directory on a host whose home is home
// and whose environment getenv reads.
func (a Agent) Dir(home string, getenv func(string) string) string {
	if a.ConfigEnv != "" {
		if v := getenv(a.ConfigEnv); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	if a.Kind == "opencode" {
		if v := getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
			return filepath.Join(v, "opencode")
		}
	}
	return filepath.Join(home, a.ConfigDir)
}

// homeCredentials are credential paths that belong to no agent, relative
// to $HOME. A directory stands for everything in it.
var homeCredentials = []string{
	".aws",
	".config/gcloud",
	".config/gh/hosts.yml",
	".docker/config.json",
	".git-credentials",
	".config/git/credentials",
	".gnupg/private-keys-v1.d",
	".gnupg/secring.gpg",
	".kube/config",
	".netrc",
	".npmrc",
	".pypirc",
	".ssh",
	".config/opencode/auth.json",
}

// envCredentials are variables naming a credential file or directory.
var envCredentials = []struct {
	env, sub string
}{
	{"GOOGLE_APPLICATION_CREDENTIALS", ""},
	{"CLOUDSDK_CONFIG", ""},
	{"AWS_SHARED_CREDENTIALS_FILE", ""},
	{"DOCKER_CONFIG", "config.json"},
	{"KUBECONFIG", ""},
	{"NETRC", ""},
	{"NPM_CONFIG_USERCONFIG", ""},
	{"GNUPGHOME", "private-keys-v1.d"},
	{"XDG_CONFIG_HOME", "gcloud"},
	{"XDG_CONFIG_HOME", "gh/hosts.yml"},
	{"XDG_CONFIG_HOME", "git/credentials"},
	{"GH_CONFIG_DIR", "hosts.yml"},
}

// Credentials lists every credential path aisan knows of on a host whose
// home is home and whose environment getenv reads, absolute and cleaned,
// sorted and without duplicates. Whether they exist is not checked here.
func Credentials(home string, getenv func(string) string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range All {
		for _, c := range a.Credentials {
			add(filepath.Join(a.Dir(home, getenv), c))
			add(filepath.Join(home, a.ConfigDir, c))
		}
	}
	for _, c := range homeCredentials {
		add(filepath.Join(home, c))
	}
	for _, e := range envCredentials {
		v := getenv(e.env)
		for _, p := range filepath.SplitList(v) {
			if p == "" {
				continue
			}
			if e.sub != "" {
				p = filepath.Join(p, e.sub)
			}
			add(p)
		}
	}
	slices.Sort(out)
	return out
}

// MergeOpencodeConfig merges one opencode config layer over another the
// way opencode does: objects key by key, any other value replaced. (The
// strict box's MCP import and its model seeding both read the layers.)
func MergeOpencodeConfig(old, new any) any {
	o, ok1 := old.(map[string]any)
	n, ok2 := new.(map[string]any)
	if !ok1 || !ok2 {
		return new
	}
	out := make(map[string]any, len(o)+len(n))
	for k, v := range o {
		out[k] = v
	}
	for k, v := range n {
		out[k] = MergeOpencodeConfig(o[k], v)
	}
	return out
}

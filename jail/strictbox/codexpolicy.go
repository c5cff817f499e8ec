package strictbox

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/pelletier/go-toml/v2"
)

// codexPolicy is what a box's Codex takes of the user's own config.toml
// among the settings that decide what Codex does without asking: the
// approval policy, the sandbox and its limits, and whether the user
// marked the project untrusted. The box's Codex reads its config from
// aisan's state, not from the user's file, so without these it would
// run as a trusted project with Codex's defaults.
type codexPolicy struct {
	// Overrides are KEY=VALUE (TOML values) for Codex's -c: they beat
	// whatever the box's own config.toml says at the top level.
	Overrides []string
	// Untrusted says the user's config marks the project (or the
	// nearest parent it names) untrusted, or that the project has a
	// .codex of its own the user has not trusted (ProjectOff): the box's
	// config marks it untrusted too.
	Untrusted bool
	// Trusted says the user's config trusts it: only then does the box's
	// Codex take the project's own .codex/ (config, hooks, rules).
	Trusted bool
	// ProjectOff is the project's .codex that the box's Codex leaves
	// off, as the user's own does on the host, since the user has not
	// trusted the project ("" for none), and TrustDir the directory to
	// trust for it.
	ProjectOff, TrustDir string
	// Left names what stays on the host, and why, one phrase each.
	Left []string
}

// codexApprovals are the approval policies Codex's config takes as a
// string; codexGranular the fields of its granular one, required first.
var (
	codexApprovals      = []string{"untrusted", "on-failure", "on-request", "never"}
	codexGranular       = []string{"sandbox_approval", "rules", "mcp_elicitations", "skill_approval", "request_permissions"}
	codexGranularNeeded = 3
)

// readCodexPolicy reads the user's Codex config at path for a box whose
// agent works in projects. A missing file gives nothing; one that does
// not parse gives nothing but a phrase saying so.
func readCodexPolicy(path string, projects []string) codexPolicy {
	m, bad := readCodexTOML(path)
	if bad {
		return codexPolicy{Left: []string{"all of it: it does not parse as TOML (Codex stops on it too)"}}
	}
	return pickCodexPolicy(m, projects)
}

// readCodexTOML reads a Codex config file at path: nil for a missing or
// unreadable one, and bad for one that does not parse.
func readCodexTOML(path string) (m map[string]any, bad bool) {
	data, err := regfile.Read(path, maxPreferences)
	if err != nil || len(data) == 0 {
		return nil, false
	}
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, true
	}
	return m, false
}

// codexSettings are what a box's Codex takes of the user's config in
// dir (its config.toml, with the profile file that --profile names
// layered over it): the safe preferences among keys as overrides, and
// the policy for projects. A profile the user does not have, or one
// that does not parse, is an error: Codex would pass over the first
// without a word.
func codexSettings(dir, profile string, keys, projects []string) (prefs []string, p codexPolicy, err error) {
	m, bad := readCodexTOML(filepath.Join(dir, "config.toml"))
	if profile != "" {
		pf := filepath.Join(dir, profile+".config.toml")
		if !codexProfileName(profile) {
			return nil, p, jail.WithHints(fmt.Errorf("codex --profile %q: not a profile name Codex takes", profile),
				"a profile is a file NAME.config.toml in "+dir+"; name it by NAME alone")
		}
		data, err := regfile.Read(pf, maxPreferences)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p, jail.WithHints(fmt.Errorf("codex --profile %s: %s does not exist", profile, pf),
				"the box's Codex takes a profile from your own "+dir+" only; create "+pf+", or leave --profile out")
		}
		var pm map[string]any
		if err == nil {
			err = toml.Unmarshal(data, &pm)
		}
		if err != nil {
			return nil, p, jail.WithHints(fmt.Errorf("codex --profile %s: reading %s: %w", profile, pf, err),
				"aisan reads a profile that is a regular TOML file (not a symbolic link); fix it, or leave --profile out")
		}
		if !bad {
			m = mergeCodexTOML(m, pm)
		}
	}
	if bad {
		return nil, codexPolicy{Left: []string{"all of it: it does not parse as TOML (Codex stops on it too)"}}, nil
	}
	return codexPreferences(m, keys), pickCodexPolicy(m, projects), nil
}

// mergeCodexTOML is overlay over base, table by table, as Codex layers
// its config files.
func mergeCodexTOML(base, overlay map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(overlay))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overlay {
		b, bok := out[k].(map[string]any)
		o, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeCodexTOML(b, o)
			continue
		}
		out[k] = v
	}
	return out
}

// codexProfileName reports whether name is a profile's name alone, no
// path.
func codexProfileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// codexProfileArg finds Codex's --profile among args (the agent's
// arguments, up to a "--"): the last one's name, and args without any.
// Codex layers a profile from its home, which in a box is aisan's state
// for it, where a box writes.
func codexProfileArg(args []string) (name string, rest []string, found bool) {
	rest = make([]string, 0, len(args))
	sawWord := false // a subcommand or prompt came before
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "sandbox" && !sawWord {
			// What follows is a command Codex runs, not its options.
			rest = append(rest, args[i:]...)
			break
		}
		sawWord = sawWord || !strings.HasPrefix(a, "-")
		switch {
		case slices.Contains(codexValueOptions, a) && i+1 < len(args):
			// The next word is this option's value, whatever it says.
			rest = append(rest, a, args[i+1])
			i++
			continue
		case a == "-p" || a == "--profile":
			found = true
			if i+1 < len(args) {
				name = args[i+1]
				i++
			}
			continue
		case strings.HasPrefix(a, "--profile="):
			found, name = true, strings.TrimPrefix(a, "--profile=")
			continue
		case strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "--"):
			found, name = true, strings.TrimPrefix(strings.TrimPrefix(a, "-p"), "=")
			continue
		}
		rest = append(rest, a)
	}
	return name, rest, found
}

// codexValueOptions are Codex's options (0.171, top level and exec)
// whose value is the next word, so that "-m -p" names no profile.
var codexValueOptions = []string{"-c", "--config", "--enable", "--disable", "--remote", "--remote-auth-token-env",
	"-i", "--image", "-m", "--model", "--local-provider", "-s", "--sandbox", "-C", "--cd", "--add-dir",
	"-a", "--ask-for-approval", "--thread-source", "--cyber-access-program", "--output-schema", "--color",
	"-o", "--output-last-message"}

// codexProjectDir is the first .codex in the directories from cwd up to
// repo, and in repo, where Codex reads a project's own config, hooks and
// rules ("" for none).
func codexProjectDir(cwd, repo string) string {
	for d := filepath.Clean(cwd); strings.HasPrefix(d, repo+string(filepath.Separator)); d = filepath.Dir(d) {
		if p := filepath.Join(d, ".codex"); hasEntry(p) {
			return p
		}
	}
	if p := filepath.Join(repo, ".codex"); hasEntry(p) {
		return p
	}
	return ""
}

// hasEntry reports whether there is an entry at p, without following it.
func hasEntry(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// pickCodexPolicy picks the settings of Codex's config m that restrict
// what it does without asking, type-checked: the top level's, or the
// selected profile's where it sets one. A value that widens what the
// box's Codex does, or that Codex would not take, stays out with a
// phrase in Left. Nothing else of m is looked at: no provider, no
// credential, no path.
func pickCodexPolicy(m map[string]any, projects []string) codexPolicy {
	var p codexPolicy
	var profile map[string]any
	where := func(k string) string { return k }
	if v, ok := m["profile"]; ok {
		name, isString := v.(string)
		profiles, _ := m["profiles"].(map[string]any)
		profile, _ = profiles[name].(map[string]any)
		switch {
		case !isString:
			p.Left = append(p.Left, "profile: not a string")
		case profile == nil:
			p.Left = append(p.Left, fmt.Sprintf("profile %q: no [profiles.%s] table (Codex stops on it)", name, name))
		default:
			where = func(k string) string {
				if _, ok := profile[k]; ok {
					return fmt.Sprintf("[profiles.%s] %s", name, k)
				}
				return k
			}
		}
	}
	get := func(k string) (any, bool) {
		if v, ok := profile[k]; ok {
			return v, true
		}
		v, ok := m[k]
		return v, ok
	}
	if v, ok := get("approval_policy"); ok {
		if s, ok := codexApproval(v); ok {
			p.Overrides = append(p.Overrides, "approval_policy="+s)
		} else {
			p.Left = append(p.Left, where("approval_policy")+": not an approval policy Codex takes")
		}
	}
	if v, ok := get("sandbox_mode"); ok {
		switch s, _ := v.(string); s {
		case "read-only", "workspace-write":
			p.Overrides = append(p.Overrides, `sandbox_mode="`+s+`"`)
		case "danger-full-access":
			p.Left = append(p.Left, where("sandbox_mode")+` = "danger-full-access" (the box keeps Codex's own sandbox; --skip-permissions turns it off)`)
		default:
			p.Left = append(p.Left, where("sandbox_mode")+": not a sandbox mode Codex takes")
		}
	}
	if v, ok := m["sandbox_workspace_write"]; ok {
		p.workspaceWrite(v)
	}
	if v, ok := m["allow_login_shell"]; ok {
		switch b, isBool := v.(bool); {
		case !isBool:
			p.Left = append(p.Left, "allow_login_shell: not true or false")
		case !b:
			p.Overrides = append(p.Overrides, "allow_login_shell=false")
		}
	}
	for _, k := range []string{"default_permissions", "permissions"} {
		if _, ok := m[k]; ok {
			p.Left = append(p.Left, k+" (Codex's permission profiles are not carried: the box's Codex runs the sandbox_mode above, or workspace-write)")
		}
	}
	switch projectTrust(m, projects) {
	case "untrusted":
		p.Untrusted = true
	case "trusted":
		p.Trusted = true
	}
	return p
}

// workspaceWrite picks the limits of [sandbox_workspace_write] v that
// narrow Codex's workspace-write sandbox; those that widen it stay out.
func (p *codexPolicy) workspaceWrite(v any) {
	t, ok := v.(map[string]any)
	if !ok {
		p.Left = append(p.Left, "sandbox_workspace_write: not a table")
		return
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := "sandbox_workspace_write." + k
		switch k {
		case "network_access", "exclude_tmpdir_env_var", "exclude_slash_tmp":
			b, isBool := t[k].(bool)
			narrows := b == (k != "network_access")
			switch {
			case !isBool:
				p.Left = append(p.Left, key+": not true or false")
			case narrows:
				p.Overrides = append(p.Overrides, fmt.Sprintf("%s=%t", key, b))
			case k == "network_access":
				p.Left = append(p.Left, key+" = true (commands in the box's Codex sandbox get no network)")
			}
		case "writable_roots":
			if roots, _ := t[k].([]any); len(roots) > 0 {
				p.Left = append(p.Left, key+" (the box's mounts decide what is writable)")
			}
		}
	}
}

// codexApproval is v as the TOML value of an approval policy Codex
// takes: one of its names, or its granular table with booleans only.
func codexApproval(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return `"` + s + `"`, slices.Contains(codexApprovals, s)
	}
	t, ok := v.(map[string]any)
	if !ok || len(t) != 1 {
		return "", false
	}
	g, ok := t["granular"].(map[string]any)
	if !ok {
		return "", false
	}
	var fields []string
	for i, k := range codexGranular {
		x, present := g[k]
		b, isBool := x.(bool)
		if !present && i < codexGranularNeeded || present && !isBool {
			return "", false
		}
		if present {
			fields = append(fields, fmt.Sprintf("%s=%t", k, b))
		}
	}
	if len(fields) != len(g) {
		return "", false
	}
	return "{granular={" + strings.Join(fields, ",") + "}}", true
}

// projectTrust is what m's [projects] says of projects: "untrusted"
// when it marks one of them so, "trusted" when it trusts every one, ""
// otherwise. The entry of the project itself, or else of its nearest
// parent that has one, decides, as in Codex.
func projectTrust(m map[string]any, projects []string) string {
	entries, _ := m["projects"].(map[string]any)
	trusted := len(projects) > 0
	for _, p := range projects {
		level := ""
		for d := filepath.Clean(p); ; d = filepath.Dir(d) {
			if e, ok := entries[d].(map[string]any); ok {
				if l, ok := e["trust_level"].(string); ok {
					level = l
					break
				}
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if level == "untrusted" {
			return "untrusted"
		}
		trusted = trusted && level == "trusted"
	}
	if trusted {
		return "trusted"
	}
	return ""
}

// note is the launch's line on what came in from source and what not,
// "" for nothing to say.
func (p codexPolicy) note(source string) string {
	var parts []string
	if len(p.Overrides) > 0 {
		parts = append(parts, "in the box: "+strings.Join(p.Overrides, ", "))
	}
	switch {
	case p.ProjectOff != "":
		parts = append(parts, fmt.Sprintf("the project is not trusted there, so the box's Codex leaves %s off (its config, MCP servers, hooks, rules) as yours does; to take it, trust the project there ([projects.%q] trust_level = \"trusted\")", p.ProjectOff, p.TrustDir))
	case p.Untrusted:
		parts = append(parts, "the project is untrusted there, and in the box")
	}
	if len(p.Left) > 0 {
		parts = append(parts, "not in the box: "+strings.Join(p.Left, "; "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the user's Codex settings from %s: %s", source, strings.Join(parts, "; "))
}

// codexStateKeys are the top-level keys of the box's own config.toml
// that seedState keeps from one launch to the next, with for a table
// the keys of it kept (nil for all): the preferences Codex writes there
// itself (/model, /personality, its notices, how the TUI looks). Every
// other key goes at each launch, because the box writes the file and
// Codex runs what many of them name itself, outside its approval
// policy and rules: notify after each turn, hooks and their trust,
// otel's headers_helper, a provider's auth command, the shell
// environment of every command, js_repl's node, a status line's
// program. Keeping what is known to be inert, rather than dropping
// what is known to run, holds against a key a later Codex adds.
// projects is aisan's own seed, mcp_servers the user's import, both
// written afresh after this.
var codexStateKeys = map[string][]string{
	"model": nil, "model_reasoning_effort": nil, "model_reasoning_summary": nil, "model_verbosity": nil,
	"plan_mode_reasoning_effort": nil, "personality": nil, "service_tier": nil,
	"hide_agent_reasoning": nil, "show_raw_agent_reasoning": nil, "disable_paste_burst": nil,
	"file_opener": nil, "windows_wsl_setup_acknowledged": nil, "notice": nil,
	"tui": {"notifications", "notification_method", "notification_condition", "animations", "show_tooltips", "theme", "alternate_screen"},
}

// keepCodexState removes from m, the box's own config.toml, every key
// that codexStateKeys does not keep, and returns what it removed that
// the box or its Codex wrote (the projects table is aisan's seed, and
// not named).
func keepCodexState(m map[string]any) (dropped []string) {
	// In order, so that what is dropped is named the same way each time.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		sub, keep := codexStateKeys[k]
		switch {
		case !keep:
			delete(m, k)
			if k != "projects" && k != "mcp_servers" {
				dropped = append(dropped, k)
			}
		case sub != nil:
			t, ok := m[k].(map[string]any)
			if !ok {
				delete(m, k)
				dropped = append(dropped, k)
				continue
			}
			for _, tk := range slices.Sorted(maps.Keys(t)) {
				if !slices.Contains(sub, tk) {
					delete(t, tk)
					dropped = append(dropped, k+"."+tk)
				}
			}
		}
	}
	return dropped
}

// clearCodexHooks removes the hooks.json a box left in its Codex home,
// and says whether there was one: Codex runs its commands at each
// event, and takes their trust from the config.toml the box writes too
// (or none, when it bypasses approvals). The user's own hooks are not
// brought into a box (see codexBoxRules).
func clearCodexHooks(dir string) (bool, error) {
	had, err := removeInState(dir, "hooks.json")
	if err != nil {
		return had, fmt.Errorf("clearing the hooks an earlier box left: %w", err)
	}
	return had, nil
}

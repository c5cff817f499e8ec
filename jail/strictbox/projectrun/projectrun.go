// Package projectrun reads the project files that host tools obey
// without asking again for the files in the repository they name to run:
// Claude Code's project settings (hooks, the status line and the
// helpers it runs), Codex's project hooks, VS Code's tasks run on folder
// open, and a dev container's initializeCommand, which runs on the host.
// Their tool approves the file (or the workspace, or nothing), never
// what the script it names holds, so a strict box that may rewrite such
// a script acts on the host the next time the tool runs it.
//
// Commands are read as the shell would (mvdan.cc/sh): a cd moves the
// paths after it, sh -c and eval are read in turn, and npm, make and
// just are followed into the package.json, makefile or justfile they
// read (which is named too), through the scripts or recipes there. A
// wrapper (env, timeout, sudo, xargs) runs the words after its options
// and their values, env -S the words its string splits into, find the
// command of each -exec, and a shell with no script reads the file given
// as its input (sh < FILE, cat FILE | sh); a variable
// set for a command whose program loads the file or directories it
// names (BASH_ENV, NODE_OPTIONS, PYTHONPATH) names those too. Only
// what is written literally can be known: a word holding an expansion
// other than the few each tool defines, inline code given to an
// interpreter, or a cd to where cannot be told is not followed, and is
// held by a rule that errs wide instead (the directory it runs in, the
// path its literal end names, the words of the code that may name a
// file), with a note saying where and why. The paths returned are
// absolute and clean, each once; whether each exists, and what it is,
// is left to the caller.
package projectrun

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// paths collects absolute clean paths, each once.
type paths struct {
	out  []string
	seen map[string]bool
}

func (ps *paths) add(p, dir string) {
	if p == "" || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "~") || dir == "" && !filepath.IsAbs(p) {
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if ps.seen == nil {
		ps.seen = map[string]bool{}
	}
	if !ps.seen[p] {
		ps.seen[p] = true
		ps.out = append(ps.out, p)
	}
}

// claudeCommands are the keys of Claude Code's settings whose value is a
// shell command it runs itself, besides hooks: the credential and header
// helpers', and the launcher it starts its background processes with
// (processWrapper, an argv prefix). claudeCommandObjects are those whose
// value is {"type": "command", "command": ...}, as a hook's: the status
// lines and the @-mention file suggester. (Claude Code 2.1 lists these
// as its settings that run commands; its policyHelper is honoured from
// an administrator's policy only.)
var (
	claudeCommands       = []string{"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh", "otelHeadersHelper", "proxyAuthHelper", "processWrapper"}
	claudeCommandObjects = []string{"statusLine", "subagentStatusLine", "fileSuggestion"}
)

// ClaudeSettings returns what a Claude Code project settings file (path
// is .claude/settings.json or .claude/settings.local.json, data its
// text) runs: each hook of type "command", the status line's command and
// the helpers' commands, read as shell commands; read gives the files
// they make npm, make or just read. Claude runs them in the project's
// directory (the parent of .claude) with CLAUDE_PROJECT_DIR set to it.
// A file that does not parse names nothing (Claude could run nothing
// from it either).
func ClaudeSettings(path string, data []byte, pr Project) Names {
	var doc struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if !jsonc(data, &doc) {
		return Names{}
	}
	var other map[string]json.RawMessage
	jsonc(data, &other)
	root := filepath.Dir(filepath.Dir(path))
	w := newWalker(root, path, map[string]string{"CLAUDE_PROJECT_DIR": root}, pr)
	w.hooks(doc.Hooks)
	for _, k := range claudeCommandObjects {
		if len(other[k]) > 0 {
			w.hook(other[k])
		}
	}
	for _, k := range claudeCommands {
		var s string
		if json.Unmarshal(other[k], &s) == nil && s != "" {
			w.run(s)
		}
	}
	return w.names()
}

// run reads a shell command line the tool runs in the project's
// directory.
func (w *walker) run(cmd string) {
	w.cmd = cmd
	w.shell(cmd, []string{w.root}, 0)
}

// hook adds what a hook of type "command" (or a status line) runs.
func (w *walker) hook(raw json.RawMessage) {
	var h struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &h) == nil && (h.Type == "command" || h.Type == "") && h.Command != "" {
		w.run(h.Command)
	}
}

// hooks adds what the hooks of a Claude or Codex hooks table run: event
// -> [{matcher, hooks: [{type, command}]}].
func (w *walker) hooks(events map[string][]json.RawMessage) {
	for _, ev := range slices.Sorted(maps.Keys(events)) {
		for _, m := range events[ev] {
			var group struct {
				Hooks []json.RawMessage `json:"hooks"`
			}
			if json.Unmarshal(m, &group) != nil {
				continue
			}
			for _, h := range group.Hooks {
				w.hook(h)
			}
		}
	}
}

// CodexHooks returns what the hooks of a trusted project's Codex
// configuration run: path is .codex/hooks.json or .codex/config.toml
// (its [hooks] tables), data its text. Codex runs them in the project's
// directory (the parent of .codex). A file that does not parse names
// nothing.
func CodexHooks(path string, data []byte, pr Project) Names {
	var doc struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	// notify is the program (an argv) Codex runs as each turn ends.
	var notify []string
	switch filepath.Base(path) {
	case "hooks.json":
		if !jsonc(data, &doc) {
			return Names{}
		}
	case "config.toml":
		var t map[string]any
		if toml.Unmarshal(data, &t) != nil {
			return Names{}
		}
		b, err := json.Marshal(map[string]any{"hooks": t["hooks"]})
		if err != nil || json.Unmarshal(b, &doc) != nil {
			return Names{}
		}
		if n, ok := t["notify"].([]any); ok {
			for _, a := range n {
				if s, ok := a.(string); ok {
					notify = append(notify, s)
				}
			}
		}
	default:
		return Names{}
	}
	root := filepath.Dir(filepath.Dir(path))
	w := newWalker(root, path, nil, pr)
	w.hooks(doc.Hooks)
	if len(notify) > 0 {
		w.cmd = strings.Join(notify, " ")
		w.exec(argvWords(notify), []string{root}, 0)
	}
	return w.names()
}

// argvWords are the words of a program's argv as a tool's file gives
// it: a word holding a ${...} the tool expands cannot be told, and the
// path its literal end names is held.
func argvWords(argv []string) []word {
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = lit(a)
		if j := strings.LastIndex(a, "${"); j >= 0 {
			_, t, _ := strings.Cut(a[j:], "}")
			ws[i] = word{tail: t}
		}
	}
	return ws
}

// ShellPaths returns the files a shell command run in dir names, read
// as [ClaudeSettings] reads a hook's (with vars the variables it knows,
// and no file to read for npm, make or just).
func ShellPaths(cmd, dir string, vars map[string]string) []string {
	w := newWalker(dir, "", vars, Project{})
	w.run(cmd)
	return w.files.out
}

// Program returns what a program a tool starts itself (not through a
// shell) runs: argv is its command and arguments as the tool's file
// gives them, dir the directory it starts in, root the project's
// directory, where the file the tool reads (for notes). A word holding
// a ${...} the tool expands cannot be told; the path its literal end
// names is held.
func Program(where string, argv []string, dir, root string, pr Project) Names {
	w := newWalker(root, where, nil, pr)
	w.cmd = strings.Join(argv, " ")
	w.exec(argvWords(argv), []string{dir}, 0)
	return w.names()
}

// vscodeVars are the variables of VS Code's tasks.json and a dev
// container's devcontainer.json that name the workspace's folder.
var vscodeVars = []string{"workspaceFolder", "workspaceRoot", "localWorkspaceFolder"}

// expand replaces ${name} for the names of vscodeVars in s with root;
// it reports false for a value holding any other ${...}.
func expand(s, root string) (string, bool) {
	for _, v := range vscodeVars {
		s = strings.ReplaceAll(s, "${"+v+"}", root)
	}
	return s, !strings.Contains(s, "${")
}

// jsonc parses text with comments and trailing commas (VS Code's and dev
// containers' files) into v.
func jsonc(data []byte, v any) bool {
	std, err := hujson.Standardize(data)
	return err == nil && json.Unmarshal(std, v) == nil
}

// command adds what a command runs in dir: a string with shell set is
// a shell command line, else a program; a list is a program and its
// arguments, exec'd. args are words after it either way (a VS Code
// task's, each quoted by it for the shell). ${...} other than the
// folder's is the tool's own, and cannot be told.
func (w *walker) command(cmd any, args []any, shell bool, dir string) {
	var words []string
	switch c := cmd.(type) {
	case string:
		words = append(words, c)
	case []any:
		shell = false
		for _, x := range c {
			if s, ok := x.(string); ok {
				words = append(words, s)
			}
		}
	default:
		return
	}
	for _, a := range args {
		if s, ok := a.(string); ok {
			words = append(words, s)
		}
	}
	w.cmd = strings.Join(words, " ")
	if shell {
		line := make([]string, len(words))
		for i, x := range words {
			e, ok := expand(x, w.root)
			if !ok {
				e = toolVars(e)
			} else if i > 0 {
				e = shellQuote(e)
			}
			line[i] = e
		}
		w.shell(strings.Join(line, " "), []string{dir}, 0)
		return
	}
	ws := make([]word, len(words))
	for i, x := range words {
		e, ok := expand(x, w.root)
		ws[i] = word{s: e, ok: ok}
		if !ok {
			_, t, _ := strings.Cut(e[strings.LastIndex(e, "${"):], "}")
			ws[i] = word{tail: t}
		}
	}
	w.exec(ws, []string{dir}, 0)
}

// toolVars replaces each ${...} of s (a variable of the tool's own) with
// a shell variable no one sets, so the word is read as unknown.
func toolVars(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i] + "${AISAN_TOOL_VARIABLE}")
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// shellQuote quotes a task's argument as VS Code does for the shell.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$`\\|&;<>()*?[]{}~#!\n") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// vscodeTask is a task of tasks.json, or of a workspace file's tasks.
type vscodeTask struct {
	Label      string         `json:"label"`
	Type       string         `json:"type"`
	Command    any            `json:"command"`
	Args       []any          `json:"args"`
	Options    map[string]any `json:"options"`
	Script     string         `json:"script"`
	Path       string         `json:"path"`
	DependsOn  any            `json:"dependsOn"`
	RunOptions struct {
		RunOn string `json:"runOn"`
	} `json:"runOptions"`
	Linux *vscodeTask `json:"linux"`
}

// vscodeTasks is a tasks.json's text.
type vscodeTasks struct {
	vscodeTask
	Tasks []vscodeTask `json:"tasks"`
}

// VSCodeTasks returns what the tasks of a .vscode/tasks.json (path, its
// text data) run on folder open (runOptions.runOn "folderOpen"), and
// the tasks they depend on: VS Code runs those when the folder opens,
// without asking again once automatic tasks are allowed for it. A shell
// task's command line is read as sh would; a process task's command is
// a program; an npm task runs its script of the package.json in its
// path (read gives it). ${workspaceFolder} is the folder (the parent of
// .vscode), also the directory tasks run in unless their options.cwd
// says otherwise.
func VSCodeTasks(path string, data []byte, pr Project) Names {
	var doc vscodeTasks
	if !jsonc(data, &doc) {
		return Names{}
	}
	w := newWalker(filepath.Dir(filepath.Dir(path)), path, nil, pr)
	w.tasks(doc)
	return w.names()
}

// VSCodeWorkspace returns what the tasks of a VS Code workspace file
// (*.code-workspace; its "tasks" are a tasks.json's) run on folder open,
// as [VSCodeTasks] reads them. Its folder is the first of its folders
// (relative to the file), else the file's directory.
func VSCodeWorkspace(path string, data []byte, pr Project) Names {
	var doc struct {
		Folders []struct {
			Path string `json:"path"`
		} `json:"folders"`
		Tasks vscodeTasks `json:"tasks"`
	}
	if !jsonc(data, &doc) {
		return Names{}
	}
	root := filepath.Dir(path)
	if len(doc.Folders) > 0 && doc.Folders[0].Path != "" && !strings.HasPrefix(doc.Folders[0].Path, "~") {
		p := doc.Folders[0].Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		root = filepath.Clean(p)
	}
	w := newWalker(root, path, nil, pr)
	w.tasks(doc.Tasks)
	return w.names()
}

// tasks reads the tasks run on folder open and those they depend on.
func (w *walker) tasks(doc vscodeTasks) {
	byLabel := map[string]vscodeTask{}
	for _, t := range doc.Tasks {
		if t.Label != "" {
			if _, dup := byLabel[t.Label]; !dup {
				byLabel[t.Label] = t
			}
		}
	}
	done := map[string]bool{}
	var run func(t vscodeTask, depth int)
	run = func(t vscodeTask, depth int) {
		if t.Label != "" {
			if done[t.Label] {
				return
			}
			done[t.Label] = true
		}
		w.task(doc.vscodeTask, t)
		deps := t.DependsOn
		if t.Linux != nil && t.Linux.DependsOn != nil {
			deps = t.Linux.DependsOn
		}
		for _, d := range dependsOn(deps) {
			dt, ok := byLabel[d]
			switch {
			case ok && depth < 32:
				run(dt, depth+1)
			case !ok:
				w.cmd = "dependsOn " + d
				w.unsure([]string{w.root}, "a task it depends on is not in this file: one of the workspace's other files, or an extension's, may define it")
			}
		}
	}
	for _, t := range doc.Tasks {
		if t.RunOptions.RunOn == "folderOpen" {
			run(t, 0)
		}
	}
}

// dependsOn are the labels a task's dependsOn names: a string, a list,
// or objects with a task's label.
func dependsOn(v any) []string {
	var out []string
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case map[string]any:
		if s, ok := v["task"].(string); ok {
			out = append(out, s)
		} else if s, ok := v["label"].(string); ok {
			out = append(out, s)
		}
	case []any:
		for _, x := range v {
			out = append(out, dependsOn(x)...)
		}
	}
	return out
}

// task reads one task; top is the file's top level, which a task's
// fields override, as its Linux section overrides them.
func (w *walker) task(top, t vscodeTask) {
	cmd, args, typ, opts := t.Command, t.Args, t.Type, t.Options
	script, path := t.Script, t.Path
	if l := t.Linux; l != nil {
		if l.Command != nil {
			cmd = l.Command
		}
		if l.Args != nil {
			args = l.Args
		}
		if l.Type != "" {
			typ = l.Type
		}
		if l.Options != nil {
			opts = l.Options
		}
	}
	if cmd == nil && typ != "npm" {
		cmd = top.Command
		if args == nil {
			args = top.Args
		}
	}
	if typ == "" {
		typ = top.Type
	}
	if opts == nil {
		opts = top.Options
	}
	dir := w.root
	if c, ok := opts["cwd"].(string); ok {
		e, ok := expand(c, w.root)
		if !ok {
			w.cmd = fmt.Sprint(cmd)
			w.unsure([]string{w.root}, "it runs in a directory (options.cwd "+c+") its tool sets; its paths are read from the folder")
		} else {
			if !filepath.IsAbs(e) {
				e = filepath.Join(w.root, e)
			}
			dir = filepath.Clean(e)
		}
	}
	switch typ {
	case "npm":
		if script == "" {
			return
		}
		d := w.root
		if path != "" {
			d = filepath.Join(w.root, path)
		}
		w.cmd = "npm run " + script
		w.npm("npm", []word{lit("run"), lit(script)}, []string{d}, 0)
	case "shell", "process", "":
		if cmd != nil {
			w.command(cmd, args, typ != "process", dir)
		}
	default:
		w.cmd = "a task of type " + typ
		w.unsure([]string{dir}, "an extension runs tasks of its type")
	}
}

// Devcontainer returns what a dev container configuration's
// initializeCommand runs (path is .devcontainer.json, or a
// devcontainer.json in .devcontainer/ or a folder of it; data its text):
// the dev containers tooling runs it on the host, in the workspace
// folder, each time the container is built or started. A string is a
// shell command line, a list a program and its arguments, an object
// several of either. ${localWorkspaceFolder} is the workspace folder.
func Devcontainer(path string, data []byte, pr Project) Names {
	var doc struct {
		InitializeCommand any `json:"initializeCommand"`
	}
	if !jsonc(data, &doc) {
		return Names{}
	}
	root := filepath.Dir(path)
	if filepath.Base(root) != ".devcontainer" && filepath.Base(path) != ".devcontainer.json" {
		root = filepath.Dir(root) // .devcontainer/NAME/devcontainer.json
	}
	if filepath.Base(root) == ".devcontainer" {
		root = filepath.Dir(root)
	}
	w := newWalker(root, path, nil, pr)
	cmds := []any{doc.InitializeCommand}
	if m, ok := doc.InitializeCommand.(map[string]any); ok {
		cmds = nil
		for _, k := range slices.Sorted(maps.Keys(m)) {
			cmds = append(cmds, m[k])
		}
	}
	for _, c := range cmds {
		_, line := c.(string)
		w.command(c, nil, line, root)
	}
	return w.names()
}

// Package projectrun reads the project files that host tools obey
// without asking again for the files in the repository they name to run:
// Claude Code's project settings (hooks, the status line and the
// helpers it runs), Codex's project hooks, VS Code's tasks run on folder
// open, and a dev container's initializeCommand, which runs on the host.
// Their tool approves the file (or the workspace, or nothing), never
// what the script it names holds, so a strict box that may rewrite such
// a script acts on the host the next time the tool runs it.
//
// Only what is written literally can be known: a word holding an
// expansion other than the few each tool defines is skipped. The paths
// returned are absolute and clean, each once; whether each exists, and
// what it is, is left to the caller.
package projectrun

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"mvdan.cc/sh/v3/syntax"
)

// paths collects absolute clean paths, each once.
type paths struct {
	out  []string
	seen map[string]bool
}

func (ps *paths) add(p, dir string) {
	if p == "" || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "~") {
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
// shell command it runs itself, besides hooks: the status line's and the
// credential helpers'.
var claudeCommands = []string{"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"}

// ClaudeSettings returns the paths that a Claude Code project settings
// file (path is .claude/settings.json or .claude/settings.local.json,
// data its text) names in the shell commands it runs: each hook of type
// "command", the status line's command and the helpers' commands. Claude
// runs them in the project's directory (the parent of .claude) with
// CLAUDE_PROJECT_DIR set to it. A file that does not parse names
// nothing (Claude could run nothing from it either).
func ClaudeSettings(path string, data []byte) []string {
	var doc struct {
		Hooks      map[string][]json.RawMessage `json:"hooks"`
		StatusLine json.RawMessage              `json:"statusLine"`
	}
	if !jsonc(data, &doc) {
		return nil
	}
	var other map[string]json.RawMessage
	jsonc(data, &other)
	root := filepath.Dir(filepath.Dir(path))
	vars := map[string]string{"CLAUDE_PROJECT_DIR": root}
	var ps paths
	ps.hooks(doc.Hooks, root, vars)
	if len(doc.StatusLine) > 0 {
		ps.hook(doc.StatusLine, root, vars)
	}
	for _, k := range claudeCommands {
		var s string
		if json.Unmarshal(other[k], &s) == nil && s != "" {
			for _, p := range ShellPaths(s, root, vars) {
				ps.add(p, root)
			}
		}
	}
	return ps.out
}

// hook adds what a hook of type "command" (or a status line) runs.
func (ps *paths) hook(raw json.RawMessage, root string, vars map[string]string) {
	var h struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &h) == nil && (h.Type == "command" || h.Type == "") && h.Command != "" {
		for _, p := range ShellPaths(h.Command, root, vars) {
			ps.add(p, root)
		}
	}
}

// hooks adds what the hooks of a Claude or Codex hooks table run: event
// -> [{matcher, hooks: [{type, command}]}].
func (ps *paths) hooks(events map[string][]json.RawMessage, root string, vars map[string]string) {
	for _, ev := range slices.Sorted(maps.Keys(events)) {
		for _, m := range events[ev] {
			var group struct {
				Hooks []json.RawMessage `json:"hooks"`
			}
			if json.Unmarshal(m, &group) != nil {
				continue
			}
			for _, h := range group.Hooks {
				ps.hook(h, root, vars)
			}
		}
	}
}

// CodexHooks returns the paths that the hooks of a trusted project's
// Codex configuration name in their commands: path is
// .codex/hooks.json or .codex/config.toml (its [hooks] tables), data its
// text. Codex runs them in the project's directory (the parent of
// .codex). A file that does not parse names nothing.
func CodexHooks(path string, data []byte) []string {
	var doc struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	switch filepath.Base(path) {
	case "hooks.json":
		if !jsonc(data, &doc) {
			return nil
		}
	case "config.toml":
		var t map[string]any
		if toml.Unmarshal(data, &t) != nil {
			return nil
		}
		b, err := json.Marshal(map[string]any{"hooks": t["hooks"]})
		if err != nil || json.Unmarshal(b, &doc) != nil {
			return nil
		}
	default:
		return nil
	}
	root := filepath.Dir(filepath.Dir(path))
	var ps paths
	ps.hooks(doc.Hooks, root, nil)
	return ps.out
}

// shells are the shells whose -c argument is a script of its own.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh"}

// ShellPaths returns the paths a shell command names literally, run in
// dir: a command given as a path (one with a slash), every other word
// of a call that is not an option (and the value of --name=value), and
// what is read with <. A word is literal when it holds no expansion but
// the variables of vars, taken as their value. The script of sh -c is
// read the same way. A command the shell could not parse names nothing
// (the shell could run nothing from it either).
func ShellPaths(cmd, dir string, vars map[string]string) []string {
	var ps paths
	shellPaths(&ps, cmd, dir, vars, 0)
	return ps.out
}

func shellPaths(ps *paths, cmd, dir string, vars map[string]string, depth int) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Op == syntax.RdrIn && n.Word != nil {
				ps.add(literal(n.Word, vars), dir)
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			args := make([]string, len(n.Args))
			for i, w := range n.Args {
				args[i] = literal(w, vars)
			}
			if strings.Contains(args[0], "/") {
				ps.add(args[0], dir)
			}
			shell := slices.Contains(shells, filepath.Base(args[0]))
			for i := 1; i < len(args); i++ {
				a := args[i]
				if v, ok := strings.CutPrefix(a, "--"); ok {
					if _, val, ok := strings.Cut(v, "="); ok {
						ps.add(val, dir)
					}
					continue
				}
				if shell && strings.HasPrefix(a, "-") && strings.Contains(a, "c") && i+1 < len(args) {
					// sh -c SCRIPT: the script's own words.
					if depth < 2 {
						shellPaths(ps, args[i+1], dir, vars, depth+1)
					}
					i++
					continue
				}
				ps.add(a, dir)
			}
		}
		return true
	})
}

// literal is w's value when it holds no expansion but the variables of
// vars, plain or braced, else "".
func literal(w *syntax.Word, vars map[string]string) string {
	var b bytes.Buffer
	var part func(p syntax.WordPart) bool
	part = func(p syntax.WordPart) bool {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if !part(q) {
					return false
				}
			}
		case *syntax.ParamExp:
			if p.Param == nil || p.Exp != nil || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Length || p.Excl || p.Width || p.Names != 0 {
				return false
			}
			v, ok := vars[p.Param.Value]
			if !ok {
				return false
			}
			b.WriteString(v)
		default:
			return false
		}
		return true
	}
	for _, p := range w.Parts {
		if !part(p) {
			return ""
		}
	}
	return b.String()
}

// vscodeVars are the variables of VS Code's tasks.json and a dev
// container's devcontainer.json that name the workspace's folder.
var vscodeVars = []string{"workspaceFolder", "workspaceRoot", "localWorkspaceFolder"}

// expand replaces ${name} for the names of vscodeVars in s with root; a
// value holding any other ${...} names nothing that can be known: "".
func expand(s, root string) string {
	for _, v := range vscodeVars {
		s = strings.ReplaceAll(s, "${"+v+"}", root)
	}
	if strings.Contains(s, "${") {
		return ""
	}
	return s
}

// jsonc parses text with comments and trailing commas (VS Code's and dev
// containers' files) into v.
func jsonc(data []byte, v any) bool {
	std, err := hujson.Standardize(data)
	return err == nil && json.Unmarshal(std, v) == nil
}

// command adds what a command names, run in dir: a string with shell
// set is a shell command line, else a program; a list is a program and
// its arguments, exec'd. args are words after it either way (a VS Code
// task's, each quoted by it for the shell).
func (ps *paths) command(cmd any, args []any, shell bool, root, dir string) {
	var words []string
	switch c := cmd.(type) {
	case string:
		if shell {
			if line := expand(c, root); line != "" {
				for _, p := range ShellPaths(line, dir, nil) {
					ps.add(p, dir)
				}
			}
			words = append(words, "")
		} else {
			words = append(words, c)
		}
	case []any:
		for _, w := range c {
			if s, ok := w.(string); ok {
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
	for i, w := range words {
		w = expand(w, root)
		if i == 0 && !strings.Contains(w, "/") {
			continue
		}
		if v, ok := strings.CutPrefix(w, "--"); ok {
			if _, val, ok := strings.Cut(v, "="); ok {
				ps.add(val, dir)
			}
			continue
		}
		ps.add(w, dir)
	}
}

// VSCodeTasks returns the paths that the tasks of a .vscode/tasks.json
// (path, its text data) run on folder open (runOptions.runOn
// "folderOpen") name: VS Code runs those when the folder opens, without
// asking again once automatic tasks are allowed for it. A shell task's
// command line is read as sh would; a process task's command is a
// program. ${workspaceFolder} is the folder (the parent of .vscode), also
// the directory tasks run in unless their options.cwd says otherwise.
func VSCodeTasks(path string, data []byte) []string {
	type task struct {
		Type       string         `json:"type"`
		Command    any            `json:"command"`
		Args       []any          `json:"args"`
		Options    map[string]any `json:"options"`
		RunOptions struct {
			RunOn string `json:"runOn"`
		} `json:"runOptions"`
		Linux *task `json:"linux"`
	}
	var doc struct {
		task
		Tasks []task `json:"tasks"`
	}
	if !jsonc(data, &doc) {
		return nil
	}
	root := filepath.Dir(filepath.Dir(path))
	var ps paths
	for _, t := range doc.Tasks {
		if t.RunOptions.RunOn != "folderOpen" {
			continue
		}
		// A task's Linux section, then the task, then the file's
		// top level give its command, as VS Code merges them.
		cmd, args, typ, opts := t.Command, t.Args, t.Type, t.Options
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
		if cmd == nil {
			cmd = doc.Command
			if args == nil {
				args = doc.Args
			}
		}
		if typ == "" {
			typ = doc.Type
		}
		if opts == nil {
			opts = doc.Options
		}
		dir := root
		if c, ok := opts["cwd"].(string); ok {
			if c = expand(c, root); c == "" {
				continue
			}
			if !filepath.IsAbs(c) {
				c = filepath.Join(root, c)
			}
			dir = c
		}
		ps.command(cmd, args, typ != "process", root, dir)
	}
	return ps.out
}

// Devcontainer returns the paths that a dev container configuration's
// initializeCommand names (path is .devcontainer.json, or a
// devcontainer.json in .devcontainer/ or a folder of it; data its text):
// the dev containers tooling runs it on the host, in the workspace
// folder, each time the container is built or started. A string is a
// shell command line, a list a program and its arguments, an object
// several of either. ${localWorkspaceFolder} is the workspace folder.
func Devcontainer(path string, data []byte) []string {
	var doc struct {
		InitializeCommand any `json:"initializeCommand"`
	}
	if !jsonc(data, &doc) {
		return nil
	}
	root := filepath.Dir(path)
	if filepath.Base(root) != ".devcontainer" && filepath.Base(path) != ".devcontainer.json" {
		root = filepath.Dir(root) // .devcontainer/NAME/devcontainer.json
	}
	if filepath.Base(root) == ".devcontainer" {
		root = filepath.Dir(root)
	}
	var ps paths
	cmds := []any{doc.InitializeCommand}
	if m, ok := doc.InitializeCommand.(map[string]any); ok {
		cmds = nil
		for _, k := range slices.Sorted(maps.Keys(m)) {
			cmds = append(cmds, m[k])
		}
	}
	for _, c := range cmds {
		_, line := c.(string)
		ps.command(c, nil, line, root, root)
	}
	return ps.out
}

// Package projectrun reads the project files that host tools obey
// without asking again for the files in the repository they name to run:
// Claude Code's project settings (hooks, the status line and the
// helpers it runs), VS Code's tasks run on folder open, and a dev
// container's initializeCommand, which runs on the host. Their tool
// approves the file (or the workspace, or nothing), never what the
// script it names holds, so a strict box that may rewrite such a script
// acts on the host the next time the tool runs it.
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
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var other map[string]json.RawMessage
	json.Unmarshal(data, &other)
	root := filepath.Dir(filepath.Dir(path))
	vars := map[string]string{"CLAUDE_PROJECT_DIR": root}
	var ps paths
	command := func(raw json.RawMessage) {
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
	for _, ev := range slices.Sorted(maps.Keys(doc.Hooks)) {
		for _, m := range doc.Hooks[ev] {
			var group struct {
				Hooks []json.RawMessage `json:"hooks"`
			}
			if json.Unmarshal(m, &group) != nil {
				continue
			}
			for _, h := range group.Hooks {
				command(h)
			}
		}
	}
	if len(doc.StatusLine) > 0 {
		command(doc.StatusLine)
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

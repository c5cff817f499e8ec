// Package direnv reads what a project's .envrc makes direnv load besides
// itself. direnv asks the user to allow an .envrc, and asks again only
// when that file changes: the files it sources, the dotenv files it
// reads and the directories it puts on PATH are trusted with it. A box
// that may write them acts on the host at the user's next cd, so the
// strict box holds them for review as it holds the .envrc.
//
// The .envrc is read as the bash script it is (mvdan.cc/sh) and each
// call of direnv's standard library, or of bash's source, with literal
// arguments is looked at; what a variable or a command substitution
// names cannot be known before direnv runs and is not followed.
package direnv

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Load is one path an .envrc makes direnv read or run.
type Load struct {
	Path string
	// Dir is set for a directory (on PATH, a layout's, a prefix).
	Dir bool
	// Why says how the .envrc uses it.
	Why string
}

// Loads returns the paths the .envrc at path, whose text is script, makes
// direnv load, absolute and clean, each once, in the order they appear.
// A script bash could not parse is an error: direnv could not run it
// either, and nothing it names can be known.
func Loads(path string, script []byte) ([]Load, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(script), path)
	if err != nil {
		return nil, fmt.Errorf("reading what %s makes direnv load: %w", path, err)
	}
	dir := filepath.Dir(path)
	var out []Load
	seen := map[string]bool{}
	add := func(p string, isDir bool, why string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, Load{Path: p, Dir: isDir, Why: why})
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if a, ok := n.(*syntax.Assign); ok && a.Name != nil && a.Name.Value == "PATH" && a.Value != nil {
			// PATH=$PWD/bin:$PATH, exported or not: PATH_add by hand.
			for _, e := range pathEntries(a.Value, dir) {
				add(e, true, "put on PATH by the .envrc (PATH=)")
			}
			return true
		}
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		args := make([]string, len(call.Args))
		for i, w := range call.Args {
			args[i] = literal(w, dir)
		}
		for _, l := range loadsOf(args) {
			add(l.Path, l.Dir, l.Why)
		}
		return true
	})
	return out, nil
}

// loadsOf is what one command (its words, "" for one that is not
// literal) loads, with paths relative to the .envrc's directory.
func loadsOf(args []string) []Load {
	name, rest := args[0], args[1:]
	first := func(def string) string {
		if len(rest) > 0 {
			return rest[0]
		}
		return def
	}
	var out []Load
	switch name {
	case "source", ".":
		out = append(out, Load{Path: first(""), Why: "sourced by the .envrc"})
	case "source_env", "source_env_if_exists":
		out = append(out, Load{Path: first(""), Why: "sourced by the .envrc (" + name + ")"})
	case "dotenv", "dotenv_if_exists":
		out = append(out, Load{Path: first(".env"), Why: "read into the environment by the .envrc (" + name + ")"})
	case "PATH_add", "load_prefix":
		for _, a := range rest {
			out = append(out, Load{Path: a, Dir: true, Why: "put on PATH by the .envrc (" + name + ")"})
		}
	case "path_add":
		// path_add VAR DIR...: PATH, or a search path for code
		// (PYTHONPATH, NODE_PATH, LD_LIBRARY_PATH).
		if len(rest) > 1 {
			for _, a := range rest[1:] {
				out = append(out, Load{Path: a, Dir: true, Why: "put on " + rest[0] + " by the .envrc"})
			}
		}
	case "layout":
		out = append(out, Load{Path: ".direnv", Dir: true, Why: "the layout's directory, put on PATH by the .envrc (layout)"})
	case "use", "use_flake", "use_nix":
		what := name
		if name == "use" {
			what = "use_" + first("")
		}
		switch what {
		case "use_flake":
			out = append(out, Load{Path: "flake.nix", Why: "the flake the .envrc builds its shell from"}, Load{Path: "flake.lock", Why: "the same, its lock"})
		case "use_nix":
			out = append(out, Load{Path: "shell.nix", Why: "the nix shell the .envrc enters"}, Load{Path: "default.nix", Why: "the same"})
		}
	}
	return out
}

// literal is w's value when it has no expansion (plain, or quoted
// plainly) but $PWD, ${PWD} or $(pwd), which direnv's bash has as dir
// (it runs the .envrc in its own directory), else "".
func literal(w *syntax.Word, dir string) string {
	var b bytes.Buffer
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return ""
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(q.Value)
				default:
					if !isPWD(q) {
						return ""
					}
					b.WriteString(dir)
				}
			}
		default:
			if !isPWD(p) {
				return ""
			}
			b.WriteString(dir)
		}
	}
	return b.String()
}

// isPWD reports whether p is $PWD, ${PWD} or $(pwd).
func isPWD(p syntax.WordPart) bool {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return p.Param != nil && p.Param.Value == "PWD" && p.Exp == nil && p.Index == nil &&
			p.Slice == nil && p.Repl == nil && !p.Length && !p.Excl && !p.Width && p.Names == 0
	case *syntax.CmdSubst:
		if len(p.Stmts) != 1 {
			return false
		}
		c, ok := p.Stmts[0].Cmd.(*syntax.CallExpr)
		return ok && len(c.Assigns) == 0 && len(c.Args) == 1 && literal(c.Args[0], "") == "pwd"
	}
	return false
}

// pathEntries are the entries of a PATH value w that are literal but for
// $PWD, ${PWD} or $(pwd); an entry with another expansion ($PATH, $HOME)
// is left out.
func pathEntries(w *syntax.Word, dir string) []string {
	var out []string
	var cur bytes.Buffer
	known := true
	end := func() {
		if known && cur.Len() > 0 {
			out = append(out, cur.String())
		}
		cur.Reset()
		known = true
	}
	lit := func(v string) {
		for i, seg := range strings.Split(v, ":") {
			if i > 0 {
				end()
			}
			cur.WriteString(seg)
		}
	}
	other := func(p syntax.WordPart) {
		if isPWD(p) {
			cur.WriteString(dir)
		} else {
			known = false
		}
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			lit(p.Value)
		case *syntax.SglQuoted:
			lit(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					lit(l.Value)
				} else {
					other(q)
				}
			}
		default:
			other(p)
		}
	}
	end()
	return out
}

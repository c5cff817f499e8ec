// Package direnv reads what a project's .envrc makes direnv load besides
// itself. direnv asks the user to allow an .envrc, and asks again only
// when that file changes: the files it sources, the dotenv files it
// reads, the directories it puts on PATH or another search path for
// code, and the files its variables make programs load at start are
// trusted with it. A box that may write them acts on the host at the
// user's next cd, so the strict box holds them for review as it holds
// the .envrc.
//
// The .envrc is read as the bash script it is (mvdan.cc/sh) and each
// call of direnv's standard library, or of bash's source, with literal
// arguments is looked at, and so is each literal assignment of those
// variables; what a variable or a command substitution names cannot be
// known before direnv runs and is not followed.
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
	st := state{dir: dir, layoutDir: ".direnv"}
	syntax.Walk(f, func(n syntax.Node) bool {
		if a, ok := n.(*syntax.Assign); ok && a.Name != nil && a.Value != nil {
			name := a.Name.Value
			switch {
			case searchPaths[name]:
				// PATH=$PWD/bin:$PATH, exported or not: PATH_add by hand;
				// PYTHONPATH=src: path_add PYTHONPATH by hand.
				for _, e := range pathEntries(a.Value, dir) {
					add(e, true, "put on "+name+" by the .envrc ("+name+"=)")
				}
			case loadVars[name]:
				for _, l := range optionLoads(name, literal(a.Value, dir)) {
					add(l.Path, l.Dir, "loaded through "+name+" set by the .envrc")
				}
			}
			switch name {
			case "direnv_layout_dir":
				if v := literal(a.Value, dir); v != "" {
					st.layoutDir = v
				}
			case "VIRTUAL_ENV":
				// layout python keeps a VIRTUAL_ENV set before it and
				// puts its bin on PATH.
				if v := literal(a.Value, dir); v != "" {
					st.venv = v
				}
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
		for _, l := range st.loadsOf(args) {
			add(l.Path, l.Dir, l.Why)
		}
		return true
	})
	return out, nil
}

// searchPaths are the variables holding a colon-separated list of
// directories that a program searches for code to run: a directory there
// is what PATH_add or path_add would name.
var searchPaths = map[string]bool{
	"PATH": true, "PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "PERLLIB": true,
	"RUBYLIB": true, "GEM_PATH": true, "LD_LIBRARY_PATH": true,
}

// loadVars are the variables naming files a program loads at start:
// bash's BASH_ENV, sh's ENV, Python's PYTHONSTARTUP, the loader's
// LD_PRELOAD, and node's NODE_OPTIONS (--require and --import).
var loadVars = map[string]bool{"BASH_ENV": true, "ENV": true, "PYTHONSTARTUP": true, "LD_PRELOAD": true, "NODE_OPTIONS": true}

// optionLoads are the paths the value v of the variable name (one of
// loadVars; "" when not literal) makes a program load. For a bare module
// name (node -r dotenv/config) that is its package in node_modules.
func optionLoads(name, v string) []Load {
	var out []Load
	switch name {
	case "LD_PRELOAD":
		for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' }) {
			out = append(out, Load{Path: p})
		}
	case "NODE_OPTIONS":
		f := strings.Fields(v)
		for i := 0; i < len(f); i++ {
			flag, val, eq := strings.Cut(f[i], "=")
			switch flag {
			case "-r", "--require", "--import", "--loader", "--experimental-loader":
				if !eq && i+1 < len(f) {
					i++
					val = f[i]
				}
				switch {
				case strings.HasPrefix(val, "file://"):
					out = append(out, Load{Path: strings.TrimPrefix(val, "file://")})
				case val == "" || strings.Contains(val, ":"):
					// node: and data: URLs.
				case strings.HasPrefix(val, ".") || strings.HasPrefix(val, "/"):
					out = append(out, Load{Path: val})
				default:
					pkg := strings.SplitN(val, "/", 3)
					n := 1
					if strings.HasPrefix(val, "@") && len(pkg) > 1 {
						n = 2
					}
					out = append(out, Load{Path: filepath.Join(append([]string{"node_modules"}, pkg[:min(n, len(pkg))]...)...), Dir: true})
				}
			}
		}
	default:
		if v != "" {
			out = append(out, Load{Path: v})
		}
	}
	return out
}

// state is what earlier lines of an .envrc set that direnv's library
// reads later: the layout directory and a virtualenv's path, when set
// literally.
type state struct {
	dir       string
	layoutDir string
	venv      string
}

// loadsOf is what one command (its words, "" for one that is not
// literal) loads, with paths relative to the .envrc's directory.
func (st state) loadsOf(args []string) []Load {
	name, rest := args[0], args[1:]
	first := func(def string) string {
		if len(rest) > 0 {
			return rest[0]
		}
		return def
	}
	if l, ok := strings.CutPrefix(name, "layout_"); ok && l != "" {
		// layout_node is layout node, called by its function's name.
		name, rest = "layout", append([]string{l}, rest...)
	}
	var out []Load
	switch name {
	case "source", ".":
		out = append(out, Load{Path: first(""), Why: "sourced by the .envrc"})
		if a := first(""); a != "" && (filepath.Base(a) == "activate" || filepath.Base(a) == "activate.sh") {
			// A virtualenv's activate puts the directory it lies in on
			// PATH.
			out = append(out, Load{Path: filepath.Dir(a), Dir: true, Why: "put on PATH by the virtualenv the .envrc activates"})
		}
	case "source_up", "source_up_if_exists":
		// find_up from the parent directory: the first ancestor holding
		// the file. Any of them could come to hold it.
		file := first(".envrc")
		if file == "" {
			break
		}
		for d := filepath.Dir(st.dir); ; d = filepath.Dir(d) {
			out = append(out, Load{Path: filepath.Join(d, file), Why: "sourced by the .envrc (" + name + ") if found here first"})
			if d == filepath.Dir(d) {
				break
			}
		}
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
		why := "put on PATH by the .envrc (layout " + first("") + ")"
		switch first("") {
		case "node":
			out = append(out, Load{Path: "node_modules/.bin", Dir: true, Why: why})
		case "php":
			out = append(out, Load{Path: "vendor/bin", Dir: true, Why: why})
		case "python", "python2", "python3", "pyenv":
			if st.venv != "" {
				out = append(out, Load{Path: filepath.Join(st.venv, "bin"), Dir: true, Why: why})
			}
		}
		if st.layoutDir != "" {
			out = append(out, Load{Path: st.layoutDir, Dir: true, Why: "the layout's directory, put on PATH by the .envrc (layout)"})
		}
	case "use", "use_flake", "use_nix", "use_vim":
		what := name
		if name == "use" {
			what = "use_" + first("")
			if len(rest) > 0 {
				rest = rest[1:]
			}
		}
		switch what {
		case "use_vim":
			// DIRENV_EXTRA_VIMRC: the vim plugin sources it.
			out = append(out, Load{Path: first(".vimrc.local"), Why: "sourced by vim through the .envrc (use vim)"})
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

// isPATH reports whether p expands PATH ($PATH, ${PATH},
// ${PATH:+:$PATH} and the like).
func isPATH(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == "PATH" && !pe.Length && !pe.Excl && !pe.Width && pe.Names == 0
}

// endsInColon reports whether pe is ${PATH:+...:}, whose value is empty or
// ends in a colon.
func endsInColon(pe *syntax.ParamExp) bool {
	if pe.Exp == nil || (pe.Exp.Op != syntax.AlternateUnsetOrNull && pe.Exp.Op != syntax.AlternateUnset) || pe.Exp.Word == nil || len(pe.Exp.Word.Parts) == 0 {
		return false
	}
	last := pe.Exp.Word.Parts[len(pe.Exp.Word.Parts)-1]
	if q, ok := last.(*syntax.DblQuoted); ok && len(q.Parts) > 0 {
		last = q.Parts[len(q.Parts)-1]
	}
	l, ok := last.(*syntax.Lit)
	return ok && strings.HasSuffix(l.Value, ":")
}

// pathEntries are the entries of a PATH value w that are literal but for
// $PWD, ${PWD} or $(pwd); an entry with another expansion ($HOME) is left
// out, and so are the old PATH's.
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
		switch {
		case isPWD(p):
			cur.WriteString(dir)
		case isPATH(p):
			// The old PATH is entries of its own: what came before it
			// is one ($PWD/bin${PATH:+:$PATH}), what follows it up to
			// the next colon joins its last, unknown, unless the
			// expansion ends in the colon (${PATH:+$PATH:}$PWD/bin).
			end()
			known = endsInColon(p.(*syntax.ParamExp))
		default:
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

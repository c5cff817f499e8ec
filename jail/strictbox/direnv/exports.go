package direnv

import (
	"bytes"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Exported is what an .envrc adds to the environment direnv gives the
// shell, as far as it can be read without running it. A strict box
// starts from none of the host's variables, so a launch names these: a
// build that needs one fails in the box for a reason the user cannot see.
type Exported struct {
	// Names are the variables exported by a literal name (export NAME=,
	// export NAME, declare -x NAME), each once, in the order they appear.
	Names []string
	// Dotenv is set when the .envrc reads a dotenv file: the names
	// there are that file's.
	Dotenv bool
}

// Exports reads the .envrc at path, whose text is script, for the
// variables it exports. A script bash could not parse is an error, as
// for [Loads].
func Exports(path string, script []byte) (Exported, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(script), path)
	if err != nil {
		return Exported{}, fmt.Errorf("reading what %s exports: %w", path, err)
	}
	var out Exported
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			for _, name := range exportedNames(n) {
				if !seen[name] {
					seen[name] = true
					out.Names = append(out.Names, name)
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch n.Args[0].Lit() {
				case "dotenv", "dotenv_if_exists":
					out.Dotenv = true
				}
			}
		}
		return true
	})
	return out, nil
}

// exportedNames are the names a declaration exports: every name of an
// export (but export -n, which takes the mark away), those of a declare
// or typeset given -x (in a flag word of its own or with others, as -rx).
func exportedNames(d *syntax.DeclClause) []string {
	variant := d.Variant.Value
	export := variant == "export"
	if !export && variant != "declare" && variant != "typeset" {
		return nil
	}
	var names []string
	for _, a := range d.Args {
		if a.Name == nil {
			if a.Value == nil {
				continue
			}
			v := a.Value.Lit()
			if len(v) < 2 || v[0] != '-' {
				continue
			}
			switch {
			case variant == "export" && strings.ContainsRune(v, 'n'):
				export = false
			case variant != "export" && strings.ContainsRune(v, 'x'):
				export = true
			}
			continue
		}
		names = append(names, a.Name.Value)
	}
	if !export {
		return nil
	}
	return names
}

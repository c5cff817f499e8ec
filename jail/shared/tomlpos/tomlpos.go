// Package tomlpos finds where things are in a TOML file read with
// go-toml's unstable parser, so that errors in the user's files (bind
// specs, aisan's configuration) name the line.
package tomlpos

import (
	"github.com/pelletier/go-toml/v2/unstable"
)

// Line is the line node n starts on in p's input, 0 when unknown.
func Line(p *unstable.Parser, n *unstable.Node) int {
	if n == nil || n.Raw.Length == 0 {
		return 0
	}
	return p.Shape(n.Raw).Start.Line
}

// Key is a key-value or table expression's dotted key, part by part, and
// the line it starts on.
func Key(p *unstable.Parser, e *unstable.Node) ([]string, int) {
	k := e.Key()
	var parts []string
	line := 0
	for k.Next() {
		parts = append(parts, string(k.Node().Data))
		if line == 0 {
			line = Line(p, k.Node())
		}
	}
	return parts, line
}

// ErrorLine is the line a parser error points at, or 0. The parser's
// highlights are slices of its input; should one not be, the line is
// unknown rather than a crash.
func ErrorLine(p *unstable.Parser, pe *unstable.ParserError) (line int) {
	if len(pe.Highlight) == 0 {
		return 0
	}
	defer func() {
		if recover() != nil {
			line = 0
		}
	}()
	return p.Shape(p.Range(pe.Highlight)).Start.Line
}

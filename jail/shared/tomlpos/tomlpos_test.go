package tomlpos

import (
	"errors"
	"slices"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

func TestPositions(t *testing.T) {
	var p unstable.Parser
	p.Reset([]byte("a = 1\n\n[repo.\"x\"]\nb.c = [\n  \"s\",\n]\n"))
	var got [][]string
	var lines []int
	for p.NextExpression() {
		parts, line := Key(&p, p.Expression())
		got, lines = append(got, parts), append(lines, line)
	}
	if err := p.Error(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !slices.Equal(got[0], []string{"a"}) || !slices.Equal(got[1], []string{"repo", "x"}) || !slices.Equal(got[2], []string{"b", "c"}) {
		t.Errorf("keys %q", got)
	}
	if !slices.Equal(lines, []int{1, 3, 4}) {
		t.Errorf("lines %v, want [1 3 4]", lines)
	}

	p.Reset([]byte("a = 1\nb = = 2\n"))
	for p.NextExpression() {
	}
	var pe *unstable.ParserError
	if !errors.As(p.Error(), &pe) {
		t.Fatalf("no parser error: %v", p.Error())
	}
	if l := ErrorLine(&p, pe); l != 2 {
		t.Errorf("error on line %d, want 2", l)
	}
	if l := ErrorLine(&p, &unstable.ParserError{}); l != 0 {
		t.Errorf("an error without a highlight: line %d, want 0", l)
	}
}

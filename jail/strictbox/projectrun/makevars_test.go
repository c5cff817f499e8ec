package projectrun

import (
	"strings"
	"testing"
)

// TestMakeVars: the variables a makefile sets with one value it can
// tell; the rest are left out, so that what uses them stays unknown.
func TestMakeVars(t *testing.T) {
	mk := strings.Join([]string{
		"SPHINXBUILD   ?= sphinx-build",
		"SOURCEDIR     = docs # where the sources are",
		"export PY := python3",
		"override OPTS ::= -q",
		"FLAGS = -a",
		"FLAGS += -b",
		"LONG = one \\",
		"\ttwo",
		"ifeq ($(X),1)",
		"BR = a",
		"else",
		"BR = b",
		"endif",
		"SAME = s",
		"SAME = s",
		"OUT != git rev-parse HEAD",
		"define BLOCK =",
		"echo hi",
		"endef",
		"all: $(SOURCEDIR)",
		"\tVAR=ignored ./x.sh",
		"build: CFLAGS = -O2",
		"LINT ?= ./tools/lint.sh",
		"CC = clang",
	}, "\n")
	want := map[string]string{"MAKE": "make", "SPHINXBUILD": "sphinx-build", "SOURCEDIR": "docs", "PY": "python3", "OPTS": "-q", "FLAGS": "-a -b", "LONG": "one two", "SAME": "s",
		"LINT": "lint", "CC": "clang", "RM": "rm -f"}
	got := makeVars([]byte(mk))
	for _, gone := range []string{"BR", "OUT", "BLOCK", "CFLAGS", "build: CFLAGS"} {
		if v, ok := got[gone]; ok {
			t.Errorf("%s = %q, want it unknown", gone, v)
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (make's ?= leaves its own defaults)", k, got[k], v)
		}
	}
}

// TestExpandMake: known variables are expanded, in turn; $$, automatic
// variables, functions and what it does not know are left; a variable
// through itself and values that double at every level end.
func TestExpandMake(t *testing.T) {
	vars := map[string]string{"A": "a", "B": "$(A)/b", "SELF": "$(SELF)x", "D1": "$(D2)$(D2)", "D2": "$(D3)$(D3)", "D3": strings.Repeat("y", 8<<10)}
	for _, tc := range []struct{ in, want string }{
		{"$(B) ${A} $$HOME $@ $(shell ls) $(NOPE)", "a/b a $$HOME $@ $(shell ls) $(NOPE)"},
		{"$(SELF)", "$(SELF)xxxxxxxx"},
		{"unclosed $(A", "unclosed $(A"},
		{"$", "$"},
	} {
		budget := maxMakeLine
		if got := expandMake(tc.in, vars, 0, &budget); got != tc.want {
			t.Errorf("expandMake(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	budget := maxMakeLine
	if got := expandMake("$(D1)", vars, 0, &budget); len(got) > maxMakeLine+64 || !strings.Contains(got, "$(D") {
		t.Errorf("doubling values: %d bytes, want at most about %d and the rest unexpanded", len(got), maxMakeLine)
	}
}

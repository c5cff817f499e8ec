package direnv

import (
	"reflect"
	"testing"
)

func TestExports(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         Exported
	}{
		{"none", "PATH_add bin\nlayout node\n", Exported{}},
		{"plain assignment stays in the script", "FOO=1\n", Exported{}},
		{"export forms", "export A=1 B\nexport C=\"$(cat f)\"\nexport A=2\n", Exported{Names: []string{"A", "B", "C"}}},
		{"declare -x", "declare -x D=1\ndeclare -rx E=2\ndeclare F=3\ntypeset -x G\n", Exported{Names: []string{"D", "E", "G"}}},
		{"export -n takes the mark away", "export -n H\n", Exported{}},
		{"inside a condition", "if has go; then\n  export GOFLAGS=-mod=mod\nfi\n", Exported{Names: []string{"GOFLAGS"}}},
		{"dotenv", "dotenv\nexport X=1\n", Exported{Names: []string{"X"}, Dotenv: true}},
		{"dotenv_if_exists", "dotenv_if_exists .env.local\n", Exported{Dotenv: true}},
		{"a function body counts", "f() { export IN_F=1; }\nf\n", Exported{Names: []string{"IN_F"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Exports("/r/.envrc", []byte(tc.script))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Exports(%q) = %+v, want %+v", tc.script, got, tc.want)
			}
		})
	}
	if _, err := Exports("/r/.envrc", []byte("export (")); err == nil {
		t.Error("a script bash cannot parse gave no error")
	}
}

func FuzzExports(f *testing.F) {
	for _, s := range []string{"export A=1", "declare -x B", "dotenv", "export -n C", "typeset +x D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		got, err := Exports("/r/.envrc", []byte(script))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range got.Names {
			if n == "" || seen[n] {
				t.Fatalf("names %q: empty or repeated", got.Names)
			}
			seen[n] = true
		}
	})
}

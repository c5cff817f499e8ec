package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testKeys = []Key{
	{Name: "strict", Kind: Bool, Var: "AISAN_STRICT"},
	{Name: "binds", Kind: List, Var: "AISAN_BINDS"},
	{Name: "allow_hosts", Kind: List, Var: "AISAN_ALLOW_HOSTS"},
	{Name: "env", Kind: List},
	{Name: "limits", Kind: String, Var: "AISAN_LIMITS"},
	{Name: "net", Kind: Bool},
}

const sample = `# defaults
strict = false
binds  = ["go"]
limits = "memory=4G"

[repo."/home/me/src/app"]
strict      = true
allow_hosts = ["goproxy.example.com"]

[repo."~/src/other"]
binds = "node"
env   = []
`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ doc, err string }{
		{"strict = 1\n", "c.toml:1: strict: must be a boolean, not Integer"},
		{"\nbinds = [1]\n", "c.toml:2: binds: entries must be strings"},
		{"limits = [\"a\"]\n", "c.toml:1: limits: must be a string, not Array"},
		{"strickt = true\n", "c.toml:1: strickt: unknown key; the keys are strict, binds, allow_hosts, env, limits, net"},
		{"allow-host = [\"x\"]\n", "c.toml:1: allow-host: unknown key; did you mean allow_hosts?"},
		{"[agents]\nstrict = true\n", `c.toml:1: agents: the only tables are repository sections, [repo."/path/to/repository"]`},
		{"[repo]\n", "c.toml:1: repo: the only tables"},
		{"[repo.\"src/app\"]\n", `c.toml:1: repo.src/app: "src/app": a repository is named by its absolute path`},
		{"[repo.\"/a\"]\nstrict = true\n[repo.\"/a/\"]\n", "c.toml:3: the section of /a is there already (line 1)"},
		{"[repo.\"/a\"]\nnope = 1\n", "c.toml:2: nope: unknown key"},
		{"strict = true\nstrict = false\n", "c.toml:2: strict: set twice (first on line 1)"},
		{"[[repo]]\n", "c.toml:1: repo: arrays of tables"},
		{"strict = \n", "c.toml:1: not valid TOML"},
	} {
		_, err := Parse("c.toml", []byte(tc.doc), testKeys, "/home/me")
		var ce *Error
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.err)
		}
	}
}

// TestResolve: per key, the command line, then the variable, then the
// repository's section, then the defaults; the section applies to its
// repository only.
func TestResolve(t *testing.T) {
	f, err := Parse("c.toml", []byte(sample), testKeys, "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Repos(); !cmp.Equal(got, []string{"/home/me/src/app", "/home/me/src/other"}) {
		t.Fatalf("repos %q", got)
	}
	type row struct{ key, values, source string }
	show := func(ss []Setting) []row {
		var out []row
		for _, s := range ss {
			out = append(out, row{s.Key, strings.Join(s.Values, " "), s.Source.String()})
		}
		return out
	}
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		name string
		in   Inputs
		want []row
	}{
		{name: "another repository: the defaults", in: Inputs{Repo: "/home/me/src/zzz"}, want: []row{
			{"strict", "false", "c.toml:2"}, {"binds", "go", "c.toml:3"}, {"allow_hosts", "", "not set"},
			{"env", "", "not set"}, {"limits", "memory=4G", "c.toml:4"}, {"net", "", "not set"},
		}},
		{name: "the repository's section", in: Inputs{Repo: "/home/me/src/app"}, want: []row{
			{"strict", "true", `c.toml:7 [repo."/home/me/src/app"]`}, {"binds", "go", "c.toml:3"}, {"allow_hosts", "goproxy.example.com", `c.toml:8 [repo."/home/me/src/app"]`},
			{"env", "", "not set"}, {"limits", "memory=4G", "c.toml:4"}, {"net", "", "not set"},
		}},
		{name: "a section by ~, an empty list set", in: Inputs{Repo: "/home/me/src/other"}, want: []row{
			{"strict", "false", "c.toml:2"}, {"binds", "node", `c.toml:11 [repo."/home/me/src/other"]`}, {"allow_hosts", "", "not set"},
			{"env", "", `c.toml:12 [repo."/home/me/src/other"]`}, {"limits", "memory=4G", "c.toml:4"}, {"net", "", "not set"},
		}},
		{name: "variables over the file, flags over both", in: Inputs{Repo: "/home/me/src/app",
			LookupEnv: env("AISAN_STRICT", "0", "AISAN_BINDS", "go, rust", "AISAN_LIMITS", "", "AISAN_ALLOW_HOSTS", "a.example b.example"),
			Flags:     map[string][]string{"binds": {"python"}, "net": {"true"}}}, want: []row{
			{"strict", "false", "AISAN_STRICT"}, {"binds", "python", "command line"}, {"allow_hosts", "a.example b.example", "AISAN_ALLOW_HOSTS"},
			{"env", "", "not set"}, {"limits", "memory=4G", "c.toml:4"}, {"net", "true", "command line"},
		}},
		{name: "the section found by its real path", in: Inputs{Repo: "/real/app", Same: func(s, r string) bool { return s == "/home/me/src/app" && r == "/real/app" }}, want: []row{
			{"strict", "true", `c.toml:7 [repo."/home/me/src/app"]`}, {"binds", "go", "c.toml:3"}, {"allow_hosts", "goproxy.example.com", `c.toml:8 [repo."/home/me/src/app"]`},
			{"env", "", "not set"}, {"limits", "memory=4G", "c.toml:4"}, {"net", "", "not set"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := Resolve(f, testKeys, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, show(ss), cmp.AllowUnexported(row{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	ss, err := Resolve(nil, testKeys, Inputs{})
	if err != nil || len(ss) != len(testKeys) || ss[0].Source.From != Unset {
		t.Fatalf("no file: %+v %v", ss, err)
	}
	_, err = Resolve(f, testKeys, Inputs{LookupEnv: env("AISAN_STRICT", "maybe")})
	var ee *EnvError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), `AISAN_STRICT="maybe": not a boolean`) {
		t.Fatalf("bad variable: %v", err)
	}
}

// FuzzParse: any bytes parse or fail with an *Error naming the file;
// what parses resolves for any repository without a panic.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{sample, "", "strict = true\n", "[repo.\"/a\"]\n[repo.\"/b\"]\nbinds=[]\n", "a.b.c = 1\n", "binds = [\"x\", 1]\n",
		"[repo.\"~\"]\nstrict=false\n", "[[x]]\n", "= 1", "[repo.\"\\u0000\"]\n", "limits = '''\nx'''\n", "binds = [\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := Parse("c.toml", []byte(doc), testKeys, "/home/me")
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "c.toml" {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, r := range append(c.Repos(), "/x") {
			ss, err := Resolve(c, testKeys, Inputs{Repo: r})
			if err != nil || len(ss) != len(testKeys) {
				t.Fatalf("resolve %s: %v", r, err)
			}
			for _, s := range ss {
				if s.Kind == Bool && len(s.Values) > 0 && s.Values[0] != "true" && s.Values[0] != "false" {
					t.Fatalf("%s = %q", s.Key, s.Values)
				}
			}
		}
	})
}

// TestIntegerAsString: a String key takes an integer as its text, so a
// count reads naturally (budget = 200_000); a Bool or List does not.
func TestIntegerAsString(t *testing.T) {
	keys := append(testKeys, Key{Name: "budget", Kind: String})
	c, err := Parse("c.toml", []byte("budget = 200_000\n"), keys, "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := Resolve(c, keys, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := Lookup(ss, "budget"); len(s.Values) != 1 || s.Values[0] != "200000" {
		t.Errorf("budget = %q", s.Values)
	}
	if _, err := Parse("c.toml", []byte("binds = 3\n"), keys, "/home/me"); err == nil || !strings.Contains(err.Error(), "c.toml:1: binds: must be an array of strings, not Integer") {
		t.Errorf("a list given an integer: %v", err)
	}
}

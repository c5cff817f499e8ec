package direnv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoads(t *testing.T) {
	tests := []struct {
		name, script string
		want         []Load
	}{
		{"nothing", "export FOO=1\n", nil},
		{"source_env_if_exists and PATH_add", "source_env_if_exists .envrc.local\nPATH_add bin\n", []Load{
			{Path: "/r/.envrc.local", Why: "sourced by the .envrc (source_env_if_exists)"},
			{Path: "/r/bin", Dir: true, Why: "put on PATH by the .envrc (PATH_add)"},
		}},
		{"dotenv default", "dotenv\ndotenv_if_exists config/.env.local\n", []Load{
			{Path: "/r/.env", Why: "read into the environment by the .envrc (dotenv)"},
			{Path: "/r/config/.env.local", Why: "read into the environment by the .envrc (dotenv_if_exists)"},
		}},
		{"bash source and dot, inside a condition", "if has nix; then . ./nix.sh; fi\n[ -f x ] && source scripts/env.sh\n", []Load{
			{Path: "/r/nix.sh", Why: "sourced by the .envrc"},
			{Path: "/r/scripts/env.sh", Why: "sourced by the .envrc"},
		}},
		{"path_add", "path_add PYTHONPATH lib src\npath_add ONLYVAR\n", []Load{
			{Path: "/r/lib", Dir: true, Why: "put on PYTHONPATH by the .envrc"},
			{Path: "/r/src", Dir: true, Why: "put on PYTHONPATH by the .envrc"},
		}},
		{"use flake, use nix, layout", "use flake\nuse nix\nlayout python3\n", []Load{
			{Path: "/r/flake.nix", Why: "the flake the .envrc builds its shell from"},
			{Path: "/r/flake.lock", Why: "the same, its lock"},
			{Path: "/r/shell.nix", Why: "the nix shell the .envrc enters"},
			{Path: "/r/default.nix", Why: "the same"},
			{Path: "/r/.direnv", Dir: true, Why: "the layout's directory, put on PATH by the .envrc (layout)"},
		}},
		{"not literal, $(pwd), absolute, outside, twice", "source_env $X\nPATH_add \"$(pwd)/bin\"\nsource /etc/profile.d/x.sh\nsource_env ../up\nPATH_add bin bin\n", []Load{
			{Path: "/r/bin", Dir: true, Why: "put on PATH by the .envrc (PATH_add)"},
			{Path: "/etc/profile.d/x.sh", Why: "sourced by the .envrc"},
			{Path: "/up", Why: "sourced by the .envrc (source_env)"},
		}},
		{"quoted literal", "source_env_if_exists '.envrc.private'\n", []Load{
			{Path: "/r/.envrc.private", Why: "sourced by the .envrc (source_env_if_exists)"},
		}},
	}
	for _, tt := range tests {
		got, err := Loads("/r/.envrc", []byte(tt.script))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.name, diff)
		}
	}
	if _, err := Loads("/r/.envrc", []byte("if then fi (\n")); err == nil {
		t.Error("a script bash cannot parse gave no error")
	}
}

func FuzzLoads(f *testing.F) {
	f.Add([]byte("source_env_if_exists .envrc.local\nPATH_add bin\n"))
	f.Add([]byte("use flake\ndotenv\n"))
	f.Fuzz(func(t *testing.T, script []byte) {
		loads, err := Loads("/r/.envrc", script)
		if err != nil {
			return
		}
		for _, l := range loads {
			if l.Path == "" || l.Path[0] != '/' || l.Why == "" {
				t.Fatalf("a load without an absolute path or a reason: %+v", l)
			}
		}
	})
}

// TestLoadsPWD: $PWD, ${PWD} and $(pwd) are the .envrc's directory when
// direnv runs it, and PATH set by hand is PATH_add: each names a
// directory a box could plant a git or a make in.
func TestLoadsPWD(t *testing.T) {
	for _, tt := range []struct{ script, want string }{
		{`PATH_add "$PWD/bin"` + "\n", "/r/bin"},
		{`PATH_add ${PWD}/tools` + "\n", "/r/tools"},
		{`source_env "$(pwd)/.envrc.local"` + "\n", "/r/.envrc.local"},
		{`export PATH=$PWD/bin:$PATH` + "\n", "/r/bin"},
		{`PATH="$PATH:${PWD}/scripts"` + "\n", "/r/scripts"},
		{`export PATH="node_modules/.bin:$PATH"` + "\n", "/r/node_modules/.bin"},
	} {
		ls, err := Loads("/r/.envrc", []byte(tt.script))
		if err != nil {
			t.Fatalf("%q: %v", tt.script, err)
		}
		found := false
		for _, l := range ls {
			found = found || (l.Path == tt.want && (l.Dir || tt.want == "/r/.envrc.local"))
		}
		if !found {
			t.Errorf("%q: loads %+v; want %s", tt.script, ls, tt.want)
		}
	}
	// $HOME, $PATH and other expansions still name nothing known.
	if ls, _ := Loads("/r/.envrc", []byte(`export PATH=$HOME/bin:$PATH`+"\n")); len(ls) != 0 {
		t.Errorf("PATH=$HOME/bin:$PATH loads %+v; want nothing", ls)
	}
}

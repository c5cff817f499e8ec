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
		{"layouts that put the project's own directories on PATH", "layout node\nlayout_php\n", []Load{
			{Path: "/r/node_modules/.bin", Dir: true, Why: "put on PATH by the .envrc (layout node)"},
			{Path: "/r/.direnv", Dir: true, Why: "the layout's directory, put on PATH by the .envrc (layout)"},
			{Path: "/r/vendor/bin", Dir: true, Why: "put on PATH by the .envrc (layout php)"},
		}},
		{"layout python with a literal VIRTUAL_ENV and layout dir", "direnv_layout_dir=$PWD/.layout\nexport VIRTUAL_ENV=.venv\nlayout python3\n", []Load{
			{Path: "/r/.venv/bin", Dir: true, Why: "put on PATH by the .envrc (layout python3)"},
			{Path: "/r/.layout", Dir: true, Why: "the layout's directory, put on PATH by the .envrc (layout)"},
		}},
		{"an activated virtualenv", "source .venv/bin/activate\n", []Load{
			{Path: "/r/.venv/bin/activate", Why: "sourced by the .envrc"},
			{Path: "/r/.venv/bin", Dir: true, Why: "put on PATH by the virtualenv the .envrc activates"},
		}},
		{"use vim", "use vim\nuse vim .vimrc.project\n", []Load{
			{Path: "/r/.vimrc.local", Why: "sourced by vim through the .envrc (use vim)"},
			{Path: "/r/.vimrc.project", Why: "sourced by vim through the .envrc (use vim)"},
		}},
		{"search paths and files loaded at start, set by hand", "export PYTHONPATH=$PWD/src:$PYTHONPATH\nexport NODE_OPTIONS='--require ./hook.js -r dotenv/config --import=./esm.mjs --import @scope/reg/x.js --import node:fs --import=file:///abs/f.mjs'\nexport BASH_ENV=.bash_env\nexport LD_PRELOAD=$PWD/lib/x.so\n", []Load{
			{Path: "/r/src", Dir: true, Why: "put on PYTHONPATH by the .envrc (PYTHONPATH=)"},
			{Path: "/r/hook.js", Why: "loaded through NODE_OPTIONS set by the .envrc"},
			{Path: "/r/node_modules/dotenv", Dir: true, Why: "loaded through NODE_OPTIONS set by the .envrc"},
			{Path: "/r/esm.mjs", Why: "loaded through NODE_OPTIONS set by the .envrc"},
			{Path: "/r/node_modules/@scope/reg", Dir: true, Why: "loaded through NODE_OPTIONS set by the .envrc"},
			{Path: "/abs/f.mjs", Why: "loaded through NODE_OPTIONS set by the .envrc"},
			{Path: "/r/.bash_env", Why: "loaded through BASH_ENV set by the .envrc"},
			{Path: "/r/lib/x.so", Why: "loaded through LD_PRELOAD set by the .envrc"},
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

// TestLoadsSourceUp: source_up finds its file in the first ancestor
// holding it, so every ancestor's is named (the caller keeps those in
// the repository).
func TestLoadsSourceUp(t *testing.T) {
	ls, err := Loads("/r/sub/.envrc", []byte("source_up_if_exists .envrc.shared\nsource_up\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Path)
	}
	want := []string{"/r/.envrc.shared", "/.envrc.shared", "/r/.envrc", "/.envrc"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func FuzzLoads(f *testing.F) {
	f.Add([]byte("source_env_if_exists .envrc.local\nPATH_add bin\n"))
	f.Add([]byte("use flake\ndotenv\n"))
	f.Add([]byte("export NODE_OPTIONS='-r x --import=./y'\nexport PYTHONPATH=src\n"))
	f.Add([]byte("layout node\nsource_up .x\nexport PATH=\"$PWD/bin${PATH:+:$PATH}\"\n"))
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
		{`export PATH="$PWD/bin${PATH:+:$PATH}"` + "\n", "/r/bin"},
		{`PATH=${PATH:+"$PATH:"}$PWD/tools` + "\n", "/r/tools"},
		{`PATH=${PATH}:bin` + "\n", "/r/bin"},
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
	// $HOME, $PATH and other expansions still name nothing known, nor
	// does what follows the old PATH up to a colon.
	if ls, _ := Loads("/r/.envrc", []byte(`PATH=$PATH/x:$HOME`+"\n")); len(ls) != 0 {
		t.Errorf("PATH=$PATH/x:$HOME loads %+v; want nothing", ls)
	}
	if ls, _ := Loads("/r/.envrc", []byte(`export PATH=$HOME/bin:$PATH`+"\n")); len(ls) != 0 {
		t.Errorf("PATH=$HOME/bin:$PATH loads %+v; want nothing", ls)
	}
}

package strictbox

import (
	"slices"
	"testing"
)

func TestToolVersionPaths(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"plain versions", "nodejs 20.1.0\npython 3.12.1 system\n", nil},
		{"absolute", "nodejs path:/opt/node\n", []string{"/opt/node"}},
		{"relative to the file", "elixir path:tools/elixir  # a build of ours\n", []string{"/r/tools/elixir"}},
		{"home", "ruby path:~/src/ruby 3.3.0\n", []string{"/home/u/src/ruby"}},
		{"a fallback after others", "python 3.12 path:../py system\n", []string{"/py"}},
		{"commented out", "# nodejs path:/x\n", nil},
		{"each once", "a path:/x\nb path:/x/\n", []string{"/x"}},
		{"empty path", "a path:\n", nil},
		{"crlf", "a path:/x\r\n", []string{"/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolVersionPaths("/r/.tool-versions", []byte(tc.text), "/home/u"); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if got := toolVersionPaths("/r/.tool-versions", []byte("a path:~/x\n"), ""); got != nil {
		t.Errorf("~ with no home: %q", got)
	}
}

func FuzzToolVersionPaths(f *testing.F) {
	f.Add("nodejs path:~/src/node 20.1.0 system\n")
	f.Add("a path:../x # c\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range toolVersionPaths("/r/.tool-versions", []byte(text), "/home/u") {
			if p == "" || p[0] != '/' {
				t.Fatalf("%q is not absolute", p)
			}
		}
	})
}

func TestRustToolchainPath(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[toolchain]\npath = \"/opt/tc/\"\n", "/opt/tc"},
		{"[toolchain]\nchannel = \"1.80\"\n", ""},
		{"[toolchain]\npath = \"../tc\"\n", ""},
		{"nightly-2024-01-01\n", ""},
		{"[toolchain\n", ""},
	} {
		if got := rustToolchainPath([]byte(tc.text)); got != tc.want {
			t.Errorf("rustToolchainPath(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestYarnPaths(t *testing.T) {
	berry := "yarnPath: .yarn/releases/yarn-4.1.0.cjs\nplugins:\n  - path: .yarn/plugins/@yarnpkg/plugin-x.cjs\n    spec: \"@yarnpkg/plugin-x\"\n  - /abs/plugin.cjs\nnodeLinker: node-modules\n"
	if got, want := yarnBerryPaths("/r/.yarnrc.yml", []byte(berry)), []string{"/r/.yarn/releases/yarn-4.1.0.cjs", "/r/.yarn/plugins/@yarnpkg/plugin-x.cjs", "/abs/plugin.cjs"}; !slices.Equal(got, want) {
		t.Errorf("berry: %q, want %q", got, want)
	}
	quoted := "# comment\nyarnPath: \"./.yarn/releases/y.cjs\"  # the release\nplugins:\n  - spec: x\n    path: '.yarn/plugins/q.cjs'\nenableTelemetry: false\n"
	if got, want := yarnBerryPaths("/r/.yarnrc.yml", []byte(quoted)), []string{"/r/.yarn/releases/y.cjs", "/r/.yarn/plugins/q.cjs"}; !slices.Equal(got, want) {
		t.Errorf("quoted: %q, want %q", got, want)
	}
	for _, bad := range []string{"nodeLinker: pnp\n", "plugins: 3\n", "npmScopes:\n  path: x\n"} {
		if got := yarnBerryPaths("/r/.yarnrc.yml", []byte(bad)); len(got) != 0 {
			t.Errorf("berry %q: %q", bad, got)
		}
	}
	classic := "# yarn lockfile v1\n\n\nlastUpdateCheck 1700000000000\nyarn-path \".yarn/releases/yarn-1.22.19.cjs\"\n"
	if got, want := yarnClassicPath("/r/.yarnrc", []byte(classic)), []string{"/r/.yarn/releases/yarn-1.22.19.cjs"}; !slices.Equal(got, want) {
		t.Errorf("classic: %q, want %q", got, want)
	}
}

func FuzzYarnPaths(f *testing.F) {
	f.Add("yarnPath: a.cjs\nplugins:\n  - path: b.cjs\n")
	f.Add("yarn-path \"x.js\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range append(yarnBerryPaths("/r/.yarnrc.yml", []byte(text)), yarnClassicPath("/r/.yarnrc", []byte(text))...) {
			if p == "" || p[0] != '/' {
				t.Fatalf("%q is not absolute", p)
			}
		}
	})
}

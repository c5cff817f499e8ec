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

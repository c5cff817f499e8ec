package reapi

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress/cred"
)

const baseTOML = `upstream = "remotebuildexecution.googleapis.com:443"
instance = "projects/p/instances/default_instance"
token_command = "luci-auth token -scopes-cloud"
`

func TestParseDefaults(t *testing.T) {
	c, err := Parse("reapi", false, "reapi.toml", []byte(baseTOML))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Methods, sortUniq(DefaultMethods)) {
		t.Errorf("methods: %q", c.Methods)
	}
	if slices.Contains(c.Methods, pkgREv2+"ActionCache/UpdateActionResult") {
		t.Error("UpdateActionResult is allowed by default")
	}
	if c.Operations != OpsOwn || c.MaxFirstMessage != DefaultMaxFirstMessage {
		t.Errorf("defaults: operations %q, max_first_message %d", c.Operations, c.MaxFirstMessage)
	}
	for _, m := range c.Methods {
		if _, ok := c.rule(m); !ok {
			t.Errorf("%s has no instance rule", m)
		}
	}
	src, err := c.Source()
	if err != nil {
		t.Fatal(err)
	}
	a, ok := src.(cred.Ahead)
	if !ok || !slices.Equal(a.C.Argv, []string{"luci-auth", "token", "-scopes-cloud"}) {
		t.Errorf("source %#v", src)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, generic, text, want string
	}{
		{"unknown key has its line", "", baseTOML + "\ninstanse = \"x\"\n", `reapi.toml:5:1: unknown key "instanse"`},
		{"syntax error has its line", "", baseTOML + "methods = [\n", "reapi.toml:4:"},
		{"no upstream", "", "instance = \"i\"\ntoken_file = \"/t\"\n", "upstream is required"},
		{"upstream with scheme", "", "upstream = \"https://h:443\"\ninstance = \"i\"\ntoken_file = \"/t\"\n", "host:port"},
		{"upstream without port", "", "upstream = \"h\"\ninstance = \"i\"\ntoken_file = \"/t\"\n", "want host:port"},
		{"no instance", "", "upstream = \"h:443\"\ntoken_file = \"/t\"\n", "instance is required"},
		{"two credentials", "", baseTOML + "token_file = \"/t\"\n", "exactly one of token_command and token_file"},
		{"no credential", "", "upstream = \"h:443\"\ninstance = \"i\"\n", "exactly one"},
		{"bad method", "", baseTOML + "methods = [\"Execute\"]\n", `"Execute" is not a gRPC path`},
		{"method without rule", "", baseTOML + "methods = [\"/x.Y/Z\"]\n", `"/x.Y/Z" has no instance rule`},
		{"authorization header", "", baseTOML + "headers = [\"Authorization\"]\n", `"authorization" is never forwarded`},
		{"scheme header", "", baseTOML + "headers = [\"aisan-h2-scheme\"]\n", "never forwarded"},
		{"grpc internal header", "", baseTOML + "headers = [\"grpc-status\"]\n", "never forwarded"},
		{"bad operations", "", baseTOML + "operations = \"any\"\n", `operations "any"`},
		{"rule for unlisted method", "", baseTOML + "[[rule]]\nmethod = \"/x.Y/Z\"\nfield = 1\nmatch = \"equal\"\n", "not in methods"},
		{"rule bad match", "g", "upstream = \"h:1\"\ntoken_file = \"/t\"\ninstance = \"i\"\nmethods = [\"/x.Y/Z\"]\n[[rule]]\nmethod = \"/x.Y/Z\"\nfield = 1\nmatch = \"glob\"\n", `match "glob"`},
		{"rule bad field", "g", "upstream = \"h:1\"\ntoken_file = \"/t\"\ninstance = \"i\"\nmethods = [\"/x.Y/Z\"]\n[[rule]]\nmethod = \"/x.Y/Z\"\nfield = 0\nmatch = \"equal\"\n", "field 0"},
		{"rule unknown key", "g", "upstream = \"h:1\"\ntoken_file = \"/t\"\ninstance = \"i\"\nmethods = [\"/x.Y/Z\"]\n[[rule]]\nmethod = \"/x.Y/Z\"\nfeild = 1\n", `reapi.toml:7:1: unknown key "rule.feild"`},
		{"rule without instance", "g", "upstream = \"h:1\"\ntoken_file = \"/t\"\nmethods = [\"/x.Y/Z\"]\n[[rule]]\nmethod = \"/x.Y/Z\"\nfield = 1\nmatch = \"equal\"\n", "needs instance"},
		{"generic without methods", "g", "upstream = \"h:1\"\ntoken_file = \"/t\"\n", "methods is required"},
		{"tiny first message", "", baseTOML + "max_first_message = 10\n", "max_first_message 10"},
		{"instance with newline", "", "upstream = \"h:443\"\ntoken_file = \"/t\"\ninstance = \"a\\nb\"\n", "control characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "reapi"
			if tc.generic != "" {
				name = "build"
			}
			_, err := Parse(name, tc.generic != "", "reapi.toml", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestParseNames(t *testing.T) {
	if _, err := Parse("build", false, "f", []byte(baseTOML)); err == nil {
		t.Error("a non-reapi name without generic was accepted")
	}
	if _, err := Parse("Bad Name", true, "f", []byte(baseTOML)); err == nil {
		t.Error("a bad name was accepted")
	}
	c, err := Parse("my-build", true, "f", []byte(baseTOML+"methods = [\"/a.B/C\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rules) != 0 {
		t.Errorf("generic: rules %v", c.Rules)
	}
}

func TestLoadRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	if err := os.WriteFile(real, []byte(baseTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("reapi", false, real); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("reapi", false, link); err == nil {
		t.Error("a symlinked config was followed")
	}
}

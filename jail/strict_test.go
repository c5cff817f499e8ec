package jail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEgress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EgressRequest
		err  string
	}{
		{in: "stub=/run/s.sock", want: EgressRequest{Name: "stub", Socket: "/run/s.sock"}},
		{in: "my-db2=/tmp/x/../db.sock", want: EgressRequest{Name: "my-db2", Socket: "/tmp/db.sock"}},
		{in: "anthropic", want: EgressRequest{Name: "anthropic", Backend: "anthropic"}},
		{in: "openai-compatible:zai", want: EgressRequest{Name: "openai-compatible:zai", Backend: "openai-compatible", Param: "zai"}},
		{in: "reapi=/home/u/r.toml", want: EgressRequest{Name: "reapi", Backend: "reapi", Param: "/home/u/r.toml"}},
		{in: "grpc:build=/home/u/g.toml", want: EgressRequest{Name: "grpc:build", Backend: "grpc", Param: "/home/u/g.toml"}},
		{in: "anthropic=/run/s.sock", err: "built-in backends are"},
		{in: "openai-compatible", err: "built-in backends are"},
		{in: "Stub=/s", err: "must match"},
		{in: "-x=/s", err: "must match"},
		{in: "stub", err: "NAME=SOCKET"},
		{in: "stub=rel.sock", err: "absolute"},
	} {
		got, err := ParseEgress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func strictBase() StrictOptions {
	return StrictOptions{
		Kind: KindClaude, Slot: "r-1-claude", Command: []string{"claude"}, Repo: "/w/r", Cwd: "/w/r", Home: "/h",
		StateDir: "/h/.aisan/state/r-1-claude", AisanState: []string{"/h/.aisan"},
		Egress: []Endpoint{{Name: "a-b", Port: 2000, Socket: "/run/x/egress/a-b.sock", Source: "/run/s1"}},
	}
}

func TestEgressChecks(t *testing.T) {
	o := strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "a:b", Backend: "grpc", Port: 2001, Socket: "/run/x/egress/a-b2.sock"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "both map to AISAN_EGRESS_A_B") {
		t.Fatalf("colliding names: %v", err)
	}
	o = strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "c", Port: 2000, Socket: "/run/x/egress/c.sock", Source: "/run/s2"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "share port 2000") {
		t.Fatalf("shared port: %v", err)
	}
	s := Strict(strictBase())
	s.Mounts = s.Mounts[:len(s.Mounts)-1]
	if err := Validate(s); err == nil || !strings.Contains(err.Error(), "not bound read-only") {
		t.Fatalf("unmounted socket: %v", err)
	}
}

// TestCredentialAnyDirection: a source that is, contains or lies inside a
// credential path is refused; a sibling is not.
func TestCredentialAnyDirection(t *testing.T) {
	for _, tc := range []struct {
		src string
		bad bool
	}{
		{"/h/.ssh", true}, {"/h", true}, {"/h/.ssh/config", true}, {"/h/.sshx", false}, {"/h/.config", false},
	} {
		o := strictBase()
		o.Forbidden = []string{"/h/.ssh"}
		o.Binds = []Mount{{Kind: ROBind, Src: tc.src, Dst: "/x", Why: "bind spec b.toml:7"}}
		_, err := Compile(Strict(o), Host{})
		if tc.bad != (err != nil) {
			t.Errorf("%s: %v", tc.src, err)
		}
		if tc.bad && (err == nil || !strings.Contains(err.Error(), "b.toml:7")) {
			t.Errorf("%s: error does not name the bind spec line: %v", tc.src, err)
		}
	}
}

func TestStrictDoesNotChangeOptionsOrSpec(t *testing.T) {
	o := strictBase()
	o.Command = []string{"claude", "-p", "x"}
	o.SkipPermissions = true
	before := strictBase()
	before.Command = []string{"claude", "-p", "x"}
	before.SkipPermissions = true
	spec := Strict(o)
	if d := cmp.Diff(before, o); d != "" {
		t.Fatalf("Strict changed its options:\n%s", d)
	}
	frozen := deepCopy(t, spec)
	if _, err := Compile(spec, Host{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(frozen, spec); d != "" {
		t.Fatalf("Compile changed the spec:\n%s", d)
	}
	if got := strings.Join(spec.Command, " "); got != "claude --permission-mode bypassPermissions -p x" {
		t.Fatalf("command %q", got)
	}
}

func TestRedactOptions(t *testing.T) {
	got := RedactOptions([]string{"--setenv", "TOKEN", "s3cret", "--setenv", "A", "b", "--chdir", "/"}, []string{"TOKEN"})
	if strings.Contains(strings.Join(got, " "), "s3cret") || got[5] != "b" {
		t.Fatalf("%q", got)
	}
}

func TestParseBwrapVersion(t *testing.T) {
	v, err := parseBwrapVersion("bubblewrap 0.8.0\n")
	if err != nil || v != [3]int{0, 8, 0} {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := parseBwrapVersion("nothing"); err == nil {
		t.Fatal("accepted no version")
	}
}

// TestCodexPreferences: the model settings pass, providers and anything
// else do not.
func TestCodexPreferences(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("model = \"gpt-5.5\"\nmodel_provider = \"corp\"\nmodel_reasoning_effort = \"high\"\nmodel_verbosity = \"a\\\"b\"\n[model_providers.corp]\nbase_url = \"https://x\"\nenv_key = \"CORP_KEY\"\n"), 0o600)
	got := codexPreferences(p, []string{"model", "model_reasoning_effort", "model_verbosity"})
	if strings.Join(got, " ") != `model="gpt-5.5" model_reasoning_effort="high"` {
		t.Fatalf("%q", got)
	}
}

// TestEgressWithHostNetwork: with --net a built-in endpoint has no relay
// and needs the environment file; a raw relay is refused.
func TestEgressWithHostNetwork(t *testing.T) {
	o := strictBase()
	o.Net = true
	o.Egress = []Endpoint{{Name: "anthropic", Backend: "anthropic"}}
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "environment file") {
		t.Fatalf("no env file: %v", err)
	}
	o.EnvFile = "/run/x/box.env"
	c, err := Compile(Strict(o), Host{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Relays) != 0 || c.EnvFile != "/run/x/box.env" || !strings.Contains(strings.Join(c.Options, " "), "--ro-bind /run/x/box.env /run/x/box.env") {
		t.Fatalf("compiled %+v", c)
	}
	o.Egress = append(o.Egress, Endpoint{Name: "raw", Port: 3000, Socket: "/run/x/egress/raw.sock", Source: "/run/s"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "raw relay") {
		t.Fatalf("raw relay with --net: %v", err)
	}
}

// FuzzParseEgress: no panic; an accepted raw relay has a valid name, an
// absolute socket and a variable of its own.
func FuzzParseEgress(f *testing.F) {
	for _, s := range []string{"stub=/s", "anthropic", "openai-compatible:x", "reapi=/f", "grpc:a=/f", "a=", "=", ":", "grpc:=", "A-b=/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseEgress(s)
		if err != nil {
			return
		}
		if r.Backend == "" && (!rawEgressName().MatchString(r.Name) || !filepath.IsAbs(r.Socket)) {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		if !strings.HasPrefix(EgressEnvName(r.Name), "AISAN_EGRESS_") {
			t.Fatal("bad variable")
		}
	})
}

func TestEgressAddress(t *testing.T) {
	for _, tc := range []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Name: "x", Port: 1}, "127.0.0.1:1"},
		{Endpoint{Name: "anthropic", Backend: "anthropic", Port: 2}, "http://127.0.0.1:2"},
		{Endpoint{Name: "openai-compatible:z", Backend: "openai-compatible", Port: 3}, "http://127.0.0.1:3"},
		{Endpoint{Name: "grpc:b", Backend: "grpc", Port: 4}, "127.0.0.1:4"},
		{Endpoint{Name: "reapi", Backend: "reapi", Port: 5}, "127.0.0.1:5"},
	} {
		if got := EgressAddress(tc.e); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

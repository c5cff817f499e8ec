package jail

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func strictBase() StrictOptions {
	return StrictOptions{
		Kind: KindClaude, Slot: "r-1-claude", Command: []string{"claude"}, Repo: "/w/r", Cwd: "/w/r", Home: "/h",
		StateDir: "/h/.aisan/state/r-1-claude", AisanState: []string{"/h/.aisan"},
		Egress: []Endpoint{{Name: "a-b", Port: 2000, Socket: "/run/x/egress/a-b.sock", Source: "/run/s1", Var: "AISAN_EGRESS_A_B"}},
	}
}

func TestEgressChecks(t *testing.T) {
	o := strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "a:b", Backend: "grpc", Port: 2001, Socket: "/run/x/egress/a-b2.sock", Var: "AISAN_EGRESS_A_B"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "both map to AISAN_EGRESS_A_B") {
		t.Fatalf("colliding names: %v", err)
	}
	o = strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "c", Port: 2000, Socket: "/run/x/egress/c.sock", Source: "/run/s2", Var: "AISAN_EGRESS_C"})
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
	for _, c := range []struct {
		in   string
		want [3]int
		ok   bool
	}{
		{"bubblewrap 0.8.0\n", [3]int{0, 8, 0}, true},
		{"bubblewrap 0.11.1", [3]int{0, 11, 1}, true},
		{"bwrap 1.2", [3]int{1, 2, 0}, true},
		{"v1.2.", [3]int{1, 2, 0}, true},
		{"x 1.a 2.3.4", [3]int{2, 3, 4}, true},
		{"1..2.3", [3]int{2, 3, 0}, true},
		{"nothing", [3]int{}, false},
		{"1. 2", [3]int{}, false},
	} {
		v, err := parseBwrapVersion(c.in)
		if (err == nil) != c.ok || v != c.want {
			t.Errorf("parseBwrapVersion(%q) = %v, %v; want %v (ok %v)", c.in, v, err, c.want, c.ok)
		}
	}
}

// bwrapVersionPattern is what parseBwrapVersion reads, as a pattern: the
// reference the fuzzer holds it to.
var bwrapVersionPattern = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

func FuzzParseBwrapVersion(f *testing.F) {
	for _, s := range []string{"bubblewrap 0.8.0\n", "1.2", "1..2.3", "a9.9.9.9", "1.2.x", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want [3]int
		m := bwrapVersionPattern.FindStringSubmatch(s)
		for i := 0; m != nil && i < 3; i++ {
			want[i], _ = strconv.Atoi(m[i+1])
		}
		got, err := parseBwrapVersion(s)
		if (err == nil) != (m != nil) || got != want {
			t.Fatalf("parseBwrapVersion(%q) = %v, %v; the pattern says %v (match %v)", s, got, err, want, m != nil)
		}
	})
}

// TestPassEnv: the terminal, the locale and the time zone cross into a
// strict box, nothing else.
func TestPassEnv(t *testing.T) {
	for name, want := range map[string]bool{
		"TERM": true, "COLORTERM": true, "LANG": true, "LANGUAGE": true, "TZ": true,
		"LC_ALL": true, "LC_CTYPE": true, "LC_X_Y": true, "LC__": true,
		"LC_": false, "LC_all": false, "LC_1": false, "TERMINFO": false, "XTERM": false,
		"LANGS": false, "HOME": false, "": false, "lc_all": false, "term": false,
	} {
		if got := passEnv(name); got != want {
			t.Errorf("passEnv(%q) = %v, want %v", name, got, want)
		}
	}
}

// passEnvPattern is passEnv as a pattern, for the fuzzer.
var passEnvPattern = regexp.MustCompile(`^(TERM|COLORTERM|LANG|LANGUAGE|LC_[A-Z_]+|TZ)$`)

func FuzzPassEnv(f *testing.F) {
	for _, s := range []string{"TERM", "LC_ALL", "LC_", "LC_a", "TZ\n", "LANGUAGES"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := passEnv(name), passEnvPattern.MatchString(name); got != want {
			t.Fatalf("passEnv(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}

// TestEgressWithHostNetwork: with --net a built-in endpoint has no relay
// and needs the environment file; a raw relay is refused.
func TestEgressWithHostNetwork(t *testing.T) {
	o := strictBase()
	o.Net = true
	o.Egress = []Endpoint{{Name: "anthropic", Backend: "anthropic", Var: "AISAN_EGRESS_ANTHROPIC", HTTP: true}}
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
	o.Egress = append(o.Egress, Endpoint{Name: "raw", Port: 3000, Socket: "/run/x/egress/raw.sock", Source: "/run/s", Var: "AISAN_EGRESS_RAW"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "raw relay") {
		t.Fatalf("raw relay with --net: %v", err)
	}
}

// A bind spec's writable entry inside aisan's state (the trust store, the
// records) does not make it writable: the state is bound read-only over
// it, and the box's own state dir, bound after, stays writable.
func TestStrictStateNeverWritable(t *testing.T) {
	for _, tc := range []struct {
		name string
		bind Mount
	}{
		{"rw inside the state", Mount{Kind: Bind, Src: "/h/.aisan/trust", Dst: "/h/.aisan/trust"}},
		{"rw over the state", Mount{Kind: Bind, Src: "/h", Dst: "/h"}},
		{"overlay inside the state", Mount{Kind: Overlay, Src: "/h/.aisan/slots", Dst: "/h/.aisan/slots"}},
	} {
		o := strictBase()
		o.Binds = []Mount{tc.bind}
		s := Strict(o)
		bind := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == tc.bind.Dst && m.Kind == tc.bind.Kind })
		ro := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == "/h/.aisan" && m.Kind == ROBind })
		own := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == o.StateDir && m.Kind == Bind })
		if bind < 0 || ro < bind || own < ro {
			t.Errorf("%s: the bind at %d, the state read-only at %d, the box's own state at %d; want them in that order", tc.name, bind, ro, own)
		}
	}
	o := strictBase()
	o.Binds = []Mount{{Kind: Bind, Src: "/w/other", Dst: "/w/other"}}
	if slices.ContainsFunc(Strict(o).Mounts, func(m Mount) bool { return m.Dst == "/h/.aisan" }) {
		t.Error("the state is bound although nothing writable reaches it")
	}
}

// TestStrictStateRulesReadOnly: the files of the user's rules in the
// state directory are bound read-only after the state directory itself,
// so the box sees them but cannot change them.
func TestStrictStateRulesReadOnly(t *testing.T) {
	o := strictBase()
	o.StateRules = []string{"settings.json"}
	s := Strict(o)
	own := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == o.StateDir && m.Kind == Bind })
	p := filepath.Join(o.StateDir, "settings.json")
	ro := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == p && m.Src == p && m.Kind == ROBind })
	if own < 0 || ro < own {
		t.Errorf("the state at %d, its rules read-only at %d; want the rules after the state", own, ro)
	}
}

// TestStrictCodexArgsOnce: the -c overrides aisan adds reach Codex once
// each, when a backend's client settings repeat aisan's own switches (as
// explain shows them).
func TestStrictCodexArgsOnce(t *testing.T) {
	o := strictBase()
	o.Kind = KindCodex
	o.Command = []string{"codex", "exec", "hi"}
	o.AgentArgs = []string{"-c", `model_provider="aisan"`, "-c", "check_for_update_on_startup=false", "-c", `web_search="disabled"`}
	cmd := Strict(o).Command
	for _, kv := range []string{`model_provider="aisan"`, "check_for_update_on_startup=false", `web_search="disabled"`, "analytics.enabled=false"} {
		if n := slices.Index(cmd, kv); n < 0 || slices.Index(cmd[n+1:], kv) >= 0 {
			t.Errorf("%s is not in codex's arguments exactly once: %q", kv, cmd)
		}
	}
	if got := cmd[len(cmd)-2:]; !slices.Equal(got, []string{"exec", "hi"}) {
		t.Errorf("the user's arguments do not come last: %q", cmd)
	}
}

// TestBoxPath: the box's PATH keeps the host's order for every directory
// the box shows (the system's, the repository's, a bind spec's), drops
// what it hides (the home's tmpfs), puts what the agent and the specs add
// beyond the host's PATH first, and always ends with the system's.
func TestBoxPath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*StrictOptions)
		want  string
		shows map[string]bool
	}{
		{name: "fixed when the host has nothing", edit: func(*StrictOptions) {}, want: "/usr/local/bin:/usr/bin:/bin"},
		{name: "host order for what the box shows", edit: func(o *StrictOptions) {
			o.HostPath = []string{"/h/.nvm/v22/bin", "/usr/local/go/bin", "/w/r/node_modules/.bin", "/opt/x/bin", "/usr/bin", "/bin"}
		}, want: "/usr/local/go/bin:/w/r/node_modules/.bin:/usr/bin:/bin:/usr/local/bin",
			shows: map[string]bool{"/h/.nvm/v22/bin": false, "/usr/local/go/bin": true, "/w/r": true, "/opt/x/bin": false, "/tmp/x": false}},
		{name: "a bind spec's ro shows a host entry in its place", edit: func(o *StrictOptions) {
			o.HostPath = []string{"/usr/local/go/bin", "/h/.nvm/v22/bin", "/usr/bin"}
			o.Binds = []Mount{{Kind: ROBind, Src: "/h/.nvm/v22", Dst: "/h/.nvm/v22"}}
		}, want: "/usr/local/go/bin:/h/.nvm/v22/bin:/usr/bin:/usr/local/bin:/bin"},
		{name: "a tmpfs over it hides it again", edit: func(o *StrictOptions) {
			o.HostPath = []string{"/h/.nvm/v22/bin", "/usr/bin"}
			o.Binds = []Mount{{Kind: ROBind, Src: "/h/.nvm/v22", Dst: "/h/.nvm/v22"}, {Kind: Tmpfs, Dst: "/h/.nvm"}}
		}, want: "/usr/bin:/usr/local/bin:/bin"},
		{name: "a spec's path beyond the host's comes first; one on it keeps its place", edit: func(o *StrictOptions) {
			o.HostPath = []string{"/usr/local/go/bin", "/h/.local/bin", "/usr/bin"}
			o.BindPath = []string{"/opt/sdk/bin", "/h/.local/bin"}
		}, want: "/opt/sdk/bin:/usr/local/go/bin:/h/.local/bin:/usr/bin:/usr/local/bin:/bin"},
		{name: "the agent's directories", edit: func(o *StrictOptions) {
			o.HostPath = []string{"/h/.nvm/v22/bin", "/usr/bin"}
			o.ToolDirs = []string{"/h/.nvm/v22/bin", "/h/.nvm/v22/lib/node_modules"}
			o.PathDirs = []string{"/h/.nvm/v22/bin", "/opt/agent/bin"}
		}, want: "/opt/agent/bin:/h/.nvm/v22/bin:/usr/bin:/usr/local/bin:/bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := strictBase()
			o.Root = []RootEntry{{Path: "/bin", Link: "usr/bin"}}
			tc.edit(&o)
			if got := o.PATH(); got != tc.want {
				t.Errorf("PATH %s, want %s", got, tc.want)
			}
			env := Strict(o).Env
			if !slices.Contains(env, "PATH="+tc.want) {
				t.Errorf("the box's environment has another PATH: %q", env)
			}
			for p, want := range tc.shows {
				if o.Shows(p) != want {
					t.Errorf("Shows(%s) = %v", p, !want)
				}
			}
		})
	}
}

// TestStrictRawRelayPinned: a raw relay's socket is bound by the
// descriptor of the socket that was checked, never by its path again.
func TestStrictRawRelayPinned(t *testing.T) {
	o := StrictOptions{Kind: KindRun, Repo: "/home/u/r", Cwd: "/home/u/r", Home: "/home/u", Command: []string{"true"},
		Egress: []Endpoint{{Name: "db", Port: 20001, Socket: "/run/user/1/aisan/x/egress/db.sock", Source: "/home/u/r/.run/db.sock", SourceDev: 7, SourceIno: 42, Var: "AISAN_EGRESS_DB"}}}
	var found bool
	for _, m := range Strict(o).Mounts {
		if m.Dst == "/run/user/1/aisan/x/egress/db.sock" {
			found = true
			if m.Kind != ROBind || m.Pin != PinSocket || m.PinDev != 7 || m.PinIno != 42 {
				t.Errorf("the relay's mount: %+v, want a read-only bind pinned to the checked socket", m)
			}
		}
	}
	if !found {
		t.Fatal("no mount for the relay's socket")
	}
}

// TestStrictHidesAisanRun: a bind that shows the box aisan's state dir
// (a bind spec's ro = ["~/.aisan"]) does not show it the locks in aisan's
// run directory there; without such a bind nothing is added.
func TestStrictHidesAisanRun(t *testing.T) {
	o := strictBase()
	o.AisanRun = []string{"/h/.aisan/run"}
	hidden := func(s Spec) bool {
		return slices.ContainsFunc(s.Mounts, func(m Mount) bool { return m.Kind == Tmpfs && m.Dst == "/h/.aisan/run" })
	}
	if hidden(Strict(o)) {
		t.Error("a tmpfs over /h/.aisan/run although no bind shows it")
	}
	o.Binds = []Mount{{Kind: ROBind, Src: "/h/.aisan", Dst: "/h/.aisan", Why: "bind spec b.toml:1"}}
	s := Strict(o)
	if !hidden(s) {
		t.Errorf("/h/.aisan bound read-only and its run directory shown: %+v", s.Mounts)
	}
	if _, err := Compile(s, Host{}); err != nil {
		t.Errorf("Compile: %v", err)
	}
}

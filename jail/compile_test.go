package jail

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/boxinit"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the argv sections of testdata/compile/*.txtar")

// goldenInput is the reviewable input section of a compile golden: a
// preset name and its options, or a literal Spec.
type goldenInput struct {
	Preset  string          `json:"preset"`
	Options json.RawMessage `json:"options"`
	Host    Host            `json:"host"`
}

func specFor(t *testing.T, in goldenInput) Spec {
	t.Helper()
	switch in.Preset {
	case "deny":
		var o DenyOptions
		mustDecode(t, in.Options, &o)
		return DenyList(o)
	case "strict":
		var o StrictOptions
		mustDecode(t, in.Options, &o)
		return Strict(o)
	case "spec":
		var s Spec
		mustDecode(t, in.Options, &s)
		return s
	}
	t.Fatalf("unknown preset %q", in.Preset)
	return Spec{}
}

func mustDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding options: %v", err)
	}
}

// TestCompileGolden compiles every case in testdata/compile and compares
// the argv, one token per line. A diff here is a policy change: read it
// before running with -update.
func TestCompileGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/compile/*.txtar")
	if len(files) < 5 {
		t.Fatalf("only %d golden files", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in goldenInput
			var want []byte
			argvIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input.json":
					mustDecode(t, f.Data, &in)
				case "argv":
					want, argvIdx = f.Data, i
				}
			}
			spec := specFor(t, in)
			c, err := Compile(spec, in.Host)
			var got []byte
			if err != nil {
				got = []byte("error: " + err.Error() + "\n")
			} else {
				got = []byte(goldenArgv(c.Argv()))
				// Where each --bind-fd descriptor comes from.
				for i, p := range c.Pins {
					got = fmt.Appendf(got, "# fd %d: %s (%s)\n", boxinit.FDFirstPin+i, p.Path, p.Type)
				}
			}
			if *update {
				if argvIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "argv"})
					argvIdx = len(ar.Files) - 1
				}
				ar.Files[argvIdx].Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("argv differs from %s (run with -update after reviewing):\n%s", file, diff.Diff("want", want, "got", got))
			}
		})
	}
}

// TestCompileDoesNotChangeSpec proves Compile treats its Spec as frozen.
func TestCompileDoesNotChangeSpec(t *testing.T) {
	spec := DenyList(DenyOptions{
		Kind: KindClaude, Slot: "repo-1234abcd-claude", Command: []string{"claude", "--continue"},
		Cwd: "/work/repo", Env: []string{"HOME=/home/u", "PATH=/usr/bin"}, RuntimeDir: "/run/user/1000",
		RuntimeSystemd: true,
		Bus: busproxy.Plan{Mode: busproxy.Filtered, HostSockets: []string{"/run/user/1000/bus"}, ProxySocket: "/run/user/1000/aisan/x/bus",
			JailSocket: "/run/user/1000/bus", JailAddress: "unix:path=/run/user/1000/bus", Talk: []string{"org.freedesktop.secrets"}},
		MaskFile: "/run/user/1000/aisan/x/masked-bus",
		History:  []Mount{{Kind: Bind, Src: "/home/u/.aisan/history/s/claude.jsonl", Dst: "/home/u/.claude/history.jsonl"}},
	})
	spec.Mounts = append(spec.Mounts, Mount{Kind: Seal, Dst: "/opt", Holes: []string{"/opt/x"}})
	before := deepCopy(t, spec)
	if _, err := Compile(spec, Host{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, spec); d != "" {
		t.Fatalf("Compile changed the spec (-before +after):\n%s", d)
	}
}

func deepCopy(t *testing.T, s Spec) Spec {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var c Spec
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestValidate(t *testing.T) {
	base := func() Spec {
		return Spec{Command: []string{"true"}, Mounts: []Mount{{Kind: Bind, Src: "/", Dst: "/"}}}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		error string
	}{
		{"ok", func(*Spec) {}, ""},
		{"no command", func(s *Spec) { s.Command = nil }, "no command"},
		{"relative dst", func(s *Spec) { s.Mounts[0].Dst = "x" }, "not absolute"},
		{"relative src", func(s *Spec) { s.Mounts[0].Src = "x" }, "source \"x\" is not absolute"},
		{"bad kind", func(s *Spec) { s.Mounts[0].Kind = 99 }, "unknown kind"},
		{"hole outside seal", func(s *Spec) { s.Mounts = append(s.Mounts, Mount{Kind: Seal, Dst: "/a", Holes: []string{"/b"}}) }, "hole"},
		{"holes on bind", func(s *Spec) { s.Mounts[0].Holes = []string{"/x"} }, "only a seal"},
		{"bad env", func(s *Spec) { s.Env = []string{"NOEQUALS"} }, "KEY=VALUE"},
		{"relative cwd", func(s *Spec) { s.Cwd = "rel" }, "working directory"},
		{"symlink without target", func(s *Spec) { s.Mounts = append(s.Mounts, Mount{Kind: Symlink, Dst: "/x"}) }, "no target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(&s)
			err := Validate(s)
			if tc.error == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Fatalf("error %v, want one containing %q", err, tc.error)
			}
		})
	}
}

func TestOverlayNeedsNewBwrap(t *testing.T) {
	s := Spec{Command: []string{"true"}, Mounts: []Mount{{Kind: Overlay, Src: "/usr", Dst: "/usr"}}}
	if _, err := Compile(s, Host{BwrapVersion: [3]int{0, 8, 0}}); err == nil || !strings.Contains(err.Error(), "0.10.0") {
		t.Fatalf("overlay on bwrap 0.8: %v", err)
	}
	if _, err := Compile(s, Host{BwrapVersion: [3]int{0, 9, 1}}); err == nil {
		t.Fatal("overlay accepted on bwrap 0.9.1, which has none")
	}
	c, err := Compile(s, Host{BwrapVersion: [3]int{0, 10, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Options, " "); got != "--overlay-src /usr --tmp-overlay /usr" {
		t.Fatalf("overlay options %q", got)
	}
}

func TestMergeEnvSortedAndOverridden(t *testing.T) {
	got := boxinit.MergeEnv([]string{"B=1", "A=1", "C=x=y"}, []string{"B=2"}, []string{"junk", "=bad"})
	want := []string{"A=1", "B=2", "C=x=y"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

// goldenArgv writes one token per line, Go-quoting the tokens a line
// could not show faithfully.
func goldenArgv(argv []string) string {
	var b strings.Builder
	for _, a := range argv {
		if a == "" || strings.ContainsAny(a, "\n\r\t\"") || strings.TrimSpace(a) != a {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
		b.WriteByte('\n')
	}
	return b.String()
}

package opencode

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata")

// opencodeCase is one testdata/*.txtar file:
//
//	-- env --        KEY=VALUE lines: the environment, OPENCODE_PERMISSION included
//	-- layer NAME -- a config layer, in the order opencode merges them
//	                 ("project layer NAME" for one a box reads itself)
//	-- want --       the bash rules opencode ends up with from the user's
//	                 layers, then OPENCODE_PERMISSION=… for the jail, or
//	                 "unchanged", or "error: …"; then what a strict box
//	                 gets: its first layer's rules, its
//	                 OPENCODE_PERMISSION, the agents' rules left out
type opencodeCase struct {
	ar    *txtar.Archive
	setup Setup
	want  []byte
}

func readOpencodeCase(t *testing.T, path string) opencodeCase {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := opencodeCase{ar: ar}
	env := map[string]string{}
	for _, f := range ar.Files {
		name, shared := strings.CutPrefix(f.Name, "project ")
		switch name, ok := strings.CutPrefix(name, "layer "); {
		case ok:
			c.setup.Layers = append(c.setup.Layers, Layer{Name: name, Data: f.Data, Shared: shared})
		case f.Name == "env":
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				env[k] = v
			}
		case f.Name == "want":
			c.want = f.Data
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
	}
	c.setup.Permission = env["OPENCODE_PERMISSION"]
	c.setup.Getenv = func(k string) string { return env[k] }
	return c
}

// describe is what a want section says about s.
func describe(s Setup) []byte {
	var b bytes.Buffer
	eff, err := effectivePermission(s)
	if err == nil {
		b.WriteString("bash rules, the user's:\n")
		for _, r := range opencodeRules(eff) {
			if wildcardMatch("bash", r.Permission) {
				fmt.Fprintf(&b, "  %q %q %s\n", r.Permission, r.Pattern, r.Action)
			}
		}
	}
	v, set, err := Permission(s)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "error: %v\n", err)
	case !set:
		b.WriteString("unchanged\n")
	default:
		fmt.Fprintf(&b, "OPENCODE_PERMISSION=%s\n", v)
	}
	if box, err := BoxRules(s); err == nil {
		fmt.Fprintf(&b, "strict box:\n  rules %s\n  OPENCODE_PERMISSION=%s\n", box.Rules, box.Permission)
		for _, a := range box.AgentRules {
			fmt.Fprintf(&b, "  left out: agent %q of %s\n", a.Agent, a.Layer)
		}
	}
	return b.Bytes()
}

// TestOpencodeGolden runs testdata/opencode: the rules a setup gives, and
// what a jailed opencode gets. Every value set must keep the user's
// OPENCODE_PERMISSION, end with our denies and be stable when fed back.
func TestOpencodeGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			c := readOpencodeCase(t, path)
			got := describe(c.setup)
			if *update {
				for i := range c.ar.Files {
					if c.ar.Files[i].Name == "want" {
						c.ar.Files[i].Data = got
					}
				}
				if err := os.WriteFile(path, txtar.Format(c.ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, c.want) {
				t.Fatalf("%s", diff.Diff("want", c.want, "got", got))
			}
			checkOpencodeValue(t, c.setup)
		})
	}
}

// checkOpencodeValue checks the properties every result must have.
func checkOpencodeValue(t *testing.T, s Setup) {
	t.Helper()
	checkOpencodeBox(t, s)
	v, set, err := Permission(s)
	if err != nil || !set {
		return
	}
	final, err := effectivePermission(Setup{Layers: s.Layers, Getenv: s.Getenv, Permission: v})
	if err != nil {
		t.Fatalf("the value set does not read back: %v\n%s", err, v)
	}
	rules := opencodeRules(final)
	n := len(opencodeDenied)
	if len(rules) < n {
		t.Fatalf("too few rules in %s", v)
	}
	for i, r := range rules[len(rules)-n:] {
		if !wildcardMatch("bash", r.Permission) || r.Pattern != opencodeDenied[i] || r.Action != "deny" {
			t.Errorf("rule %d from the end is %+v, want a deny of %q for bash\nvalue %s", n-i, r, opencodeDenied[i], v)
		}
	}
	user, err := effectivePermission(Setup{Layers: s.Layers, Getenv: s.Getenv, Permission: s.Permission})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rules[:len(rules)-n], opencodeRules(user); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the user's rules changed:\n got %v\nwant %v", got, want)
	}
	if u := strings.TrimSpace(s.Permission); u != "" {
		var compact bytes.Buffer
		json.Compact(&compact, []byte(u))
		if !strings.HasPrefix(v, strings.TrimSuffix(compact.String(), "}")) {
			t.Errorf("the user's OPENCODE_PERMISSION %s is not kept at the start of %s", u, v)
		}
	}
	again, _, err := Permission(Setup{Layers: s.Layers, Getenv: s.Getenv, Permission: v})
	if err != nil || !strings.HasPrefix(again, strings.TrimSuffix(v, "}")) {
		t.Errorf("fed back, %s gives %s, %v", v, again, err)
	}
}

// checkOpencodeBox checks what a strict box gets: its rules, as its only
// layer, are the host's rules in the host's order; its
// OPENCODE_PERMISSION over them adds aisan's two kill rules at the end
// and nothing else (or none, when bash is denied outright).
func checkOpencodeBox(t *testing.T, s Setup) {
	t.Helper()
	box, err := BoxRules(s)
	if err != nil || len(box.Secret) > 0 {
		// Rules left out for a secret are checked in TestOpencodeBoxSecrets.
		return
	}
	host, _ := effectivePermission(s)
	layer := Layer{Name: "box", Data: []byte(`{"permission":` + box.Rules + `}`)}
	inBox, err := effectivePermission(Setup{Layers: []Layer{layer}})
	if err != nil {
		t.Fatalf("the box's rules do not read back: %v\n%s", err, box.Rules)
	}
	if got, want := opencodeRules(inBox), opencodeRules(host); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the box's rules differ from the host's:\n got %v\nwant %v", got, want)
	}
	final, err := effectivePermission(Setup{Layers: []Layer{layer}, Permission: box.Permission})
	if err != nil {
		t.Fatalf("the box's OPENCODE_PERMISSION does not read back: %v\n%s", err, box.Permission)
	}
	rules, want := opencodeRules(final), opencodeRules(host)
	if bashDeniedOutright(host) {
		if fmt.Sprint(rules) != fmt.Sprint(want) {
			t.Errorf("with bash denied outright the box's rules changed:\n got %v\nwant %v", rules, want)
		}
		return
	}
	n := len(opencodeDenied)
	if len(rules) != len(want)+n || fmt.Sprint(rules[:len(want)]) != fmt.Sprint(want) {
		t.Fatalf("the box's final rules %v are not the host's %v and the kill rules", rules, want)
	}
	for i, r := range rules[len(want):] {
		if !wildcardMatch("bash", r.Permission) || r.Pattern != opencodeDenied[i] || r.Action != "deny" {
			t.Errorf("the box's rule %d from the end is %+v", n-i, r)
		}
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		s, pattern string
		want       bool
	}{
		{"bash", "bash", true},
		{"bash", "*", true},
		{"bash", "bash*", true},
		{"bash", "bash**", true},
		{"bash", "b?sh", true},
		{"bash", "bas", false},
		{"bashx", "bash", false},
		{"pkill", "pkill *", true},
		{"pkill -f x", "pkill *", true},
		{"pkillx", "pkill *", false},
		{"killall -9 a", "killall *", true},
		{"git status", "git *", true},
		{"a.b", "a.b", true},
		{"axb", "a.b", false},
		{"a+b", "a+b", true},
		{"(x)", "(x)", true},
		{`a\b`, "a/b", true},
		{"line\nnext", "line*", true},
		{"~/x", "~/x", true},
	} {
		if got := wildcardMatch(tc.s, tc.pattern); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tc.s, tc.pattern, got, tc.want)
		}
	}
}

// JavaScript puts array-index keys first; opencode's rule order follows.
func TestJSObjectOrder(t *testing.T) {
	o := &jsObject{}
	for _, k := range []string{"b", "10", "a", "2", "01", "4294967295", "4294967294", "b"} {
		o.set(k, jsValue{kind: '"', str: k})
	}
	want := []string{"2", "10", "4294967294", "b", "a", "01", "4294967295"}
	if fmt.Sprint(o.keys) != fmt.Sprint(want) {
		t.Errorf("keys %q, want %q", o.keys, want)
	}
}

func TestMergeDeep(t *testing.T) {
	parse := func(s string) *jsObject {
		p, err := parseEnvPermission([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	show := func(o *jsObject) string {
		var parts []string
		for _, r := range opencodeRules(o) {
			parts = append(parts, r.Permission+"/"+r.Pattern+"="+r.Action)
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct{ a, b, want string }{
		// An object replaces a string and a string an object, in place.
		{`{"bash":"ask","edit":"deny"}`, `{"bash":{"git *":"allow"}}`, "bash/git *=allow edit/*=deny"},
		{`{"bash":{"git *":"allow"},"edit":"deny"}`, `{"bash":"ask"}`, "bash/*=ask edit/*=deny"},
		// Objects merge: known patterns keep their place, new ones go last.
		{`{"bash":{"*":"ask","rm *":"deny"}}`, `{"bash":{"rm *":"allow","ls *":"allow"}}`, "bash/*=ask bash/rm *=allow bash/ls *=allow"},
		{`{"edit":"ask"}`, `{"bash*":{"pkill *":"deny"}}`, "edit/*=ask bash*/pkill *=deny"},
	} {
		if got := show(mergeDeep(parse(tc.a), parse(tc.b))); got != tc.want {
			t.Errorf("mergeDeep(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

// writeTree creates files under root; a value starting with "->" makes a
// symlink to what follows.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if dest, ok := strings.CutPrefix(data, "->"); ok {
			err = os.Symlink(dest, p)
		} else {
			err = os.WriteFile(p, []byte(data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestGatherOpencode checks the layers and their order against what the
// real opencode 1.18 merges ('opencode debug config' on the same tree:
// the worktree's files outside in, json before jsonc, then the .opencode
// directories inside out, then ~/.opencode).
func TestGatherOpencode(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	writeTree(t, root, map[string]string{
		"home/.config/opencode/config.json":      `{}`,
		"home/.config/opencode/opencode.jsonc":   `{}`,
		"home/.opencode/opencode.json":           `{}`,
		"home/dotfiles/oc.json":                  `{"permission":{"bash":"ask"}}`,
		"home/.config/opencode/opencode.json":    "->../../dotfiles/oc.json",
		"proj/opencode.json":                     `{}`, // above the worktree: not read
		"proj/repo/.git/HEAD":                    "",
		"proj/repo/opencode.json":                `{}`,
		"proj/repo/opencode.jsonc":               `{}`,
		"proj/repo/.opencode/opencode.json":      `{}`,
		"proj/repo/sub/opencode.json":            `{}`,
		"proj/repo/sub/.opencode/opencode.jsonc": `{}`,
		"proj/repo/sub/dangling/opencode.json":   "->nowhere",
		"custom.json":                            `{}`,
		"managed/opencode.json":                  `{}`,
	})
	cwd := filepath.Join(root, "proj/repo/sub")
	env := map[string]string{
		"OPENCODE_CONFIG":                  filepath.Join(root, "custom.json"),
		"OPENCODE_CONFIG_CONTENT":          `{"share":"disabled"}`,
		"OPENCODE_TEST_MANAGED_CONFIG_DIR": filepath.Join(root, "managed"),
		"OPENCODE_PERMISSION":              `{"edit":"ask"}`,
	}
	getenv := func(k string) string { return env[k] }
	names := func(s Setup) string {
		var n []string
		for _, l := range s.Layers {
			n = append(n, strings.TrimPrefix(l.Name, root+"/"))
		}
		return strings.Join(n, "\n")
	}
	s, err := Gather(home, cwd, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := `home/.config/opencode/config.json
home/.config/opencode/opencode.json
home/.config/opencode/opencode.jsonc
custom.json
proj/repo/opencode.json
proj/repo/opencode.jsonc
proj/repo/sub/opencode.json
proj/repo/sub/.opencode/opencode.jsonc
proj/repo/.opencode/opencode.json
home/.opencode/opencode.json
OPENCODE_CONFIG_CONTENT
managed/opencode.json`
	if got := names(s); got != want {
		t.Errorf("layers:\n%s\nwant:\n%s", got, want)
	}
	if s.Permission != `{"edit":"ask"}` {
		t.Errorf("Permission = %q", s.Permission)
	}
	if string(s.Layers[1].Data) != `{"permission":{"bash":"ask"}}` {
		t.Errorf("the symlinked global config reads %q", s.Layers[1].Data)
	}
	var shared []string
	for _, l := range s.Layers {
		if l.Shared {
			shared = append(shared, strings.TrimPrefix(l.Name, root+"/"))
		}
	}
	if got, want := strings.Join(shared, "\n"), `proj/repo/opencode.json
proj/repo/opencode.jsonc
proj/repo/sub/opencode.json
proj/repo/sub/.opencode/opencode.jsonc
proj/repo/.opencode/opencode.json
managed/opencode.json`; got != want {
		t.Errorf("shared layers (the project's, the managed one):\n%s\nwant:\n%s", got, want)
	}

	env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "TRUE"
	env["XDG_CONFIG_HOME"] = filepath.Join(root, "xdg")
	env["OPENCODE_CONFIG_DIR"] = filepath.Join(root, "proj")
	s, err = Gather(home, cwd, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want = `custom.json
home/.opencode/opencode.json
proj/opencode.json
OPENCODE_CONFIG_CONTENT
managed/opencode.json`
	if got := names(s); got != want {
		t.Errorf("without the project's config, layers:\n%s\nwant:\n%s", got, want)
	}
}

// A config that is not a regular file, or too big, stops the launch; it
// is never read from a FIFO (which would block).
func TestGatherOpencodeRefuses(t *testing.T) {
	for name, make := range map[string]func(p string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"too big": func(p string) error {
			return os.WriteFile(p, bytes.Repeat([]byte(" "), maxLayerSize+1), 0o600)
		},
		"symlink to a fifo": func(p string) error {
			if err := syscall.Mkfifo(p+".fifo", 0o600); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".fifo", p)
		},
	} {
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.Mkdir(filepath.Join(cwd, ".git"), 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(cwd, "opencode.json")
			if err := make(p); err != nil {
				t.Fatal(err)
			}
			_, err := Gather(t.TempDir(), cwd, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming %s", err, p)
			}
			t.Log(err)
		})
	}
}

// BenchmarkOpencodeLaunch is what a launch pays: the lookups up a
// worktree and two config files read and decided.
func BenchmarkOpencodeLaunch(b *testing.B) {
	root := b.TempDir()
	home := filepath.Join(root, "home")
	cwd := filepath.Join(root, "src/repo/a/b")
	for _, d := range []string{filepath.Join(home, ".config/opencode"), filepath.Join(root, "src/repo/.git"), cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for p, data := range map[string]string{
		filepath.Join(home, ".config/opencode/opencode.jsonc"): `{/* mine */ "permission": {"bash": "ask"}, "provider": {"x": {"options": {"apiKey": "{env:KEY}"}}}}`,
		filepath.Join(root, "src/repo/opencode.json"):          `{"permission": {"bash": {"*": "ask", "git *": "allow"}}}`,
	} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	getenv := func(string) string { return "" }
	for b.Loop() {
		s, err := Gather(home, cwd, getenv)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Permission(s); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzOpencodePermission(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.txtar")
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var layer, perm []byte
		for _, file := range ar.Files {
			if strings.HasPrefix(file.Name, "layer ") && layer == nil {
				layer = file.Data
			}
			if file.Name == "env" {
				for _, line := range strings.Split(string(file.Data), "\n") {
					if v, ok := strings.CutPrefix(line, "OPENCODE_PERMISSION="); ok {
						perm = []byte(v)
					}
				}
			}
		}
		f.Add(layer, perm)
	}
	f.Fuzz(func(t *testing.T, layer, perm []byte) {
		s := Setup{Layers: []Layer{{Name: "fuzz.jsonc", Data: layer}}, Permission: string(perm)}
		v1, set1, err1 := Permission(s)
		v2, set2, err2 := Permission(s)
		if v1 != v2 || set1 != set2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("not deterministic: %q %v %v / %q %v %v", v1, set1, err1, v2, set2, err2)
		}
		if err1 == nil && set1 && !json.Valid([]byte(v1)) {
			t.Fatalf("invalid JSON set: %s", v1)
		}
		checkOpencodeValue(t, s)
	})
}

// TestOpencodeBoxSecrets: a rule whose pattern looks like it holds a
// secret stays out of the box's rules and its OPENCODE_PERMISSION, and is
// named; the others come in.
func TestOpencodeBoxSecrets(t *testing.T) {
	layer := Layer{Name: "g", Data: []byte(`{"permission":{"bash":{"curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnop' *":"allow","touch *":"deny"}}}`)}
	box, err := BoxRules(Setup{Layers: []Layer{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(box.Rules+box.Permission, "sk-ant") || !strings.Contains(box.Rules, `"touch *":"deny"`) {
		t.Errorf("rules %s\npermission %s", box.Rules, box.Permission)
	}
	if len(box.Secret) != 1 || strings.Contains(box.Secret[0], "sk-ant") {
		t.Errorf("secret %q", box.Secret)
	}
}

//go:build !aisanfront

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// TestHelpListsItsFlags: what a command's help lists is what it parses.
// Completion and the manual page are read from the help, so they can
// offer nothing the command does not take, and miss nothing it takes.
func TestHelpListsItsFlags(t *testing.T) {
	for _, c := range commands {
		if c.hidden {
			continue
		}
		d := describe(c)
		if len(d.synopsis) == 0 {
			t.Errorf("%s: its help has no Usage line", c.name)
		}
		if d.flags == nil {
			continue
		}
		listed := map[string]bool{}
		for _, o := range d.options {
			for _, n := range o.names {
				name := strings.TrimLeft(n, "-")
				listed[name] = true
				if d.flags.Lookup(name) == nil && name != "h" && name != "help" {
					t.Errorf("%s: its help lists %s, which it does not parse", c.name, n)
				}
			}
		}
		d.flags.VisitAll(func(f *flag.Flag) {
			if !listed[f.Name] && f.Usage != hiddenFlag {
				t.Errorf("%s: it parses --%s, which its help does not list", c.name, f.Name)
			}
		})
	}
}

// TestLauncherHelp: each launcher lists the strict options it honours,
// and only those; every help names strict mode.
func TestLauncherHelp(t *testing.T) {
	want := map[string][]string{
		"run":      {"--strict", "--binds", "--env", "--egress", "--allow-host", "--budget", "--rate", "--net"},
		"claude":   {"--strict", "--binds", "--env", "--egress", "--allow-host", "--api-key", "--vertex", "--mcp-env", "--no-mcp", "--budget", "--rate", "--net", "--skip-permissions"},
		"codex":    {"--strict", "--binds", "--env", "--egress", "--allow-host", "--mcp-env", "--no-mcp", "--budget", "--rate", "--net", "--skip-permissions"},
		"opencode": {"--strict", "--binds", "--env", "--egress", "--allow-host", "--mcp-env", "--no-mcp", "--budget", "--rate", "--net"},
	}
	for kind, opts := range want {
		c, _ := lookupCommand(kind)
		d := describe(c)
		var got []string
		for _, o := range d.options {
			if o.long() != "--explain" && o.long() != "--help" && !strings.HasSuffix(o.long(), "-max") && o.long() != "--cpu-quota" {
				got = append(got, o.long())
			}
		}
		if !slices.Equal(got, opts) {
			t.Errorf("%s --help lists %q, want %q", kind, got, opts)
		}
	}
	var b bytes.Buffer
	printUsage(&b)
	if !strings.Contains(b.String(), "--strict") {
		t.Errorf("aisan --help does not name strict mode:\n%s", b.String())
	}
}

func TestParseHelp(t *testing.T) {
	d := parseHelp(strings.TrimLeft(logsUsage, "\n"))
	if len(d.synopsis) != 2 || d.synopsis[1] != "aisan logs --launches SLOT" {
		t.Errorf("synopsis %q", d.synopsis)
	}
	o, ok := d.option("--launch")
	if !ok || o.metavar != "N" || !strings.HasPrefix(o.text, "print launch N") {
		t.Errorf("--launch: %+v", o)
	}
	o, ok = d.option("-f")
	if !ok || o.metavar != "" || o.long() != "--follow" {
		t.Errorf("-f: %+v", o)
	}
	o, _ = d.option("--launches")
	if !strings.HasSuffix(o.text, "exit status and size") {
		t.Errorf("continuation lines: %q", o.text)
	}
	s := parseHelp(strings.TrimLeft(spawnServiceUsage, "\n"))
	if o, _ := s.option("--restart"); o.metavar != "on-failure" {
		t.Errorf("--restart metavar %q", o.metavar)
	}
	if got := placeholderAt(d, 0); got != "SLOT" {
		t.Errorf("logs' first argument is %q", got)
	}
	if got := placeholderAt(describe(must(lookupCommand("kill"))), 3); got != "SLOT..." {
		t.Errorf("kill's fourth argument is %q", got)
	}
}

func must(c command, ok bool) command {
	if !ok {
		panic("no such command")
	}
	return c
}

func TestComplete(t *testing.T) {
	c := completer{
		live: func() []candidate { return []candidate{{"repo-1-claude", "running"}} },
		all:  func() []candidate { return []candidate{{"repo-1-claude", "running"}, {"old-2-run", "exited"}} },
	}
	for _, tc := range []struct {
		words []string
		want  []string
		then  fallback
	}{
		{[]string{"k"}, []string{"kill"}, thenNone},
		{[]string{"pr"}, []string{"prune", "preflight"}, thenNone},
		{[]string{"__"}, nil, thenNone},
		{[]string{"kill", ""}, []string{"repo-1-claude"}, thenNone},
		{[]string{"kill", "repo-1-claude", ""}, []string{"repo-1-claude"}, thenNone},
		{[]string{"logs", ""}, []string{"repo-1-claude", "old-2-run"}, thenNone},
		{[]string{"logs", "--launch", ""}, nil, thenNone},
		{[]string{"logs", "--la"}, []string{"--launches", "--launch"}, thenNone},
		{[]string{"kill", "--signal", "K"}, []string{"KILL"}, thenNone},
		{[]string{"kill", "--signal=T"}, []string{"--signal=TERM"}, thenNone},
		{[]string{"shell-init", ""}, []string{"bash", "zsh", "fish"}, thenNone},
		{[]string{"completion", "z"}, []string{"zsh"}, thenNone},
		{[]string{"help", "ki"}, []string{"kill"}, thenNone},
		{[]string{"explain", "c"}, []string{"claude", "codex"}, thenNone},
		{[]string{"explain", "run", "--str"}, []string{"--strict"}, thenNone},
		{[]string{"claude", "--api"}, []string{"--api-key"}, thenNone},
		{[]string{"run", "--api"}, nil, thenNone},
		{[]string{"run", "--binds", ""}, []string{"go", "node", "python", "rust"}, thenFiles},
		{[]string{"run", "--binds", "n"}, []string{"node"}, thenFiles},
		{[]string{"run", "--", ""}, nil, thenCommands},
		{[]string{"run", "make", "--"}, nil, thenFiles},
		{[]string{"claude", "--continue", ""}, nil, thenFiles},
		{[]string{"spawn-service", "x", "--restart", ""}, []string{"on-failure"}, thenNone},
		{[]string{"prune", "--o"}, []string{"--older"}, thenNone},
		{[]string{"list", "--r"}, []string{"--running"}, thenNone},
		{[]string{"nosuch", ""}, nil, thenFiles},
	} {
		cands, then := c.complete(tc.words[:len(tc.words)-1], tc.words[len(tc.words)-1])
		var got []string
		for _, cd := range cands {
			got = append(got, cd.value)
		}
		if !slices.Equal(got, tc.want) || then != tc.then {
			t.Errorf("complete %q = %q, %s; want %q, %s", tc.words, got, then, tc.want, tc.then)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"run", "claude", "codex", "opencode", "list", "kill", "logs", "prune", "preflight"}
	for word, want := range map[string]string{
		"claud":  "claude",
		"cladue": "claude",
		"lsit":   "list",
		"kil":    "kill",
		"prefl":  "preflight",
		"frob":   "",
		"x":      "",
		"":       "",
	} {
		if got := nearest(word, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"90m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "1.5d": 36 * time.Hour, "0s": 0} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1h", "-2d", "xd", "NaNd", "1e300w", "7"} {
		if _, err := parseAge(bad); err == nil {
			t.Errorf("parseAge(%q) took it", bad)
		}
	}
}

func TestWriteVersion(t *testing.T) {
	look := func(name string) toolVersion {
		if name == "bwrap" {
			return toolVersion{path: "/usr/bin/bwrap", version: "0.8.0"}
		}
		return toolVersion{}
	}
	var b bytes.Buffer
	writeVersion(&b, buildVersion{module: "v1.2.3", commit: "0123456789abcdef0123456789abcdef01234567", dirty: true, date: "2026-05-01", goVer: "go1.26.0"}, look)
	want := "aisan v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567+dirty, 2026-05-01) go1.26.0\nbwrap 0.8.0 /usr/bin/bwrap\nxdg-dbus-proxy not found in PATH\n"
	if b.String() != want {
		t.Errorf("version:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestEgressLogAligned: the columns line up whatever a backend or a
// method is called.
func TestEgressLogAligned(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AISAN_HOME", home)
	p, err := strictbox.AuditPath("s-1-run")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o700)
	var lines []byte
	for _, e := range []audit.Entry{
		{Time: time.Unix(1, 0), Backend: "anthropic", Method: "POST", Path: "/v1/messages", Status: 200},
		{Time: time.Unix(2, 0), Backend: "openai-compatible:standin", Method: "CONNECT", Path: "registry.test:443", Status: 403, Refused: "not on the allow-list"},
		{Time: time.Unix(3, 0), Backend: "hosts", Method: "GET", Path: "/", Status: 200},
	} {
		b, _ := json.Marshal(e)
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(p, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printEgressLog(&out, "s-1-run", false); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	col := -1
	for _, r := range rows {
		i := strings.Index(r, " up ")
		if col >= 0 && i != col {
			t.Fatalf("columns do not line up:\n%s", out.String())
		}
		col = i
	}
}

// TestManPage: the manual page renders without a warning, with every
// command and every variable of the README's table.
func TestManPage(t *testing.T) {
	var b bytes.Buffer
	if err := writeMan(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, c := range commands {
		if !c.hidden && !strings.Contains(page, ".SS "+roff("aisan "+c.name, true)+"\n") {
			t.Errorf("the manual page has no section for %s", c.name)
		}
	}
	if !strings.Contains(page, "\\fBAISAN_HOME\\fR") {
		t.Errorf("the manual page lacks the environment")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed")
	}
	for _, dev := range []string{"-Tutf8", "-Tascii"} {
		cmd := exec.Command(groff, "-man", dev, "-ww", "-z")
		cmd.Stdin = strings.NewReader(page)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s -ww: %v\n%s", dev, err, out)
		}
	}
}

func TestRoff(t *testing.T) {
	for _, c := range []struct {
		in   string
		code bool
		want string
	}{
		{"a deny-list jail, --strict", false, "a deny-list jail, \\-\\-strict"},
		{".dot first", false, "\\&.dot first"},
		{"back\\slash → é…", false, "back\\eslash \\(-> \\[u00E9]..."},
		{"aisan logs -f", true, "aisan logs \\-f"},
		{"('--grace')", false, "('\\-\\-grace')"},
	} {
		if got := roff(c.in, c.code); got != c.want {
			t.Errorf("roff(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// long is the option's long name ("--follow"), or its only one.
func (o helpOption) long() string {
	for _, n := range o.names {
		if strings.HasPrefix(n, "--") {
			return n
		}
	}
	return o.names[0]
}

// TestPrintsOnly: only commands that read and print go without the
// SIGPIPE handler; every launcher and every command that changes state
// keeps it, so that a closed pipe cannot end it halfway.
func TestPrintsOnly(t *testing.T) {
	want := map[string]bool{
		"list": true, "version": true, "help": true, "completion": true, "shell-init": true, completeCommand: true,
		"--help": true, "-h": true, "--version": true, "no-such-command": true,
	}
	for _, c := range commands {
		if got := printsOnly([]string{c.name}); got != want[c.name] {
			t.Errorf("printsOnly(%q) = %v, want %v", c.name, got, want[c.name])
		}
	}
	for name := range want {
		if !printsOnly([]string{name, "x"}) {
			t.Errorf("printsOnly(%q) = false", name)
		}
	}
	if !printsOnly(nil) {
		t.Error("printsOnly(nil) = false: the usage only prints")
	}
}

// TestSayEscapes: what the packages say reaches the terminal inert (a
// note may name what a box wrote), one line per line.
func TestSayEscapes(t *testing.T) {
	var b strings.Builder
	say(&b)(jail.Warning, "go.mod replaces \x1b]0;owned\a\x1b[2J\rx\nsecond line")
	if want := "aisan: warning: go.mod replaces \\x1b]0;owned\\a\\x1b[2J\\rx\nsecond line\n"; b.String() != want {
		t.Errorf("said %q, want %q", b.String(), want)
	}
}

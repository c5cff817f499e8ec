package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// prompt is a system prompt as a user keeps it in a file: several lines,
// both quotes, dollar signs, backslashes, globs and a blank line. It ends
// without a newline because "$(…)" strips trailing newlines by design.
const prompt = "You are careful.\n\n  Quote \"this\" and 'that'; cost: $5, $HOME, ${x}, $(date), `id`.\n" +
	"Backslash \\n is not a newline; glob * ? [a]; tab\there; %s %d; -- --flag\nnon-ASCII: é → ✓ "

// fakes are stand-ins on PATH: each writes its name and its arguments,
// NUL-separated, to $ARGV_OUT, so the test sees exactly what arrived.
// The aisan on PATH is a decoy: the functions must run the one Script was
// given, which lies off PATH in a directory whose name needs quoting.
var fakes = []string{"aisan-on-PATH", "claude", "codex", "opencode"}

// oddDir is a directory name that every shell's quoting must carry.
const oddDir = `it's a "dir" \ $HOME *`

// shells maps each shell to the argv that runs a command line after
// sourcing $AISAN_SCRIPT, with no user configuration.
var shells = map[string][]string{
	"bash": {"bash", "--norc", "--noprofile", "-c", `source "$AISAN_SCRIPT"; `},
	"zsh":  {"zsh", "-f", "-c", `source "$AISAN_SCRIPT"; `},
	"fish": {"fish", "--no-config", "-c", `source $AISAN_SCRIPT; `},
}

// needShell skips when name is missing, unless CI forbids skipping.
func needShell(t *testing.T, name string) {
	t.Helper()
	_, err := exec.LookPath(name)
	jailtest.Need(t, name+" (apt-get install "+name+")", err)
}

// run runs line in shell after sourcing its integration script, with env
// added, and returns the argv a fake recorded.
func run(t *testing.T, shell, line string, env ...string) []string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	own := filepath.Join(dir, oddDir)
	os.Mkdir(own, 0o755)
	for _, name := range append(fakes, "aisan") {
		fake := "#!/bin/sh\nprintf '%s\\0' " + name + " \"$@\" > \"$ARGV_OUT\"\n"
		at := filepath.Join(own, name)
		if name != "aisan" {
			at = filepath.Join(bin, strings.TrimSuffix(name, "-on-PATH"))
		}
		if err := os.WriteFile(at, []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := Script(shell, filepath.Join(own, "aisan"))
	if err != nil {
		t.Fatal(err)
	}
	scriptPath := filepath.Join(dir, "aisan."+shell)
	promptPath := filepath.Join(dir, "prompt.md")
	out := filepath.Join(dir, "argv")
	os.WriteFile(scriptPath, []byte(script), 0o644)
	os.WriteFile(promptPath, []byte(prompt), 0o644)

	argv := append(append([]string(nil), shells[shell]...), "")
	argv[len(argv)-2] += line
	argv = argv[:len(argv)-1]
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		// The test may itself run in a jail; the cases set these.
		if !strings.HasPrefix(kv, "AISAN_JAIL=") && !strings.HasPrefix(kv, "NO_AISAN=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"), "AISAN_SCRIPT="+scriptPath,
		"PROMPT_FILE="+promptPath, "ARGV_OUT="+out, "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	cmd.Env = append(cmd.Env, env...)
	if combined, err := cmd.CombinedOutput(); err != nil || len(combined) > 0 {
		t.Fatalf("%s -c %q: %v\n%s", shell, line, err, combined)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%s: nothing ran: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

func TestFunctions(t *testing.T) {
	for _, shell := range Shells {
		t.Run(shell, func(t *testing.T) {
			needShell(t, shell)
			promptArg := `"$(cat "$PROMPT_FILE")"`
			if shell == "fish" {
				promptArg = `"$(cat $PROMPT_FILE)"`
			}
			for _, c := range []struct {
				name, line string
				env        []string
				want       []string
			}{
				{"prompt from a file", "claude --append-system-prompt " + promptArg, nil,
					[]string{"aisan", "claude", "--", "--append-system-prompt", prompt}},
				{"inside a jail", "claude --append-system-prompt " + promptArg, []string{"AISAN_JAIL=myrepo-3f9c2a1b-claude"},
					[]string{"claude", "--append-system-prompt", prompt}},
				{"NO_AISAN", "claude --append-system-prompt " + promptArg, []string{"NO_AISAN=1"},
					[]string{"claude", "--append-system-prompt", prompt}},
				{"empty NO_AISAN", "claude -p hi", []string{"NO_AISAN="},
					[]string{"aisan", "claude", "--", "-p", "hi"}},
				{"codex", `codex exec "two words" ''`, nil,
					[]string{"aisan", "codex", "--", "exec", "two words", ""}},
				{"opencode without arguments", "opencode", nil,
					[]string{"aisan", "opencode", "--"}},
				{"opencode inside a jail", "opencode run --model x", []string{"AISAN_JAIL=s"},
					[]string{"opencode", "run", "--model", "x"}},
			} {
				got := run(t, shell, c.line, c.env...)
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: %s\n got argv %q\nwant argv %q", c.name, c.line, got, c.want)
				}
			}
		})
	}
}

// The functions must be definable when the user already has an alias of
// the same name (Claude Code's local installer adds one).
func TestAliasDoesNotBreakDefinitions(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			needShell(t, shell)
			script, _ := Script(shell, "/usr/local/bin/aisan")
			path := filepath.Join(t.TempDir(), "aisan.sh")
			os.WriteFile(path, []byte(script), 0o644)
			line := "alias claude=/nonexistent/claude\nsource " + path + "\necho ok\n"
			flags := map[string][]string{"bash": {"--norc", "--noprofile", "-i"}, "zsh": {"-f", "-i"}}[shell]
			cmd := exec.Command(shell, flags...)
			cmd.Stdin = strings.NewReader(line)
			cmd.Env = append(os.Environ(), "PS1=", "HOME="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), "ok") || strings.Contains(stderr.String(), "syntax") || strings.Contains(stderr.String(), "parse error") {
				t.Errorf("sourcing with an alias defined: %v\nstdout %q\nstderr %q", err, out, stderr.String())
			}
		})
	}
}

func TestScript(t *testing.T) {
	for _, name := range Shells {
		s, err := Script(name, "/opt/aisan/bin/aisan")
		if err != nil || !strings.Contains(s, "command '/opt/aisan/bin/aisan' ") || strings.Contains(s, runAisan) {
			t.Errorf("Script(%q) = %q, %v; want the functions to run /opt/aisan/bin/aisan", name, s, err)
		}
		if s, err := Script(name, ""); err != nil || !strings.Contains(s, runAisan) {
			t.Errorf("Script(%q, \"\") = %v; want aisan looked up on PATH", name, err)
		}
		if _, err := Script(name, "bin/aisan"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("Script(%q, a relative path) = %v, want it refused", name, err)
		}
	}
	if _, err := Script("tcsh", "/usr/bin/aisan"); err == nil || !strings.Contains(err.Error(), "bash, zsh, fish") {
		t.Errorf("Script(tcsh) = %v, want an error listing the supported shells", err)
	}
}

func TestQuote(t *testing.T) {
	for _, tt := range []struct{ in, posix, fish string }{
		{"/usr/bin/aisan", `'/usr/bin/aisan'`, `'/usr/bin/aisan'`},
		{"/it's/a b", `'/it'\''s/a b'`, `'/it\'s/a b'`},
		{`/back\slash/$x`, `'/back\slash/$x'`, `'/back\\slash/$x'`},
	} {
		if got := quotePOSIX(tt.in); got != tt.posix {
			t.Errorf("quotePOSIX(%q) = %s, want %s", tt.in, got, tt.posix)
		}
		if got := quoteFish(tt.in); got != tt.fish {
			t.Errorf("quoteFish(%q) = %s, want %s", tt.in, got, tt.fish)
		}
	}
}

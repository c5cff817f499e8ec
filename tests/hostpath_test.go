package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantScript runs in a jail as its agent would: into the directory $1
// (the user's ~/.local/bin, first on PATH) it writes a program under each
// name that follows $2, the marker file; each records that it ran, then
// runs the program the name stood for (the next arguments, as many),
// so that nothing but the marker gives it away.
const plantScript = `set -e
dir=$1 marker=$2
shift 2
mkdir -p "$dir"
while [ $# -gt 0 ]; do
	name=$1 real=$2
	shift 2
	printf '#!/bin/sh\necho "%s $*" >> "%s"\nexec "%s" "$@"\n' "$name" "$marker" "$real" > "$dir/$name"
	chmod 755 "$dir/$name"
done
`

// TestHostPathPlant: a deny-list jail writes where the user writes, so
// its agent can put a program into ~/.local/bin, which many hosts put
// before /usr/bin on PATH. Under the names of what aisan runs outside
// every jail (bwrap, which is each launch's sandbox; xdg-dbus-proxy, which
// holds the host's session bus; aisan itself, which the shell functions
// run for every claude), a planted program would run unjailed at the
// user's next launch. The next launch, 'aisan version', and the next
// claude typed in bash, zsh and fish (their functions loaded as the
// README says) must each run the real one: no marker, and the jail works.
func TestHostPathPlant(t *testing.T) {
	requireSlots(t)
	_, err := exec.LookPath("dbus-send")
	need(t, "dbus-send (apt-get install dbus)", err)
	home, env := testEnv(t)
	work := t.TempDir()
	planted := filepath.Join(home, ".local", "bin")
	marker := filepath.Join(home, "planted-ran")
	path := "PATH=" + planted + ":" + os.Getenv("PATH")
	env = append(env, path)

	args := []string{"run", "--", "sh", "-c", plantScript, "sh", planted, marker}
	for _, name := range []string{"bwrap", "xdg-dbus-proxy"} {
		real, err := exec.LookPath(name)
		need(t, name, err)
		args = append(args, name, real)
	}
	args = append(args, "aisan", aisanBin)
	if r := aisanIn(t, work, env, "", args...); r.code != 0 {
		t.Fatalf("planting from inside the jail: exit %d\n%s", r.code, r.stderr)
	}
	for _, name := range []string{"bwrap", "xdg-dbus-proxy", "aisan"} {
		if _, err := os.Stat(filepath.Join(planted, name)); err != nil {
			t.Fatalf("the jail could not plant %s, so the test shows nothing: %v", name, err)
		}
	}
	ran := func(t *testing.T, what string) {
		t.Helper()
		if data, err := os.ReadFile(marker); err == nil {
			t.Errorf("%s ran what the jail planted in %s, outside the jail:\n%s", what, planted, data)
			os.Remove(marker)
		}
	}

	// The next launch: its bwrap, and the proxy its bus client wakes.
	list := strings.Join(busListNames, " ")
	r := aisanIn(t, work, env, "", "run", "--", "sh", "-c", `echo "jailed as $AISAN_JAIL"; `+list+` >/dev/null && echo bus-ok`)
	if r.code != 0 || !strings.Contains(r.stdout, "jailed as "+filepath.Base(work)+"-") || !strings.Contains(r.stdout, "bus-ok") {
		t.Errorf("the next launch: exit %d, stdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	ran(t, "the next launch")

	r = aisanIn(t, work, env, "", "version")
	if r.code != 0 || strings.Contains(r.stdout, planted) {
		t.Errorf("aisan version: exit %d, reports the planted programs:\n%s%s", r.code, r.stdout, r.stderr)
	}
	ran(t, "aisan version")

	// The user's agent, typed at a shell whose rc file loads the functions
	// (by the aisan's absolute path, as the README says).
	fakes := filepath.Join(home, "agents")
	os.Mkdir(fakes, 0o755)
	if err := os.WriteFile(filepath.Join(fakes, "claude"), []byte("#!/bin/sh\necho \"claude in $AISAN_JAIL: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ shell, line string }{
		{"bash", `eval "$("$AISAN_BIN" shell-init bash)"; claude hello`},
		{"zsh", `eval "$("$AISAN_BIN" shell-init zsh)"; claude hello`},
		{"fish", `"$AISAN_BIN" shell-init fish | source; claude hello`},
	} {
		t.Run(c.shell, func(t *testing.T) {
			_, err := exec.LookPath(c.shell)
			need(t, c.shell, err)
			flags := map[string][]string{"bash": {"--norc", "--noprofile"}, "zsh": {"-f"}, "fish": {"--no-config"}}[c.shell]
			r := runCmd(t, work, append(env, "AISAN_BIN="+aisanBin, "PATH="+planted+":"+fakes+":"+os.Getenv("PATH")), "",
				c.shell, append(flags, "-c", c.line)...)
			if want := "claude in " + filepath.Base(work) + "-"; r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.Contains(r.stdout, ": hello") {
				t.Errorf("claude through the %s function: exit %d, stdout %q, want %q…\nstderr %s", c.shell, r.code, r.stdout, want, r.stderr)
			}
			ran(t, "claude through the "+c.shell+" function")
		})
	}
}

// TestHostPathOnlyMine: with no bwrap or xdg-dbus-proxy on PATH but the
// user's own copies in ~/.local/bin, launches use those (as before), and
// a jail can neither change them nor move their directory aside to put
// others at the same paths.
func TestHostPathOnlyMine(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	work := t.TempDir()
	mine := filepath.Join(home, ".local", "bin")
	// The rest of PATH: a few tools, and no bwrap nor proxy.
	tools := filepath.Join(t.TempDir(), "tools")
	os.MkdirAll(mine, 0o755)
	os.MkdirAll(tools, 0o755)
	for _, name := range []string{"sh", "cat", "mv", "cmp"} {
		p, err := exec.LookPath(name)
		need(t, name, err)
		if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	var originals []string
	for _, name := range []string{"bwrap", "xdg-dbus-proxy"} {
		p, err := exec.LookPath(name)
		need(t, name, err)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mine, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, p)
	}
	env = append(env, "PATH="+mine+":"+tools)
	script := `for p in bwrap xdg-dbus-proxy; do
	echo planted > "$1/$p" && echo "wrote $p"
done
mv "$1" "$1.aside" && echo "moved the directory"
echo launched`
	r := aisanIn(t, work, env, "", "run", "--", "sh", "-c", script, "sh", mine)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "launched\n") {
		t.Fatalf("the launch with the user's own bwrap: exit %d, stdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "wrote") || strings.Contains(r.stdout, "moved") {
		t.Errorf("the jail changed the bwrap or proxy the next launch runs:\n%s", r.stdout)
	}
	for i, name := range []string{"bwrap", "xdg-dbus-proxy"} {
		if c := runCmd(t, "", nil, "", "cmp", originals[i], filepath.Join(mine, name)); c.code != 0 {
			t.Errorf("%s/%s is not the user's copy any more: %s%s", mine, name, c.stdout, c.stderr)
		}
	}
}

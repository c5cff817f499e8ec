package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/systemd"
)

// These tests attack aisan's configuration from inside a real deny-list
// jail, then take the host's next step: the configuration sets how the
// next launch is built (strict or not, which sockets a box may reach),
// so no jail may write it, and no configuration may hand a box the
// user manager or a bus.

// configEnv is a test home with a configuration in
// $XDG_CONFIG_HOME/aisan and another in ~/.config/aisan (where an aisan
// started without the variable reads), both holding content.
func configEnv(t *testing.T, content string) (env []string, files []string) {
	t.Helper()
	home, env := testEnv(t)
	xdg := filepath.Join(t.TempDir(), "xdg")
	env = append(env, "XDG_CONFIG_HOME="+xdg)
	for _, d := range []string{filepath.Join(xdg, "aisan"), filepath.Join(home, ".config", "aisan")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, "config.toml")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return env, files
}

// TestConfigReadOnlyInJail: from inside a deny-list jail, rewriting the
// configuration (strict = true turned false), adding a file beside it,
// and moving its directory away all fail, in both places aisan reads it;
// the rest of the home stays writable.
func TestConfigReadOnlyInJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	// Another repository's strict box: this launch is a deny-list jail.
	content := "[repo.\"" + t.TempDir() + "\"]\nstrict = true\n"
	env, files := configEnv(t, content)
	script := `for f in "$@"; do
		d=$(dirname "$f")
		printf 'strict = false\n' 2>&1 >"$f" | grep -q 'Read-only' && echo rewrite:EROFS || echo rewrite:wrote
		(: >"$d/extra.toml") 2>&1 | grep -q 'Read-only' && echo add:EROFS || echo add:wrote
		mv "$d" "$d.moved" 2>/dev/null && echo move:moved || echo move:refused
	done
	: >"$HOME/.config/transparent" && echo home:writable`
	r := aisanIn(t, wt, env, "", append([]string{"run", "--", "sh", "-c", script, "attack"}, files...)...)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := strings.Repeat("rewrite:EROFS\nadd:EROFS\nmove:refused\n", len(files)) + "home:writable\n"
	if r.stdout != want {
		t.Errorf("attacks on the configuration from inside a jail:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || string(b) != content {
			t.Errorf("%s after the jail: %q, %v; want it unchanged", f, b, err)
		}
	}
}

// TestStrictEgressRefusesManager: a raw egress relay to the user
// manager's private socket, or to the session bus, is refused before any
// box starts, whether the configuration names it (a jail can no longer
// write it there, but a file from before may hold it), --egress names it,
// or a symbolic link in the home leads to it.
func TestStrictEgressRefusesManager(t *testing.T) {
	requireUserManager(t)
	rt := os.Getenv("XDG_RUNTIME_DIR")
	private := filepath.Join(rt, "systemd", "private")
	if _, err := os.Stat(private); err != nil {
		need(t, "the user manager's private socket", err)
	}
	repo, home, _ := strictRepo(t)
	env, files := configEnv(t, "egress = [\"sysd="+private+"\"]\n")
	env = append(env, "HOME="+home)

	// From inside a deny-list jail, the configuration cannot be changed.
	r := aisanIn(t, repo, env, "", "run", "--", "sh", "-c", `printf 'egress = ["x=/tmp/x"]\n' >"$1" 2>/dev/null && echo wrote || echo refused`, "attack", files[0])
	if strings.TrimSpace(r.stdout) != "refused" {
		t.Errorf("writing an egress line into the configuration from a jail: %q, %q", r.stdout, r.stderr)
	}

	link := filepath.Join(home, "innocent.sock")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	bus := filepath.Join(rt, "bus")
	for _, tt := range []struct {
		name string
		opts []string
		what string
	}{
		{"configured", nil, "user manager"},
		{"--egress", []string{"--egress", "sysd=" + private}, "user manager"},
		{"--egress through a link", []string{"--egress", "sysd=" + link}, "user manager"},
		{"--egress to the session bus", []string{"--egress", "bus=" + bus}, "session bus"},
	} {
		if tt.what == "session bus" {
			if _, err := os.Stat(bus); err != nil {
				continue // no bus socket at its standard place here
			}
		}
		e := env
		if tt.opts != nil {
			// The configuration is the one under attack; a flag alone here.
			e = append(env, "XDG_CONFIG_HOME="+t.TempDir())
		}
		r := strict(t, repo, e, tt.opts, "sh", "-c", "echo BOX-RAN")
		if r.code == 0 || strings.Contains(r.stdout, "BOX-RAN") {
			t.Errorf("%s: the box started (code %d, stdout %q)", tt.name, r.code, r.stdout)
			continue
		}
		if !strings.Contains(r.stderr, tt.what) || !strings.Contains(r.stderr, "never relays it") {
			t.Errorf("%s: stderr %q; want a refusal naming the %s", tt.name, r.stderr, tt.what)
		}
	}
}

// TestConfigDirMadeBeforeJail: a home without aisan's configuration dir
// gets it from the launch, read-only in the jail, so that the jail
// cannot create a configuration for the next launch either.
func TestConfigDirMadeBeforeJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	home, env := testEnv(t)
	env = append(env, "XDG_CONFIG_HOME=")
	dir := filepath.Join(home, ".config", "aisan")
	r := aisanIn(t, wt, env, "", "run", "--", "sh", "-c",
		`mkdir -p "$1" 2>/dev/null; printf 'strict = false\n' >"$1/config.toml" 2>/dev/null && echo wrote || echo refused`, "attack", dir)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "refused" {
		t.Errorf("creating a configuration from inside a jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.toml")); err == nil {
		t.Error("the jail created the configuration")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("the configuration dir after the launch: %v, %v; want a directory, mode 0700", fi, err)
	}
}

// TestConfigDirMadeBeforeJailXDG: with XDG_CONFIG_HOME set, a home
// without ~/.config/aisan gets that dir from the launch too, read-only
// in the jail: an aisan started without the variable (another terminal,
// an editor, a timer) reads its configuration there, so a jail that made
// it chose the next strict box's network and binds.
func TestConfigDirMadeBeforeJailXDG(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	dir := filepath.Join(home, ".config", "aisan")
	jailEnv := append(slices.Clone(env), "XDG_CONFIG_HOME="+filepath.Join(t.TempDir(), "xdg"))
	r := aisanIn(t, slotWorktree(t), jailEnv, "", "run", "--", "sh", "-c",
		`mkdir -p "$1" 2>/dev/null; printf 'net = true\n' >"$1/config.toml" 2>/dev/null && echo wrote || echo refused`, "attack", dir)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "refused" {
		t.Errorf("creating ~/.config/aisan/config.toml from inside a jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The host's next step: an aisan without XDG_CONFIG_HOME, elsewhere.
	next := aisanIn(t, slotWorktree(t), append(env, "XDG_CONFIG_HOME="), "", "config")
	if strings.Contains(next.stdout, "config.toml:") {
		t.Errorf("the next launch without XDG_CONFIG_HOME reads a configuration the jail made:\n%s", next.stdout)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("~/.config/aisan after the launch: %v, %v; want a directory, mode 0700", fi, err)
	}
}

// TestOwnFilesInJail: aisan installed under the home (make install
// PREFIX=~/.local) and its configuration under ~/.config. From inside a
// deny-list jail, overwriting, removing or renaming one of its programs,
// and renaming a directory above them or above the configuration to
// plant a copy of the jail's own at the old name, all fail; the
// directories themselves stay writable. The host's next step, running
// that aisan again, runs the programs and reads the configuration it
// had.
func TestOwnFilesInJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	home, env := testEnv(t)
	env = append(env, "XDG_CONFIG_HOME=")
	bin := filepath.Join(home, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"aisan", "aisan-full", "aisan-init", "aisan-guard"}
	sums := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(aisanBin), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
		sums[n] = string(b)
	}
	conf := filepath.Join(home, ".config", "aisan", "config.toml")
	const content = "# the user's\n"
	writeFile(t, conf, content)
	script := `plant() { mkdir -p "$1" && printf '#!/bin/sh\necho PLANTED\n' >"$1/aisan" && chmod +x "$1/aisan"; }
	exec 2>/dev/null
	printf '#!/bin/sh\necho PLANTED\n' >~/.local/bin/aisan && echo write:wrote || echo write:refused
	rm -f ~/.local/bin/aisan-init && echo rm:removed || echo rm:refused
	mv ~/.local/bin/aisan-guard ~/.local/bin/g && echo mvfile:moved || echo mvfile:refused
	mv ~/.local/bin ~/.local/bin.old && plant ~/.local/bin && echo bin:planted || echo bin:refused
	mv ~/.local ~/.local.old && plant ~/.local/bin && echo local:planted || echo local:refused
	mv ~/.config ~/.config.old && mkdir -p ~/.config/aisan && echo 'strict = true' >~/.config/aisan/config.toml && echo config:planted || echo config:refused
	: >~/.local/bin/mytool && rm ~/.local/bin/mytool && echo bin-dir:writable
	: >~/.config/other && echo config-parent:writable`
	front := filepath.Join(bin, "aisan")
	r := runCmd(t, wt, env, "", front, "run", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := "write:refused\nrm:refused\nmvfile:refused\nbin:refused\nlocal:refused\nconfig:refused\nbin-dir:writable\nconfig-parent:writable\n"
	if r.stdout != want {
		t.Errorf("attacks on aisan's own files from inside a jail:\n%s\nwant:\n%s", r.stdout, want)
	}
	// The host's next step.
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(bin, n)); err != nil || string(b) != sums[n] {
			t.Errorf("%s after the jail: changed or gone (%v)", n, err)
		}
	}
	if b, err := os.ReadFile(conf); err != nil || string(b) != content {
		t.Errorf("the configuration after the jail: %q, %v; want it unchanged", b, err)
	}
	for _, p := range []string{filepath.Join(home, ".config.old"), filepath.Join(home, ".local.old"), filepath.Join(bin + ".old")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after the jail", p)
		}
	}
	r = runCmd(t, wt, env, "", front, "run", "--", "echo", "NEXT")
	if r.code != 0 || r.stdout != "NEXT\n" {
		t.Errorf("the next launch: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestLinkedConfigInJail: a configuration file that is a symbolic link
// into a dotfiles checkout. From inside a jail, neither the file it
// leads to nor the checkout's name can be changed; the rest of the
// checkout stays writable; on the host the configuration still reads
// as the user wrote it.
func TestLinkedConfigInJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	home, env := testEnv(t)
	env = append(env, "XDG_CONFIG_HOME=")
	target := filepath.Join(home, "dotfiles", "aisan.toml")
	const content = "# the user's\n"
	writeFile(t, target, content)
	dir := filepath.Join(home, ".config", "aisan")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "config.toml")); err != nil {
		t.Fatal(err)
	}
	script := `exec 2>/dev/null
	echo 'strict = true' >~/dotfiles/aisan.toml && echo write:wrote || echo write:refused
	mv ~/dotfiles ~/dotfiles.old && mkdir ~/dotfiles && echo 'strict = true' >~/dotfiles/aisan.toml && echo move:planted || echo move:refused
	: >~/dotfiles/notes && echo checkout:writable`
	r := aisanIn(t, wt, env, "", "run", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if want := "write:refused\nmove:refused\ncheckout:writable\n"; r.stdout != want {
		t.Errorf("attacks on a linked configuration from inside a jail:\n%s\nwant:\n%s", r.stdout, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.toml")); err != nil || string(b) != content {
		t.Errorf("the configuration after the jail: %q, %v; want it unchanged", b, err)
	}
}

// TestWatchUnitInJail: the supervisor's unit file as install-service
// writes it, with its drop-in directories. The user manager runs that
// unit outside every jail, at the next login at the latest. From inside
// a deny-list jail, editing, removing or replacing the unit, adding a
// drop-in, and renaming a directory above them to plant a unit of the
// jail's own all fail; other units stay writable. On the host the
// manager would read the unit as install-service wrote it and no
// drop-in.
func TestWatchUnitInJail(t *testing.T) {
	requireSlots(t)
	wt := slotWorktree(t)
	home, env := testEnv(t)
	env = append(env, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "XDG_CONFIG_DIRS=", "XDG_DATA_DIRS=")
	units := filepath.Join(home, ".config", "systemd", "user")
	unit := filepath.Join(units, systemd.WatchUnitName)
	content, err := systemd.WatchUnit(aisanBin, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, unit, string(content))
	// What install-service makes: the unit's own drop-in directory and
	// the prefix one, in each unit directory of the user's that the
	// manager reads (configuration, set-property's, data).
	var dropIns []string
	for _, d := range []string{units, filepath.Join(home, ".config", "systemd", "user.control"), filepath.Join(home, ".local", "share", "systemd", "user")} {
		for _, name := range []string{systemd.WatchUnitName + ".d", "aisan-.service.d"} {
			dropIns = append(dropIns, filepath.Join(d, name))
		}
	}
	for _, d := range dropIns {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `u=~/.config/systemd/user w=aisan-watch.service l=~/.local/share/systemd/user
	evil() { printf '[Service]\nExecStartPre=/bin/sh -c "echo PLANTED"\n'; }
	plant() { mkdir -p "$1" && evil >"$1/$w"; }
	exec 2>/dev/null
	evil >>"$u/$w" && echo append:wrote || echo append:refused
	evil >"$u/$w.d/override.conf" && echo dropin:wrote || echo dropin:refused
	evil >~/.config/systemd/user.control/$w.d/50-x.conf && echo control:wrote || echo control:refused
	evil >~/.config/systemd/user.control/$w && echo controlunit:wrote || echo controlunit:refused
	evil >"$u/aisan-.service.d/x.conf" && echo prefix:wrote || echo prefix:refused
	evil >"$l/$w.d/x.conf" && echo data:wrote || echo data:refused
	evil >"$l/aisan-.service.d/x.conf" && echo dataprefix:wrote || echo dataprefix:refused
	mv "$l/$w.d" "$l/old.d" && echo mvdata:moved || echo mvdata:refused
	mv ~/.local/share/systemd ~/.local/share/systemd.old && mkdir -p "$l/$w.d" && evil >"$l/$w.d/x.conf" && echo datadir:planted || echo datadir:refused
	mv ~/.local ~/.local.old && mkdir -p "$l/$w.d" && evil >"$l/$w.d/x.conf" && echo local:planted || echo local:refused
	rm -f "$u/$w" && echo rm:removed || echo rm:refused
	evil >"$u/new" && mv "$u/new" "$u/$w" && echo replace:replaced || echo replace:refused
	rm -f "$u/new"
	mv "$u/$w.d" "$u/old.d" && mkdir "$u/$w.d" && echo mvdropin:moved || echo mvdropin:refused
	mv "$u" "$u.old" && plant "$u" && echo dir:planted || echo dir:refused
	mv ~/.config/systemd ~/.config/systemd.old && plant "$u" && echo systemd:planted || echo systemd:refused
	evil >"$u/other.service" && rm "$u/other.service" && echo units:writable`
	r := runCmd(t, wt, env, "", aisanBin, "run", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("attacker jail: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := "append:refused\ndropin:refused\ncontrol:refused\ncontrolunit:refused\nprefix:refused\ndata:refused\ndataprefix:refused\nmvdata:refused\ndatadir:refused\nlocal:refused\nrm:refused\nreplace:refused\nmvdropin:refused\ndir:refused\nsystemd:refused\nunits:writable\n"
	if r.stdout != want {
		t.Errorf("attacks on the supervisor unit from inside a jail:\n%s\nwant:\n%s", r.stdout, want)
	}
	// The host's next step: what the user manager would read.
	if b, err := os.ReadFile(unit); err != nil || string(b) != string(content) {
		t.Errorf("the unit file after the jail: %q, %v; want it as installed", b, err)
	}
	for _, d := range dropIns {
		if ents, err := os.ReadDir(d); err != nil || len(ents) != 0 {
			t.Errorf("drop-in directory %s after the jail: %v, %v; want it empty", d, ents, err)
		}
	}
	for _, p := range []string{units + ".old", filepath.Join(units, "old.d"), filepath.Join(home, ".config", "systemd.old"), filepath.Join(units, "new"),
		filepath.Join(home, ".local", "share", "systemd", "user", "old.d"), filepath.Join(home, ".config", "systemd", "user.control", systemd.WatchUnitName), filepath.Join(home, ".local", "share", "systemd.old"), filepath.Join(home, ".local.old")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after the jail", p)
		}
	}
}

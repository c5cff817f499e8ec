package hooks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

var testHook = Hook{Binary: testBinary, Timeout: DefaultTimeout}

// entries lists dir, to catch a temporary file left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestInstallFileCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude")
	path := filepath.Join(dir, "settings.json")
	res, err := InstallFile(path, testHook)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || !res.Created || res.Backup != "" || res.Path != path {
		t.Errorf("result = %+v, want a created file without backup", res)
	}
	want, _, _ := Install(nil, testHook)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("content:\n%s\nwant:\n%s", got, want)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q, want only settings.json", got)
	}
}

func TestInstallFileBackupModeIdempotent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	orig := []byte("{\n  \"model\": \"opus\"\n}\n")
	if err := os.WriteFile(path, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil { // whatever the umask
		t.Fatal(err)
	}
	res, err := InstallFile(path, testHook)
	if err != nil {
		t.Fatal(err)
	}
	bak := path + BackupSuffix
	if !res.Changed || res.Created || res.Backup != bak {
		t.Errorf("result = %+v, want changed with backup %s", res, bak)
	}
	if got, _ := os.ReadFile(bak); !bytes.Equal(got, orig) {
		t.Errorf("backup holds %q, want the original %q", got, orig)
	}
	if m := mode(t, path); m != 0o640 {
		t.Errorf("mode %v, want the original 0640", m)
	}
	if m := mode(t, bak); m != 0o640 {
		t.Errorf("backup mode %v, want 0640", m)
	}
	installed, _ := os.ReadFile(path)

	// A second run writes nothing: no new backup, same bytes.
	if err := os.Remove(bak); err != nil {
		t.Fatal(err)
	}
	res, err = InstallFile(path, testHook)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || res.Backup != "" {
		t.Errorf("second install result = %+v, want unchanged", res)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, installed) {
		t.Error("second install rewrote the file")
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q, want only settings.json", got)
	}

	// Uninstall restores the original content, backing up the installed one.
	res, err = UninstallFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed {
		t.Error("uninstall changed nothing")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", got, orig)
	}
	if got, _ := os.ReadFile(bak); !bytes.Equal(got, installed) {
		t.Errorf("uninstall backup holds %q, want the installed content", got)
	}
}

func TestInstallFileRefusesUntouched(t *testing.T) {
	for name, src := range map[string]string{
		"comment":        "{\n  // mine\n  \"model\": \"opus\"\n}\n",
		"trailing comma": "{\"a\": 1,}",
		"array":          "[]",
		"hooks string":   `{"hooks": "none"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, op := range []func() (Result, error){
				func() (Result, error) { return InstallFile(path, testHook) },
				func() (Result, error) { return UninstallFile(path) },
			} {
				res, err := op()
				if err == nil || res.Changed {
					t.Fatalf("result %+v, err %v; want a refusal", res, err)
				}
				if got, _ := os.ReadFile(path); string(got) != src {
					t.Fatalf("refused file was modified: %q", got)
				}
				if got := entries(t, dir); len(got) != 1 {
					t.Fatalf("directory holds %q after a refusal, want only settings.json", got)
				}
			}
		})
	}
	_, err := InstallFile(filepath.Join(t.TempDir(), "x.json"), Hook{Binary: "aisan", Timeout: 1})
	if err == nil {
		t.Error("a relative binary was accepted")
	}
}

func TestInstallFileParseErrorPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte("{\n  \"a\": 1,\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := InstallFile(path, testHook)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 1 {
		t.Fatalf("error %v, want a ParseError at line 3, column 1", err)
	}
	want := `editing "` + path + `": line 3, column 1: invalid character '}' looking for beginning of object key string`
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
}

// A settings file that is a symlink (dotfile managers) is edited at its
// target; the link stays a link.
func TestInstallFileFollowsSymlink(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dotfiles")
	claude := filepath.Join(home, ".claude")
	for _, d := range []string{dots, claude} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(dots, "claude-settings.json")
	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(claude, "settings.json")
	if err := os.Symlink("../dotfiles/claude-settings.json", link); err != nil {
		t.Fatal(err)
	}
	res, err := InstallFile(link, testHook)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != target || res.Backup != target+BackupSuffix {
		t.Errorf("result = %+v, want the link's target edited", res)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a symlink: %v", err)
	}
	want, _, _ := Install([]byte("{}\n"), testHook)
	if got, _ := os.ReadFile(link); !bytes.Equal(got, want) {
		t.Errorf("content through the link:\n%s", got)
	}

	// A dangling link is where the file gets created.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	res, err = InstallFile(link, testHook)
	if err != nil || !res.Created || res.Path != target {
		t.Fatalf("dangling link: result %+v, err %v", res, err)
	}
}

func TestUninstallFileAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hooks.json")
	res, err := UninstallFile(path)
	if err != nil || res.Changed {
		t.Fatalf("result %+v, err %v; want nothing done", res, err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("uninstall created %q", got)
	}
}

func TestAgents(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	got := Agents("/home/u", getenv)
	if got[0].File != "/home/u/.claude/settings.json" || got[1].File != "/home/u/.codex/hooks.json" {
		t.Errorf("default locations: %+v", got)
	}
	env["CLAUDE_CONFIG_DIR"] = "/cfg/claude"
	env["CODEX_HOME"] = "/cfg/codex"
	got = Agents("/home/u", getenv)
	if got[0].Dir != "/cfg/claude" || got[0].File != "/cfg/claude/settings.json" || got[1].File != "/cfg/codex/hooks.json" {
		t.Errorf("with CLAUDE_CONFIG_DIR and CODEX_HOME: %+v", got)
	}
}

// TestLeanGuard: install-hook runs the lean guard only when it is an
// executable regular file of aisan's owner beside aisan; otherwise the
// hook falls back to aisan's guard subcommand, and says why when a file
// is there.
func TestLeanGuard(t *testing.T) {
	type setup func(t *testing.T, guard string)
	file := func(perm fs.FileMode) setup {
		return func(t *testing.T, guard string) {
			if err := os.WriteFile(guard, []byte("#!/bin/sh\nexit 2\n"), perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(guard, perm); err != nil { // whatever the umask
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		setup   setup
		lean    bool
		wantErr string // substring; "" for none
	}{
		{name: "absent", setup: func(*testing.T, string) {}},
		{name: "executable", setup: file(0o755), lean: true},
		{name: "owner only", setup: file(0o700), lean: true},
		{name: "not executable", setup: file(0o644), wantErr: "is not executable"},
		{name: "symlink", setup: func(t *testing.T, guard string) {
			target := filepath.Join(t.TempDir(), GuardName)
			file(0o755)(t, target)
			if err := os.Symlink(target, guard); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "is not a regular file but a symbolic link"},
		{name: "directory", setup: func(t *testing.T, guard string) {
			if err := os.Mkdir(guard, 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "is not a regular file but a directory"},
		{name: "fifo", setup: func(t *testing.T, guard string) {
			if err := syscall.Mkfifo(guard, 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "is not a regular file but a named pipe"},
		{name: "other owner", setup: func(t *testing.T, guard string) {
			if os.Geteuid() != 0 {
				jailtest.Need(t, "root, to give a file another owner", errors.New("not running as root"))
			}
			file(0o755)(t, guard)
			if err := os.Lchown(guard, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "belongs to uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			aisan := filepath.Join(dir, "aisan")
			file(0o755)(t, aisan)
			guard := filepath.Join(dir, GuardName)
			tt.setup(t, guard)
			got, err := LeanGuard(aisan)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("LeanGuard: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("LeanGuard error %v, want one containing %q", err, tt.wantErr)
			}
			if want := map[bool]string{true: guard, false: ""}[tt.lean]; got != want {
				t.Errorf("LeanGuard = %q, want %q", got, want)
			}
		})
	}
	if _, err := LeanGuard(filepath.Join(t.TempDir(), "aisan")); err == nil {
		t.Error("LeanGuard of a missing aisan succeeded")
	}
}

// TestInstallRefusesLinkIntoState: a settings file a jail turned into a
// link to a file of aisan's own state (a slot's record, which no jail
// can write) is not written through, nor is a backup left there.
func TestInstallRefusesLinkIntoState(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	os.MkdirAll(filepath.Join(state, "slots"), 0o700)
	record := filepath.Join(state, "slots", "victim.json")
	orig := []byte(`{"slot": "victim"}` + "\n")
	os.WriteFile(record, orig, 0o600)
	settings := filepath.Join(dir, "settings.json")
	if err := os.Symlink(record, settings); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallFile(settings, testHook, state); err == nil || !strings.Contains(err.Error(), "aisan's own state") {
		t.Errorf("InstallFile through a link into the state dir: %v, want refused", err)
	}
	if _, err := UninstallFile(settings, state); err == nil {
		t.Errorf("UninstallFile through a link into the state dir: want refused")
	}
	if got, _ := os.ReadFile(record); string(got) != string(orig) {
		t.Errorf("the record was written: %q", got)
	}
	if _, err := os.Lstat(record + BackupSuffix); err == nil {
		t.Errorf("a backup was left in the state dir")
	}
	// A link elsewhere (a dotfiles checkout) is still followed.
	other := filepath.Join(dir, "dotfiles.json")
	os.WriteFile(other, []byte("{}\n"), 0o600)
	os.Remove(settings)
	os.Symlink(other, settings)
	if _, err := InstallFile(settings, testHook, state); err != nil {
		t.Errorf("InstallFile through a link to a dotfiles file: %v", err)
	}
}

// TestInstallRefusesFIFO: a FIFO where a settings file should be (a jail
// can make one) is refused at once, not read for ever.
func TestInstallRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := InstallFile(path, testHook); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("InstallFile on a FIFO: want an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("InstallFile blocks on a FIFO")
	}
}

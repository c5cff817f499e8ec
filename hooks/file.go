package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/hooks/jsonfile"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// BackupSuffix is appended to a settings file's name for the copy of its
// previous content.
const BackupSuffix = ".aisan-bak"

// Agent is an agent whose settings file takes the hook.
type Agent struct {
	// Name is the agent's command name: "claude" or "codex".
	Name string
	// Dir is the agent's configuration directory.
	Dir string
	// File is the settings file in Dir that holds hooks.
	File string
}

// Agents returns where Claude Code and Codex read user hooks, for a user
// whose home directory is home: $CLAUDE_CONFIG_DIR/settings.json (default
// ~/.claude) and $CODEX_HOME/hooks.json (default ~/.codex). getenv is
// os.Getenv outside tests.
func Agents(home string, getenv func(string) string) []Agent {
	claude := agent.Claude.Dir(home, getenv)
	codex := agent.Codex.Dir(home, getenv)
	return []Agent{
		{Name: "claude", Dir: claude, File: filepath.Join(claude, "settings.json")},
		{Name: "codex", Dir: codex, File: filepath.Join(codex, "hooks.json")},
	}
}

// Present reports whether the agent's configuration directory exists,
// which is how install-hook guesses which agents the user has.
func (a Agent) Present() bool {
	fi, err := os.Stat(a.Dir)
	return err == nil && fi.IsDir()
}

// Result is what an edit of a settings file did.
type Result struct {
	// Path is the file edited: the path asked for, with symlinks resolved.
	Path string
	// Changed reports whether the file was written.
	Changed bool
	// Created reports that the file did not exist before.
	Created bool
	// Backup is where the previous content was saved, or "" when nothing
	// was (no change, or a new file).
	Backup string
}

// InstallFile registers h in the settings file at path (see [Install]),
// creating the file and its directory when they do not exist. A path that
// leads, through symbolic links, into one of the directories protected
// (aisan's own state, by real path) is refused untouched.
func InstallFile(path string, h Hook, protected ...string) (Result, error) {
	return editFile(path, true, protected, func(src []byte) ([]byte, bool, error) { return Install(src, h) })
}

// UninstallFile removes our hook from the settings file at path (see
// [Uninstall]). An absent file is left absent; protected as for
// [InstallFile].
func UninstallFile(path string, protected ...string) (Result, error) {
	return editFile(path, false, protected, Uninstall)
}

// maxSettings bounds what is read of a settings file.
const maxSettings = 16 << 20

// intoProtected reports the directory of protected that target (a
// resolved settings path) lies in, by real path, or "".
//
// The agents' settings files are in directories every deny-list jail
// writes, and a settings file that is a symbolic link is followed (to a
// dotfiles checkout, say). A jail can therefore point one at a JSON file
// of aisan's own state (a slot's record), which no jail can write: the
// host's install-hook would write it instead, and a record with a hook
// in it is skipped as corrupt, its slot gone from list and kill.
func intoProtected(target string, protected []string) string {
	if len(protected) == 0 {
		return ""
	}
	real := target
	if d, err := filepath.EvalSymlinks(filepath.Dir(target)); err == nil {
		real = filepath.Join(d, filepath.Base(target))
	}
	for _, p := range protected {
		if p == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if real == p || strings.HasPrefix(real, strings.TrimSuffix(p, "/")+"/") {
			return p
		}
	}
	return ""
}

// editFile applies edit to the file at path following the package rules:
// refuse untouched on error, backup, then atomic replace.
func editFile(path string, create bool, protected []string, edit func([]byte) ([]byte, bool, error)) (Result, error) {
	target, err := jsonfile.Resolve(path)
	if err != nil {
		return Result{Path: path}, err
	}
	res := Result{Path: target}
	if d := intoProtected(target, protected); d != "" {
		return res, fmt.Errorf("%q leads to %q, inside aisan's own state (%s): not written; remove the link", path, target, d)
	}
	// Never from a FIFO (a jail can put one where the settings are: the
	// read would wait for ever) nor without bound.
	src, err := regfile.ReadNamed(target, maxSettings)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !create {
			return res, nil
		}
	case err != nil:
		return res, fmt.Errorf("reading %q: %w", target, err)
	}
	out, changed, err := edit(src)
	if err != nil {
		return res, fmt.Errorf("editing %q: %w", target, err)
	}
	if !changed {
		return res, nil
	}
	var (
		mode  fs.FileMode = 0o600
		owner *syscall.Stat_t
	)
	if exists {
		fi, err := os.Stat(target)
		if err != nil {
			return res, err
		}
		mode = fi.Mode().Perm()
		owner, _ = fi.Sys().(*syscall.Stat_t)
		bak := target + BackupSuffix
		if err := atomicfile.Write(bak, src, atomicfile.Options{Mode: mode, Sync: true, Owner: fileOwner(owner)}); err != nil {
			return res, fmt.Errorf("backing up %q: %w", target, err)
		}
		res.Backup = bak
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return res, err
		}
		res.Created = true
	}
	// The agent may rewrite its settings while we merge; write only over
	// the content we read, or over nothing if there was nothing.
	unchanged := func() error {
		now, err := regfile.ReadNamed(target, maxSettings)
		if errors.Is(err, fs.ErrNotExist) && !exists {
			return nil
		}
		if err != nil || !exists || !bytes.Equal(now, src) {
			return fmt.Errorf("%q changed while aisan was editing it; nothing was written, run again", target)
		}
		return nil
	}
	if err := atomicfile.Write(target, out, atomicfile.Options{Mode: mode, Sync: true, Owner: fileOwner(owner), BeforeRename: unchanged}); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// fileOwner is the owner a rewritten file keeps (nil: a new file, ours).
func fileOwner(st *syscall.Stat_t) *atomicfile.Owner {
	if st == nil {
		return nil
	}
	return &atomicfile.Owner{UID: int(st.Uid), GID: int(st.Gid)}
}

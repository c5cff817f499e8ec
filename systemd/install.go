package systemd

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/userunit"
)

// Rules for installing the supervisor unit:
//
//   - The file is written atomically (temporary file, then rename) and only
//     when its content changes; a different file already there is kept as
//     <name>.aisan-bak first.
//   - The manager is told through D-Bus (Reload, EnableUnitFiles,
//     StartUnit), never by running systemctl.
//   - Installing twice changes nothing the second time.
//   - After reloading, the manager must report our file as the unit's
//     source; if it reads the unit from elsewhere, installing fails.

//go:embed aisan-watch.service
var watchUnitTemplate string

// WatchUnitName is the name of the supervisor's user unit.
const WatchUnitName = userunit.WatchName

// backupSuffix is appended to a unit file that installing replaces.
const backupSuffix = ".aisan-bak"

// WatchUnit returns the supervisor's unit file for the aisan binary at
// aisanPath (absolute), with env (KEY=value entries, such as AISAN_HOME)
// added as Environment= lines in sorted order.
func WatchUnit(aisanPath string, env []string) ([]byte, error) {
	if !filepath.IsAbs(aisanPath) {
		return nil, fmt.Errorf("aisan binary %q: not an absolute path", aisanPath)
	}
	if err := unitValueOK(aisanPath); err != nil {
		return nil, fmt.Errorf("aisan binary %q: %w", aisanPath, err)
	}
	env = slices.Clone(env)
	slices.Sort(env)
	var extra []string
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("environment entry %q: want KEY=value", kv)
		}
		if err := unitValueOK(kv); err != nil {
			return nil, fmt.Errorf("environment entry %q: %w", kv, err)
		}
		extra = append(extra, "Environment="+quoteUnitWord(kv, false))
	}
	var out bytes.Buffer
	replaced := false
	for line := range strings.Lines(watchUnitTemplate) {
		if strings.HasPrefix(line, "ExecStart=") {
			out.WriteString("ExecStart=" + quoteUnitWord(aisanPath, true) + " watch\n")
			for _, e := range extra {
				out.WriteString(e + "\n")
			}
			replaced = true
			continue
		}
		out.WriteString(line)
	}
	if !replaced {
		return nil, bug(errors.New("the embedded aisan-watch.service has no ExecStart= line"))
	}
	return out.Bytes(), nil
}

// unitValueOK rejects what a unit file line cannot hold.
func unitValueOK(s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("control character %q cannot go into a unit file", r)
		}
	}
	return nil
}

// quoteUnitWord writes s as one word of a unit file setting: "%" doubled
// (specifiers), and, in a command line, "$" doubled (variable expansion);
// double-quoted with C escapes unless it is plain.
func quoteUnitWord(s string, command bool) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if command {
		s = strings.ReplaceAll(s, "$", "$$")
	}
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._+-:@=,%$", c) >= 0) {
			plain = false
		}
	}
	if plain {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

// UserUnitDir returns the directory for the user's own unit files:
// $XDG_CONFIG_HOME/systemd/user, or ~/.config/systemd/user.
func UserUnitDir(getenv func(string) string) (string, error) {
	if d := userunit.Dir(getenv, getenv("HOME")); d != "" {
		return d, nil
	}
	return "", errors.New("finding the user unit directory: neither XDG_CONFIG_HOME nor HOME is an absolute path")
}

// UserUnitDirs returns the unit directories under the user's control
// that a user manager may read the supervisor's drop-ins from
// ([userunit.Dirs]).
func UserUnitDirs(getenv func(string) string) []string {
	return userunit.Dirs(getenv, getenv("HOME"))
}

// WatchInstall says how to install the supervisor unit.
type WatchInstall struct {
	// AisanPath is the absolute path of the aisan binary to run.
	AisanPath string
	// Env are KEY=value entries the supervisor needs (AISAN_HOME when the
	// user set it).
	Env []string
	// Dir is the directory the unit file goes into, from [UserUnitDir].
	Dir string
	// DropInDirs are the other unit directories under the user's control
	// ([userunit.Dirs]). Install makes the unit's drop-in directories,
	// empty, in each that the manager reads, and in Dir: a jail keeps what
	// exists read-only, and could otherwise make one and add lines the
	// manager runs outside any jail.
	DropInDirs []string
	// Unit is the unit's name; tests use their own. Default
	// [WatchUnitName].
	Unit string
	// Runtime enables the unit only until the manager stops (the
	// symlink goes under $XDG_RUNTIME_DIR); for tests.
	Runtime bool
}

func (in WatchInstall) unit() string {
	if in.Unit == "" {
		return WatchUnitName
	}
	return in.Unit
}

// dropInDirs are Dir and those of DropInDirs the manager reads (search,
// its unit path), each once.
func (in WatchInstall) dropInDirs(search []string) []string {
	out := []string{filepath.Clean(in.Dir)}
	for _, d := range ReadUnitDirs(in.DropInDirs, search) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// ReadUnitDirs are those of dirs that the unit path search names, clean.
func ReadUnitDirs(dirs, search []string) []string {
	var out []string
	for _, d := range dirs {
		if d = filepath.Clean(d); slices.Contains(search, d) {
			out = append(out, d)
		}
	}
	return out
}

// UnitPath returns the directories the manager reads unit files and
// drop-ins from, in its order.
func (m *Manager) UnitPath(ctx context.Context) ([]string, error) {
	v, err := m.managerProperty(ctx, "UnitPath")
	if err != nil {
		return nil, fmt.Errorf("reading the user manager's unit search path: %w", err)
	}
	search, ok := v.Value().([]string)
	if !ok {
		return nil, fmt.Errorf("reading the user manager's unit search path: got %s, want a list of strings", v.Signature())
	}
	return search, nil
}

// InstallReport says what installing changed.
type InstallReport struct {
	// Path is the unit file.
	Path string
	// Backup is where the previous, different unit file was saved; "" if
	// there was none.
	Backup string
	// Written reports whether the unit file was created or changed.
	Written bool
	// Enabled reports whether the unit was newly enabled.
	Enabled bool
	// Started reports whether the unit was started or, because its file
	// changed, restarted.
	Started bool
}

// InstallWatch writes the supervisor's unit file, makes the manager load
// it, enables it (so it starts with the user manager) and starts it, or
// restarts it if its file changed. Running it again changes nothing.
func InstallWatch(ctx context.Context, m *Manager, in WatchInstall) (InstallReport, error) {
	conn, err := m.sd()
	if err != nil {
		return InstallReport{}, err
	}
	unit := in.unit()
	var rep InstallReport
	content, err := WatchUnit(in.AisanPath, in.Env)
	if err != nil {
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	if !filepath.IsAbs(in.Dir) {
		return rep, fmt.Errorf("installing %s: unit directory %q is not an absolute path", unit, in.Dir)
	}
	rep.Path = filepath.Join(in.Dir, unit)
	// Refuse a directory the manager does not search before writing
	// anything: the unit would be installed and never run.
	search, err := m.UnitPath(ctx)
	if err != nil {
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	if !slices.Contains(search, filepath.Clean(in.Dir)) {
		return rep, fmt.Errorf("installing %s: the user manager does not read unit files from %s (it reads %s)", unit, in.Dir, strings.Join(search, " "))
	}
	old, err := os.ReadFile(rep.Path)
	switch {
	case err == nil && bytes.Equal(old, content):
	case err == nil:
		rep.Backup = rep.Path + backupSuffix
		if err := writeAtomic(rep.Backup, old); err != nil {
			return rep, fmt.Errorf("saving the previous %s: %w", rep.Path, err)
		}
		fallthrough
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(in.Dir, 0o755); err != nil {
			return rep, fmt.Errorf("installing %s: %w", unit, err)
		}
		if err := writeAtomic(rep.Path, content); err != nil {
			return rep, fmt.Errorf("installing %s: %w", unit, err)
		}
		rep.Written = true
	default:
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	// An empty drop-in directory changes nothing for the manager, but a
	// jail keeps only what exists read-only: made here, no jail can
	// create it to add lines to the unit.
	for _, d := range in.dropInDirs(search) {
		for _, name := range userunit.DropIns(unit) {
			if err := os.MkdirAll(filepath.Join(d, name), 0o755); err != nil {
				return rep, fmt.Errorf("installing %s: making its drop-in directory: %w", unit, err)
			}
		}
	}

	stale, err := m.unitBool(ctx, unit, "NeedDaemonReload")
	if err != nil {
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	if rep.Written || stale {
		if err := conn.ReloadContext(ctx); err != nil {
			return rep, fmt.Errorf("installing %s: reloading the user manager: %w", unit, err)
		}
	}
	frag, err := m.unitString(ctx, unit, "FragmentPath")
	if err != nil {
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	if frag != rep.Path {
		return rep, fmt.Errorf("installing %s: the user manager reads it from %s, which takes precedence over %s; remove that file", unit, frag, rep.Path)
	}

	_, changes, err := conn.EnableUnitFilesContext(ctx, []string{unit}, in.Runtime, false)
	if err != nil {
		return rep, fmt.Errorf("enabling %s: %w", unit, err)
	}
	rep.Enabled = len(changes) > 0

	st, err := m.Status(ctx, unit)
	if err != nil {
		return rep, fmt.Errorf("installing %s: %w", unit, err)
	}
	ch := make(chan string, 1)
	switch {
	case st.Active() && rep.Written:
		_, err = conn.RestartUnitContext(ctx, unit, "replace", ch)
	case st.Active():
		return rep, nil
	default:
		_, err = conn.StartUnitContext(ctx, unit, "replace", ch)
	}
	if err != nil {
		return rep, fmt.Errorf("starting %s: %w", unit, err)
	}
	res, err := waitJob(ctx, ch, jobTimeout)
	if err != nil {
		return rep, fmt.Errorf("starting %s: %w", unit, err)
	}
	if res != "done" {
		return rep, fmt.Errorf("starting %s: job %s: see journalctl --user -u %s", unit, res, unit)
	}
	rep.Started = true
	return rep, nil
}

// UninstallWatch stops and disables the supervisor unit and removes its
// file (a backup stays). Missing pieces are not an error.
func UninstallWatch(ctx context.Context, m *Manager, in WatchInstall) error {
	conn, err := m.sd()
	if err != nil {
		return err
	}
	unit := in.unit()
	if err := m.StopUnit(ctx, unit); err != nil {
		return fmt.Errorf("uninstalling %s: %w", unit, err)
	}
	if _, err := conn.DisableUnitFilesContext(ctx, []string{unit}, in.Runtime); err != nil {
		return fmt.Errorf("uninstalling %s: disabling: %w", unit, err)
	}
	if err := os.Remove(filepath.Join(in.Dir, unit)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("uninstalling %s: %w", unit, err)
	}
	// The unit's own drop-in directories install made go too, when
	// nothing is in them: drop-ins the user wrote stay, and so do the
	// prefix ones (aisan-.service.d), which may serve other units.
	for _, d := range append([]string{in.Dir}, in.DropInDirs...) {
		os.Remove(filepath.Join(d, unit+".d"))
	}
	if err := conn.ReloadContext(ctx); err != nil {
		return fmt.Errorf("uninstalling %s: reloading the user manager: %w", unit, err)
	}
	return m.ResetFailed(ctx, unit)
}

// unitString and unitBool read one property of the Unit interface.
func (m *Manager) unitString(ctx context.Context, unit, name string) (string, error) {
	v, err := m.UnitProperty(ctx, unit, name)
	s, _ := v.(string)
	return s, err
}

func (m *Manager) unitBool(ctx context.Context, unit, name string) (bool, error) {
	v, err := m.UnitProperty(ctx, unit, name)
	b, _ := v.(bool)
	return b, err
}

// writeAtomic replaces a unit file (or its backup) durably: systemd reads
// it at the next reload, whenever that is.
func writeAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{Mode: 0o644, Sync: true})
}

// bug marks an error that means aisan itself is wrong.
func bug(err error) error {
	return fmt.Errorf("aisan bug (please report): %w", err)
}

package strictbox

// The host side of a strict box's state directory.
//
// Rules:
//   - The box can write the state directory, so the host never trusts
//     what is in it: every read opens with O_NOFOLLOW and O_NONBLOCK,
//     accepts only a regular file and reads at most maxStateFile bytes;
//     every write goes to a new file created with O_EXCL|O_NOFOLLOW and is
//     renamed into place (a rename replaces a planted symlink, never what
//     it points at).
//   - A file that is not a regular file (a symlink, a FIFO) is replaced; a
//     regular file that does not parse is left alone and the launch is
//     refused, because it may be the user's data.
//   - The seed is what the client needs to start offline without a
//     prompt, never a credential, and never made by running a host client
//     against the directory.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/pelletier/go-toml/v2"
)

// maxStateFile caps what the host reads from a state directory.
const maxStateFile = 4 << 20

// errNotRegular marks a state file that is something else than a
// regular file.
var errNotRegular = errors.New("not a regular file")

// makeStateDir creates dir (inside aisanHome) and its parents, refusing a
// symlink on the way: a box never writes there, but a user's typo might.
func makeStateDir(aisanHome, dir string) error {
	rel, err := filepath.Rel(aisanHome, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("state directory %s is not inside %s", dir, aisanHome)
	}
	p := aisanHome
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		err := os.Mkdir(p, 0o700)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating the state directory %s: %w", p, err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("creating the state directory %s: %w", p, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory (a symlink?); remove it and try again", p)
		}
	}
	return nil
}

// readStateFile reads a small regular file without following a symlink.
// A missing file is (nil, nil); a non-regular one errNotRegular.
func readStateFile(path string) ([]byte, error) {
	data, err := regfile.Read(path, maxStateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP) || errors.Is(err, regfile.ErrNotRegular):
		return nil, errNotRegular
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, fmt.Errorf("%s is larger than %d bytes; aisan will not read it (move it away to start afresh)", path, maxStateFile)
	}
	return data, err
}

// seedState writes what o's agent needs to start offline in its state
// directory, and the user's rules (nil for none) where the agent reads
// them.
func seedState(o jail.StrictOptions, rules *BoxRules) (dropped []string, err error) {
	if sub, err := clearStateSub(o); err != nil {
		return nil, err
	} else if sub != "" {
		dropped = append(dropped, sub)
	}
	if err := clearInstructionPoints(o); err != nil {
		return nil, err
	}
	projects := []string{o.Cwd}
	if o.Repo != o.Cwd {
		projects = append(projects, o.Repo)
	}
	switch string(o.Kind) {
	case agent.Claude.Kind:
		err := mergeJSON(o.StateDir, ".claude.json", func(m map[string]any) {
			m["hasCompletedOnboarding"] = true
			// Claude applies this file's env at launch, before the
			// settings; the box writes the file, and the user's own is
			// never brought (see claudeHookSwitches).
			delete(m, "env")
			setProjects(m, projects, "hasTrustDialogAccepted", true)
			for k, v := range o.ClaudeSeed {
				m[k] = v
			}
		})
		if err != nil {
			return nil, err
		}
		if rules != nil {
			if err := writeClaudeRules(o.StateDir, rules); err != nil {
				return nil, err
			}
		}
		err = mergeJSON(o.StateDir, "settings.json", func(m map[string]any) {
			dropped = append(dropped, unseeded(m, rules)...)
			seedRules(m, rules)
			if o.SkipPermissions {
				m["skipDangerousModePermissionPrompt"] = true
			}
		})
		if err != nil {
			return nil, err
		}
		plugins, err := clearClaudePlugins(o.StateDir)
		if err != nil {
			return nil, err
		}
		defs, err := clearClaudeDefinitions(o)
		return append(append(dropped, plugins...), defs...), err
	case agent.Codex.Kind:
		if err := clearCodexRules(o); err != nil {
			return nil, err
		}
		hadHooks, err := clearCodexHooks(o.StateDir)
		if err != nil {
			return nil, err
		}
		err = mergeTOML(o.StateDir, "config.toml", func(m map[string]any) {
			// What the box's Codex runs without asking is the user's
			// (passed as overrides) or Codex's default, never what an
			// earlier box wrote here; nor what Codex runs itself.
			dropped = append(dropped, keepCodexState(m)...)
			trust := "trusted"
			if o.CodexUntrusted {
				trust = "untrusted"
			}
			setProjects(m, projects, "trust_level", trust)
		})
		if hadHooks {
			dropped = append(dropped, "hooks.json")
		}
		return dropped, err
	case agent.Opencode.Kind:
		had, err := clearOpencodeSnapshots(o.StateDir)
		if had {
			dropped = append(dropped, "opencode/snapshot (undo of earlier runs' steps)")
		}
		return dropped, err
	}
	return nil, nil
}

// clearStateSub removes what stands where o's agent keeps its files in
// its state (its StateSub, opencode's "opencode") when that is not a
// directory: a link or a file a box left there, which would send every
// later clearing of the state out of it or stop it. It names what it
// removed ("" for nothing).
func clearStateSub(o jail.StrictOptions) (string, error) {
	a, ok := agent.ByKind(string(o.Kind))
	if !ok || a.StateSub == "" || o.StateDir == "" {
		return "", nil
	}
	fi, err := lstatInState(o.StateDir, a.StateSub)
	if err != nil || fi.IsDir() {
		return "", nil
	}
	if _, err := removeInState(o.StateDir, a.StateSub); err != nil {
		return "", fmt.Errorf("clearing the %s an earlier box left in %s: %w", a.StateSub, o.StateDir, err)
	}
	return a.StateSub + " (not a directory)", nil
}

// clearInstructionPoints removes, where the user's global instructions
// are bound into o's state directory, whatever an earlier box left there
// that bwrap could not mount them on: a symbolic link (bwrap would not
// follow it, and the launch would fail on every start until the user
// found it), or a file where a directory goes and the other way round.
// The state directory is aisan's, per repository and agent; what stood
// there was hidden under the user's files in every box anyway.
func clearInstructionPoints(o jail.StrictOptions) error {
	a, ok := agent.ByKind(string(o.Kind))
	if !ok || o.StateDir == "" {
		return nil
	}
	for _, rel := range o.Instructions {
		dst := filepath.Join(a.StateSub, rel)
		fi, err := lstatInState(o.StateDir, dst)
		if err != nil {
			continue
		}
		src, err := os.Stat(filepath.Join(o.ConfigDir, rel))
		if err != nil {
			continue
		}
		if fi.Mode().Type() == src.Mode().Type() && (fi.IsDir() || fi.Mode().IsRegular()) {
			continue
		}
		if _, err := removeInState(o.StateDir, dst); err != nil {
			return fmt.Errorf("clearing %s for the user's instructions: %w", filepath.Join(o.StateDir, dst), err)
		}
	}
	return nil
}

// clearCodexRules removes the rules an earlier box left in o's state
// directory (Codex would follow an allow rule a box wrote at every later
// launch), all but the mount points of the user's rules files, which
// another box of the repository may be showing.
func clearCodexRules(o jail.StrictOptions) error {
	_, err := clearEntries(o.StateDir, "rules", func(e fs.DirEntry) bool {
		return e.Type().IsRegular() && slices.ContainsFunc(o.CodexRules, func(name string) bool { return e.Name() == jail.CodexUserRules(name) })
	})
	if err != nil {
		return fmt.Errorf("clearing the rules an earlier box left: %w", err)
	}
	return nil
}

// setProjects sets key to value in m["projects"][p] for each project p,
// keeping whatever else is there.
func setProjects(m map[string]any, projects []string, key string, value any) {
	ps, _ := m["projects"].(map[string]any)
	if ps == nil {
		ps = map[string]any{}
	}
	for _, p := range projects {
		e, _ := ps[p].(map[string]any)
		if e == nil {
			e = map[string]any{}
		}
		e[key] = value
		ps[p] = e
	}
	m["projects"] = ps
}

func mergeJSON(dir, name string, edit func(map[string]any)) error {
	return mergeFile(dir, name, func(data []byte, m *map[string]any) error { return json.Unmarshal(data, m) },
		func(m map[string]any) ([]byte, error) { return json.MarshalIndent(m, "", "  ") }, edit)
}

func mergeTOML(dir, name string, edit func(map[string]any)) error {
	return mergeFile(dir, name, func(data []byte, m *map[string]any) error { return toml.Unmarshal(data, m) },
		func(m map[string]any) ([]byte, error) { return toml.Marshal(m) }, edit)
}

func mergeFile(dir, name string, decode func([]byte, *map[string]any) error, encode func(map[string]any) ([]byte, error), edit func(map[string]any)) error {
	path := filepath.Join(dir, name)
	data, err := readStateFile(path)
	if err != nil && !errors.Is(err, errNotRegular) {
		return err
	}
	m := map[string]any{}
	if len(data) > 0 {
		if err := decode(data, &m); err != nil {
			return fmt.Errorf("%s does not parse (%v); fix it or move it away, and aisan seeds a new one", path, err)
		}
		if m == nil {
			m = map[string]any{}
		}
	}
	edit(m)
	out, err := encode(m)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if string(out) == string(data) {
		return nil
	}
	return atomicfile.Write(filepath.Join(dir, name), out, atomicfile.Options{Mode: 0o600})
}

// claudePluginsDir is where Claude keeps the plugins it installed and
// the marketplaces it knows, in its config directory.
const claudePluginsDir = "plugins"

// clearClaudePlugins removes from the plugins directory of a Claude
// box's state all but what Claude keeps there for its built-in plugins
// (claudePluginsKept), and names what it removed. Claude loads each
// plugin registered there that the settings enable, and runs its hooks
// itself, outside its permission rules; a box cannot download one (it
// has no network, and the marketplace's auto-install is off), so
// whatever plugin is there a box put there, pointing perhaps at a
// plugin in the repository.
func clearClaudePlugins(dir string) ([]string, error) {
	removed, err := clearEntries(dir, claudePluginsDir, func(e fs.DirEntry) bool {
		return e.IsDir() && slices.Contains(claudePluginsKept, e.Name())
	})
	if err != nil {
		return nil, fmt.Errorf("clearing the plugins an earlier box left: %w", err)
	}
	return removed, nil
}

// clearEntries removes, in dir (a state directory), the directory rel's
// entries that keep does not keep, without leaving dir (see
// removeInState), and names what it removed: rel itself when it is not
// a directory, each entry (rel/NAME) otherwise. rel missing is nothing
// to clear.
func clearEntries(dir, rel string, keep func(fs.DirEntry) bool) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{rel}, root.Remove(rel)
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if keep(e) {
			continue
		}
		p := rel + "/" + e.Name()
		if err := root.RemoveAll(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// claudePluginsKept are the entries of Claude's plugins directory that
// it writes for its built-in plugins, data rather than code.
var claudePluginsKept = []string{"store"}

// lstatInState and removeInState look at and remove rel in dir, a state
// directory, without leaving it: a box writes its state, and may leave a
// symbolic link where a directory was (a concurrent box of the same
// repository, even while we look), which a path walked from the host
// would follow out to the user's files. A link inside dir is followed; one
// that leads out is an error. removeInState says whether rel was there.
func lstatInState(dir, rel string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Lstat(rel)
}

func removeInState(dir, rel string) (bool, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	if _, err := root.Lstat(rel); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, root.RemoveAll(rel)
}

// unseeded are the keys of the box's Claude settings m that the user's
// rules r own but do not set: what seedRules removes that the box or
// its Claude wrote.
func unseeded(m map[string]any, r *BoxRules) []string {
	var out []string
	if r == nil {
		return nil
	}
	for _, k := range r.Keys {
		if _, ok := m[k]; !ok {
			continue
		}
		if _, set := r.Settings[k]; !set || slices.Contains(claudeRuleKeys, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// clearOpencodeSnapshots removes the git directories where opencode
// keeps its snapshots of the work tree, in its data, which is the box's
// state, and says whether there were any. opencode runs git there
// itself at every step, outside its permission rules, and what git runs
// is what that directory's config says (a core.fsmonitor, a filter),
// which a box can write. The box's opencode takes no snapshot (see
// mcp.OpencodeBoxSettings) unless the project turns them on.
func clearOpencodeSnapshots(dir string) (bool, error) {
	had, err := removeInState(dir, filepath.Join(agent.Opencode.StateSub, "snapshot"))
	if err != nil {
		return had, fmt.Errorf("clearing the snapshots an earlier box left: %w", err)
	}
	return had, nil
}

// claudeDefinitions are the directories of Claude's config whose files
// may carry hooks in their frontmatter (an agent's, a skill's, a
// command's), which Claude runs itself, outside its permission rules,
// from the launch after they were written.
var claudeDefinitions = []string{"agents", "commands", "skills"}

// clearClaudeDefinitions removes, from a Claude box's state, each of
// claudeDefinitions that the user has none of (the user's own is bound
// read-only over it, see jail.StrictOptions.Instructions), and names
// what it removed: a box wrote it.
func clearClaudeDefinitions(o jail.StrictOptions) ([]string, error) {
	var removed []string
	for _, rel := range claudeDefinitions {
		if slices.Contains(o.Instructions, rel) {
			continue
		}
		had, err := removeInState(o.StateDir, rel)
		if err != nil {
			return nil, fmt.Errorf("clearing the %s an earlier box left: %w", rel, err)
		}
		if had {
			removed = append(removed, rel)
		}
	}
	return removed, nil
}

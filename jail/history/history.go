// Package history gives each slot its own prompt history.
//
// Claude Code and Codex keep one history file per user
// (~/.claude/history.jsonl, ~/.codex/history.jsonl) and offer its lines on
// the up-arrow. With agents running in several worktrees at once, that
// file interleaves unrelated projects. So each slot gets its own copy,
// under $AISAN_HOME/history/<slot>/, bound over the host path inside the
// jail. Everything else in ~/.claude and ~/.codex — login, settings,
// sessions, memory — stays shared with the host on purpose: jailed agents
// must keep working exactly as outside.
//
// # Rules
//
//   - On a slot's first launch (its copy does not exist yet) the Claude
//     copy is seeded with the host lines whose "project" field is the
//     worktree's path. A line that does not parse as a JSON object is
//     kept as it is: history is the user's data, and a line we cannot read
//     is not ours to drop. Later launches reuse the copy as it is.
//   - The Codex copy starts empty: Codex history lines carry no project.
//   - The host files are never written, except that the launched agent's
//     own history file is created empty (0600) when its config directory
//     exists but the file does not, because a bind needs a destination and
//     bwrap would otherwise create it with its own defaults. The other
//     agent's file is bound only if it already exists, and a config
//     directory that does not exist is never created: a host without
//     these files still launches, with no history bind.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Bind is a file to bind-mount in the jail: Src on the host over Dst.
type Bind struct {
	Src, Dst string
}

// agent describes one agent's history file.
type agent struct {
	kind string // the slot kind that launches this agent
	dir  string // config dir, relative to the home directory
	env  string // the variable that relocates the config dir
	file string // copy's name under history/<slot>/
	seed bool   // seed the copy with the worktree's host lines
}

var agents = []agent{
	{kind: "claude", dir: ".claude", env: "CLAUDE_CONFIG_DIR", file: "claude-history.jsonl", seed: true},
	{kind: "codex", dir: ".codex", env: "CODEX_HOME", file: "codex-history.jsonl"},
}

// Dirs are the agents' configuration directories, where their history
// files live.
type Dirs struct {
	Claude, Codex string
}

// DirsFor resolves the configuration directories the agents themselves
// use: $CLAUDE_CONFIG_DIR and $CODEX_HOME when set, else ~/.claude and
// ~/.codex.
func DirsFor(home string, getenv func(string) string) Dirs {
	dir := func(a agent) string {
		if v := getenv(a.env); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return filepath.Join(home, a.dir)
	}
	return Dirs{Claude: dir(agents[0]), Codex: dir(agents[1])}
}

func (d Dirs) of(kind string) string {
	if kind == "claude" {
		return d.Claude
	}
	return d.Codex
}

// Paths returns the binds [Prepare] would return, without creating
// anything (for explain): the launched agent's history when its
// configuration directory exists, the other's when its file does.
func Paths(aisanHome, slot, kind string, dirs Dirs) []Bind {
	var out []Bind
	for _, a := range agents {
		cfg := dirs.of(a.kind)
		host := filepath.Join(cfg, "history.jsonl")
		check := host
		if a.kind == kind {
			check = cfg
		}
		if _, err := os.Stat(check); err == nil {
			out = append(out, Bind{Src: filepath.Join(aisanHome, "history", slot, a.file), Dst: host})
		}
	}
	return out
}

// Prepare makes sure slot's history copies exist under
// aisanHome/history/<slot>/ and returns the binds that put them over the
// host files in the agents' configuration directories, in a fixed order. kind is the agent being launched;
// worktree is the directory jailed, as the agent will see it.
func Prepare(aisanHome, slot, kind, worktree string, dirs Dirs) ([]Bind, error) {
	dir := filepath.Join(aisanHome, "history", slot)
	worktree = filepath.Clean(worktree)
	projects := []string{worktree}
	if real, err := filepath.EvalSymlinks(worktree); err == nil && real != worktree {
		projects = append(projects, real)
	}
	var binds []Bind
	for _, a := range agents {
		cfg := dirs.of(a.kind)
		host := filepath.Join(cfg, "history.jsonl")
		ok, err := ensureHostFile(cfg, host, a.kind == kind)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		copyPath := filepath.Join(dir, a.file)
		if err := ensureCopy(copyPath, host, a.seed, projects); err != nil {
			return nil, err
		}
		binds = append(binds, Bind{Src: copyPath, Dst: host})
	}
	return binds, nil
}

// ensureHostFile reports whether host exists (as a file to bind over),
// creating it empty first when create is set and its directory exists.
func ensureHostFile(cfg, host string, create bool) (bool, error) {
	fi, err := os.Stat(host)
	if err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("history file %s is not a regular file; move it away", host)
		}
		return true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("checking history file: %w", err)
	}
	if !create {
		return false, nil
	}
	if di, err := os.Stat(cfg); err != nil || !di.IsDir() {
		return false, nil
	}
	f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("creating empty history file to bind over: %w", err)
	}
	return true, f.Close()
}

// ensureCopy creates the slot's copy at path unless it exists: seeded from
// host's lines for projects, or empty.
//
// A copy that is not a regular file of ours (a symlink, a FIFO, a socket
// put there by someone) is removed and made anew: the copy is bound
// read-write into the jail, and bwrap must never be led through it to
// anything else.
func ensureCopy(path, host string, seed bool, projects []string) error {
	if fi, err := os.Lstat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && int(st.Uid) == os.Getuid() {
			return nil
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("replacing slot history %s, which is not a regular file of yours: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checking slot history: %w", err)
	}
	var data []byte
	if seed {
		var err error
		if data, err = seedLines(host, projects); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating slot history directory: %w", err)
	}
	return writeNew(path, data)
}

// seedLines returns the lines of the host file at path whose "project" is
// one of projects, plus every line that is not a JSON object, in order.
// Each returned line ends in a newline.
func seedLines(path string, projects []string) ([]byte, error) {
	// Never block on a FIFO put where the history was.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading host history: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("host history %s is not a regular file; move it away", path)
	}
	var out bytes.Buffer
	// ReadBytes, not a Scanner: a pasted prompt can make a line longer
	// than any fixed token limit.
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && keep(line, projects) {
			out.Write(line)
			if line[len(line)-1] != '\n' {
				out.WriteByte('\n')
			}
		}
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading host history %s: %w", path, err)
		}
	}
}

// keep decides one history line: a JSON object is kept when its project
// is one of projects; anything else that is not a JSON object with a
// string project (a blank line, a torn write, another format) is kept.
func keep(line []byte, projects []string) bool {
	trimmed := bytes.TrimSpace(line)
	var entry struct {
		Project *string `json:"project"`
	}
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &entry) != nil {
		return true
	}
	if entry.Project == nil {
		return false
	}
	for _, p := range projects {
		if *entry.Project == p {
			return true
		}
	}
	return false
}

// writeNew writes data to a 0600 file at path through a temporary file and
// a rename, so a crash never leaves a half-seeded copy that later launches
// would take as complete.
func writeNew(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing slot history: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing slot history: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing slot history: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing slot history: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing slot history: %w", err)
	}
	return nil
}

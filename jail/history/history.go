// Package history keeps the agents' prompt history per worktree, and
// loses none of it.
//
// Claude Code and Codex keep one history file per user
// (~/.claude/history.jsonl, ~/.codex/history.jsonl) and offer its lines on
// the up-arrow. The two promises here: the up-arrow in a worktree shows
// that worktree's prompts, typed in jails and outside alike, and every
// prompt typed in a jail ends up in the host file.
//
//   - Claude Code tags each line with its project (the directory it was
//     started in) and offers only the current project's lines on the
//     up-arrow. Its host file is therefore shared as it is: nothing is
//     bound, a jailed claude reads and appends the user's own file, under
//     its own lock, exactly as outside.
//   - Codex's lines carry no project, and it offers every line it has. A
//     jailed codex gets a copy per worktree, history/<key>/ under the
//     state dir, bound over the host file; its key is the worktree's slot
//     base name (myrepo-3f9c2a1b-codex), shared by every codex slot of the
//     worktree. [MergeBack] appends the copy's new lines to the host file
//     when the launch ends, and [Prepare] does it again before the next
//     launch binds the copy, in case a launcher died before merging. The
//     other way round, Prepare adds to the copy the host lines typed in an
//     unjailed codex in the worktree: Codex records each session's
//     directory in its session log (sessions/…/rollout-…-<id>.jsonl,
//     first line), and a history line names its session.
//
// # Rules
//
//   - The host file is only ever appended to, in one write under an
//     exclusive flock(2) of the file (the lock the agents take themselves
//     while appending): replacing it by a rename would cut off an agent
//     running outside, which keeps it open and would go on appending to
//     the replaced file.
//   - A line is merged once: the copy's merged length is recorded beside
//     it, and a line the host file already holds is not appended again.
//     A copy that shrank (the agent trimmed it) is merged whole, minus the
//     lines the host has.
//   - The launched agent's own host file is created empty (0600) when its
//     configuration directory exists but the file does not, because a bind
//     needs a destination; a directory that does not exist is never
//     created, and the launch has no history bind.
//   - Nothing here follows a symlink or reads a FIFO: copies that are not
//     regular files of the user's are replaced, host files that are not
//     regular files are refused.
//   - What a jail hands back is history or nothing: only well-formed
//     Codex history entries are merged from a copy, at most
//     maxMergeEntries per launch; every other line is dropped, counted,
//     and reported when the launch ends ([DroppedError]).
//   - Per-slot copies of earlier versions (history/<slot>/) are merged into
//     the host files and removed, Claude's at its slot's next launch, the
//     rest by [Prune] once their slot is gone.
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/lockfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
	slotpkg "github.com/aisan-dev/aisan/jail/slot"
	"golang.org/x/sys/unix"
)

// Bind is a file to bind-mount in the jail: Src on the host over Dst.
type Bind struct {
	Src, Dst string
}

// hist describes one agent's history file: where the agent keeps it comes
// from the agent table; file is the copy's name under history/<key>/.
type hist struct {
	agent.Agent
	kind string // the slot kind that launches this agent
	file string
}

var agents = []hist{
	{Agent: agent.Claude, kind: agent.Claude.Kind, file: agent.Claude.Kind + "-" + agent.Claude.History},
	{Agent: agent.Codex, kind: agent.Codex.Kind, file: agent.Codex.Kind + "-" + agent.Codex.History},
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
	return Dirs{Claude: agent.Claude.Dir(home, getenv), Codex: agent.Codex.Dir(home, getenv)}
}

func (d Dirs) of(kind string) string {
	if kind == "claude" {
		return d.Claude
	}
	return d.Codex
}

// Key is the history key of a slot of kind: its name less the "-N" a
// second concurrent slot of the same worktree gets, so that all of a
// worktree's slots share one copy.
func Key(slot, kind string) string {
	if i := strings.LastIndexByte(slot, '-'); i > 0 {
		n := slot[i+1:]
		if _, err := strconv.Atoi(n); err == nil && n[0] != '0' && strings.HasSuffix(slot[:i], "-"+kind) {
			return slot[:i]
		}
	}
	return slot
}

// copied reports whether kind's history is kept as a per-worktree copy.
func copied(kind string) bool { return kind == "codex" }

// Paths returns the binds [Prepare] would return, without creating
// anything (for explain).
func Paths(aisanHome, slot, kind string, dirs Dirs) []Bind {
	if !copied(kind) {
		return nil
	}
	cfg := dirs.of(kind)
	if _, err := os.Stat(cfg); err != nil {
		return nil
	}
	a := agents[1]
	return []Bind{{Src: filepath.Join(aisanHome, "history", Key(slot, kind), a.file), Dst: filepath.Join(cfg, agents[1].History)}}
}

// Prepare readies the history of a launch of kind in slot, jailed in
// worktree (a real path), and returns the binds that put it in place.
func Prepare(aisanHome, slot, kind, worktree string, dirs Dirs) ([]Bind, error) {
	// An earlier version's per-slot Claude copy goes home first.
	if kind == "claude" {
		legacy := filepath.Join(aisanHome, "history", slot, agents[0].file)
		if err := retire(legacy, filepath.Join(dirs.Claude, agents[0].History)); err != nil {
			return nil, err
		}
	}
	if !copied(kind) {
		return nil, nil
	}
	cfg := dirs.of(kind)
	host := filepath.Join(cfg, agents[1].History)
	ok, err := ensureHostFile(cfg, host)
	if err != nil || !ok {
		return nil, err
	}
	dir := filepath.Join(aisanHome, "history", Key(slot, kind))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating history directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	copyPath := filepath.Join(dir, agents[1].file)
	if err := ensureCopy(copyPath); err != nil {
		return nil, err
	}
	if n, err := merge(copyPath, host, codexEntry); err != nil {
		return nil, err
	} else if n > 0 {
		// Reported by the launch's MergeBack: this one has no voice.
		addDropped(copyPath, n)
	}
	if err := adoptOutside(copyPath, host, filepath.Join(cfg, "sessions"), slotpkg.WorktreeRoot(worktree)); err != nil {
		return nil, err
	}
	return []Bind{{Src: copyPath, Dst: host}}, nil
}

// MergeBack appends the lines a launch of kind in slot added to its copy
// to the host file. Kinds without a copy have nothing to merge.
func MergeBack(aisanHome, slot, kind string, dirs Dirs) error {
	if !copied(kind) {
		return nil
	}
	dir := filepath.Join(aisanHome, "history", Key(slot, kind))
	copyPath := filepath.Join(dir, agents[1].file)
	if _, err := os.Lstat(copyPath); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	host := filepath.Join(dirs.of(kind), agents[1].History)
	n, err := merge(copyPath, host, codexEntry)
	if err != nil {
		return err
	}
	if n += takeDropped(copyPath); n > 0 {
		return &DroppedError{N: n, Host: host}
	}
	return nil
}

// DroppedError reports the lines of a jail's history copy that were not
// merged into the host file: not well-formed history entries, or past the
// bound of one launch. The rest was merged; the launch goes on.
type DroppedError struct {
	N    int
	Host string
}

func (e *DroppedError) Error() string {
	return fmt.Sprintf("%d line(s) of the jail's codex history were not history entries (or past the %d entries one launch may add) and were not merged into %s", e.N, maxMergeEntries, e.Host)
}

// retire merges the copy at path into host and removes it (and its
// merge mark). A missing copy is nothing to do.
func retire(path, host string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking history copy: %w", err)
	}
	if fi.Mode().IsRegular() {
		valid := codexEntry
		if strings.HasPrefix(filepath.Base(path), agents[0].kind+"-") {
			valid = nil // an earlier version's Claude copy: Claude wrote it outside any jail's reach
		}
		if _, err := merge(path, host, valid); err != nil {
			return err
		}
	}
	os.Remove(path + ".dropped")
	os.Remove(markPath(path))
	os.Remove(path + ".adopted")
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing merged history copy: %w", err)
	}
	os.Remove(filepath.Dir(path)) // only if now empty
	return nil
}

// ensureHostFile reports whether host exists (as a file to bind over),
// creating it empty first when its directory exists.
func ensureHostFile(cfg, host string) (bool, error) {
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

// ensureCopy creates an empty copy at path unless a regular file of ours
// is there. Anything else (a symlink, a FIFO, a socket put there by
// someone) is removed first: the copy is bound read-write into the jail,
// and bwrap must never be led through it to anything else.
func ensureCopy(path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if ownRegular(fi) {
			return nil
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("replacing history copy %s, which is not a regular file of yours: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checking history copy: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("creating history copy: %w", err)
	}
	return f.Close()
}

func ownRegular(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && int(st.Uid) == os.Getuid()
}

// lockDir takes the exclusive lock of a history directory (one in
// "history" of the state directory): merging, preparing and pruning one
// copy never overlap.
func lockDir(dir string) (func(), error) {
	// Where no jail can reach it (see jail/shared/lockfile).
	state := filepath.Dir(filepath.Dir(dir))
	f, err := lockfile.Open(filepath.Join(dir, ".lock"), rundir.LockDir(state))
	if err != nil {
		return nil, fmt.Errorf("opening history lock: %w", err)
	}
	if err := flockWait(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking history %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// lockWait bounds the wait for a lock: the agents hold theirs for one
// append, so a lock held longer than this is stuck.
const lockWait = 5 * time.Second

func flockWait(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still locked after %v", lockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// markPath records how much of the copy at path is merged.
func markPath(path string) string { return path + ".merged" }

// merge appends the lines of the copy at path that are new since the last
// merge, and that host does not hold, to host. With valid set, only lines
// it accepts are appended, at most maxMergeEntries of them (maxMergeBytes
// in all); it returns how many it dropped.
func merge(path, host string, valid func([]byte) bool) (int, error) {
	// What the copy gained since the last merge (all of it when it was
	// rewritten shorter: it is judged whole then).
	tail, done, err := readOwnFrom(path, readMark(markPath(path)))
	if err != nil {
		return 0, fmt.Errorf("reading history copy: %w", err)
	}
	// Only whole lines: the agent may be writing the last one.
	whole := bytes.LastIndexByte(tail, '\n') + 1
	if whole == 0 {
		return 0, nil
	}
	end := done + int64(whole)
	fresh, dropped := tail[:whole], 0
	if valid != nil {
		fresh, dropped = entries(fresh, valid)
	}
	h, err := os.OpenFile(host, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		h, err = os.OpenFile(host, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o600)
	}
	if err != nil {
		return 0, fmt.Errorf("opening host history %s: %w", host, err)
	}
	defer h.Close()
	if fi, err := h.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("host history %s is not a regular file; move it away", host)
	}
	if err := flockWait(h); err != nil {
		return 0, fmt.Errorf("locking host history %s: %w", host, err)
	}
	have, err := readTail(h)
	if err != nil {
		return 0, fmt.Errorf("reading host history %s: %w", host, err)
	}
	out := NewLines(have, fresh)
	if len(out) > 0 {
		if len(have) > 0 && have[len(have)-1] != '\n' {
			out = append([]byte{'\n'}, out...)
		}
		// One write under the lock: a reader sees whole lines.
		if _, err := h.Write(out); err != nil {
			return 0, fmt.Errorf("appending to host history %s: %w", host, err)
		}
		if err := h.Sync(); err != nil {
			return 0, fmt.Errorf("syncing host history %s: %w", host, err)
		}
	}
	return dropped, writeMark(markPath(path), end)
}

// What one launch may add to the host's history: a jailed agent writes
// its copy, and a copy of any size or shape must not become the user's
// history. A person types far fewer prompts than this in one session.
const (
	maxMergeEntries = 10000
	maxMergeBytes   = 16 << 20
	maxEntryBytes   = 1 << 20
)

// entries keeps the lines of fresh that valid accepts, within the bounds
// of one launch, and counts the others (blank lines are not counted).
func entries(fresh []byte, valid func([]byte) bool) ([]byte, int) {
	var out []byte
	kept, dropped := 0, 0
	for len(fresh) > 0 {
		line := fresh
		if i := bytes.IndexByte(fresh, '\n'); i >= 0 {
			line, fresh = fresh[:i+1], fresh[i+1:]
		} else {
			fresh = nil
		}
		body := bytes.TrimRight(line, "\r\n")
		switch {
		case len(bytes.TrimSpace(body)) == 0:
		case len(body) > maxEntryBytes || !valid(body) || kept >= maxMergeEntries || len(out)+len(line) > maxMergeBytes:
			dropped++
		default:
			kept++
			out = append(out, line...)
		}
	}
	return out, dropped
}

// codexEntry reports whether line is one entry of Codex's history file,
// as codex-cli 0.171.0 writes it: a JSON object with exactly its session
// id (session_id, or conversation_id in other versions: a short string),
// ts (a non-negative integer, seconds) and text (a string), each once.
func codexEntry(line []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := t.(string)
		if seen[k] {
			return false
		}
		seen[k] = true
		v, err := dec.Token()
		if err != nil {
			return false
		}
		switch k {
		case "session_id", "conversation_id":
			id, ok := v.(string)
			if !ok || id == "" || len(id) > 128 {
				return false
			}
		case "ts":
			n, ok := v.(json.Number)
			if !ok {
				return false
			}
			if _, err := strconv.ParseUint(string(n), 10, 64); err != nil {
				return false
			}
		case "text":
			if _, ok := v.(string); !ok {
				return false
			}
		default:
			return false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return len(seen) == 3 && seen["ts"] && seen["text"] && (seen["session_id"] != seen["conversation_id"])
}

// addDropped adds n to the count of dropped lines kept beside the copy at
// path, for the next MergeBack to report.
func addDropped(path string, n int) {
	writeMark(path+".dropped", readMark(path+".dropped")+int64(n))
}

// takeDropped returns and clears that count.
func takeDropped(path string) int {
	n := readMark(path + ".dropped")
	if n > 0 {
		os.Remove(path + ".dropped")
	}
	return int(n)
}

// NewLines returns the lines of fresh that are not lines of have, in
// order, each ending in a newline; blank lines are dropped.
func NewLines(have, fresh []byte) []byte {
	seen := make(map[string]bool)
	r := bufio.NewReader(bytes.NewReader(have))
	for {
		line, err := r.ReadBytes('\n')
		if l := bytes.TrimRight(line, "\r\n"); len(l) > 0 {
			seen[string(l)] = true
		}
		if err != nil {
			break
		}
	}
	var out []byte
	for len(fresh) > 0 {
		line := fresh
		if i := bytes.IndexByte(fresh, '\n'); i >= 0 {
			line, fresh = fresh[:i], fresh[i+1:]
		} else {
			fresh = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 || seen[string(line)] {
			continue
		}
		seen[string(line)] = true
		out = append(append(out, line...), '\n')
	}
	return out
}

// maxCopy bounds what is read of a copy or mark.
const maxCopy = 256 << 20

// readOwnFrom reads a regular file of the user's, never through a
// symlink, never from a FIFO, from offset from on (from the start when
// the file is now shorter than from: it was rewritten), and returns the
// offset it read from.
func readOwnFrom(path string, from int64) ([]byte, int64, error) {
	f, err := regfile.Open(path)
	if errors.Is(err, regfile.ErrNotRegular) {
		return nil, 0, fmt.Errorf("%s is not a regular file of yours", path)
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !ownRegular(fi) {
		return nil, 0, fmt.Errorf("%s is not a regular file of yours", path)
	}
	size := min(fi.Size(), maxCopy)
	if from > size {
		from = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, from, size-from))
	return data, from, err
}

// readTail reads the last maxCopy bytes of f from its first whole line
// on, or all of it when it is shorter: the lines a merge must not append
// twice are recent ones. A jail writes the host file (and a codex jail its
// copy), and a sparse file of any size costs it nothing: read whole, it
// made the launcher that merged into it take all the memory there was.
func readTail(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := max(fi.Size()-maxCopy, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil || from == 0 {
		return data, err
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[i+1:], nil
	}
	// No line ends here: its last byte alone, which tells the caller
	// to end the line before appending.
	return data[len(data)-1:], nil
}

func readMark(path string) int64 {
	data, _, err := readOwnFrom(path, 0)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// writeMark replaces the mark atomically, so a crash never leaves one
// that claims more than was merged.
func writeMark(path string, n int64) error {
	if err := atomicfile.Write(path, []byte(strconv.FormatInt(n, 10)+"\n"), atomicfile.Options{Mode: 0o600}); err != nil {
		return fmt.Errorf("recording merged history: %w", err)
	}
	return nil
}

// Prune merges into the host files and removes the copies no launch will
// use again: per-slot copies of earlier versions whose slot is not live,
// and per-worktree copies untouched for maxAge with no live slot. live
// names the live slots; a copy any of them may have bound is never
// touched.
func Prune(aisanHome string, dirs Dirs, live []string, maxAge time.Duration, now time.Time) []error {
	root := filepath.Join(aisanHome, "history")
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []error{fmt.Errorf("reading %s: %w", root, err)}
	}
	inUse := make(map[string]bool)
	for _, s := range live {
		inUse[s] = true
		for _, a := range agents {
			inUse[Key(s, a.kind)] = true
		}
	}
	var errs []error
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() || strings.HasPrefix(name, ".") || inUse[name] {
			continue
		}
		dir := filepath.Join(root, name)
		if err := pruneDir(dir, dirs, maxAge, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func pruneDir(dir string, dirs Dirs, maxAge time.Duration, now time.Time) error {
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	isKey := strings.HasSuffix(filepath.Base(dir), "-codex")
	for _, a := range agents {
		p := filepath.Join(dir, a.file)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		// The per-worktree Codex copy is the up-arrow of the worktree's
		// next codex: kept until it has been idle for maxAge.
		if a.kind == "codex" && isKey && now.Sub(fi.ModTime()) < maxAge {
			continue
		}
		if err := retire(p, filepath.Join(dirs.of(a.kind), a.History)); err != nil {
			return err
		}
	}
	rest, err := os.ReadDir(dir)
	if err == nil && len(rest) == 1 && rest[0].Name() == ".lock" {
		os.Remove(filepath.Join(dir, ".lock"))
		os.Remove(dir)
	}
	return nil
}

// outsideLine is what adoptOutside reads of a Codex history line.
type outsideLine struct {
	SessionID string `json:"session_id"`
}

// adoptOutside appends to the copy at path the lines of the host file
// typed in sessions that ran in root (or below it), from where the last
// look stopped. sessions is Codex's session log directory.
func adoptOutside(path, host, sessions, root string) error {
	seenMark := path + ".adopted"
	// Only what was added since: the host file holds the user's whole
	// Codex past, and every codex launch looks.
	tail, from, err := readOwnFrom(host, readMark(seenMark))
	if err != nil {
		return nil // no host history to adopt from
	}
	whole := bytes.LastIndexByte(tail, '\n') + 1
	if whole == 0 {
		return nil
	}
	end := from + int64(whole)
	type sessionLine struct {
		id   string
		line []byte
	}
	var lines []sessionLine
	ids := make(map[string]bool)
	for _, line := range bytes.SplitAfter(tail[:whole], []byte("\n")) {
		var l outsideLine
		if json.Unmarshal(line, &l) != nil || l.SessionID == "" {
			continue
		}
		lines = append(lines, sessionLine{l.SessionID, line})
		ids[l.SessionID] = true
	}
	var picked []byte
	if len(lines) > 0 {
		cwds := sessionDirs(sessions, ids)
		for _, l := range lines {
			if cwd, ok := cwds[l.id]; ok && within(cwd, root) {
				picked = append(picked, l.line...)
			}
		}
	}
	if len(picked) > 0 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening history copy: %w", err)
		}
		defer f.Close()
		// The agent's own lock: a jailed codex of the worktree may be
		// appending to the copy right now.
		if err := flockWait(f); err != nil {
			return fmt.Errorf("locking history copy %s: %w", path, err)
		}
		have, err := readTail(f)
		if err != nil {
			return fmt.Errorf("reading history copy: %w", err)
		}
		if out := NewLines(have, picked); len(out) > 0 {
			if len(have) > 0 && have[len(have)-1] != '\n' {
				out = append([]byte{'\n'}, out...)
			}
			if _, err := f.Write(out); err != nil {
				return fmt.Errorf("adding to history copy: %w", err)
			}
		}
	}
	return writeMark(seenMark, end)
}

// maxMetaLine bounds what is read of a session log's first line.
const maxMetaLine = 1 << 20

// sessionDirs maps the Codex sessions in ids to the directory each ran
// in, from the first line of its session log under dir. Codex names a
// log rollout-<time>-<id>.jsonl, so only the logs named for a session in
// ids are opened: a user's sessions directory keeps every session ever
// run, and each log's first line holds the session's instructions. A
// log whose name carries no id is read only for an id no name carries;
// one named for a session speaks for that session alone.
func sessionDirs(dir string, ids map[string]bool) map[string]string {
	out := make(map[string]string)
	var others []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		if !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
			return nil
		}
		switch id := logID(name); {
		case id == "":
			others = append(others, p)
		case ids[id]:
			// A log whose first line names another session is not id's.
			if got, cwd, ok := sessionMeta(p); ok && got == id {
				out[id] = cwd
			}
		}
		return nil
	})
	for _, p := range others {
		if len(out) == len(ids) {
			break
		}
		if id, cwd, ok := sessionMeta(p); ok && ids[id] && out[id] == "" {
			out[id] = cwd
		}
	}
	return out
}

// logID is the session id a log's name carries: the UUID between the
// time and ".jsonl" ("" when the name ends otherwise).
func logID(name string) string {
	const n = len("00000000-0000-0000-0000-000000000000")
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(base) < len("rollout-")+n || base[len(base)-n-1] != '-' {
		return ""
	}
	id := base[len(base)-n:]
	for i, c := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return ""
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return ""
		}
	}
	return id
}

// sessionMeta reads the session id and directory from the first line of
// the session log at p.
func sessionMeta(p string) (id, cwd string, ok bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", "", false // swapped since the walk saw a file
	}
	line, _ := bufio.NewReaderSize(io.LimitReader(f, maxMetaLine), 64<<10).ReadBytes('\n')
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Type != "session_meta" || meta.Payload.ID == "" || meta.Payload.Cwd == "" {
		return "", "", false
	}
	return meta.Payload.ID, filepath.Clean(meta.Payload.Cwd), true
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

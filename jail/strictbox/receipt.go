package strictbox

// A strict launch's receipt: what 'aisan report' needs of the launch
// beyond the slot's record and its egress log.
//
// Rules:
//   - At launch, before the box starts, git's view of the repository is
//     taken: the commit checked out and a fingerprint of every file git
//     sees as changed or untracked. It is taken while the launch goes on
//     (a git status beside the other steps), and waited for before the
//     box runs.
//   - At the end (the wrapper's, or the keeper's), after the held set is
//     collected, the repository is compared with it: a file the launch
//     saw clean changed if git now sees it differ from the launch's
//     commit or untracked; a file it saw changed, if its fingerprint
//     differs. The host runs git as the user would ('git status'),
//     without taking the index lock.
//   - A receipt names paths, hosts, backends and where credentials come
//     from; never a credential, an argument or a file's content.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/slot"
)

// Receipt is what a strict launch keeps for 'aisan report'.
type Receipt struct {
	Slot string `json:"slot"`
	// Start is when the box's host side started serving it; End when it
	// stopped (zero while the box runs).
	Start time.Time `json:"start"`
	End   time.Time `json:"end,omitzero"`
	Repo  string    `json:"repo"`
	// Snapshot is the repository at launch, until the end compares it;
	// Changes are what the box changed of it, or ChangesErr why that is
	// not known.
	Snapshot *Snapshot `json:"snapshot,omitempty"`
	// Made are the mount points the run made in the repository, left
	// out of both sides of the comparison.
	Made       []string     `json:"made,omitempty"`
	Changes    []FileChange `json:"changes,omitempty"`
	Compared   bool         `json:"compared,omitempty"`
	ChangesErr string       `json:"changes_error,omitempty"`
	// Held is the launch's held set (what it changed of what host tools
	// run, held for review), "" for none.
	Held string `json:"held,omitempty"`
	// Credentials says where each model backend's credential comes from
	// (a path or a variable's name).
	Credentials map[string]string `json:"credentials,omitempty"`
	// Left are the processes in the box when its agent exited, and
	// LeftEnd how they ended.
	Left    []Process `json:"left,omitempty"`
	LeftEnd string    `json:"left_end,omitempty"`
	// State is the box's steering state at its end (or the last saved).
	State *State `json:"state,omitempty"`
	// PeakMemory (bytes) and CPUMicros are the box's cgroup's, 0 when
	// the box ran without one it could read (scopeuse.go).
	PeakMemory int64 `json:"peak_memory,omitempty"`
	CPUMicros  int64 `json:"cpu_usec,omitempty"`
}

// Snapshot is git's view of a repository at a launch.
type Snapshot struct {
	// Head is the commit checked out, "" before the first commit.
	Head string `json:"head"`
	// Files are the paths git saw as changed, staged or untracked, with
	// a fingerprint of each ("" for a file that was absent).
	Files map[string]string `json:"files"`
	// Err says why there is no snapshot (not a git repository, no git).
	Err string `json:"error,omitempty"`
	// Hidden are the paths the index marked skip-worktree or
	// assume-unchanged: git status and git diff say nothing of them
	// whatever their content. null when git could not tell (then every
	// such path at the end counts as the box's).
	Hidden []string `json:"hidden"`
}

// FileChange is one file a box changed.
type FileChange struct {
	Path string `json:"path"`
	// How is added, modified or deleted; or hidden: marked in the index
	// since the launch so that git status and git diff do not show it
	// (skip-worktree or assume-unchanged), whatever it holds now.
	How string `json:"how"`
}

// Process is one process left in a box.
type Process struct {
	PID  int    `json:"pid"`
	Name string `json:"name"`
}

// receiptDir is where a slot's receipts are kept, one per launch.
func receiptDir(home, slotName string) string {
	return filepath.Join(home, "receipts", slotName)
}

// receiptStamp names a receipt after its start.
const receiptStamp = "20060102T150405.000000000Z"

// keptReceipts is how many receipts of a slot are kept: as many as
// launches ('aisan logs --launches').
const keptReceipts = 10

// newReceiptPath names the receipt of a launch of slotName started at
// start, and drops the slot's oldest receipts beyond keptReceipts.
func newReceiptPath(slotName string, start time.Time) (string, error) {
	home, err := slot.Home()
	if err != nil {
		return "", err
	}
	dir := receiptDir(home, slotName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the receipt directory: %w", err)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) >= keptReceipts {
		// Names sort by time.
		for _, e := range ents[:len(ents)-keptReceipts+1] {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return filepath.Join(dir, start.UTC().Format(receiptStamp)+".json"), nil
}

func writeReceipt(path string, r *Receipt) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), atomicfile.Options{Mode: 0o600})
}

func readReceipt(path string) (*Receipt, error) {
	data, err := regfile.Read(path, 16<<20)
	if err != nil {
		return nil, err
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the receipt %s: %w", path, err)
	}
	return &r, nil
}

// FindReceipt is the receipt of the launch of slotName that started at
// from (its slot taken) and ended at to (zero: it runs); nil when there
// is none (a deny-list launch, or one pruned since).
func FindReceipt(slotName string, from, to time.Time) (*Receipt, error) {
	home, err := slot.Home()
	if err != nil {
		return nil, err
	}
	dir := receiptDir(home, slotName)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The slot is taken a little before its services start; the
	// transcript's name keeps whole seconds only.
	lo := from.Truncate(time.Second)
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		t, err := time.Parse(receiptStamp, name)
		if err != nil || t.Before(lo) || !to.IsZero() && t.After(to) {
			continue
		}
		return readReceipt(filepath.Join(dir, e.Name()))
	}
	return nil, nil
}

// gitTimeout bounds each git run of a receipt: a huge repository makes
// a receipt without its files, not a slow launch.
const gitTimeout = 5 * time.Second

// maxHashed caps the bytes a snapshot reads: past it (and for any file
// over maxHashedFile), a file is known by its size and time.
const (
	maxHashed     = 128 << 20
	maxHashedFile = 32 << 20
)

// git runs git in repo the way a user's 'git status' would, without
// taking the index lock.
func git(ctx context.Context, repo string, args ...string) ([]byte, error) {
	return gitWith(ctx, repo, nil, args...)
}

// gitWith is git with env added to its environment.
func gitWith(ctx context.Context, repo string, env []string, args ...string) ([]byte, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, errors.New("git is not on the host's PATH")
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-optional-locks", "-c", "core.fsmonitor=false", "-C", repo}, args...)...)
	cmd.Env = slices.Concat(os.Environ(), []string{"GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}, env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("git %s: %v %s", args[0], err, msg)
	}
	return out, nil
}

// gitStatus is git's view of the repository now. Of the branch it reads
// only the commit: --no-ahead-behind spares git counting the commits
// between the branch and its upstream, a walk of the history that made a
// snapshot of a branch 20,000 commits behind take 92 ms instead of 8
// (BenchmarkSnapshotFarBehind), at each launch's start and end.
func gitStatus(ctx context.Context, repo string) (status, error) {
	out, err := git(ctx, repo, "status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind", "--untracked-files=all", "--ignore-submodules=all")
	if err != nil {
		return status{}, err
	}
	return parseStatus(out)
}

// status is what parseStatus reads of 'git status --porcelain=v2 -z
// --branch': the commit checked out, and the paths git sees as changed
// (staged, unstaged, in conflict, renamed from and to) or untracked.
type status struct {
	Head      string
	Changed   []string
	Untracked []string
	// Added are the changed paths staged as new (not in the commit).
	Added []string
}

// parseStatus reads git status --porcelain=v2 -z --branch output.
func parseStatus(out []byte) (status, error) {
	var st status
	recs := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(out) == 0 {
		recs = nil
	}
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		switch {
		case strings.HasPrefix(r, "# branch.oid "):
			if h := strings.TrimPrefix(r, "# branch.oid "); h != "(initial)" {
				st.Head = h
			}
		case strings.HasPrefix(r, "# "):
		case strings.HasPrefix(r, "1 "):
			f := strings.SplitN(r, " ", 9)
			if len(f) != 9 || f[8] == "" {
				return status{}, fmt.Errorf("git status: bad entry %q", r)
			}
			st.Changed = append(st.Changed, f[8])
			if f[1][0] == 'A' {
				st.Added = append(st.Added, f[8])
			}
		case strings.HasPrefix(r, "2 "):
			f := strings.SplitN(r, " ", 10)
			if len(f) != 10 || f[9] == "" || i+1 >= len(recs) {
				return status{}, fmt.Errorf("git status: bad rename entry %q", r)
			}
			i++
			st.Changed = append(st.Changed, f[9], recs[i])
			st.Added = append(st.Added, f[9])
		case strings.HasPrefix(r, "u "):
			f := strings.SplitN(r, " ", 11)
			if len(f) != 11 || f[10] == "" {
				return status{}, fmt.Errorf("git status: bad conflict entry %q", r)
			}
			st.Changed = append(st.Changed, f[10])
		case strings.HasPrefix(r, "? "):
			st.Untracked = append(st.Untracked, r[2:])
		case strings.HasPrefix(r, "! "):
		default:
			return status{}, fmt.Errorf("git status: unknown entry %q", r)
		}
	}
	return st, nil
}

// fingerprint says what is at p now, so that two can be compared: ""
// for nothing, a symlink's target, a regular file's SHA-256 (or, past
// the read budget, its size and time).
func fingerprint(p string, budget *int64) string {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return ""
	case fi.Mode().Type() == fs.ModeSymlink:
		t, _ := os.Readlink(p)
		return "link:" + t
	case !fi.Mode().IsRegular():
		return "other:" + fi.Mode().Type().String()
	case fi.Size() > maxHashedFile || fi.Size() > *budget:
		return fmt.Sprintf("size:%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	data, err := regfile.Read(p, maxHashedFile)
	if err != nil {
		return fmt.Sprintf("size:%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	*budget -= int64(len(data))
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// takeSnapshot is git's view of repo now, with the changed files'
// fingerprints.
func takeSnapshot(ctx context.Context, repo string) *Snapshot {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	// Two git processes, side by side: the launch waits for both.
	var hidden []string
	var hiddenErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		hidden, hiddenErr = hiddenPaths(ctx, repo)
	}()
	st, err := gitStatus(ctx, repo)
	<-done
	if err != nil {
		return &Snapshot{Err: err.Error()}
	}
	s := &Snapshot{Head: st.Head, Files: map[string]string{}}
	if hiddenErr == nil {
		s.Hidden = append([]string{}, hidden...)
	}
	budget := int64(maxHashed)
	for _, p := range append(st.Changed, st.Untracked...) {
		s.Files[p] = fingerprint(filepath.Join(repo, p), &budget)
	}
	return s
}

// startSnapshot takes the snapshot beside the rest of the launch; the
// function it returns waits for it, or until ctx is done: then it stops
// git (which takes no lock) and reports no snapshot. Without a git dir
// (isGit false) there is nothing git could tell, and no git is run, now
// or at the end.
func startSnapshot(repo string, isGit bool) func(ctx context.Context) (*Snapshot, bool) {
	if !isGit {
		s := &Snapshot{Err: repo + " is not a git repository (no .git in it or above it)"}
		return func(context.Context) (*Snapshot, bool) { return s, true }
	}
	taking, stop := context.WithCancel(context.Background())
	done := make(chan *Snapshot, 1)
	go func() { done <- takeSnapshot(taking, repo) }()
	var s *Snapshot
	return func(ctx context.Context) (*Snapshot, bool) {
		if s == nil {
			select {
			case s = <-done:
				stop()
			case <-ctx.Done():
				stop()
				return nil, false
			}
		}
		return s, true
	}
}

// compare lists what changed in repo since snap.
func compare(repo string, snap *Snapshot, made []string) ([]FileChange, error) {
	if snap == nil {
		return nil, errors.New("no snapshot of the repository was taken at launch")
	}
	if snap.Err != "" {
		return nil, errors.New(snap.Err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	st, err := gitStatus(ctx, repo)
	if err != nil {
		return nil, err
	}
	// What git sees differ from the launch's commit now (committed in
	// the box or not), with how.
	differs := map[string]string{}
	switch {
	case snap.Head != "" && st.Head != snap.Head:
		// Commits made since: git's diff against the launch's commit,
		// on a copy of the index. git diff ignores --no-optional-locks:
		// when a file's stat data is stale (the end put back a file the
		// box changed), it rewrites the index under its lock, and this
		// often runs after the launch returned (FinishReceipt), when the
		// user's next git add or commit would find index.lock taken.
		out, err := withIndexCopy(ctx, repo, func(env []string) ([]byte, error) {
			return gitWith(ctx, repo, env, "diff", "--name-status", "-z", "--no-renames", "--ignore-submodules=all", snap.Head, "--")
		})
		if err != nil {
			return nil, err
		}
		if differs, err = parseNameStatus(out); err != nil {
			return nil, err
		}
	default:
		// The same commit (or none at launch): what git sees changed
		// now is what differs from it; a path the snapshot did not
		// have is one the box changed, and its fingerprint then says
		// how.
		for _, p := range st.Changed {
			differs[p] = ""
		}
	}
	for _, p := range st.Untracked {
		differs[p] = "added"
	}
	for _, p := range made {
		delete(differs, p)
	}
	var out []FileChange
	budget := int64(maxHashed)
	for p, how := range differs {
		if _, ok := snap.Files[p]; ok {
			continue
		}
		if how == "" {
			how = "modified"
			if _, err := os.Lstat(filepath.Join(repo, p)); errors.Is(err, fs.ErrNotExist) {
				how = "deleted"
			} else if !tracked(st, p) {
				how = "added"
			}
		}
		out = append(out, FileChange{Path: p, How: how})
	}
	for p, was := range snap.Files {
		now := fingerprint(filepath.Join(repo, p), &budget)
		if now == was {
			continue
		}
		how := "modified"
		switch {
		case was == "":
			how = "added"
		case now == "":
			how = "deleted"
		}
		out = append(out, FileChange{Path: p, How: how})
	}
	// What git status cannot show: a path marked since the launch is the
	// box's doing (it hides an edit from the user's review), whatever it
	// holds.
	hidden, err := hiddenPaths(ctx, repo)
	if err != nil {
		return nil, err
	}
	for _, p := range hidden {
		if snap.Hidden != nil && slices.Contains(snap.Hidden, p) {
			continue
		}
		i := slices.IndexFunc(out, func(c FileChange) bool { return c.Path == p })
		if i < 0 {
			out = append(out, FileChange{Path: p})
			i = len(out) - 1
		}
		out[i].How = "hidden"
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// withIndexCopy runs do with GIT_INDEX_FILE set to a private copy of
// repo's index (or a path with none, when the repository has no index
// yet: git reads both as empty), so that whatever git writes to its
// index lands in the copy, and never in, or in the lock of, the user's.
func withIndexCopy(ctx context.Context, repo string, do func(env []string) ([]byte, error)) ([]byte, error) {
	out, err := git(ctx, repo, "rev-parse", "--git-path", "index")
	if err != nil {
		return nil, err
	}
	index := strings.TrimSuffix(string(out), "\n")
	if !filepath.IsAbs(index) {
		index = filepath.Join(repo, index)
	}
	dir, err := os.MkdirTemp("", "aisan-index-")
	if err != nil {
		return nil, fmt.Errorf("a copy of the index for git diff: %w", err)
	}
	defer os.RemoveAll(dir)
	// An absent index stays absent in the copy: git reads both as empty.
	copied := filepath.Join(dir, "index")
	if err := regfile.Copy(index, copied); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("a copy of the index for git diff: %w", err)
	}
	return do([]string{"GIT_INDEX_FILE=" + copied})
}

// hiddenPaths lists the index's entries that git status and git diff
// skip: skip-worktree (ls-files -v tags them S) or assume-unchanged
// (a lowercase tag).
func hiddenPaths(ctx context.Context, repo string) ([]string, error) {
	out, err := git(ctx, repo, "ls-files", "-v", "-z")
	if err != nil {
		return nil, err
	}
	var hidden []string
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if len(rec) < 3 || rec[1] != ' ' {
			if rec == "" {
				continue
			}
			return nil, fmt.Errorf("git ls-files: bad entry %q", rec)
		}
		if tag := rec[0]; tag == 'S' || tag >= 'a' && tag <= 'z' {
			hidden = append(hidden, rec[2:])
		}
	}
	return hidden, nil
}

// tracked reports whether git had p at the commit checked out: a path
// staged as added was not.
func tracked(st status, p string) bool { return !slices.Contains(st.Added, p) }

// parseNameStatus reads git diff --name-status -z --no-renames output.
func parseNameStatus(out []byte) (map[string]string, error) {
	m := map[string]string{}
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(out) == 0 {
		return m, nil
	}
	if len(f)%2 != 0 {
		return nil, errors.New("git diff: an odd number of fields")
	}
	for i := 0; i < len(f); i += 2 {
		how := "modified"
		switch f[i] {
		case "A":
			how = "added"
		case "D":
			how = "deleted"
		case "M", "T", "U", "X":
		default:
			return nil, fmt.Errorf("git diff: unknown status %q", f[i])
		}
		if f[i+1] == "" {
			return nil, errors.New("git diff: an empty path")
		}
		m[f[i+1]] = how
	}
	return m, nil
}

// processesIn lists the processes of the PID namespace ns (by its
// inode), the namespace's init (initPID) left out.
func processesIn(ns uint64, initPID int) []Process {
	ents, err := os.ReadDir("/proc")
	if err != nil || ns == 0 {
		return nil
	}
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == initPID {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name()+"/ns/pid", &st) != nil || st.Ino != ns {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil {
			continue
		}
		out = append(out, Process{PID: pid, Name: slot.Printable(strings.TrimSpace(string(comm)))})
	}
	return out
}

// leftInBox lists the processes in slotName's box besides its init.
func leftInBox(slotName string) []Process {
	_, e, ok := slotRecord(slotName)
	if !ok {
		return nil
	}
	return processesIn(e.PidNSInode, e.InitPID)
}

// howLeftEnded says how a kept box's leftovers ended: by 'aisan kill'
// (its note names who, with which signal) or by themselves.
func howLeftEnded(slotName string) string {
	reg, e, ok := slotRecord(slotName)
	if !ok {
		return ""
	}
	if by, sig, ok := reg.KillNote(slotName, e.Start); ok {
		return fmt.Sprintf("ended by %s with %s", by, sig)
	}
	return "ended by themselves"
}

// credentials says where the box's model backends' credentials come
// from, by backend.
func (m *boxEgress) credentials() map[string]string {
	out := map[string]string{}
	for name, s := range m.specs {
		if s.Credential != "" {
			out[name] = s.Credential
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// receiptOf follows a launch's receipt through the services.
type receiptOf struct {
	path string
	r    *Receipt
	use  *scopeUse
}

// startReceipt writes the receipt of a box beginning to be served.
func startReceipt(slotName, repo string, snap *Snapshot, made []string, held string, m *boxEgress) *receiptOf {
	start := m.steer.start
	path, err := newReceiptPath(slotName, start)
	if err != nil {
		return nil
	}
	if snap != nil {
		for _, p := range made {
			delete(snap.Files, p)
		}
	}
	r := &Receipt{Slot: slotName, Start: start, Repo: repo, Snapshot: snap, Made: made, Held: held, Credentials: m.credentials()}
	if writeReceipt(path, r) != nil {
		return nil
	}
	return &receiptOf{path: path, r: r, use: watchScope(slotName, 0, 0)}
}

// resumeReceipt reads a receipt a keeper takes over.
func resumeReceipt(path string) *receiptOf {
	if path == "" {
		return nil
	}
	r, err := readReceipt(path)
	if err != nil {
		return nil
	}
	return &receiptOf{path: path, r: r, use: watchScope(r.Slot, r.PeakMemory, r.CPUMicros)}
}

// kept records what is left in the box as its agent exits.
func (ro *receiptOf) kept(slotName string, st State) {
	if ro == nil {
		return
	}
	ro.r.Left = leftInBox(slotName)
	ro.r.State = &st
	ro.r.PeakMemory, ro.r.CPUMicros = ro.use.figures()
	writeReceipt(ro.path, ro.r)
}

// end completes the receipt once the box has ended and its held set is
// collected. With finish (an argv), the comparison with the repository,
// which runs git, is left to that command, started on its own so that
// the launch returns without waiting for it ([FinishReceipt]).
func (ro *receiptOf) end(slotName string, st State, keeper bool, finish []string) {
	if ro == nil {
		return
	}
	r := ro.r
	r.End, r.State = time.Now(), &st
	r.PeakMemory, r.CPUMicros = ro.use.end()
	if keeper && len(r.Left) > 0 {
		r.LeftEnd = howLeftEnded(slotName)
	}
	if len(finish) > 0 && r.Repo != "" && r.Snapshot != nil && r.Snapshot.Err == "" {
		if writeReceipt(ro.path, r) == nil && detach(append(slices.Clone(finish), ro.path)) == nil {
			return
		}
	}
	finishReceipt(r)
	writeReceipt(ro.path, r)
}

// finishReceipt compares the repository with the launch's snapshot.
func finishReceipt(r *Receipt) {
	if r.Repo != "" && r.Snapshot != nil {
		ch, err := compare(r.Repo, r.Snapshot, r.Made)
		r.Changes, r.Compared = ch, err == nil
		if err != nil {
			r.ChangesErr = err.Error()
		}
	}
	r.Snapshot = nil
}

// FinishReceipt is 'aisan __receipt PATH': it completes the receipt at
// path, which a launch that has ended left to it. Its path must be one
// of the state dir's receipts.
func FinishReceipt(args []string) int {
	if len(args) != 1 {
		return 2
	}
	home, err := slot.Home()
	if err != nil {
		return 1
	}
	rel, err := filepath.Rel(filepath.Join(home, "receipts"), args[0])
	if err != nil || !filepath.IsLocal(rel) {
		return 2
	}
	r, err := readReceipt(args[0])
	if err != nil || r.End.IsZero() || r.Snapshot == nil {
		return 1
	}
	finishReceipt(r)
	if writeReceipt(args[0], r) != nil {
		return 1
	}
	return 0
}

// detach starts argv in a session of its own, its output discarded, and
// does not wait for it.
func detach(argv []string) error {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// slotRecord is the user's registry and slotName's record in it, if
// there is one.
func slotRecord(slotName string) (*slot.Registry, slot.Entry, bool) {
	home, err := slot.Home()
	if err != nil {
		return nil, slot.Entry{}, false
	}
	reg, err := slot.Open(home)
	if err != nil {
		return nil, slot.Entry{}, false
	}
	e, err := reg.Lookup(slotName)
	return reg, e, err == nil
}

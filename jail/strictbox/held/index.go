package held

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// The index. A box can stage (git add) or commit its own version of a
// file the set holds: the repository keeps the user's file, and the
// index the box's. Host tools that take the index's version put it back
// in the working tree without asking: pre-commit stashes what is not
// staged before it runs its hooks, and so the user's next commit would
// run the box's script; git stash, git checkout -- . and git restore do
// it too. So the launch keeps a copy of the index, and the end puts the
// index entries of what the set holds (its items, the mount points made
// for the run, what the end swept) back as they were, and says so. The
// box's version is in the review as a change of the file.

// Index states recorded in the manifest.
const (
	// indexCopied: the index was copied at launch, as index.launch.
	indexCopied = "copied"
	// indexNone: there was no index at launch: nothing was staged.
	indexNone = "none"
)

// indexLaunch is the copy of the repository's index taken at launch.
func indexLaunch(set string) string { return filepath.Join(set, "index.launch") }

// NestedIndex is the index of a repository nested in the box's (a
// nested checkout, a submodule, a linked worktree): its hooks and hook
// managers run what its index has as the box's own repository's do.
type NestedIndex struct {
	// Root is its working tree, GitDir the git dir holding its index.
	Root   string `json:"root"`
	GitDir string `json:"git_dir"`
	// State is what Prepare found: indexCopied, indexNone, or
	// indexSkipped past maxNested.
	State string `json:"state,omitempty"`
	// Head is the commit its HEAD named at launch (head.go).
	Head string `json:"head,omitempty"`
	// Refs are its refs at launch (refs.go), when it has
	// a common dir of its own among the set's repositories; RefsUnread
	// says they could not be read.
	Refs       map[string]string `json:"refs"`
	RefsUnread bool              `json:"refs_unread,omitempty"`
	// TodoExecs are the exec lines of its operation in progress at
	// launch (sequencer.go).
	TodoExecs map[string][]string `json:"todo_execs,omitempty"`
}

// indexSkipped: a nested repository past maxNested, whose index was not
// kept: the end says so when it holds a path there.
const indexSkipped = "skipped"

// maxNested bounds the nested repositories whose index a launch copies.
const maxNested = 64

// repoIndex is one index the set keeps, and the copy of it taken at
// launch.
type repoIndex struct {
	root, gitDir, commonDir, state, copy, head string
	// refs are the loose refs at launch, packed the copy of packed-refs
	// taken then (refs.go); refs is nil when they were not recorded,
	// and refsUnread set when they could not be read.
	refs       map[string]string
	packed     string
	refsUnread bool
}

// indexes are the indexes of m: its repository's and the nested ones'.
func indexes(set string, m Manifest) []repoIndex {
	var out []repoIndex
	if m.GitDir != "" {
		out = append(out, repoIndex{m.Repo, m.GitDir, m.CommonDir, m.Index, indexLaunch(set), m.Head, m.Refs, packedLaunch(set, -1), m.RefsUnread})
	}
	for i, n := range m.NestedIndex {
		out = append(out, repoIndex{n.Root, n.GitDir, commonOf(n.GitDir), n.State, nestedLaunch(set, i), n.Head, n.Refs, packedLaunch(set, i), n.RefsUnread})
	}
	return out
}

// maxIndex bounds the index copied at launch (a repository of a few
// hundred thousand files).
const maxIndex = 256 << 20

// saveIndexes copies the index of each repository of m into set before
// the box starts, and records what it found.
func saveIndexes(set string, m *Manifest) error {
	if m.GitDir != "" {
		state, err := saveIndex(m.GitDir, indexLaunch(set))
		if err != nil {
			return err
		}
		m.Index, m.Head = state, headOf(m.GitDir, m.CommonDir)
		m.TodoExecs, _ = todoExecs(m.GitDir)
	}
	// Branches are a common dir's: read once for the repositories that
	// share one (linked worktrees).
	seen := map[string]bool{}
	branches := func(gitDir, commonDir string, i int) (refs map[string]string, unread bool) {
		if seen[commonDir] {
			return nil, false
		}
		seen[commonDir] = true
		refs, ok := snapshotRefs(gitDir, commonDir, packedLaunch(set, i))
		return refs, !ok
	}
	if m.GitDir != "" && m.Head != "" {
		m.Refs, m.RefsUnread = branches(m.GitDir, cmp.Or(m.CommonDir, m.GitDir), -1)
	}
	for i := range m.NestedIndex {
		n := &m.NestedIndex[i]
		if i >= maxNested {
			n.State = indexSkipped
			continue
		}
		var err error
		if n.State, err = saveIndex(n.GitDir, nestedLaunch(set, i)); err != nil {
			return err
		}
		n.Head = headOf(n.GitDir, commonOf(n.GitDir))
		n.TodoExecs, _ = todoExecs(n.GitDir)
		if n.Head != "" {
			n.Refs, n.RefsUnread = branches(n.GitDir, commonOf(n.GitDir), i)
		}
	}
	return nil
}

// nestedLaunch is the copy of the i'th nested repository's index.
func nestedLaunch(set string, i int) string {
	return filepath.Join(set, fmt.Sprintf("index.%d.launch", i))
}

// saveIndex copies the index of gitDir to dst, and says what it found.
func saveIndex(gitDir, dst string) (string, error) {
	src, err := os.OpenFile(filepath.Join(gitDir, "index"), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return indexNone, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the git index: %w", err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndex {
		return "", fmt.Errorf("the git index %s is not a regular file of at most %d MiB", src.Name(), maxIndex>>20)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying the git index %s: %w", src.Name(), err)
	}
	return indexCopied, nil
}

// heldPaths are the paths of r's working tree whose index entries the
// box may not change: the items, the mount points made, what the end
// swept; not what lies in a git dir, which no index lists.
func heldPaths(m Manifest, r repoIndex) []string {
	var out []string
	add := func(p string) {
		rel, err := filepath.Rel(r.root, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			return
		}
		for _, d := range []string{m.GitDir, m.CommonDir, r.gitDir} {
			if d != "" && (p == d || strings.HasPrefix(p, d+"/")) {
				return
			}
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	for _, it := range m.Items {
		add(it.Path)
	}
	for _, c := range m.Created {
		add(c.Path)
	}
	for _, p := range m.Swept {
		add(p)
	}
	slices.Sort(out)
	return out
}

// restoreIndexes puts the index entries of what the set holds back as
// the launch's copies have them, in the box's repository and the nested
// ones, and returns the paths it put back, those the box committed
// (head.go), and what it could not check.
func restoreIndexes(set string, m Manifest, res *Result) (unchecked []Unchecked) {
	for _, r := range indexes(set, m) {
		// A git of the box's stopped mid-way (the box ended, or was
		// killed, while it ran) leaves its lock, and the user's next
		// git then refuses to touch the index.
		if lock := filepath.Join(r.gitDir, "index.lock"); fileExists(lock) {
			res.Locks = append(res.Locks, lock)
		}
		c, err := committed(m, r)
		if err != nil {
			unchecked = append(unchecked, Unchecked{Path: r.root, Why: fmt.Sprintf("the commits the box made could not be read for what host tools run (%v): look at them before git stash, git reset --hard or a checkout puts them in the working tree", err)})
		}
		res.Committed = append(res.Committed, c...)
		var now map[string]string
		ok := true
		if r.refs != nil {
			// An empty record is one too (all packed): refs is nil only
			// when none was made.
			if then, read := refsThen(r); read {
				r.refs = then
				now, ok = refsOf(r.gitDir, r.commonDir)
			} else {
				r.refsUnread = true
			}
		}
		// First what is put back, so that what is said of the rest is
		// of the refs as the end leaves them.
		put, unshadowed, err := putBack(r, now, ok)
		if err != nil {
			unchecked = append(unchecked, Unchecked{Path: r.root, Why: fmt.Sprintf("the replace refs the box made, and refs that hide others of the same name, could not be put back (%v): git replace -l lists the first; each makes git show another object in place of yours, in checkout, stash and reset too: remove the box's with git replace -d; git warns of the others as ambiguous refnames", err)})
		}
		res.Replaced = append(res.Replaced, put...)
		res.Unshadowed = append(res.Unshadowed, unshadowed...)
		moved, why, err := movedBranches(m, r, now, ok)
		if err != nil {
			why = fmt.Sprintf("the refs the box made or moved could not be read for what host tools run (%v)", err)
		}
		if why != "" {
			unchecked = append(unchecked, Unchecked{Path: r.root, Why: why + ": look at them before checking one out, merging it or git stash pop"})
		}
		res.Branches = append(res.Branches, moved...)
		if r.state == indexSkipped {
			if len(heldPaths(m, r)) > 0 {
				unchecked = append(unchecked, Unchecked{Path: filepath.Join(r.gitDir, "index"), Why: fmt.Sprintf("the index of this nested repository was not kept at launch (more than %d nested repositories): what the box staged there of what host tools run is staged still; git stash, git checkout -- . or pre-commit would put it in the working tree", maxNested)})
			}
			continue
		}
		paths, err := restoreIndex(m, r)
		if err != nil {
			unchecked = append(unchecked, Unchecked{Path: filepath.Join(r.gitDir, "index"), Why: fmt.Sprintf("the index entries of what the box may not change could not be put back as they were at launch (%v): what it staged there is staged still; git stash, git checkout -- . or pre-commit would put it in the working tree", err)})
		}
		res.Unstaged = append(res.Unstaged, paths...)
	}
	return unchecked
}

// fileExists reports whether p exists, not following a final link.
func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// restoreIndex puts the index entries of what the set holds in r's
// working tree back as the launch's copy has them, and returns the
// paths it put back. A set made without a copy (by an older aisan) is
// left as it is.
func restoreIndex(m Manifest, r repoIndex) ([]string, error) {
	if r.state != indexCopied && r.state != indexNone {
		return nil, nil
	}
	paths := heldPaths(m, r)
	if len(paths) == 0 || indexAsLaunched(r) {
		return nil, nil
	}
	var before map[string][]string
	if r.state == indexCopied {
		var err error
		if before, err = indexEntries(r, r.copy, paths); err != nil {
			return nil, fmt.Errorf("reading the index as it was at launch: %w", err)
		}
	}
	after, err := indexEntries(r, "", paths)
	if err != nil {
		return nil, fmt.Errorf("reading the index: %w", err)
	}
	var changed []string
	for _, p := range slices.Concat(slices.Collect(maps.Keys(after)), slices.Collect(maps.Keys(before))) {
		if !slices.Equal(after[p], before[p]) {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	slices.Sort(changed)
	changed = slices.Compact(changed)
	var drop, add, skip, assume bytes.Buffer
	for _, p := range changed {
		drop.WriteString(p + "\x00")
		for _, e := range before[p] {
			tag, meta, _ := strings.Cut(e, " ")
			add.WriteString(meta + "\t" + p + "\x00")
			// --index-info takes no flags: the user's skip-worktree
			// (sparse checkouts) and assume-unchanged go back after.
			if tag == "S" || tag == "s" {
				skip.WriteString(p + "\x00")
			}
			if tag != strings.ToUpper(tag) {
				assume.WriteString(p + "\x00")
			}
		}
	}
	if _, err := git(r, "", &drop, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
		return nil, fmt.Errorf("taking the box's entries out of the index: %w", err)
	}
	if add.Len() > 0 {
		if _, err := git(r, "", &add, "update-index", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("putting the launch's entries back in the index: %w", err)
		}
	}
	for flag, paths := range map[string]*bytes.Buffer{"--skip-worktree": &skip, "--assume-unchanged": &assume} {
		if paths.Len() > 0 {
			if _, err := git(r, "", paths, "update-index", "-z", flag, "--stdin"); err != nil {
				return nil, fmt.Errorf("marking the launch's entries %s again: %w", flag, err)
			}
		}
	}
	var abs []string
	for _, p := range changed {
		abs = append(abs, filepath.Join(r.root, p))
	}
	return abs, nil
}

// indexAsLaunched reports whether r's index is, byte for byte, what it
// was at launch (or still absent): nothing was staged, and no git need
// run at the end of every box.
func indexAsLaunched(r repoIndex) bool {
	now, err := readIndex(filepath.Join(r.gitDir, "index"))
	if r.state == indexNone {
		return errors.Is(err, fs.ErrNotExist)
	}
	if err != nil {
		return false
	}
	then, err := readIndex(r.copy)
	return err == nil && bytes.Equal(now, then)
}

// readIndex reads an index file, not through a final link.
func readIndex(p string) ([]byte, error) { return regfile.Read(p, maxIndex) }

// indexEntries lists the entries of index (r's own when "") under
// paths: path -> its entries ("tag mode oid stage", the tag as
// ls-files -v gives it: S skip-worktree, lower case assume-unchanged),
// in order.
func indexEntries(r repoIndex, index string, paths []string) (map[string][]string, error) {
	out, err := git(r, index, nil, append([]string{"ls-files", "-s", "-v", "-z", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		m[string(path)] = append(m[string(path)], string(meta))
	}
	return m, nil
}

// gitCmd is git run for r: its git dir and working tree named, none of
// the caller's GIT_ variables, paths taken literally, no optional lock;
// with index as the index file when it is set.
func gitCmd(r repoIndex, index string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"--git-dir=" + r.gitDir, "--work-tree=" + r.root}, args...)...)
	cmd.Dir = r.root
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0")
	if index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
	}
	return cmd
}

// git runs host git on r (its index, or index when given) with stdin,
// and returns its output. Paths are literal, no optional lock is taken,
// and the caller's GIT_ variables are dropped: they could point it at
// another repository or index.
func git(r repoIndex, index string, stdin io.Reader, args ...string) ([]byte, error) {
	return output(gitCmd(r, index, args...), stdin)
}

// output runs cmd, a git of gitCmd's, with stdin, and returns its
// output; an error carries what git said.
func output(cmd *exec.Cmd, stdin io.Reader) ([]byte, error) {
	args := cmd.Args[3:] // past git and gitCmd's --git-dir, --work-tree
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

package held

import (
	"bytes"
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

// maxIndex bounds the index copied at launch (a repository of a few
// hundred thousand files).
const maxIndex = 256 << 20

// saveIndex copies the index of gitDir into set before the box starts,
// and says what it found.
func saveIndex(set, gitDir string) (string, error) {
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
	dst, err := os.OpenFile(indexLaunch(set), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying the git index: %w", err)
	}
	return indexCopied, nil
}

// heldPaths are the repository paths whose index entries the box may
// not change: the items, the mount points made, what the end swept;
// not what lies in a git dir, which the index does not list.
func heldPaths(m Manifest) []string {
	var out []string
	add := func(p string) {
		rel, err := filepath.Rel(m.Repo, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			return
		}
		for _, d := range []string{m.GitDir, m.CommonDir} {
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

// restoreIndex puts the index entries of what the set holds back as the
// launch's copy has them, and returns the paths it put back. A set made
// without a copy (by an older aisan) is left as it is.
func restoreIndex(set string, m Manifest) ([]string, error) {
	if m.Index != indexCopied && m.Index != indexNone {
		return nil, nil
	}
	paths := heldPaths(m)
	if len(paths) == 0 || indexAsLaunched(set, m) {
		return nil, nil
	}
	var before map[string][]string
	if m.Index == indexCopied {
		var err error
		if before, err = indexEntries(m, indexLaunch(set), paths); err != nil {
			return nil, fmt.Errorf("reading the index as it was at launch: %w", err)
		}
	}
	after, err := indexEntries(m, "", paths)
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
	var drop, add bytes.Buffer
	for _, p := range changed {
		drop.WriteString(p + "\x00")
		for _, e := range before[p] {
			add.WriteString(e + "\t" + p + "\x00")
		}
	}
	if _, err := git(m, "", &drop, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
		return nil, fmt.Errorf("taking the box's entries out of the index: %w", err)
	}
	if add.Len() > 0 {
		if _, err := git(m, "", &add, "update-index", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("putting the launch's entries back in the index: %w", err)
		}
	}
	var abs []string
	for _, p := range changed {
		abs = append(abs, filepath.Join(m.Repo, p))
	}
	return abs, nil
}

// indexAsLaunched reports whether the index is, byte for byte, what it
// was at launch (or still absent): nothing was staged, and no git need
// run at the end of every box.
func indexAsLaunched(set string, m Manifest) bool {
	now, err := readIndex(filepath.Join(m.GitDir, "index"))
	if m.Index == indexNone {
		return errors.Is(err, fs.ErrNotExist)
	}
	if err != nil {
		return false
	}
	then, err := readIndex(indexLaunch(set))
	return err == nil && bytes.Equal(now, then)
}

// readIndex reads an index file, not through a final link.
func readIndex(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, maxIndex+1))
}

// indexEntries lists the entries of index (the repository's own when
// "") under paths: path -> its entries ("mode oid stage"), in order.
func indexEntries(sm Manifest, index string, paths []string) (map[string][]string, error) {
	out, err := git(sm, index, nil, append([]string{"ls-files", "-s", "-z", "--"}, paths...)...)
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

// git runs host git on the set's repository (its index, or index when
// given) with stdin, and returns its output. Paths are literal, no
// optional lock is taken, and the caller's GIT_ variables are dropped:
// they could point it at another repository or index.
func git(m Manifest, index string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + m.GitDir, "--work-tree=" + m.Repo}, args...)...)
	cmd.Dir = m.Repo
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0")
	if index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
	}
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

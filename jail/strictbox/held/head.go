package held

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Commits. A box can commit its own version of a file the set holds: the
// end puts the index entry back, so the working tree and the index keep
// the user's file, but the branch now holds the box's, and git stash,
// git reset --hard or a checkout of those commits puts it in the working
// tree where the next hook runs it. History is the user's to rewrite, so
// the end only says so: each repository's HEAD is read at launch (from
// git's files, no git run) and, when it moved, the end asks git which
// held paths the new commits changed.

// maxRef bounds a ref file read (packed-refs of a large repository).
const maxRef = 64 << 20

// headOf is the commit gitDir's HEAD names, read from git's files (HEAD,
// the loose ref in commonDir, packed-refs); "" when it cannot tell (an
// unborn branch, a reftable repository, a file that is not git's).
func headOf(gitDir, commonDir string) string {
	if commonDir == "" {
		commonDir = gitDir
	}
	b, err := readSmall(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	line := strings.TrimSpace(string(b))
	for hops := 0; hops < 5; hops++ {
		ref, ok := strings.CutPrefix(line, "ref: ")
		if !ok {
			if isOID(line) {
				return line
			}
			return ""
		}
		if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
			return ""
		}
		if b, err := readSmall(filepath.Join(commonDir, ref), 4096); err == nil {
			line = strings.TrimSpace(string(b))
			continue
		}
		return packedRef(commonDir, ref)
	}
	return ""
}

// packedRef is ref's commit in commonDir's packed-refs, or "".
func packedRef(commonDir, ref string) string {
	b, err := readSmall(filepath.Join(commonDir, "packed-refs"), maxRef)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		oid, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && isOID(oid) {
			return oid
		}
	}
	return ""
}

// isOID reports whether s is a full object id (SHA-1 or SHA-256).
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// commonOf is the common dir of gitDir: where its commondir file
// points, or gitDir itself.
func commonOf(gitDir string) string {
	b, err := readSmall(filepath.Join(gitDir, "commondir"), 4096)
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if c == "" {
		return gitDir
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// readSmall reads a regular file, not through a final link, up to max.
func readSmall(p string, max int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// committed lists the held paths of r that the commits made since the
// launch (from r.head to HEAD now) changed, absolute.
func committed(m Manifest, r repoIndex) ([]string, error) {
	if r.head == "" {
		return nil, nil
	}
	now := headOf(r.gitDir, r.commonDir)
	paths := heldPaths(m, r)
	if now == "" || now == r.head || len(paths) == 0 {
		return nil, nil
	}
	out, err := git(r, "", nil, append([]string{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", r.head, now, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	var abs []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			abs = append(abs, filepath.Join(r.root, string(p)))
		}
	}
	return abs, nil
}

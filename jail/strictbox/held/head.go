package held

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
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
	b, err := regfile.Read(filepath.Join(gitDir, "HEAD"), 4096)
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
		if b, err := regfile.Read(filepath.Join(commonDir, ref), 4096); err == nil {
			line = strings.TrimSpace(string(b))
			continue
		}
		return packedRef(commonDir, ref)
	}
	return ""
}

// packedRef is ref's commit in commonDir's packed-refs, or "".
func packedRef(commonDir, ref string) string {
	b, err := regfile.Read(filepath.Join(commonDir, "packed-refs"), maxRef)
	if err != nil {
		return ""
	}
	found := ""
	eachPacked(b, func(name []byte) bool { return string(name) == ref }, func(oid, _ string) { found = oid })
	return found
}

// eachPacked calls fn with each ref of packed-refs content b whose name
// want accepts, and its commit; comments and peeled lines are skipped.
// It allocates only for what it reports: a large repository's
// packed-refs holds tens of thousands of tags, read at each launch.
func eachPacked(b []byte, want func(name []byte) bool, fn func(oid, name string)) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		sp := bytes.IndexByte(line, ' ')
		if sp != 40 && sp != 64 {
			continue
		}
		if name := line[sp+1:]; want(name) && isOID(string(line[:sp])) {
			fn(string(line[:sp]), string(name))
		}
	}
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
	b, err := regfile.Read(filepath.Join(gitDir, "commondir"), 4096)
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

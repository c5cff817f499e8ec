package held

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Branches. Besides HEAD (head.go), a box can leave its version of a
// held file on a branch it made or moved, or in a stash: checking the
// branch out, merging it or git stash pop (a usual way to take an
// agent's work) puts that version in the working tree, where the next
// hook runs it. The same holds for a tag (git checkout v1.2) and for a
// remote-tracking branch, which the box cannot have fetched (it has no
// route to a remote) but can write: git switch NAME makes a local
// branch of origin/NAME, and git rebase or merge origin/main without a
// fetch takes it as it is. As with HEAD, the end only says so. Prepare
// reads these refs and the replace refs (below) from git's files (loose
// refs and packed-refs, no git run); the end reads them again and asks
// git, for each ref that is new or moved, which held paths it changes.

// maxRefs bounds the loose refs a launch records (git keeps most of a
// large repository's refs, its tags, packed); past it, the end says it
// could not check them.
const maxRefs = 4096

// refPrefixes are the namespaces refsOf reads, stashRef besides.
var refPrefixes = [...]string{"refs/heads/", "refs/tags/", "refs/remotes/", replacePrefix}

// maxMovedRefs bounds the new or moved branches the end runs git for.
const maxMovedRefs = 32

// stashRef is git's stash.
const stashRef = "refs/stash"

// replacePrefix is where git keeps replace refs: refs/replace/OID makes
// git show another object wherever OID is read (git replace). One the
// box makes can put its version of a held file behind the blob the
// index and HEAD name, with git status clean: the next git checkout
// -- ., stash or reset --hard (pre-commit runs the first when anything
// is unstaged) writes it. The end puts them back as they were.
const replacePrefix = "refs/replace/"

// BranchChange is a branch (or the stash) that the box made or moved,
// and the held paths it changes against the launch's commit, absolute.
type BranchChange struct {
	Ref   string
	Paths []string
}

// A launch records the refs in two parts: packed-refs, which can hold
// tens of thousands of tags, copied into the set as it is (the end
// reads it), and the loose refs, read (refs.launch, Manifest.Refs).
// The end reads both again and compares.

// packedLaunch is the copy of a repository's packed-refs taken at
// launch: the set's own repository's (i < 0) or its i'th nested one's.
func packedLaunch(set string, i int) string {
	if i < 0 {
		return filepath.Join(set, "packed-refs.launch")
	}
	return filepath.Join(set, fmt.Sprintf("packed-refs.%d.launch", i))
}

// snapshotRefs records the refs of the repository whose common dir is
// commonDir: its packed-refs copied to dst (nothing when it has none),
// its loose refs returned. ok is false when they could not be read (a
// ref file unreadable, more than maxRefs loose refs, packed-refs over
// maxRef): then nothing can be compared.
func snapshotRefs(commonDir, dst string) (loose map[string]string, ok bool) {
	b, err := regfile.Read(filepath.Join(commonDir, "packed-refs"), maxRef)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, false
	default:
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, false
		}
		_, err = f.Write(b)
		if err := errors.Join(err, f.Close()); err != nil {
			return nil, false
		}
	}
	loose = map[string]string{}
	if !readLoose(commonDir, loose) {
		return nil, false
	}
	return loose, true
}

// refsThen are r's refs at launch: the packed-refs copied then, with
// the loose refs recorded then over them (a set made by an older aisan
// recorded them all as loose).
func refsThen(r repoIndex) (map[string]string, bool) {
	refs := map[string]string{}
	if !readPacked(r.packed, refs) {
		return nil, false
	}
	maps.Copy(refs, r.refs)
	return refs, true
}

// refsOf reads the local and remote-tracking branches, the tags, the
// stash and the replace refs of the repository whose common dir is
// commonDir as they are now: ref name -> object. ok is false when
// they could not all be read.
func refsOf(commonDir string) (refs map[string]string, ok bool) {
	refs = map[string]string{}
	if !readPacked(filepath.Join(commonDir, "packed-refs"), refs) || !readLoose(commonDir, refs) {
		return nil, false
	}
	return refs, true
}

// readPacked adds the refs refsOf reads from the packed-refs file p
// (none when it is absent) to refs.
func readPacked(p string, refs map[string]string) bool {
	b, err := regfile.Read(p, maxRef)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	eachPacked(b, isTrackedRef[[]byte], func(oid, name string) { refs[name] = oid })
	return true
}

// readLoose adds (over what is there: loose refs win over packed ones)
// the loose refs of commonDir refsOf reads, at most maxRefs of them.
func readLoose(commonDir string, refs map[string]string) bool {
	n := 0
	for _, prefix := range refPrefixes {
		if !looseRefs(commonDir, filepath.Join(commonDir, filepath.FromSlash(prefix)), refs, &n) {
			return false
		}
	}
	if oid := looseRef(filepath.Join(commonDir, stashRef)); oid != "" {
		refs[stashRef] = oid
	}
	return true
}

// looseRefs adds the loose refs under root to refs, counting them in
// n, and reports whether it could read them all within maxRefs.
func looseRefs(commonDir, root string, refs map[string]string, n *int) bool {
	ok := true
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			ok = false
			return fs.SkipAll
		}
		if d.IsDir() || !d.Type().IsRegular() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		if *n >= maxRefs {
			ok = false
			return fs.SkipAll
		}
		*n++
		rel, err := filepath.Rel(commonDir, p)
		if err != nil {
			return nil
		}
		if oid := looseRef(p); oid != "" {
			refs[filepath.ToSlash(rel)] = oid
		}
		return nil
	})
	return err == nil && ok
}

// isTrackedRef reports whether name is a ref refsOf reads (bytes for
// packed-refs, read without a string per line).
func isTrackedRef[T string | []byte](name T) bool {
	for _, p := range refPrefixes {
		if len(name) >= len(p) && string(name[:len(p)]) == p {
			return true
		}
	}
	return string(name) == stashRef
}

// looseRef is the commit a loose ref file names, or "" (absent, a
// symbolic ref, not a ref).
func looseRef(p string) string {
	b, err := regfile.Read(p, 4096)
	if err != nil {
		return ""
	}
	if oid := strings.TrimSpace(string(b)); isOID(oid) {
		return oid
	}
	return ""
}

// headBranch is the branch gitDir's HEAD names now, or "".
func headBranch(gitDir string) string {
	b, err := regfile.Read(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	ref, _ := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	return ref
}

// movedBranches lists, of now (r's refs at the end; ok says they were
// read), the branches of r, other than the one its HEAD is
// on (committed reports that one), that are new or moved since the
// launch and change held paths against the launch's commit (for a new
// one) or against where they were. unchecked says why they could not
// be compared, when they could not.
func movedBranches(m Manifest, r repoIndex, now map[string]string, ok bool) (changes []BranchChange, unchecked string, err error) {
	paths := heldPaths(m, r)
	if len(paths) == 0 {
		return nil, "", nil
	}
	if r.refsUnread {
		return nil, fmt.Sprintf("its branches, tags, stash and replace refs were not read at launch (more than %d loose refs, or unreadable), so those the box made or moved are not checked", maxRefs), nil
	}
	if r.refs == nil || r.head == "" {
		return nil, "", nil
	}
	if !ok {
		return nil, fmt.Sprintf("its branches and tags could not be read, or there are more than %d loose refs", maxRefs), nil
	}
	onHead := headBranch(r.gitDir)
	var moved []string
	for name, oid := range now {
		if name != onHead && r.refs[name] != oid && !strings.HasPrefix(name, replacePrefix) {
			moved = append(moved, name)
		}
	}
	slices.Sort(moved)
	if len(moved) > maxMovedRefs {
		unchecked = fmt.Sprintf("the box made or moved %d branches or tags; the first %d were checked", len(moved), maxMovedRefs)
		moved = moved[:maxMovedRefs]
	}
	var failed []string
	for _, name := range moved {
		base := r.refs[name]
		if base == "" {
			base = r.head
		}
		// Peeled to a commit: a tag may name a tag object; one naming a
		// tree or a blob (or a ref file naming no object) fails alone.
		out, err := git(r, "", nil, append([]string{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", base + "^{commit}", now[name] + "^{commit}", "--"}, paths...)...)
		if err != nil {
			failed = append(failed, quote(shortRef(name)))
			continue
		}
		var abs []string
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				abs = append(abs, filepath.Join(r.root, string(p)))
			}
		}
		if len(abs) > 0 {
			changes = append(changes, BranchChange{Ref: name, Paths: abs})
		}
	}
	if len(failed) > 0 {
		names, more := first(failed, 6)
		why := fmt.Sprintf("git could not compare %s%s with what they were (not a commit, or not in the repository)", strings.Join(names, ", "), more)
		if unchecked != "" {
			why = unchecked + "; " + why
		}
		unchecked = why
	}
	return changes, unchecked, nil
}

// shortRef is how a user names ref: a branch by its name, a tag as
// "tag NAME", a remote-tracking branch as REMOTE/NAME, the stash as git
// stash lists it.
func shortRef(ref string) string {
	switch {
	case ref == stashRef:
		return "stash@{0}"
	case strings.HasPrefix(ref, "refs/tags/"):
		return "tag " + strings.TrimPrefix(ref, "refs/tags/")
	case strings.HasPrefix(ref, "refs/remotes/"):
		return strings.TrimPrefix(ref, "refs/remotes/")
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}

// putBackReplaced sets r's replace refs (now, at the end; ok says they
// were read) back to what they were at launch
// (removing those the box made, restoring those it changed or removed),
// and returns each it put back as "REF -> OBJECT the box had it name"
// ("REF removed" for one the box removed).
func putBackReplaced(r repoIndex, now map[string]string, ok bool) (put []string, err error) {
	if r.refs == nil {
		return nil, nil
	}
	if !ok {
		return nil, fmt.Errorf("the refs could not be read, or there are more than %d loose refs", maxRefs)
	}
	var names []string
	for name := range now {
		if strings.HasPrefix(name, replacePrefix) && now[name] != r.refs[name] {
			names = append(names, name)
		}
	}
	for name := range r.refs {
		if _, still := now[name]; strings.HasPrefix(name, replacePrefix) && !still {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		// Old values checked: a ref changed since is left alone.
		args := []string{"update-ref", "--no-deref", "-d", name, now[name]}
		said := name + " -> " + now[name]
		switch {
		case r.refs[name] != "" && now[name] != "":
			args = []string{"update-ref", "--no-deref", name, r.refs[name], now[name]}
		case r.refs[name] != "":
			args = []string{"update-ref", "--no-deref", name, r.refs[name], strings.Repeat("0", len(r.refs[name]))}
			said = name + " removed"
		}
		if _, err := git(r, "", nil, args...); err != nil {
			return put, err
		}
		put = append(put, said)
	}
	return put, nil
}

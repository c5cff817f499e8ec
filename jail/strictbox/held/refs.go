package held

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Branches. Besides HEAD (head.go), a box can leave its version of a
// held file on a branch it made or moved, or in a stash: checking the
// branch out, merging it or git stash pop (a usual way to take an
// agent's work) puts that version in the working tree, where the next
// hook runs it. As with HEAD, the end only says so. Prepare reads the
// local branches, the stash and the replace refs (below) from git's
// files (loose refs and packed-refs, no git run); the end reads them
// again and asks git, for each branch that is new or moved, which held
// paths it changes.

// maxRefs bounds the refs a launch records; past it, the end says it
// could not check them.
const maxRefs = 4096

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

// refsOf reads the local branches, the stash and the replace refs of
// the repository whose common dir is commonDir: ref name -> object. ok is false when there
// were more than maxRefs, or a ref file could not be read: then nothing
// can be compared.
func refsOf(commonDir string) (refs map[string]string, ok bool) {
	refs = map[string]string{}
	if b, err := regfile.Read(filepath.Join(commonDir, "packed-refs"), maxRef); err == nil {
		eachPacked(b, func(name []byte) bool {
			return bytes.HasPrefix(name, []byte("refs/heads/")) || bytes.HasPrefix(name, []byte(replacePrefix)) || string(name) == stashRef
		}, func(oid, name string) {
			refs[name] = oid
		})
		if len(refs) > maxRefs {
			return nil, false
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	// Loose refs win over packed ones.
	for _, dir := range []string{"heads", "replace"} {
		if !looseRefs(commonDir, filepath.Join(commonDir, "refs", dir), refs) {
			return nil, false
		}
	}
	if oid := looseRef(filepath.Join(commonDir, stashRef)); oid != "" {
		refs[stashRef] = oid
	}
	return refs, true
}

// looseRefs adds the loose refs under root to refs, and reports whether
// it could read them all within maxRefs.
func looseRefs(commonDir, root string, refs map[string]string) bool {
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
		if len(refs) >= maxRefs {
			ok = false
			return fs.SkipAll
		}
		rel, err := filepath.Rel(commonDir, p)
		if err != nil {
			return nil
		}
		if oid := looseRef(p); oid != "" {
			refs[filepath.ToSlash(rel)] = oid
		}
		return nil
	})
	return err == nil && ok && len(refs) <= maxRefs
}

// isTrackedRef reports whether name is a ref refsOf reads: a local
// branch, the stash or a replace ref.
func isTrackedRef(name string) bool {
	return strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, replacePrefix) || name == stashRef
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
		return nil, fmt.Sprintf("its branches, stash and replace refs were not read at launch (more than %d, or unreadable), so those the box made or moved are not checked", maxRefs), nil
	}
	if r.refs == nil || r.head == "" {
		return nil, "", nil
	}
	if !ok {
		return nil, fmt.Sprintf("its branches could not be read, or there are more than %d", maxRefs), nil
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
		unchecked = fmt.Sprintf("the box made or moved %d branches; the first %d were checked", len(moved), maxMovedRefs)
		moved = moved[:maxMovedRefs]
	}
	for _, name := range moved {
		base := r.refs[name]
		if base == "" {
			base = r.head
		}
		out, err := git(r, "", nil, append([]string{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", base, now[name], "--"}, paths...)...)
		if err != nil {
			return changes, unchecked, err
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
	return changes, unchecked, nil
}

// shortRef is how a user names ref: a branch by its name, the stash as
// git stash lists it.
func shortRef(ref string) string {
	if ref == stashRef {
		return "stash@{0}"
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
		return nil, fmt.Errorf("the refs could not be read, or there are more than %d", maxRefs)
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

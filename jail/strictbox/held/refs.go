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

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// Branches. Besides HEAD (head.go), a box can leave its version of a
// held file on a branch it made or moved, or in a stash: checking the
// branch out, merging it or git stash pop (a usual way to take an
// agent's work) puts that version in the working tree, where the next
// hook runs it. The same holds for a tag (git checkout v1.2), for a
// remote-tracking branch, which the box cannot have fetched (it has no
// route to a remote) but can write (git switch NAME makes a local
// branch of origin/NAME, and git rebase or merge origin/main without a
// fetch takes it as it is), for a ref in any other namespace, and for
// the refs git keeps beside HEAD (git reset --hard ORIG_HEAD undoes a
// reset or a rebase). As with HEAD, the end only says so. Prepare reads
// every ref from git's files (loose refs and packed-refs, no git run);
// the end reads them again and asks git, for each ref that is new or
// moved, which held paths it changes.
//
// Two kinds are put back as they were instead: replace refs (below),
// and a ref that hides another from the name a user types ([shadows]):
// git reset --hard origin/main takes refs/origin/main, a tag main or a
// branch named origin/main over refs/remotes/origin/main, with no more
// than a warning that the name is ambiguous. Files git would take for
// refs at the top of a git dir (.git/origin/main comes first of all)
// are swept into the review ([plantedRootRefs]).

// maxRefs bounds the loose refs a launch records (git keeps most of a
// large repository's refs, its tags, packed); past it, the end says it
// could not check them.
const maxRefs = 4096

// refsPrefix is git's refs namespace: refsOf reads all of it.
const refsPrefix = "refs/"

// pseudoRefs are the refs git keeps at the top of a git dir besides
// HEAD, which a user names to undo or to go on (git reset --hard
// ORIG_HEAD, git merge FETCH_HEAD). They are the worktree's: refsOf
// reads them from the git dir it is given.
var pseudoRefs = [...]string{"ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "BISECT_HEAD", "AUTO_MERGE"}

// dwimRules are where git looks, in order, for a name the user types
// (git rev-parse's rules after the git dir's own top, which
// plantedRootRefs covers): a ref found under an earlier rule hides one
// under a later rule from the same name.
var dwimRules = [...]string{"refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}

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

// BranchChange is a ref (a branch, a tag, the stash, ORIG_HEAD…) that
// the box made or moved, and the held paths it changes against the
// launch's commit, absolute.
type BranchChange struct {
	Ref   string
	Paths []string
}

// A launch records the refs in two parts: packed-refs, which can hold
// tens of thousands of tags, copied into the set as it is
// (packedLaunch; the end reads it), and the loose refs and pseudo-refs,
// read (Manifest.Refs). The end reads both again and compares.

// packedLaunch is the copy of a repository's packed-refs taken at
// launch: the set's own repository's (i < 0) or its i'th nested one's.
func packedLaunch(set string, i int) string {
	if i < 0 {
		return filepath.Join(set, "packed-refs.launch")
	}
	return filepath.Join(set, fmt.Sprintf("packed-refs.%d.launch", i))
}

// snapshotRefs records the refs of a repository: those of its common
// dir, commonDir, and the pseudo-refs of its git dir, gitDir. Its
// packed-refs is copied to dst (nothing when it has none), its loose
// refs returned. ok is false when they could not be read (a ref file
// unreadable, more than maxRefs loose refs, packed-refs over maxRef):
// then nothing can be compared.
func snapshotRefs(gitDir, commonDir, dst string) (loose map[string]string, ok bool) {
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
	if !readLoose(gitDir, commonDir, loose) {
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

// refsOf reads every ref of the repository whose common dir is
// commonDir, and the pseudo-refs of its git dir gitDir, as they are
// now: ref name -> object. ok is false when they could not all be
// read.
func refsOf(gitDir, commonDir string) (refs map[string]string, ok bool) {
	refs = map[string]string{}
	if !readPacked(filepath.Join(commonDir, "packed-refs"), refs) || !readLoose(gitDir, commonDir, refs) {
		return nil, false
	}
	return refs, true
}

// readPacked adds the refs of the packed-refs file p (none when it is
// absent) to refs.
func readPacked(p string, refs map[string]string) bool {
	b, err := regfile.Read(p, maxRef)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	eachPacked(b, isRef[[]byte], func(oid, name string) { refs[name] = oid })
	return true
}

// readLoose adds (over what is there: loose refs win over packed ones)
// the loose refs of commonDir, at most maxRefs of them, and the
// pseudo-refs of gitDir.
func readLoose(gitDir, commonDir string, refs map[string]string) bool {
	n := 0
	if !looseRefs(commonDir, filepath.Join(commonDir, "refs"), refs, &n) {
		return false
	}
	for _, name := range pseudoRefs {
		if oid := refFile(filepath.Join(gitDir, name)); oid != "" {
			refs[name] = oid
		}
	}
	return true
}

// refFile is the object a ref file names, or "" (absent, a symbolic
// ref, not a ref): its first word, as git reads a loose ref, and a
// pseudo-ref (FETCH_HEAD and MERGE_HEAD hold a line per commit, and the
// first is what git takes for the name).
func refFile(p string) string {
	b, err := regfile.Read(p, 1<<20)
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 && isOID(f[0]) {
		return f[0]
	}
	return ""
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
		if oid := refFile(p); oid != "" {
			refs[filepath.ToSlash(rel)] = oid
		}
		return nil
	})
	return err == nil && ok
}

// isRef reports whether name, a line of packed-refs, is a ref (bytes:
// packed-refs is read without a string per line).
func isRef[T string | []byte](name T) bool {
	return len(name) > len(refsPrefix) && string(name[:len(refsPrefix)]) == refsPrefix
}

// shadows returns the ref of refs that ref hides from a name the user
// types ([dwimRules]), if any.
func shadows(ref string, refs map[string]string) (hidden string, ok bool) {
	for i, rule := range dwimRules {
		short, ok := strings.CutPrefix(ref, rule)
		if !ok || short == "" {
			continue
		}
		for _, later := range dwimRules[i+1:] {
			if _, ok := refs[later+short]; ok {
				return later + short, true
			}
		}
	}
	return "", false
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
// read), the refs of r, other than the branch its HEAD is on
// (committed reports that one) and replace refs (putBack's), that are
// new or moved since the launch and change held paths against the
// launch's commit (for a new one) or against where they were. unchecked says why they could not
// be compared, when they could not.
func movedBranches(m Manifest, r repoIndex, now map[string]string, ok bool) (changes []BranchChange, unchecked string, err error) {
	paths := heldPaths(m, r)
	if len(paths) == 0 {
		return nil, "", nil
	}
	if r.refsUnread {
		return nil, fmt.Sprintf("its refs were not read at launch (more than %d loose refs, or unreadable), so those the box made or moved are not checked", maxRefs), nil
	}
	if r.refs == nil || r.head == "" {
		return nil, "", nil
	}
	if !ok {
		return nil, fmt.Sprintf("its refs could not be read, or there are more than %d loose refs", maxRefs), nil
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
		unchecked = fmt.Sprintf("the box made or moved %d refs; the first %d were checked", len(moved), maxMovedRefs)
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

// putBack sets back to what they were at launch (removing those the
// box made, restoring those it changed or removed) r's replace refs and
// the refs it made or moved that hide another ([shadows]) in now (r's
// refs at the end; ok says they were read), and updates now to match.
// It returns each replace ref it put back as "REF -> OBJECT the box had
// it name" ("REF removed" for one the box removed), and each other ref
// as "REF -> OBJECT, which hid HIDDEN".
func putBack(r repoIndex, now map[string]string, ok bool) (replaced, unshadowed []string, err error) {
	if r.refs == nil {
		return nil, nil, nil
	}
	if !ok {
		return nil, nil, fmt.Errorf("the refs could not be read, or there are more than %d loose refs", maxRefs)
	}
	var names []string
	hides := map[string]string{}
	for name := range now {
		if now[name] == r.refs[name] {
			continue
		}
		if strings.HasPrefix(name, replacePrefix) {
			names = append(names, name)
		} else if hidden, ok := shadows(name, now); ok {
			names, hides[name] = append(names, name), hidden
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
			return replaced, unshadowed, err
		}
		if r.refs[name] != "" {
			now[name] = r.refs[name]
		} else {
			delete(now, name)
		}
		if hidden, ok := hides[name]; ok {
			unshadowed = append(unshadowed, said+", which hid "+hidden)
			continue
		}
		replaced = append(replaced, said)
	}
	return replaced, unshadowed, nil
}

// gitOwnNames are the entries git itself keeps at the top of a git dir
// (and those of the tools that share it, git-lfs's): what is not one of
// them there, and reads as a ref, git would take for one
// (plantedRootRefs). The pseudo-refs are compared as refs.
var gitOwnNames = map[string]bool{
	"HEAD": true, "config": true, "config.worktree": true, "index": true, "packed-refs": true,
	"description": true, "COMMIT_EDITMSG": true, "MERGE_MSG": true, "MERGE_MODE": true,
	"MERGE_RR": true, "SQUASH_MSG": true, "TAG_EDITMSG": true, "NOTES_EDITMSG": true,
	"EDIT_DESCRIPTION": true, "shallow": true, "gc.log": true, "gc.pid": true, "commondir": true,
	"gitdir": true, "objects": true, "refs": true, "logs": true, "hooks": true, "info": true,
	"modules": true, "worktrees": true, "rebase-merge": true, "rebase-apply": true,
	"sequencer": true, "rr-cache": true, "lfs": true, "branches": true, "remotes": true,
	"BISECT_LOG": true, "BISECT_TERMS": true, "BISECT_START": true, "BISECT_EXPECTED_REV": true,
	"BISECT_ANCESTORS_OK": true, "BISECT_NAMES": true, "BISECT_RUN": true,
	"FETCH_HEAD": true, "ORIG_HEAD": true, "MERGE_HEAD": true, "CHERRY_PICK_HEAD": true,
	"REVERT_HEAD": true, "REBASE_HEAD": true, "BISECT_HEAD": true, "AUTO_MERGE": true,
}

// maxRootWalk bounds the entries looked at below one planted top-level
// directory of a git dir.
const maxRootWalk = 256

// plantedRootRefs are the entries at the top of gitDir that the box
// made or changed during run and that git would read as refs: a file
// that names an object or a ref (git rev-parse NAME looks there first
// of all, before refs/NAME: .git/origin/main beats
// refs/remotes/origin/main), or a directory holding one (within
// maxRootWalk entries; past it, or unreadable, it is taken as one), or
// a symbolic link.
func plantedRootRefs(gitDir string, run protect.Span) []string {
	entries, err := os.ReadDir(gitDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if gitOwnNames[name] || strings.HasSuffix(name, ".lock") {
			continue
		}
		p := filepath.Join(gitDir, name)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || !ctimeIn(st, run) {
			continue
		}
		if readsAsRef(p, st) {
			out = append(out, p)
		}
	}
	return out
}

// readsAsRef reports whether git could read p, or a file below it, as
// a ref.
func readsAsRef(p string, st unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		// git follows it (or takes it for a symbolic ref).
		return true
	case unix.S_IFREG:
		if refFile(p) != "" {
			return true
		}
		b, err := regfile.Read(p, 4096)
		return err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("ref:"))
	case unix.S_IFDIR:
		n, found := 0, false
		err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			n++
			if err != nil || n > maxRootWalk {
				found = true
				return fs.SkipAll
			}
			var qs unix.Stat_t
			if d.Type().IsRegular() && unix.Lstat(q, &qs) == nil && readsAsRef(q, qs) {
				found = true
				return fs.SkipAll
			}
			return nil
		})
		return found || err != nil
	}
	return false
}

package held

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// Objects. git reads an object by its name and does not hash what it
// read again: the box, which writes to the object store (it commits),
// could put its own content in the file of an object the index and HEAD
// name (a loose object rewritten, a pack whose index maps the name to
// another object, a multi-pack-index or commit-graph that does).
// git status stays clean, and the user's next checkout, git reset
// --hard or git worktree add writes the box's content, a held script
// among it. The end checks what of the store changed during the run:
// each loose object is hashed again (git cat-file reads it, the end
// hashes), each pack, multi-pack-index and commit-graph goes through
// git's own verify. What fails is swept into the review; an object
// whose right content is the user's working-tree file (as for every
// held file, which the box only ever edited a copy of) is written back
// from it, and git says any other missing rather than reading the box's.

// maxObjectBytes bounds the content of changed loose objects the end
// hashes again, and maxPackBytes the packs it verifies; past either the
// end says what it did not check.
const (
	maxObjectBytes = 256 << 20
	maxPackBytes   = 1 << 30
)

// packSiblings are the files git keeps beside a pack, of the same base
// name: a pack found bad is swept with all of them.
var packSiblings = [...]string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"}

// objectCheck is what the end found of one object store.
type objectCheck struct {
	r repoIndex
	// bad are the files swept: objects whose content is not what their
	// name says, and packs and indexes git's verify refused.
	bad []string
	// badIDs are the object ids of the loose objects among bad.
	badIDs []string
	// unchecked says what could not be checked, "" when all was.
	unchecked string
}

// checkObjects checks the object stores of m's repositories (each once)
// for what changed during run.
func checkObjects(set string, m Manifest, run protect.Span) []objectCheck {
	var out []objectCheck
	seen := map[string]bool{}
	for _, r := range indexes(set, m) {
		if r.gitDir == "" || seen[storeOf(r)] {
			continue
		}
		seen[storeOf(r)] = true
		out = append(out, checkStore(r, run))
	}
	return out
}

// checkStore checks the object store of repository r.
func checkStore(r repoIndex, run protect.Span) objectCheck {
	c := objectCheck{r: r}
	dir := storeOf(r)
	var notes []string
	loose, odd := changedLoose(dir, run)
	c.bad = append(c.bad, odd...)
	bad, note := rehash(r, loose)
	notes = appendNote(notes, note)
	for _, id := range bad {
		c.bad = append(c.bad, looseFile(r, id))
		c.badIDs = append(c.badIDs, id)
	}
	packs, note := verifyPacks(r, run)
	notes = appendNote(notes, note)
	c.bad = append(c.bad, packs...)
	for _, v := range []struct{ path, cmd string }{
		{filepath.Join(dir, "pack", "multi-pack-index"), "multi-pack-index"},
		{filepath.Join(dir, "info", "commit-graph"), "commit-graph"},
		{filepath.Join(dir, "info", "commit-graphs"), "commit-graph"},
	} {
		if !changedIn(v.path, run) && !changedBelow(v.path, run) {
			continue
		}
		// Each is an index of what the store holds, which git does
		// without: one that git's verify refuses is swept.
		if _, err := gitStore(r, nil, v.cmd, "verify"); err != nil {
			c.bad = append(c.bad, v.path)
		}
	}
	c.unchecked = strings.Join(notes, "; ")
	return c
}

func appendNote(notes []string, note string) []string {
	if note != "" {
		notes = append(notes, note)
	}
	return notes
}

// changedIn reports whether p's inode changed during run.
func changedIn(p string, run protect.Span) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && ctimeIn(st, run)
}

// ctimeIn reports whether st's inode changed during run: its ctime,
// which the box cannot set.
func ctimeIn(st unix.Stat_t, run protect.Span) bool {
	t := time.Unix(st.Ctim.Unix())
	return t.After(run.Start) && !t.After(run.End)
}

// changedBelow reports whether an entry of the directory p changed
// during run (a file of a commit-graph chain written in place).
func changedBelow(p string, run protect.Span) bool {
	entries, err := os.ReadDir(p)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool { return changedIn(filepath.Join(p, e.Name()), run) })
}

// changedLoose lists the loose objects of the store dir that changed
// during run, by id, and the entries there that no object file can be
// (a link, a directory), which are swept as they are.
func changedLoose(dir string, run protect.Span) (ids, odd []string) {
	for i := range 256 {
		sub := fmt.Sprintf("%02x", i)
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, sub, e.Name())
			id := sub + e.Name()
			if !isOID(id) || !changedIn(p, run) {
				// Not an object's name (git's temporary files): git
				// does not read it as one.
				continue
			}
			if !e.Type().IsRegular() {
				odd = append(odd, p)
				continue
			}
			ids = append(ids, id)
		}
	}
	return ids, odd
}

// rehash reads the objects ids with git cat-file --batch (which follows
// no replace ref), hashing each content as it streams past, and returns
// those whose content does not hash to their name, or that git could not
// read. note says what was not checked: past maxObjectBytes of content
// git is stopped.
func rehash(r repoIndex, ids []string) (bad []string, note string) {
	for len(ids) > 0 {
		n, ok, over := rehashBatch(r, ids, &bad)
		if over {
			return bad, fmt.Sprintf("%d changed objects were not hashed again (more than %d MiB of them)", len(ids)-n, maxObjectBytes>>20)
		}
		if ok {
			break
		}
		// git stopped at ids[n]. Alone, an object git cannot read is
		// corrupt, and not the user's either; if git itself cannot run
		// here, nothing is.
		if _, err := gitStore(r, nil, "--no-replace-objects", "cat-file", "-t", ids[n]); err != nil {
			if _, gerr := gitStore(r, nil, "rev-parse", "--git-dir"); gerr != nil {
				return bad, fmt.Sprintf("%d changed objects were not hashed again (git could not run: %v)", len(ids)-n, gerr)
			}
			bad = append(bad, ids[n])
		}
		ids = ids[n+1:]
	}
	return bad, ""
}

// rehashBatch runs one git cat-file --batch over ids and appends to bad
// those whose content does not match their name. It returns how many it
// read, whether it read them all, and whether it stopped at the budget.
func rehashBatch(r repoIndex, ids []string, bad *[]string) (n int, ok, over bool) {
	cmd := storeCmd(r, "--no-replace-objects", "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil || cmd.Start() != nil {
		return 0, false, false
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	br := bufio.NewReaderSize(out, 64<<10)
	budget := int64(maxObjectBytes)
	for n < len(ids) {
		header, rerr := br.ReadString('\n')
		if rerr != nil {
			return n, false, false
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			// Gone since (removed by the user's git): nothing to read.
			// One still there that git calls missing is one it could
			// not read (not zlib, not an object).
			if _, err := os.Lstat(looseFile(r, ids[n])); err == nil {
				*bad = append(*bad, ids[n])
			}
			n++
			continue
		}
		if len(f) != 3 || f[0] != ids[n] {
			return n, false, false
		}
		size, perr := strconv.ParseInt(f[2], 10, 64)
		if perr != nil || size < 0 {
			return n, false, false
		}
		if budget -= size; budget < 0 {
			return n, false, true
		}
		id, cerr := objectID(len(ids[n]), f[1], size, br)
		if cerr != nil {
			return n, false, false
		}
		br.ReadByte() // the newline after the content
		if id != ids[n] {
			*bad = append(*bad, ids[n])
		}
		n++
	}
	return n, true, false
}

// storeCmd is git run for r with its object store pinned to the one the
// end checks (GIT_OBJECT_DIRECTORY; gitCmd passes none of the caller's
// GIT_ variables, alternates among them), so that nothing the box left
// (a commondir the sweep has not taken) makes git read or write another.
func storeCmd(r repoIndex, args ...string) *exec.Cmd {
	cmd := gitCmd(r, "", args...)
	cmd.Env = append(cmd.Env, "GIT_OBJECT_DIRECTORY="+storeOf(r))
	return cmd
}

// gitStore runs storeCmd with stdin and returns its output.
func gitStore(r repoIndex, stdin io.Reader, args ...string) ([]byte, error) {
	return output(storeCmd(r, args...), stdin)
}

// storeOf is r's object store.
func storeOf(r repoIndex) string {
	return filepath.Join(cmp.Or(r.commonDir, r.gitDir), "objects")
}

// looseFile is where r's store keeps object id loose.
func looseFile(r repoIndex, id string) string {
	return filepath.Join(storeOf(r), id[:2], id[2:])
}

// objectID is the id git gives an object of kind and size whose
// content is read from content, in ids of n hex digits (SHA-256's 64,
// else SHA-1's).
func objectID(n int, kind string, size int64, content io.Reader) (string, error) {
	var h hash.Hash = sha1.New()
	if n == 64 {
		h = sha256.New()
	}
	fmt.Fprintf(h, "%s %d\x00", kind, size)
	if _, err := io.CopyN(h, content, size); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verifyPacks runs git verify-pack over the packs of r's store of
// which a file changed during run, and returns every file of those it
// refuses.
func verifyPacks(r repoIndex, run protect.Span) (bad []string, note string) {
	packDir := filepath.Join(storeOf(r), "pack")
	entries, err := os.ReadDir(packDir)
	if err != nil {
		return nil, ""
	}
	var bases []string
	for _, e := range entries {
		for _, ext := range packSiblings {
			if base, ok := strings.CutSuffix(e.Name(), ext); ok && strings.HasPrefix(base, "pack-") && changedIn(filepath.Join(packDir, e.Name()), run) {
				bases = append(bases, base)
			}
		}
	}
	slices.Sort(bases)
	bases = slices.Compact(bases)
	budget := int64(maxPackBytes)
	var skipped []string
	for _, base := range bases {
		p := filepath.Join(packDir, base)
		fi, err := os.Lstat(p + ".pack")
		switch {
		case errors.Is(err, os.ErrNotExist):
			// An index without its pack reads nothing.
			continue
		case err == nil && fi.Mode().IsRegular():
			if budget -= fi.Size(); budget < 0 {
				skipped = append(skipped, base)
				continue
			}
			if _, err := gitStore(r, nil, "verify-pack", p+".idx"); err == nil {
				continue
			}
		}
		for _, ext := range packSiblings {
			if _, err := os.Lstat(p + ext); err == nil {
				bad = append(bad, p+ext)
			}
		}
	}
	if len(skipped) > 0 {
		note = fmt.Sprintf("%d changed packs were not verified (more than %d MiB of them): git verify-pack checks one", len(skipped), maxPackBytes>>20)
	}
	return bad, note
}

// restoreObjects writes back, after the sweep, the objects of c.badIDs
// whose right content is a file of r's working tree that the index
// names by that id, and returns those it restored and those git will
// find missing.
func restoreObjects(c objectCheck) (restored, missing []string) {
	if len(c.badIDs) == 0 {
		return nil, nil
	}
	pathsOf := map[string][]string{}
	entries, _ := indexEntries(c.r, "", nil)
	for path, metas := range entries {
		for _, meta := range metas {
			// "TAG MODE ID STAGE", as ls-files -s -v writes it.
			if f := strings.Fields(meta); len(f) == 4 {
				pathsOf[f[2]] = append(pathsOf[f[2]], path)
			}
		}
	}
	for _, id := range c.badIDs {
		if writeBack(c.r, id, pathsOf[id]) {
			restored = append(restored, id)
		} else {
			missing = append(missing, id)
		}
	}
	return restored, missing
}

// writeBack writes object id from the first of paths (in r's working
// tree) whose content hashes to it, and reports whether it did.
func writeBack(r repoIndex, id string, paths []string) bool {
	for _, p := range paths {
		b, err := regfile.Read(filepath.Join(r.root, p), maxObjectBytes)
		if err != nil {
			continue
		}
		if got, _ := objectID(len(id), "blob", int64(len(b)), bytes.NewReader(b)); got != id {
			continue
		}
		out, err := gitStore(r, bytes.NewReader(b), "hash-object", "-w", "--no-filters", "--stdin")
		if err == nil && strings.TrimSpace(string(out)) == id {
			return true
		}
	}
	return false
}

package held

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"golang.org/x/sys/unix"
)

// Entry is one side of a change.
type Entry struct {
	Exists bool
	Dir    bool
	// Link is a symlink's target ("" for anything else).
	Link string
	Mode fs.FileMode
	Size int64
	// Unread says why the content could not be read ("" when it could):
	// the box made it unreadable, or too large to list. It is held as it
	// is, shown as such and never applied.
	Unread string
	// at is where its content is in the store; data holds it instead
	// for what the host has now.
	at   string
	data []byte
}

// Change is one path the box changed.
type Change struct {
	// Path is the repository path.
	Path string
	// Old is the host's at launch, New the box's.
	Old, New Entry
}

// Kind says what happened: added, deleted or modified.
func (c Change) Kind() string {
	switch {
	case !c.Old.Exists:
		return "added"
	case !c.New.Exists:
		return "deleted"
	}
	return "modified"
}

// Changes lists what set holds, in path order.
func Changes(set string) ([]Change, error) {
	m, err := ReadManifest(set)
	if err != nil {
		return nil, err
	}
	return changes(set, m)
}

// maxSetEntries bounds the entries read of one set, all its copies
// together: each tree is bounded on its own (maxTreeEntries), but a box
// can fill every directory it holds, and what lists them (the box's end,
// 'aisan review', 'aisan report') keeps every entry in memory. A var for
// the tests.
var maxSetEntries = 2 * maxTreeEntries

// budget is what is left of maxSetEntries while a set is read.
type budget struct{ left int }

func changes(set string, m Manifest) ([]Change, error) {
	var out []Change
	left := &budget{left: maxSetEntries}
	for n, it := range m.Items {
		if !it.Held() {
			continue
		}
		from, skip := base(set, n), []string(nil)
		switch it.How {
		case protect.Shadow:
			skip = it.Live // the mount points of its live entries
		case protect.Create:
			if empty(Work(set, n)) {
				continue
			}
			from = "" // nothing was there
		}
		cs, err := compareTrees(from, Work(set, n), it.Path, skip, left)
		if it.How == protect.Create && it.Dir {
			// The directory itself goes without saying.
			cs = slices.DeleteFunc(cs, func(c Change) bool { return c.Path == it.Path && c.New.Unread == "" })
		}
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	for n, p := range m.Swept {
		cs, err := compareTrees("", swept(set, n), p, nil, left)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	slices.SortStableFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// empty reports whether p is an empty directory or an empty file.
func empty(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return true
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(p)
		return err == nil && len(ents) == 0
	}
	return fi.Mode().IsRegular() && fi.Size() == 0
}

// tree lists a copy: relative path to entry, without following links.
// What it cannot read (a directory the box made unreadable, past
// maxTreeEntries) it lists as an entry marked Unread instead of failing:
// the box must not be able to keep its own set from being collected.
//
// The set's budget (left) bounds it too: past it, the tree is cut short
// and said to be so (cut), its root marked Unread.
func tree(root string, left *budget) (out map[string]Entry, cut bool, err error) {
	out = map[string]Entry{}
	if root == "" {
		return out, false, nil
	}
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return out, false, nil
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if left.left--; left.left < 0 && p != root {
			e := out["."]
			e.Exists, e.Dir, e.at = true, true, root
			e.Unread = fmt.Sprintf("not listed: what the box left in all it held runs past %d entries", maxSetEntries)
			out["."], cut = e, true
			return filepath.SkipAll
		}
		if err != nil {
			if d == nil {
				return err // root itself: the store failing
			}
			e := out[rel]
			e.Exists, e.Dir, e.at = true, true, p
			e.Unread = "cannot be read: " + bare(err).Error()
			if fi, ierr := d.Info(); ierr == nil {
				e.Mode = fi.Mode()
			}
			out[rel] = e
			return filepath.SkipDir
		}
		if n++; n > maxTreeEntries {
			e := out["."]
			e.Exists, e.Dir, e.at = true, true, root
			e.Unread = fmt.Sprintf("holds more than %d entries; not listed", maxTreeEntries)
			out["."] = e
			return filepath.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			out[rel] = Entry{Exists: true, at: p, Unread: "cannot be read: " + bare(err).Error()}
			return nil
		}
		e := Entry{Exists: true, Mode: fi.Mode(), Size: fi.Size(), at: p}
		switch {
		case fi.IsDir():
			e.Dir = true
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Link, _ = os.Readlink(p)
		case !fi.Mode().IsRegular():
			return nil // a FIFO or socket the box made: nothing to hold
		case unix.Access(p, unix.R_OK) != nil:
			e.Unread = "cannot be read: the box left it without read permission"
		}
		out[rel] = e
		return nil
	})
	return out, cut, err
}

// bare is err without the store's path a *PathError adds.
func bare(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// compareTrees lists the changes from the copy at a to the copy at b,
// which stand for the repository path at; top-level names in skip are
// left out.
func compareTrees(a, b, at string, skip []string, left *budget) ([]Change, error) {
	ta, cutA, err := tree(a, left)
	if err != nil {
		return nil, err
	}
	tb, cutB, err := tree(b, left)
	if err != nil {
		return nil, err
	}
	if cutA || cutB {
		// Not listed past the budget: the whole tree stands as one
		// entry nobody read, shown so and never applied.
		old, cut := ta["."], tb["."]
		if cutA {
			cut = ta["."]
		}
		old.Unread = ""
		cut.Exists, cut.Dir = true, true
		return []Change{{Path: at, Old: old, New: cut}}, nil
	}
	var rels []string
	for r := range ta {
		rels = append(rels, r)
	}
	for r := range tb {
		if _, ok := ta[r]; !ok {
			rels = append(rels, r)
		}
	}
	var out []Change
	for _, r := range rels {
		if top, _, _ := strings.Cut(r, "/"); slices.Contains(skip, top) {
			continue
		}
		ea, eb := ta[r], tb[r]
		if r == "." && ea.Dir && eb.Dir && eb.Unread == "" {
			continue
		}
		same, err := sameEntry(ea, eb)
		if err != nil {
			// A file the box made unreadable: held as it is.
			eb.Unread = err.Error()
			same = false
		}
		if same {
			continue
		}
		out = append(out, Change{Path: filepath.Join(at, r), Old: ea, New: eb})
	}
	return out, nil
}

func sameEntry(a, b Entry) (bool, error) {
	switch {
	case a.Unread != "" || b.Unread != "":
		return false, nil
	case a.Exists != b.Exists || a.Dir != b.Dir || (a.Link == "") != (b.Link == ""):
		return false, nil
	case !a.Exists || a.Dir:
		return true, nil
	case a.Link != "" || b.Link != "":
		return a.Link == b.Link, nil
	case a.Mode.Perm()&0o111 != b.Mode.Perm()&0o111 || a.Size != b.Size:
		return false, nil
	}
	return sameContent(a.at, b.at)
}

func sameContent(p, q string) (bool, error) {
	if p == "" || q == "" {
		return false, nil // not a regular file
	}
	f, err := regfile.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	g, err := regfile.Open(q)
	if err != nil {
		return false, err
	}
	defer g.Close()
	bf, bg := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errf := io.ReadFull(f, bf)
		m, errg := io.ReadFull(g, bg)
		if n != m || !bytes.Equal(bf[:n], bg[:m]) {
			return false, nil
		}
		if errf != nil || errg != nil {
			return errors.Is(errf, io.EOF) || errors.Is(errf, io.ErrUnexpectedEOF), nil
		}
	}
}

// maxShown caps a file's content shown in a diff.
const maxShown = 1 << 20

// content reads an entry's bytes for display (nil for none, ok false
// when it is too large or not text).
func content(e Entry) (data []byte, text bool) {
	if e.Unread != "" {
		return nil, false
	}
	if !e.Exists || e.Dir || e.Link != "" {
		return nil, true
	}
	if e.data != nil {
		return e.data, bytes.IndexByte(e.data, 0) < 0
	}
	b, err := regfile.Read(e.at, maxShown)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return nil, false
	}
	return b, true
}

// describe is one line for an entry that has no text to diff.
func describe(e Entry) string {
	switch {
	case !e.Exists:
		return "(none)"
	case e.Unread != "" && e.Dir:
		return fmt.Sprintf("directory, mode %04o, not looked into: %s", e.Mode.Perm(), quote(e.Unread))
	case e.Unread != "":
		return fmt.Sprintf("mode %04o, not read: %s", e.Mode.Perm(), quote(e.Unread))
	case e.Dir:
		return "directory"
	case e.Link != "":
		return "symlink to " + quote(e.Link)
	}
	return fmt.Sprintf("file, %d bytes, mode %04o%s", e.Size, e.Mode.Perm(), unshown(e))
}

// unshown says, for a file a diff does not show, why, what its content
// hashes to, and where the store keeps it: what --apply would write can
// then be looked at with the user's own tools before it is applied.
func unshown(e Entry) string {
	var why string
	switch {
	case e.Size > maxShown:
		why = "too large to show"
	default:
		if _, text := content(e); text {
			return ""
		}
		why = "not text"
	}
	sum := ""
	if f, err := e.open(); err == nil {
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			sum = ", sha256 " + hex.EncodeToString(h.Sum(nil))
		}
		f.Close()
	}
	at := ""
	if e.at != "" {
		at = ", kept at " + quote(e.at)
	}
	return ", " + why + sum + at
}

// open opens the entry's content: the store's copy, or what the host has
// now.
func (e Entry) open() (io.ReadCloser, error) {
	if e.data != nil {
		return io.NopCloser(bytes.NewReader(e.data)), nil
	}
	if e.at == "" {
		return nil, errors.New("no content")
	}
	return regfile.Open(e.at)
}

// Quote shows a name with anything unprintable escaped, as the diff
// does: whatever aisan prints of a name or path a box chose goes
// through it, so the name cannot drive the user's terminal.
func Quote(s string) string {
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}

func quote(s string) string { return Quote(s) }

// Render writes the changes as a unified diff (a/ the host's at launch,
// b/ the box's), relative to repo; what is not text is described.
func Render(w io.Writer, repo string, cs []Change) {
	for _, c := range cs {
		rel := c.Path
		if r, err := filepath.Rel(repo, c.Path); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		fmt.Fprintf(w, "%s %s\n", c.Kind(), quote(rel))
		renderPair(w, rel, c.Old, c.New)
	}
}

func renderPair(w io.Writer, rel string, a, b Entry) {
	if a.Exists && b.Exists && a.Link == "" && b.Link == "" && !a.Dir && !b.Dir && a.Mode.Perm() != b.Mode.Perm() {
		fmt.Fprintf(w, "mode %04o -> %04o\n", a.Mode.Perm(), b.Mode.Perm())
	}
	if !a.Exists && b.Exists && b.Link == "" && !b.Dir && b.Unread == "" {
		// What --apply gives it: an executable bit decides whether git
		// runs a hook.
		fmt.Fprintf(w, "new file mode %04o\n", b.Mode.Perm())
	}
	da, ta := content(a)
	db, tb := content(b)
	plain := (!a.Exists || (!a.Dir && a.Link == "")) && (!b.Exists || (!b.Dir && b.Link == ""))
	if !plain || !ta || !tb {
		fmt.Fprintf(w, "  was: %s\n  now: %s\n", describe(a), describe(b))
		return
	}
	fmt.Fprintf(w, "--- a/%s\n+++ b/%s\n", quote(rel), quote(rel))
	writeDiff(w, lines(da), lines(db))
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.SplitAfter(string(b), "\n")
	if s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	return s
}

// maxDiffLines bounds the line diff's table; past it every old line is
// shown removed and every new one added.
const maxDiffLines = 4000

// writeDiff writes the lines of a and b as one hunk of a unified diff:
// an LCS table over at most maxDiffLines lines a side (the files held are
// small configuration files and scripts), every line shown.
func writeDiff(w io.Writer, a, b []string) {
	fmt.Fprintf(w, "@@ -%s +%s @@\n", span(len(a)), span(len(b)))
	show := func(mark byte, l string) {
		io.WriteString(w, string(mark)+safeLine(l))
		if !strings.HasSuffix(l, "\n") {
			io.WriteString(w, "\n\\ No newline at end of file\n")
		}
	}
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		for _, l := range a {
			show('-', l)
		}
		for _, l := range b {
			show('+', l)
		}
		return
	}
	// lcs[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			show(' ', a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			show('-', a[i])
			i++
		default:
			show('+', b[j])
			j++
		}
	}
}

func span(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

// safeLine keeps tabs and the final newline, and escapes every other
// control character, so a held file cannot drive the reviewer's terminal.
func safeLine(l string) string {
	body, nl := strings.CutSuffix(l, "\n")
	var b strings.Builder
	for _, r := range body {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffd:
			fmt.Fprintf(&b, "\\x%02x", r)
		case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			// Bidi overrides and isolates, invisible marks, line
			// separators: a terminal that reorders or breaks lines by
			// them would show the line otherwise than a shell reads it.
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	return b.String()
}

package held

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"path/filepath"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// A review records in each set it showed a digest of what it showed:
// the diff as printed, and the bytes of every file the box's version
// holds (a file shown only described, too large or not text, counts by
// its content). Applying writes only a set whose digest is recorded and
// still the same: a set held after the user's review (a box of the slot
// that was still running then) was never read, so it is not written.
const shownName = "shown"

// digest hashes what a review shows of cs, and the content behind it.
func digest(repo string, cs []Change) (string, error) {
	h := sha256.New()
	Render(h, repo, cs)
	for _, c := range cs {
		if err := hashEntry(h, c.New); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashEntry(h hash.Hash, e Entry) error {
	fmt.Fprintf(h, "\x00%t %t %q %o %d %q\x00", e.Exists, e.Dir, e.Link, e.Mode, e.Size, e.Unread)
	if !e.Exists || e.Dir || e.Link != "" || e.Unread != "" || e.at == "" {
		return nil
	}
	f, err := regfile.Open(e.at)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(h, io.LimitReader(f, maxApplied+1))
	return err
}

// Show writes what set holds as a diff to w (see [Render]) and records
// that the user was shown it.
func Show(w io.Writer, set string) error {
	m, err := ReadManifest(set)
	if err != nil {
		return err
	}
	cs, err := changes(set, m)
	if err != nil {
		return err
	}
	Render(w, m.Repo, cs)
	d, err := digest(m.Repo, cs)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(set, shownName), []byte(d), atomicfile.Options{Mode: 0o600})
}

// WasShown tells whether set holds what a review last showed of it.
func WasShown(set string) (bool, error) {
	m, err := ReadManifest(set)
	if err != nil {
		return false, err
	}
	cs, err := changes(set, m)
	if err != nil {
		return false, err
	}
	d, err := digest(m.Repo, cs)
	if err != nil {
		return false, err
	}
	rec, err := regfile.Read(filepath.Join(set, shownName), 256)
	return err == nil && string(rec) == d, nil
}

package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/lockfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"
	"golang.org/x/sys/unix"
)

// Place is a directory a box can write, and why.
type Place struct {
	Path string
	Why  string
}

// Places are the directories some box can write.
type Places []Place

// Why says of each kind of place what makes it one.
const (
	WhyState    = "aisan's state"
	WhyWritable = "given read-write to a strict box"
	WhyLaunch   = "this launch's repository or working directory"
)

// Holder returns the place that holds p (p itself or a directory above
// it), if any. It only compares paths: p and the places are absolute and
// clean.
func (ps Places) Holder(p string) (Place, bool) {
	for _, pl := range ps {
		if within(p, pl.Path) {
			return pl, true
		}
	}
	return Place{}, false
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Holds reports which place holds f: the first of its path as named, the
// links on the way and its target that lies in one. A file with another
// hard link is held wherever that name is, which cannot be known: it
// counts as held by its own directory, unless no box could write it by
// any name (it is sealed).
func (ps Places) Holds(f File) (Place, bool) {
	for _, p := range append([]string{f.Path}, f.Hops...) {
		if pl, ok := ps.Holder(p); ok {
			return pl, true
		}
	}
	if f.Links > 1 && !f.Sealed {
		return Place{Path: filepath.Dir(f.Target), Why: fmt.Sprintf("a file with %d hard links, any of which a box may write", f.Links)}, true
	}
	return Place{}, false
}

// ledgerFile is the record of what boxes were given read-write.
const ledgerFile = "writable.json"

// maxLedger caps the record: a path per directory a box was given.
const maxLedger = 4 << 20

type ledger struct {
	Paths []string `json:"paths"`
}

// Remember records that a strict box is given the host paths dirs
// read-write. Call it before anything of the box runs: from then on a
// file in any of them needs an approval. It is cheap when every path is
// known already (a read, no write).
func (s *Store) Remember(dirs []string) error {
	var add []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("recording where boxes write: %q is not an absolute path", d)
		}
		add = append(add, filepath.Clean(d))
		if r, err := filepath.EvalSymlinks(d); err == nil && r != filepath.Clean(d) {
			add = append(add, r)
		}
	}
	known, err := s.readLedger()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(add, func(p string) bool { return !slices.Contains(known, p) }) {
		return nil
	}
	if err := s.makeDir(); err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// Again under the lock: another launch may have added its own.
	if known, err = s.readLedger(); err != nil {
		return err
	}
	all := slices.Concat(known, add)
	slices.Sort(all)
	data, err := json.MarshalIndent(ledger{Paths: slices.Compact(all)}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(s.dir, ledgerFile), append(data, '\n'), atomicfile.Options{Mode: 0o600}); err != nil {
		return fmt.Errorf("recording where boxes write: %w", err)
	}
	return nil
}

// readLedger returns the recorded paths; none when nothing is recorded.
func (s *Store) readLedger() ([]string, error) {
	path := filepath.Join(s.dir, ledgerFile)
	data, err := regfile.Read(path, maxLedger)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading where boxes were given read-write: %w", err)
	}
	l, err := parseLedger(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (move it away only if you know no box wrote anything you will use)", path, err)
	}
	return l, nil
}

// parseLedger decodes the record, refusing anything but aisan's shape.
func parseLedger(data []byte) ([]string, error) {
	var l ledger
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("not aisan's record of writable places: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not aisan's record of writable places: trailing data")
	}
	for _, p := range l.Paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("not aisan's record of writable places: %q is not an absolute, clean path", p)
		}
	}
	return l.Paths, nil
}

// Places returns where boxes can write: aisan's state, every place a
// strict box was given read-write, and extra (the caller's own launch:
// its repository and working directory).
func (s *Store) Places(extra ...string) (Places, error) {
	var ps Places
	add := func(p, why string) {
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		ps = append(ps, Place{Path: p, Why: why})
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			ps = append(ps, Place{Path: r, Why: why})
		}
	}
	for _, d := range s.state {
		add(d, WhyState)
	}
	known, err := s.readLedger()
	if err != nil {
		return nil, err
	}
	for _, d := range known {
		add(d, WhyWritable)
	}
	for _, d := range extra {
		if d != "" {
			add(d, WhyLaunch)
		}
	}
	return ps, nil
}

// makeDir creates the trust directory (and aisan's state above it) owner
// only, refusing a symlink or anything but a directory at its name.
func (s *Store) makeDir() error {
	if err := os.MkdirAll(filepath.Dir(s.dir), 0o700); err != nil {
		return fmt.Errorf("creating aisan's state directory: %w", err)
	}
	for _, d := range []string{s.dir, filepath.Join(s.dir, approvedDir)} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory (a symlink?); remove it and try again", d)
		}
	}
	return nil
}

// lock takes the trust directory's lock, for a read-modify-write.
func (s *Store) lock() (func(), error) {
	// Where no jail can reach it (see jail/shared/lockfile).
	f, err := lockfile.Open(filepath.Join(s.dir, ".lock"), rundir.LockDir(filepath.Dir(s.dir)))
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", s.dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", s.dir, err)
	}
	return func() { f.Close() }, nil
}

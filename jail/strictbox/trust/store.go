package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Store is the trust directory of one aisan state directory.
type Store struct {
	dir   string
	state []string
}

// Dir is the trust directory's name inside aisan's state.
const Dir = "trust"

// approvedDir holds one file per approval.
const approvedDir = "approved"

// Open returns the store of the state directory aisanHome. state are all
// of aisan's state directories (aisanHome among them): places no file
// that defines a box should come from unapproved.
func Open(aisanHome string, state ...string) *Store {
	return &Store{dir: filepath.Join(aisanHome, Dir), state: append([]string{aisanHome}, state...)}
}

// Approval is the user's approval of one file's content.
type Approval struct {
	// Path is the file's absolute path as named.
	Path string `json:"path"`
	// SHA256 is the content's hash, hex.
	SHA256 string `json:"sha256"`
	// Approved is when.
	Approved time.Time `json:"approved"`
	// Content is what was approved, for the diff of a later change.
	Content []byte `json:"content"`
}

// maxApproval caps an approval's file: the content (base64) of a file of
// up to MaxFile bytes, and its fields.
const maxApproval = 2 * MaxFile

// MaxFile is the largest file that can be approved.
const MaxFile = 1 << 20

// Sum is a content's SHA-256, hex.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// approvalPath is where path's approval is kept: named by the hash of the
// path, so any path makes one plain file name.
func (s *Store) approvalPath(path string) string {
	return filepath.Join(s.dir, approvedDir, Sum([]byte(path))+".json")
}

// Approve records f's content as approved, replacing an earlier approval
// of the same path.
func (s *Store) Approve(f File) (Approval, error) {
	if int64(len(f.Data)) > MaxFile {
		return Approval{}, fmt.Errorf("%s is larger than %d bytes; a file that defines a box is a few lines", f.Path, MaxFile)
	}
	a := Approval{Path: f.Path, SHA256: Sum(f.Data), Approved: time.Now().UTC().Truncate(time.Second), Content: f.Data}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return Approval{}, err
	}
	if err := s.makeDir(); err != nil {
		return Approval{}, err
	}
	if err := atomicfile.Write(s.approvalPath(f.Path), append(data, '\n'), atomicfile.Options{Mode: 0o600}); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// NotApprovedError is a revocation of a path with no approval.
type NotApprovedError struct{ Path string }

func (e *NotApprovedError) Error() string {
	return fmt.Sprintf("%s is not approved", Printable(e.Path))
}

// Hints points at the list.
func (e *NotApprovedError) Hints() []string {
	return []string{"'aisan trust --list' shows the approved files, by the absolute path they were approved under"}
}

// Revoke drops path's approval.
func (s *Store) Revoke(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := s.approval(abs); err != nil {
		return err
	}
	if err := os.Remove(s.approvalPath(abs)); err != nil {
		return fmt.Errorf("revoking the approval of %s: %w", Printable(abs), err)
	}
	return nil
}

// approval reads path's approval: a [*NotApprovedError] when there is
// none.
func (s *Store) approval(path string) (Approval, error) {
	p := s.approvalPath(path)
	data, err := regfile.Read(p, maxApproval)
	if errors.Is(err, fs.ErrNotExist) {
		return Approval{}, &NotApprovedError{Path: path}
	}
	if err != nil {
		return Approval{}, fmt.Errorf("reading the approval of %s: %w", Printable(path), err)
	}
	a, err := parseApproval(data)
	if err != nil {
		return Approval{}, fmt.Errorf("%s: %w (revoke it: aisan trust --revoke %s)", p, err, Printable(path))
	}
	if a.Path != path {
		return Approval{}, fmt.Errorf("%s holds the approval of %s, not of %s (revoke both and approve again)", p, Printable(a.Path), Printable(path))
	}
	return a, nil
}

// parseApproval decodes an approval, refusing anything but aisan's
// shape: a hash that is not the content's is no approval.
func parseApproval(data []byte) (Approval, error) {
	var a Approval
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Approval{}, fmt.Errorf("not an approval of aisan's: %w", err)
	}
	if dec.More() {
		return Approval{}, errors.New("not an approval of aisan's: trailing data")
	}
	switch {
	case !filepath.IsAbs(a.Path) || filepath.Clean(a.Path) != a.Path:
		return Approval{}, fmt.Errorf("not an approval of aisan's: the path %q is not absolute and clean", a.Path)
	case a.SHA256 != Sum(a.Content):
		return Approval{}, errors.New("not an approval of aisan's: its hash is not its content's")
	}
	return a, nil
}

// List returns every approval, by path, and the problems met reading
// them (each file that is not an approval is skipped and reported).
func (s *Store) List() ([]Approval, []error) {
	dir := filepath.Join(s.dir, approvedDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("listing approvals: %w", err)}
	}
	var out []Approval
	var problems []error
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(dir, name)
		data, err := regfile.Read(p, maxApproval)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		a, err := parseApproval(data)
		if err == nil && s.approvalPath(a.Path) != p {
			err = fmt.Errorf("it names %s, whose approval is kept elsewhere", Printable(a.Path))
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("skipping %s: %w", p, err))
			continue
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Approval) int { return strings.Compare(a.Path, b.Path) })
	return out, problems
}

// Check returns nil when f may define a box: it lies where no box can
// write (see [Places.Holds]), or its content is what the user approved.
// Otherwise it returns a [*RefusedError] naming what (a "bind spec", an
// "egress file"), where it lies and, when it changed since an approval,
// the diff. Any other error reading the approval is returned as it is:
// the file is not used either way.
func (s *Store) Check(what string, f File, ps Places) error {
	pl, held := ps.Holds(f)
	if !held {
		return nil
	}
	a, err := s.approval(f.Path)
	var na *NotApprovedError
	switch {
	case errors.As(err, &na):
		return &RefusedError{What: what, Path: f.Path, Place: pl, Now: f.Data, Approvable: true}
	case err != nil:
		return err
	case a.SHA256 == Sum(f.Data):
		return nil
	}
	return &RefusedError{What: what, Path: f.Path, Place: pl, Approved: &a, Now: f.Data, Approvable: true}
}

// CheckSource is Check for a credential source (a token file, a token
// command's program or a file it is given): one that lies where a box
// can write is refused whatever was approved, since the host reads or
// runs it while the box lives.
func CheckSource(what string, f File, ps Places) error {
	if pl, held := ps.Holds(f); held {
		return &RefusedError{What: what, Path: f.Path, Place: pl}
	}
	return nil
}

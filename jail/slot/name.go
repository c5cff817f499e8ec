package slot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxBaseLen caps the basename part of a slot name, so that names stay
// readable in a table and well inside file-name and unit-name limits.
const maxBaseLen = 40

// maxSuffix bounds the search for a free name. Reaching it means hundreds
// of live slots in one worktree, which is a bug or a runaway script.
const maxSuffix = 1000

// BaseName returns the stable name of slots for worktree and kind:
// <basename>-<hash>-<kind>, where hash is the first 8 hex digits of the
// SHA-256 of the real path of the worktree's root (see [WorktreeRoot]). The
// root, so that an agent started in a subdirectory is still the worktree's;
// the real path, so that a symlinked and a direct path to the same tree give
// the same name; the hash, so that two checkouts both called "app" do not
// collide. Characters outside [A-Za-z0-9._-] in the basename become "-".
func BaseName(worktree, kind string) (string, error) {
	if err := checkKind(kind); err != nil {
		return "", err
	}
	real, err := realPath(worktree)
	if err != nil {
		return "", fmt.Errorf("resolving worktree %q: %w", worktree, err)
	}
	real = WorktreeRoot(real)
	sum := sha256.Sum256([]byte(real))
	return sanitize(filepath.Base(real)) + "-" + hex.EncodeToString(sum[:4]) + "-" + kind, nil
}

// candidate returns the i-th name tried for base: base itself, then
// base-2, base-3, …
func candidate(base string, i int) string {
	if i == 1 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, i)
}

// checkKind accepts lowercase words such as claude, codex, run: the kind
// ends the name, and an odd character there would make names ambiguous.
func checkKind(kind string) error {
	ok := kind != "" && kind[0] >= 'a' && kind[0] <= 'z'
	for i := 0; ok && i < len(kind); i++ {
		c := kind[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if !ok {
		return fmt.Errorf("invalid slot kind %q: want a lowercase word such as claude", kind)
	}
	return nil
}

// sanitize maps a directory basename to [A-Za-z0-9._-], collapsing runs of
// other characters to one "-" and trimming separators at the ends.
func sanitize(base string) string {
	var b strings.Builder
	dash := false
	for _, r := range base {
		if r < 0x80 && nameChar(byte(r)) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-.")
	if len(s) > maxBaseLen {
		s = strings.TrimRight(s[:maxBaseLen], "-.")
	}
	if s == "" {
		s = "root"
	}
	return s
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ValidName reports whether name could be a slot name. Names typed by the
// user become file names; anything else (a "/", a leading dot) is refused
// before it gets near the file system.
func ValidName(name string) bool {
	if name == "" || len(name) > 128 || !nameChar(name[0]) || name[0] == '.' || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameChar(name[i]) {
			return false
		}
	}
	return true
}

// WorktreeRoot returns the top of the git worktree that holds dir (a real,
// absolute path): the nearest directory at or above it with a .git entry,
// a directory in a clone and a file in a linked worktree, as git's
// --show-toplevel. A dir outside any worktree is its own root.
func WorktreeRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// realPath returns the absolute path of p with every symlink resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

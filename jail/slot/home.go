package slot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HomeError is [CheckHome]'s refusal of a state dir inside a project.
type HomeError struct {
	// Home is the state dir as given.
	Home string
	// Project is the directory it is inside: a git worktree, or the
	// directory being jailed.
	Project string
	// Jailed is set when Project is the directory being jailed.
	Jailed bool
}

func (e *HomeError) Error() string {
	if e.Jailed {
		return fmt.Sprintf("refusing state dir %s: it is inside %s, the directory being jailed, where the agent could edit it; set AISAN_HOME to a directory outside it", e.Home, e.Project)
	}
	return fmt.Sprintf("refusing state dir %s: it is inside the git worktree %s; set AISAN_HOME to a directory outside any project", e.Home, e.Project)
}

// Home returns the state directory: $AISAN_HOME when set, else ~/.aisan.
// It does not create it.
func Home() (string, error) {
	if h := os.Getenv("AISAN_HOME"); h != "" {
		if !filepath.IsAbs(h) {
			return "", fmt.Errorf("AISAN_HOME=%q is not an absolute path; set it to one, such as $HOME/.aisan", h)
		}
		return filepath.Clean(h), nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state dir: %w; set AISAN_HOME", err)
	}
	return filepath.Join(u, ".aisan"), nil
}

// CheckHome refuses a state dir inside a git worktree or inside jailedDir
// (or equal to it): the registry decides what "aisan kill" signals, and a
// jailed agent edits its project freely, so the two must not overlap. Both
// paths are compared after resolving symlinks; home need not exist yet.
// jailedDir may be empty when nothing is being jailed.
func CheckHome(home, jailedDir string) error {
	rh, err := resolveMissing(home)
	if err != nil {
		return fmt.Errorf("resolving state dir %q: %w", home, err)
	}
	if jailedDir != "" {
		rj, err := realPath(jailedDir)
		if err != nil {
			return fmt.Errorf("resolving jailed dir %q: %w", jailedDir, err)
		}
		if within(rh, rj) {
			return &HomeError{Home: home, Project: jailedDir, Jailed: true}
		}
	}
	for d := rh; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return &HomeError{Home: home, Project: d}
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("checking whether state dir %q is in a git worktree: %w", home, err)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir+"/")
}

// resolveMissing resolves symlinks in the longest existing prefix of p and
// appends the rest, so a state dir that does not exist yet is judged by
// where it would be created.
func resolveMissing(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

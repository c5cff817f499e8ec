package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// MaxFileSize caps every host file this package reads. ~/.claude.json
// grows with per-project history on old Claude versions, so the cap is
// generous; it exists to refuse a device or a runaway file, not to judge.
const MaxFileSize = 64 << 20

// File is a host file's path and content. Data is nil when the file does
// not exist.
type File struct {
	Path string
	Data []byte
}

// Host holds the host facts the loaders need. Empty fields mean "unset";
// the loaders fall back to the clients' own defaults under Home.
type Host struct {
	// Home is the user's home directory (absolute).
	Home string
	// Project is the absolute real path of the directory the agent starts
	// in; Repo is the repository root containing it (equal to Project when
	// they are the same). Both are used to find project files, and Repo
	// decides [Source.InRepo].
	Project string
	Repo    string
	// The host values of the clients' config variables.
	ClaudeConfigDir       string // $CLAUDE_CONFIG_DIR
	CodexHome             string // $CODEX_HOME
	XDGConfigHome         string // $XDG_CONFIG_HOME
	OpencodeConfig        string // $OPENCODE_CONFIG
	OpencodeConfigContent string // $OPENCODE_CONFIG_CONTENT
}

// readHostFile reads path as a regular file of at most MaxFileSize bytes,
// without following a final symlink and without blocking on a FIFO. A
// missing file gives a nil slice and no error.
func readHostFile(path string) ([]byte, error) {
	b, err := regfile.Read(path, MaxFileSize)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("reading %s: it is a symlink; aisan reads MCP declarations only from regular files (replace the link with the file)", path)
	case errors.As(err, &nr):
		return nil, fmt.Errorf("reading %s: not a regular file (%s)", path, nr.Mode.Type())
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, fmt.Errorf("reading %s: more than the %d-byte limit", path, MaxFileSize)
	case err != nil:
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// inRepo reports whether path lies in repo (lexically: both are real
// absolute paths from the caller).
func inRepo(path, repo string) bool {
	if repo == "" {
		return false
	}
	rel, err := filepath.Rel(repo, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func checkHost(h Host) error {
	if !filepath.IsAbs(h.Home) {
		return fmt.Errorf("home directory %q is not absolute", h.Home)
	}
	for _, p := range []string{h.Project, h.Repo} {
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("project path %q is not absolute", p)
		}
	}
	return nil
}

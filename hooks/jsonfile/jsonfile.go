// Package jsonfile holds what reading an agent's JSON settings file
// needs, whoever reads it: the settings editor (package hooks) and the
// opencode permission reader (package hooks/opencode), which a deny-list
// launch runs without linking the editor's shell parser.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ParseError reports a settings file that is not valid JSON. Line and
// Column are 1-based and point at the byte the parser stopped at; Column
// counts bytes.
type ParseError struct {
	Line, Column int
	Err          error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d, column %d: %v", e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// CheckSyntax reports whether src is one valid JSON value, with the
// position of the first error.
func CheckSyntax(src []byte) error {
	var v json.RawMessage
	err := json.Unmarshal(src, &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	// Offset counts the bytes read, the offending one included.
	off := int(se.Offset) - 1
	if off < 0 {
		off = 0
	}
	if off > len(src) {
		off = len(src)
	}
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return &ParseError{Line: line, Column: col, Err: err}
}

// Resolve follows symlinks from path to the file to edit, which may not
// exist yet (a dangling link is where the file will be created).
func Resolve(path string) (string, error) {
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if hops == 40 {
			return "", fmt.Errorf("resolving %q: too many levels of symbolic links", path)
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
}

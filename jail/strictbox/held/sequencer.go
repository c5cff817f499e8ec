package held

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Operations in progress. A rebase the box starts and leaves is swept
// into the set (gitpin watches its directory). One the user had in
// progress at launch is the user's, and the box may go on with it; but
// an exec line it adds to its todo runs on the host at the user's next
// git rebase --continue. The end says which lines the box added: the
// todo's exec lines are read at launch and again at the end.

// todoFiles are the todo lists, in a git dir, whose exec lines git runs.
var todoFiles = [...]string{"rebase-merge/git-rebase-todo", "sequencer/todo"}

// maxTodo bounds a todo read.
const maxTodo = 4 << 20

// todoExecs are the exec lines of the todo lists in gitDir: the todo's
// path relative to gitDir -> its exec lines, trimmed; nil for none.
// unread are the todos there that could not be read (too large, not a
// regular file), with why.
func todoExecs(gitDir string) (execs map[string][]string, unread map[string]error) {
	for _, rel := range todoFiles {
		b, err := regfile.Read(filepath.Join(gitDir, rel), maxTodo)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if unread == nil {
				unread = map[string]error{}
			}
			unread[rel] = err
			continue
		}
		if ex := execLines(b); len(ex) > 0 {
			if execs == nil {
				execs = map[string][]string{}
			}
			execs[rel] = ex
		}
	}
	return execs, unread
}

// execLines are the lines of a todo list that run a command: exec and
// its short form x, as git's sequencer reads them.
func execLines(todo []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(todo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		word, rest, _ := strings.Cut(line, " ")
		if (word == "exec" || word == "x") && strings.TrimSpace(rest) != "" {
			out = append(out, line)
		}
	}
	return out
}

// AddedExec is an exec line the box added to the todo of an operation
// in progress, or (Unread set) a todo the end could not read.
type AddedExec struct {
	// Todo is the todo list's path.
	Todo string
	// Line is the exec line.
	Line string
	// Unread is why the todo could not be read.
	Unread error
}

// addedExecs are the exec lines in the todo lists of m's git dirs (the
// repository's and the nested ones') now that they did not have at
// launch, and the todos that cannot be read now.
func addedExecs(m Manifest) []AddedExec {
	var out []AddedExec
	added := func(gitDir string, launch map[string][]string) {
		now, unread := todoExecs(gitDir)
		for rel, lines := range now {
			for _, l := range lines {
				if !slices.Contains(launch[rel], l) {
					out = append(out, AddedExec{Todo: filepath.Join(gitDir, rel), Line: l})
				}
			}
		}
		for rel, err := range unread {
			out = append(out, AddedExec{Todo: filepath.Join(gitDir, rel), Unread: err})
		}
	}
	if m.GitDir != "" {
		added(m.GitDir, m.TodoExecs)
	}
	for _, n := range m.NestedIndex {
		if n.State != indexSkipped {
			added(n.GitDir, n.TodoExecs)
		}
	}
	slices.SortFunc(out, func(a, b AddedExec) int {
		return cmp.Or(strings.Compare(a.Todo, b.Todo), strings.Compare(a.Line, b.Line))
	})
	return out
}

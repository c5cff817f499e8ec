package held

import (
	"bufio"
	"bytes"
	"path/filepath"
	"slices"
	"strings"
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
func todoExecs(gitDir string) map[string][]string {
	var out map[string][]string
	for _, rel := range todoFiles {
		b, err := readSmall(filepath.Join(gitDir, rel), maxTodo)
		if err != nil {
			continue
		}
		if ex := execLines(b); len(ex) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[rel] = ex
		}
	}
	return out
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

// addedExecs are the exec lines in the todo lists of m's git dirs (the
// repository's and the nested ones') now that they did not have at
// launch, each with its todo's path.
func addedExecs(m Manifest) []string {
	var out []string
	added := func(gitDir string, launch map[string][]string) {
		for rel, lines := range todoExecs(gitDir) {
			for _, l := range lines {
				if !slices.Contains(launch[rel], l) {
					out = append(out, filepath.Join(gitDir, rel)+": "+l)
				}
			}
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
	slices.Sort(out)
	return out
}

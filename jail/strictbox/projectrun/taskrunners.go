package projectrun

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// Task runners a hook may call by a task's name: Task (go-task, a
// Taskfile.yml), taskipy and poethepoet (tables of pyproject.toml). Each
// runs command lines its file defines, so every task of the file is
// followed, as every recipe of a makefile is: the box could change what
// a task runs without touching the hook.

// taskfileNames are the names Task looks for, from where it runs up.
var taskfileNames = []string{"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml"}

// goTask reads task [-d DIR] [-t FILE] ...: Task's Taskfile, and taskipy's
// tasks in the pyproject.toml found from the same directory (both are
// called task).
func (w *walker) goTask(rest []word, dirs []string, depth int) {
	var file *word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a.ok && (a.s == "-d" || a.s == "--dir") && i+1 < len(rest):
			dirs = w.cd(rest[i+1], dirs)
			i++
		case a.ok && strings.HasPrefix(a.s, "--dir="):
			dirs = w.cd(lit(strings.TrimPrefix(a.s, "--dir=")), dirs)
		case a.ok && (a.s == "-t" || a.s == "--taskfile") && i+1 < len(rest):
			f := rest[i+1]
			file = &f
			i++
		case a.ok && strings.HasPrefix(a.s, "--taskfile="):
			f := lit(strings.TrimPrefix(a.s, "--taskfile="))
			file = &f
		}
	}
	names := taskfileNames
	if file != nil {
		if !file.ok {
			w.unknown(*file, dirs)
			return
		}
		names = []string{file.s}
	}
	for _, d := range dirs {
		for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
			found := false
			for _, n := range names {
				p := from(dd, n)
				w.files.add(p, dd)
				w.looked.add(p, dd)
				if data := w.read(p); data != nil {
					w.taskfile(p, data, dd, map[string]bool{p: true}, depth)
					found = true
					break
				}
			}
			if found || dd == w.root || file != nil {
				break
			}
		}
		w.pyTasks(d, "taskipy", depth)
	}
}

// taskfile follows every task of the Taskfile p (text data), whose
// tasks run in run, and the Taskfiles it includes; seen are those read.
// An included Taskfile's tasks run where the including one's do, unless
// the include gives a dir.
func (w *walker) taskfile(p string, data []byte, run string, seen map[string]bool, depth int) {
	var doc struct {
		Tasks    map[string]any `yaml:"tasks"`
		Includes map[string]any `yaml:"includes"`
		Dotenv   []string       `yaml:"dotenv"`
		Set      []string       `yaml:"set"`
	}
	dir := filepath.Dir(p)
	if yaml.Unmarshal(data, &doc) != nil {
		w.unsure([]string{dir}, w.rel(p)+" does not parse as a Taskfile, so what its tasks run cannot be told")
		return
	}
	for _, e := range doc.Dotenv {
		w.files.add(from(dir, e), dir)
	}
	templated := false
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, name := range slices.Sorted(maps.Keys(doc.Tasks)) {
		run := run
		var cmds []any
		switch t := doc.Tasks[name].(type) {
		case string:
			cmds = []any{t}
		case []any:
			cmds = t
		case map[string]any:
			if d, ok := t["dir"].(string); ok {
				run = from(run, d)
			}
			if c, ok := t["cmd"].(string); ok {
				cmds = append(cmds, c)
			}
			if cs, ok := t["cmds"].([]any); ok {
				cmds = append(cmds, cs...)
			}
			if es, ok := t["dotenv"].([]any); ok {
				for _, e := range es {
					if s, ok := e.(string); ok {
						w.files.add(from(dir, s), dir)
					}
				}
			}
		}
		for _, c := range cmds {
			line := ""
			switch c := c.(type) {
			case string:
				line = c
			case map[string]any:
				line, _ = c["cmd"].(string)
				if d, ok := c["defer"].(string); ok {
					line = d
				}
			}
			if line == "" {
				continue
			}
			if strings.Contains(line, "{{") {
				templated = true
			}
			w.cmd = line
			w.shell(line, []string{run}, depth+1)
		}
	}
	if templated {
		w.cmd = saved
		w.unsure([]string{dir}, "the tasks of "+w.rel(p)+" use the tool's own variables, which are not expanded; their literal words are followed")
	}
	for _, ns := range slices.Sorted(maps.Keys(doc.Includes)) {
		inc, incRun := "", run
		switch v := doc.Includes[ns].(type) {
		case string:
			inc = v
		case map[string]any:
			inc, _ = v["taskfile"].(string)
			if d, ok := v["dir"].(string); ok && !strings.Contains(d, "{{") {
				incRun = from(dir, d)
			}
		}
		if inc == "" || strings.Contains(inc, "{{") {
			continue
		}
		q := from(dir, inc)
		if w.list != nil && w.list(q) != nil {
			// A directory: its Taskfile.
			for _, n := range taskfileNames {
				if w.read(filepath.Join(q, n)) != nil {
					q = filepath.Join(q, n)
					break
				}
			}
		}
		if seen[q] || len(seen) > maxIncludes || !within(q, w.root) {
			continue
		}
		seen[q] = true
		w.files.add(q, dir)
		if b := w.read(q); b != nil {
			w.taskfile(q, b, incRun, seen, depth)
		}
	}
}

// poe reads poe [-C DIR | --root DIR] TASK ...: poethepoet's tasks in
// the pyproject.toml found from where it runs.
func (w *walker) poe(rest []word, dirs []string, depth int) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a.ok && (a.s == "-C" || a.s == "--directory" || a.s == "--root") && i+1 < len(rest) {
			dirs = w.cd(rest[i+1], dirs)
			i++
		}
	}
	for _, d := range dirs {
		w.pyTasks(d, "poe", depth)
	}
}

// pyTasks follows every task of tool's table ([tool.taskipy.tasks] or
// [tool.poe.tasks]) in the pyproject.toml found from dir up: a command
// line (cmd, shell, a bare string), a sequence of them, a script
// (module:function), or Python code (expr) that is not followed.
func (w *walker) pyTasks(dir, tool string, depth int) {
	var pp string
	var data []byte
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		pp = filepath.Join(d, "pyproject.toml")
		if data = w.read(pp); data != nil || d == w.root {
			break
		}
	}
	if data == nil {
		return
	}
	var doc struct {
		Tool struct {
			Taskipy struct {
				Tasks map[string]any `toml:"tasks"`
			} `toml:"taskipy"`
			Poe struct {
				Tasks   map[string]any `toml:"tasks"`
				Include any            `toml:"include"`
			} `toml:"poe"`
		} `toml:"tool"`
	}
	root := filepath.Dir(pp)
	if toml.Unmarshal(data, &doc) != nil {
		w.unsure([]string{root}, w.rel(pp)+" does not parse as TOML, so what "+tool+" runs cannot be told")
		return
	}
	tasks := doc.Tool.Taskipy.Tasks
	if tool == "poe" {
		tasks = doc.Tool.Poe.Tasks
		if doc.Tool.Poe.Include != nil {
			w.unsure([]string{root}, "poe includes tasks from other files, which are not followed")
		}
	}
	if tasks == nil {
		return
	}
	w.files.add(pp, root)
	saved := w.cmd
	defer func() { w.cmd = saved }()
	var task func(v any, run string, n int)
	task = func(v any, run string, n int) {
		if n > maxDepth {
			return
		}
		switch t := v.(type) {
		case string:
			w.cmd = t
			w.shell(t, []string{run}, depth+1)
		case []any:
			for _, s := range t {
				task(s, run, n+1)
			}
		case map[string]any:
			if d, ok := t["cwd"].(string); ok && !strings.Contains(d, "$") {
				run = from(root, d)
			}
			for _, k := range []string{"cmd", "shell", "sequence"} {
				if c, ok := t[k]; ok {
					task(c, run, n+1)
				}
			}
			if s, ok := t["script"].(string); ok {
				w.pyFunction(s, root, depth)
			}
			if e, ok := t["expr"].(string); ok {
				w.cmd = e
				w.unsure([]string{root}, fmt.Sprintf("%s's task runs Python code (expr), which is not followed; the words of it that name paths are held", tool), codePaths(e)...)
			}
			if e, ok := t["envfile"].(string); ok {
				w.files.add(from(root, e), root)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tasks)) {
		task(tasks[name], root, 0)
	}
}

// pyFunction follows a module:function reference (poe's script tasks) as
// Python finds the module from the project's root: a.b is a/b.py or
// a/b/__init__.py, each run as python runs a script.
func (w *walker) pyFunction(ref, root string, depth int) {
	mod, _, _ := strings.Cut(ref, ":")
	mod = strings.TrimSpace(mod)
	if !pyDotted(mod) {
		w.unsure([]string{root}, "a task runs the Python function "+ref+", whose module is not a plain dotted name")
		return
	}
	rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
	for _, f := range []string{rel + ".py", filepath.Join(rel, "__init__.py")} {
		p := from(root, f)
		w.looked.add(p, root)
		w.files.add(p, root)
		if w.read(p) != nil {
			w.exec([]word{lit("python3"), lit(p)}, []string{root}, depth+1)
		}
	}
}

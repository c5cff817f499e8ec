package projectrun

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Mise returns what a mise config (path, its text data) makes mise run
// or load with no question once the project is trusted, on every cd into
// it and every prompt there (mise activate's hook-env, mise env): the
// scripts its env sources (read as bash runs them), the dotenv files it
// loads, the directories it puts on PATH (a virtualenv's bin too), the
// variables that make programs load files (NODE_OPTIONS, BASH_ENV...),
// its hooks' commands, and the directories a path: tool version runs
// tools from. A config that does not parse names nothing: mise refuses
// it too.
func Mise(path string, data []byte, pr Project) Names {
	var doc map[string]any
	if toml.Unmarshal(data, &doc) != nil {
		return Names{}
	}
	root := miseRoot(path)
	w := newWalker(root, path, nil, pr)
	w.miseConfig(doc, root)
	return w.names()
}

// miseRoot is the directory a mise config's relative paths start from
// (its config_root): the project's, above .config/, mise/, .mise/ and
// conf.d/.
func miseRoot(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "conf.d" {
		dir = filepath.Dir(dir)
	}
	if b := filepath.Base(dir); b == "mise" || b == ".mise" {
		dir = filepath.Dir(dir)
	}
	if filepath.Base(dir) == ".config" {
		dir = filepath.Dir(dir)
	}
	return dir
}

// miseConfig reads a mise config's env, hooks and tools (doc) whose
// relative paths start from root.
func (w *walker) miseConfig(doc map[string]any, root string) {
	var envs []map[string]any
	switch e := doc["env"].(type) {
	case map[string]any:
		envs = append(envs, e)
	case []any:
		// [[env]]: a list of tables, read in order.
		for _, t := range e {
			if m, ok := t.(map[string]any); ok {
				envs = append(envs, m)
			}
		}
	}
	// The older top-level keys env_file and env_path, read as directives.
	legacy := map[string]any{}
	if f, ok := doc["env_file"]; ok {
		legacy["file"] = f
	}
	if p, ok := doc["env_path"]; ok {
		legacy["path"] = p
	}
	envs = append(envs, map[string]any{"_": legacy})
	for _, env := range envs {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if k != "_" {
				s, ok := env[k].(string)
				switch {
				case !ok:
				case k == "PATH":
					// Its literal entries; {{env.PATH}} is the user's.
					for _, p := range strings.Split(s, ":") {
						if p != "" && !strings.Contains(p, "{{") {
							w.cmd = k + "=" + s
							w.misePATH(from(root, p), root)
						}
					}
				case strings.Contains(s, "{{") && envFiles()[k] == "" && !strings.HasPrefix(k, "GIT_"):
					// A value programs do not load files by.
				default:
					w.cmd = k + "=" + s
					w.envVar(k, w.misePath(s, root), []string{root}, 0)
				}
				continue
			}
			d, _ := env[k].(map[string]any)
			for _, p := range misePaths(d["source"]) {
				w.cmd = "_.source = " + p
				if v := w.misePath(p, root); v.ok {
					f := from(root, v.s)
					w.files.add(f, root)
					w.exec([]word{lit("bash"), lit(f)}, []string{root}, 0)
				}
			}
			for _, p := range misePaths(d["file"]) {
				w.cmd = "_.file = " + p
				if v := w.misePath(p, root); v.ok {
					w.files.add(from(root, v.s), root)
				}
			}
			for _, p := range misePaths(d["path"]) {
				w.cmd = "_.path = " + p
				if v := w.misePath(p, root); v.ok {
					w.misePATH(from(root, v.s), root)
				}
			}
			if py, ok := d["python"].(map[string]any); ok {
				for _, p := range misePaths(py["venv"]) {
					w.cmd = "_.python.venv = " + p
					if v := w.misePath(p, root); v.ok {
						w.misePATH(filepath.Join(from(root, v.s), "bin"), root)
					}
				}
			}
		}
	}
	if hooks, ok := doc["hooks"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(hooks)) {
			for _, s := range miseScripts(hooks[k]) {
				w.cmd = s
				w.shell(s, []string{root}, 0)
			}
		}
	}
	if tools, ok := doc["tools"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(tools)) {
			for _, v := range miseVersions(tools[k]) {
				if p, ok := strings.CutPrefix(v, "path:"); ok {
					w.cmd = k + " = " + v
					if pv := w.misePath(p, root); pv.ok {
						w.misePATH(from(root, pv.s), root)
					}
				}
			}
		}
	}
}

// misePATH holds a directory mise puts on PATH, whole: a command the box
// adds there would run for the user's next command of that name. The
// project's own directory cannot be held whole: the launch says so.
func (w *walker) misePATH(dir, root string) {
	if dir == w.root {
		w.unsure([]string{w.root}, "mise puts the project's own directory on PATH")
		return
	}
	w.holdDir(dir)
}

// misePath is a path value of a mise config with its templates
// ({{config_root}}, {{cwd}}) read; one whose other templates cannot be
// told is unknown, and said.
func (w *walker) misePath(s, root string) word {
	for _, t := range []string{"{{config_root}}", "{{ config_root }}", "{{cwd}}", "{{ cwd }}"} {
		s = strings.ReplaceAll(s, t, root)
	}
	if strings.Contains(s, "{{") || strings.Contains(s, "{%") {
		w.unsure([]string{root}, "a mise config's value uses templates it does not set")
		return word{}
	}
	return lit(s)
}

// misePaths are the paths a directive gives: a string, a table with a
// path, or a list of either.
func misePaths(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		if p, ok := v["path"].(string); ok {
			return []string{p}
		}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, misePaths(x)...)
		}
		return out
	}
	return nil
}

// miseScripts are the command lines a hook gives: a string, a table with
// a script, or a list of either.
func miseScripts(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		if s, ok := v["script"].(string); ok {
			return []string{s}
		}
		if s, ok := v["run"].(string); ok {
			return []string{s}
		}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, miseScripts(x)...)
		}
		return out
	}
	return nil
}

// miseVersions are the versions a tool entry gives: a string, a table
// with a version, or a list of either.
func miseVersions(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case map[string]any:
		if s, ok := v["version"].(string); ok {
			return []string{s}
		}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, miseVersions(x)...)
		}
		return out
	}
	return nil
}

// miseConfigs are where mise finds its config files in a directory, in
// the order it reads them.
var miseConfigs = []string{".config/mise/config.toml", ".config/mise.toml", "mise/config.toml", "mise.toml", ".mise/config.toml", ".mise.toml", ".rtx.toml", "mise.local.toml", ".mise.local.toml", ".rtx.local.toml"}

// miseTaskDirs are the directories of file tasks in a project.
var miseTaskDirs = []string{"mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks"}

// mise reads mise run (r, tasks run, watch) TASK ...: every task of the
// configs mise finds from where it runs up to the project's root (their
// run lines and files, in the task's dir), and the directories of file
// tasks, whole; mise exec's command in turn.
func (w *walker) mise(rest []word, dirs []string, depth int) {
	i := 0
	for i < len(rest) && rest[i].ok && strings.HasPrefix(rest[i].s, "-") {
		if (rest[i].s == "-C" || rest[i].s == "--cd") && i+1 < len(rest) {
			dirs = w.cd(rest[i+1], dirs)
			i++
		}
		i++
	}
	if i >= len(rest) || !rest[i].ok {
		return
	}
	switch sub := rest[i].s; {
	case sub == "exec" || sub == "x":
		for j := i + 1; j < len(rest); j++ {
			if rest[j].ok && rest[j].s == "--" {
				w.exec(rest[j+1:], dirs, depth+1)
				return
			}
		}
		return
	case sub == "tasks" && i+1 < len(rest) && rest[i+1].ok && rest[i+1].s == "run", sub == "run", sub == "r", sub == "watch", sub == "w":
	default:
		return
	}
	for _, d := range dirs {
		for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
			for _, c := range miseConfigs {
				p := filepath.Join(dd, c)
				if data := w.read(p); data != nil {
					w.files.add(p, dd)
					w.miseTasks(p, data, depth)
				}
			}
			for _, t := range miseTaskDirs {
				if w.list != nil && w.list(filepath.Join(dd, t)) != nil {
					w.holdDir(filepath.Join(dd, t))
				}
			}
			if dd == w.root {
				break
			}
		}
	}
}

// miseTasks follows every task of the mise config p (text data).
func (w *walker) miseTasks(p string, data []byte, depth int) {
	var doc struct {
		Tasks map[string]any `toml:"tasks"`
	}
	root := miseRoot(p)
	if toml.Unmarshal(data, &doc) != nil {
		w.unsure([]string{root}, w.rel(p)+" does not parse as TOML, so what its tasks run cannot be told")
		return
	}
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, name := range slices.Sorted(maps.Keys(doc.Tasks)) {
		run := root
		var lines []string
		switch t := doc.Tasks[name].(type) {
		case string:
			lines = []string{t}
		case []any:
			lines = miseScripts(t)
		case map[string]any:
			if d, ok := t["dir"].(string); ok {
				if v := w.misePath(d, root); v.ok {
					run = from(root, v.s)
				}
			}
			lines = miseScripts(t["run"])
			if f, ok := t["file"].(string); ok {
				if v := w.misePath(f, root); v.ok {
					w.exec([]word{lit(from(root, v.s))}, []string{run}, depth+1)
				}
			}
		}
		for _, l := range lines {
			if strings.Contains(l, "{{") {
				w.cmd = saved
				w.unsure([]string{root}, "the tasks of "+w.rel(p)+" use the tool's own variables, which are not expanded; their literal words are followed")
			}
			w.cmd = l
			w.shell(l, []string{run}, depth+1)
		}
	}
}

package projectrun

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mattn/go-shellwords"
	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// The git hook managers: a hook they install runs, on the next commit
// or push, what the project's config names, with no question. The
// configs are protected; these read what their commands run.

// PreCommit returns what the local hooks of a pre-commit config (path
// is .pre-commit-config.yaml, data its text) run: pre-commit splits a
// hook's entry as a shell would, adds its args, and runs it in the
// repository's root without a shell; a script hook's entry is a file
// of the repository. A hook repository given by a local path (which
// pre-commit clones) is held whole. A file that does not parse names
// nothing (pre-commit could run nothing from it either).
func PreCommit(path string, data []byte, pr Project) Names {
	var doc struct {
		Repos []struct {
			Repo  string `yaml:"repo"`
			Hooks []struct {
				ID       string   `yaml:"id"`
				Entry    string   `yaml:"entry"`
				Language string   `yaml:"language"`
				Args     []string `yaml:"args"`
			} `yaml:"hooks"`
		} `yaml:"repos"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return Names{}
	}
	root := filepath.Dir(path)
	w := newWalker(root, path, nil, pr)
	for _, r := range doc.Repos {
		switch {
		case r.Repo == "local":
			for _, h := range r.Hooks {
				// A pygrep hook's entry is a pattern, a fail hook's a
				// message: neither runs.
				if h.Entry == "" || h.Language == "pygrep" || h.Language == "fail" {
					continue
				}
				argv, err := shellwords.Parse(h.Entry)
				if err != nil || len(argv) == 0 {
					w.cmd = h.Entry
					w.unsure([]string{root}, "pre-commit's hook "+h.ID+" has an entry that does not split into words")
					continue
				}
				if (h.Language == "script" || h.Language == "unsupported_script") && !strings.Contains(argv[0], "/") {
					argv[0] = "./" + argv[0]
				}
				w.cmd = h.Entry
				w.exec(argvWords(append(argv, h.Args...)), []string{root}, 0)
			}
		case r.Repo == "meta" || strings.Contains(r.Repo, "://") || strings.Contains(r.Repo, "@"):
		case r.Repo != "":
			w.holdDir(from(root, r.Repo))
		}
	}
	return w.names()
}

// lefthookVars are the placeholders lefthook puts file lists and
// arguments for in a command ({staged_files}, {1}): not paths.
var lefthookVars = regexp.MustCompile(`\{[a-z_0-9]+\}`)

// maxLefthookExtends bounds how deep a lefthook config's extends are
// read.
const maxLefthookExtends = 4

// Lefthook returns what a lefthook config (path is one of its names,
// in the repository's root or its .config/, data its text) makes its
// installed hooks run: each command's run line, read as the shell
// reads it in the command's root; each script in the source
// directories, run by its runner; the jobs, groups included; and the
// configs it extends, read in turn.
func Lefthook(path string, data []byte, pr Project) Names {
	root := filepath.Dir(path)
	if filepath.Base(root) == ".config" {
		root = filepath.Dir(root)
	}
	w := newWalker(root, path, nil, pr)
	w.lefthook(path, data, 0, map[string]bool{path: true})
	return w.names()
}

// lefthook reads one config (path, its text data) at depth of extends;
// seen are the configs read already.
func (w *walker) lefthook(path string, data []byte, depth int, seen map[string]bool) {
	var doc map[string]any
	switch filepath.Ext(path) {
	case ".toml":
		if toml.Unmarshal(data, &doc) != nil {
			return
		}
	case ".json", ".jsonc":
		if !jsonc(data, &doc) {
			return
		}
	default:
		if yaml.Unmarshal(data, &doc) != nil {
			return
		}
	}
	sources := []string{".lefthook", ".lefthook-local"}
	if s, ok := doc["source_dir"].(string); ok && s != "" {
		sources[0] = s
	}
	if s, ok := doc["source_dir_local"].(string); ok && s != "" {
		sources[1] = s
	}
	if ext, ok := doc["extends"].([]any); ok && depth < maxLefthookExtends {
		for _, e := range ext {
			if s, ok := e.(string); ok && s != "" {
				p := from(w.root, s)
				w.files.add(p, w.root)
				if seen[p] {
					continue
				}
				seen[p] = true
				if d := w.read(p); d != nil {
					w.lefthook(p, d, depth+1, seen)
				}
			}
		}
	}
	for _, hook := range slices.Sorted(maps.Keys(doc)) {
		spec, ok := doc[hook].(map[string]any)
		if !ok || !slices.Contains(GitHooks, hook) {
			continue
		}
		w.lefthookJobs(hook, spec, sources)
	}
}

// lefthookJobs reads one hook's commands, scripts and jobs (spec).
func (w *walker) lefthookJobs(hook string, spec map[string]any, sources []string) {
	if cmds, ok := spec["commands"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(cmds)) {
			if c, ok := cmds[name].(map[string]any); ok {
				w.lefthookJob(hook, name, c, sources)
			}
		}
	}
	if scripts, ok := spec["scripts"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(scripts)) {
			c, _ := scripts[name].(map[string]any)
			if c == nil {
				c = map[string]any{}
			}
			c["script"] = name
			w.lefthookJob(hook, name, c, sources)
		}
	}
	if jobs, ok := spec["jobs"].([]any); ok {
		for _, j := range jobs {
			if c, ok := j.(map[string]any); ok {
				w.lefthookJob(hook, "", c, sources)
			}
		}
	}
}

// lefthookJob reads a command, a script or a job (c): its run line in
// its root, or its script in each source directory run by its runner,
// or its group's jobs.
func (w *walker) lefthookJob(hook, name string, c map[string]any, sources []string) {
	if g, ok := c["group"].(map[string]any); ok {
		w.lefthookJobs(hook, g, sources)
	}
	dir := w.root
	if r, ok := c["root"].(string); ok && r != "" {
		dir = from(w.root, r)
	}
	if run, ok := c["run"].(string); ok && run != "" {
		w.cmd = run
		w.shell(lefthookVars.ReplaceAllString(run, ""), []string{dir}, 0)
	}
	script, ok := c["script"].(string)
	if !ok || script == "" {
		return
	}
	var runner []string
	if r, ok := c["runner"].(string); ok && r != "" {
		runner, _ = shellwords.Parse(r)
	}
	for _, src := range sources {
		p := from(from(w.root, src), filepath.Join(hook, script))
		w.cmd = strings.Join(append(slices.Clone(runner), p), " ")
		w.exec(argvWords(append(slices.Clone(runner), p)), []string{w.root}, 0)
	}
}

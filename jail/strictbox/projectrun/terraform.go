package projectrun

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Terraform and OpenTofu. Every command but a few load the
// configuration of the directory they run in: its .tf and .tf.json
// files, the modules they source and the providers installed in
// .terraform, which are programs it starts (validate and plan start
// them to read their schemas). plan, apply, refresh and console run the
// programs the configuration's external data sources and local-exec
// provisioners name. The box could change any of those without touching
// the command.

// terraformInert are the subcommands that start no provider and run
// nothing the configuration names.
var terraformInert = []string{"fmt", "version", "help", "login", "logout", "metadata", "-version", "-help", "--version", "--help", "-v", "-h"}

// terraformExts are the files terraform reads in its directory.
var terraformExts = []string{".tf", ".tf.json", ".tfvars", ".tfvars.json", ".tftest.hcl", ".tofu", ".tofu.json"}

// terraformRefs find, in a configuration's text, the local modules it
// sources and the programs an external data source or a local-exec
// provisioner runs.
var terraformRefs = sync.OnceValue(func() [2]*regexp.Regexp {
	return [2]*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*source\s*=\s*"(\.\.?/[^"]*)"`),
		regexp.MustCompile(`(?m)^\s*(?:program\s*=\s*\[([^\]]*)\]|command\s*=\s*"([^"]*)")`),
	}
})

// terraform reads terraform (or tofu) [-chdir=DIR] COMMAND ...: what the
// command loads in DIR and what its configuration runs.
func (w *walker) terraform(name string, rest []word, dirs []string) {
	sub := ""
	var args []word
	for i, a := range rest {
		if !a.ok {
			w.unknown(a, dirs)
			return
		}
		if v, ok := strings.CutPrefix(a.s, "-chdir="); ok {
			dirs = w.cd(lit(v), dirs)
			continue
		}
		sub, args = a.s, rest[i+1:]
		break
	}
	if sub == "" || slices.Contains(terraformInert, sub) {
		return
	}
	for _, d := range dirs {
		w.terraformIn(name, d, args)
	}
}

// terraformIn reads a terraform command run in dir.
func (w *walker) terraformIn(name, dir string, args []word) {
	w.holdDir(filepath.Join(dir, ".terraform"))
	for _, f := range []string{".terraform.lock.hcl", ".terraformrc", "terraform.rc"} {
		w.files.add(filepath.Join(dir, f), dir)
		w.looked.add(filepath.Join(dir, f), dir)
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a.s, "-var-file="); ok && a.ok {
			w.files.add(from(dir, v), dir)
		}
	}
	w.terraformConfig(name, dir, dir, 0)
}

// terraformConfig holds the configuration files in dir (a module of the
// command run in run), the local modules they source (in turn) and the
// paths the programs they run name, which run in run; what the programs
// run is not followed, and the launch says so, holding dir whole where
// it can.
func (w *walker) terraformConfig(name, run, dir string, depth int) {
	if depth > maxDepth {
		return
	}
	if w.list == nil {
		w.unsure([]string{dir}, name+" loads the configuration files of its directory, which could not be listed")
		return
	}
	if w.tfRead == nil {
		w.tfRead = map[string]bool{}
	}
	if w.tfRead[dir] {
		return
	}
	w.tfRead[dir] = true
	runs := false
	for _, f := range slices.Sorted(slices.Values(w.list(dir))) {
		if !slices.ContainsFunc(terraformExts, func(e string) bool { return strings.HasSuffix(f, e) }) {
			continue
		}
		p := filepath.Join(dir, f)
		w.files.add(p, dir)
		text := string(w.read(p))
		re := terraformRefs()
		for _, m := range re[0].FindAllStringSubmatch(text, -1) {
			mod := from(dir, m[1])
			if within(mod, w.root) {
				w.holdDir(mod)
				w.terraformConfig(name, run, mod, depth+1)
			}
		}
		for _, m := range re[1].FindAllStringSubmatch(text, -1) {
			runs = true
			for _, c := range codePaths(terraformPaths(m[1]+" "+m[2], run, dir)) {
				w.files.add(from(run, c), run)
			}
		}
	}
	if runs {
		w.unsure([]string{dir}, name+" runs the programs its configuration's external data sources and local-exec provisioners name; what they run is not followed")
	}
}

// terraformPaths is s with its path references read: ${path.module} is
// the module's directory (mod), ${path.root} and ${path.cwd} the one the
// command runs in (run), where a relative path is found too.
func terraformPaths(s, run, mod string) string {
	s = strings.ReplaceAll(s, "${path.module}", mod)
	for _, r := range []string{"${path.root}", "${path.cwd}"} {
		s = strings.ReplaceAll(s, r, run)
	}
	return s
}

package projectrun

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Composer. A composer command runs the scripts the project's
// composer.json gives its events, and a script name given as the command
// (composer test, composer run-script lint) runs that script. A script
// is a command line (@php and @composer start those programs, @NAME runs
// another script; a bare command is looked up in vendor/bin first), or a
// PHP callback (Class::method) the project's autoloader finds. Every
// command also loads the plugins installed in vendor.

// composerEvents are the events command fires (beside composerAlways),
// whose scripts run: an alias (i, require, dumpautoload) fires its
// command's.
func composerEvents(command string) []string {
	autoload := []string{"pre-autoload-dump", "post-autoload-dump"}
	packages := []string{"pre-dependencies-solving", "post-dependencies-solving", "pre-operations-exec", "pre-package-install", "post-package-install", "pre-package-update", "post-package-update", "pre-package-uninstall", "post-package-uninstall"}
	update := slices.Concat([]string{"pre-update-cmd", "post-update-cmd"}, autoload, packages)
	switch command {
	case "install", "i", "reinstall":
		// Without a lock, install fires update's events.
		return slices.Concat([]string{"pre-install-cmd", "post-install-cmd"}, update)
	case "update", "u", "upgrade", "require", "r", "remove", "rm", "bump":
		return update
	case "dump-autoload", "dumpautoload":
		return autoload
	case "status":
		return []string{"pre-status-cmd", "post-status-cmd"}
	case "archive":
		return []string{"pre-archive-cmd", "post-archive-cmd"}
	case "create-project":
		return slices.Concat([]string{"post-root-package-install", "post-create-project-cmd", "pre-install-cmd", "post-install-cmd"}, update)
	}
	return nil
}

// composerAlways are the events every command fires.
var composerAlways = []string{"init", "command", "pre-command-run"}

// composerBuiltin are composer's own commands: any other word is a
// script's name.
var composerBuiltin = []string{"about", "archive", "audit", "browse", "home", "bump", "check-platform-reqs", "clear-cache", "clearcache", "cc", "config", "create-project", "depends", "why", "diagnose", "dump-autoload", "dumpautoload", "exec", "fund", "global", "help", "init", "install", "i", "licenses", "list", "outdated", "prohibits", "why-not", "reinstall", "remove", "rm", "require", "r", "run-script", "run", "search", "self-update", "selfupdate", "show", "info", "status", "suggests", "update", "u", "upgrade", "validate"}

// composerValues are composer's global options whose value is the next
// word.
var composerValues = []string{"-d", "--working-dir"}

// composer reads composer [-d DIR] COMMAND ...: composer.json, its lock,
// the scripts the command's events and name run, and what they run.
func (w *walker) composer(rest []word, dirs []string, depth int) {
	cmd := ""
	var args []word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a.ok && slices.Contains(composerValues, a.s) && i+1 < len(rest):
			dirs = w.cd(rest[i+1], dirs)
			i++
			continue
		case a.ok && strings.HasPrefix(a.s, "--working-dir="):
			dirs = w.cd(lit(strings.TrimPrefix(a.s, "--working-dir=")), dirs)
			continue
		case a.ok && len(a.s) > 2 && strings.HasPrefix(a.s, "-d"):
			dirs = w.cd(lit(a.s[2:]), dirs)
			continue
		case a.ok && strings.HasPrefix(a.s, "-"):
			continue
		case !a.ok:
			w.unknown(a, dirs)
			return
		}
		cmd, args = a.s, rest[i+1:]
		break
	}
	if cmd == "" {
		cmd = "list"
	}
	for _, d := range dirs {
		w.composerIn(d, cmd, args, depth)
	}
}

// composerIn reads composer's command cmd (its words args) run in dir.
func (w *walker) composerIn(dir, cmd string, args []word, depth int) {
	if depth > maxDepth {
		return
	}
	cj := filepath.Join(dir, "composer.json")
	w.files.add(cj, dir)
	for _, f := range []string{"composer.lock", "auth.json"} {
		w.files.add(filepath.Join(dir, f), dir)
		w.looked.add(filepath.Join(dir, f), dir)
	}
	data := w.read(cj)
	if data == nil {
		return
	}
	var doc struct {
		Scripts  map[string]json.RawMessage `json:"scripts"`
		Autoload struct {
			PSR4 map[string]json.RawMessage `json:"psr-4"`
			PSR0 map[string]json.RawMessage `json:"psr-0"`
		} `json:"autoload"`
		Config struct {
			VendorDir string `json:"vendor-dir"`
		} `json:"config"`
	}
	if json.Unmarshal(data, &doc) != nil {
		w.unsure([]string{dir}, w.rel(cj)+" does not parse as composer.json, so what composer runs there cannot be told")
		return
	}
	vendor := "vendor"
	if v := doc.Config.VendorDir; v != "" && !strings.Contains(v, "$") {
		vendor = v
	}
	vendor = from(dir, vendor)
	w.composerPlugins(vendor)
	names := slices.Clone(composerAlways)
	switch {
	case cmd == "run-script" || cmd == "run":
		if len(args) > 0 && args[0].ok && !strings.HasPrefix(args[0].s, "-") {
			names = append(names, args[0].s)
		} else if len(args) > 0 {
			w.unsure([]string{dir}, "composer runs a script whose name it does not set; every script of "+w.rel(cj)+" is followed")
			names = slices.Sorted(maps.Keys(doc.Scripts))
		}
	case !slices.Contains(composerBuiltin, cmd):
		names = append(names, cmd)
	}
	names = append(names, composerEvents(cmd)...)
	cs := composerScripts{w: w, dir: dir, vendor: vendor, scripts: doc.Scripts, seen: map[string]bool{}, depth: depth}
	if cmd == "exec" {
		// composer exec NAME runs vendor/bin/NAME.
		for _, a := range args {
			if a.ok && !strings.HasPrefix(a.s, "-") {
				w.files.add(filepath.Join(vendor, "bin", a.s), dir)
				cs.vendorBin(a.s)
				break
			}
		}
	}
	cs.autoload = append(autoloadDirs(dir, doc.Autoload.PSR4, true), autoloadDirs(dir, doc.Autoload.PSR0, false)...)
	for _, n := range names {
		cs.run(n)
	}
}

// composerScripts runs a composer.json's scripts by name.
type composerScripts struct {
	w           *walker
	dir, vendor string
	scripts     map[string]json.RawMessage
	autoload    []autoloadDir
	seen        map[string]bool
	depth       int
}

// run follows the script name: each of its entries.
func (c *composerScripts) run(name string) {
	raw, ok := c.scripts[name]
	if !ok || c.seen[name] {
		return
	}
	c.seen[name] = true
	var one string
	var list []string
	switch {
	case json.Unmarshal(raw, &one) == nil:
		list = []string{one}
	case json.Unmarshal(raw, &list) == nil:
	default:
		c.w.unsure([]string{c.dir}, "composer's script "+name+" is neither a string nor a list of them, so what it runs cannot be told")
		return
	}
	w := c.w
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, e := range list {
		w.cmd = e
		switch {
		case strings.HasPrefix(e, "@putenv "):
		case strings.HasPrefix(e, "@php "):
			w.shell("php "+strings.TrimPrefix(e, "@php "), []string{c.dir}, c.depth+1)
		case strings.HasPrefix(e, "@composer "):
			w.shell("composer "+strings.TrimPrefix(e, "@composer "), []string{c.dir}, c.depth+1)
		case strings.HasPrefix(e, "@"):
			f := strings.Fields(strings.TrimPrefix(e, "@"))
			if len(f) > 0 {
				c.run(f[0])
			}
		case phpCallback(e):
			c.callback(e)
		default:
			w.shell(e, []string{c.dir}, c.depth+1)
			// Composer puts vendor/bin first on the PATH of its scripts.
			if f := strings.Fields(e); len(f) > 0 && !strings.Contains(f[0], "/") && !strings.Contains(f[0], "=") {
				w.files.add(filepath.Join(c.vendor, "bin", f[0]), c.dir)
				c.vendorBin(f[0])
			}
		}
	}
}

// vendorBin holds, for a command found in vendor/bin, the vendor
// directory whole: the proxy there includes its package, which loads
// others through the autoloader, none of which is followed.
func (c *composerScripts) vendorBin(name string) {
	if c.w.read(filepath.Join(c.vendor, "bin", name)) == nil {
		return
	}
	if within(c.vendor, c.w.root) && c.vendor != c.w.root {
		c.w.unsure([]string{c.vendor}, "composer runs "+name+" from "+c.w.rel(filepath.Join(c.vendor, "bin"))+", which loads the installed packages")
	}
}

// phpCallback reports whether a script entry is a PHP static method
// (Vendor\Class::method) rather than a command line.
func phpCallback(e string) bool {
	class, method, ok := strings.Cut(e, "::")
	if !ok || class == "" || method == "" || strings.ContainsAny(e, " \t/") {
		return false
	}
	for _, r := range class + method {
		if !(r == '\\' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// autoloadDir is a namespace prefix of the project's autoloader and a
// directory its classes are found in.
type autoloadDir struct {
	prefix, dir string
	psr4        bool
}

// autoloadDirs are composer.json's psr-4 or psr-0 mappings: a prefix
// names one directory or a list of them.
func autoloadDirs(dir string, m map[string]json.RawMessage, psr4 bool) []autoloadDir {
	var out []autoloadDir
	for _, prefix := range slices.Sorted(maps.Keys(m)) {
		var one string
		var list []string
		if json.Unmarshal(m[prefix], &one) == nil {
			list = []string{one}
		} else if json.Unmarshal(m[prefix], &list) != nil {
			continue
		}
		for _, d := range list {
			out = append(out, autoloadDir{prefix: prefix, dir: from(dir, d), psr4: psr4})
		}
	}
	return out
}

// callback holds the file of the project's class a PHP callback names,
// as the autoloader finds it, and the directory it lies in whole: what
// it loads in turn is not followed. A class the project does not map is
// a package's, in vendor.
func (c *composerScripts) callback(e string) {
	class, _, _ := strings.Cut(e, "::")
	class = strings.TrimPrefix(class, "\\")
	found := false
	for _, a := range c.autoload {
		if !strings.HasPrefix(class, a.prefix) {
			continue
		}
		rel := class
		if a.psr4 {
			rel = strings.TrimPrefix(class, a.prefix)
		}
		p := filepath.Join(a.dir, strings.ReplaceAll(rel, "\\", "/")+".php")
		if !within(p, c.w.root) {
			continue
		}
		found = true
		c.w.files.add(p, c.dir)
		c.w.unsure([]string{filepath.Dir(p)}, "composer's script runs the PHP method "+e+", whose class loads others through the autoloader, which are not followed")
	}
	if !found && within(c.vendor, c.w.root) && c.vendor != c.w.root {
		c.w.unsure([]string{c.vendor}, "composer's script runs the PHP method "+e+", of a class the project does not map: an installed package's")
	}
}

// composerPlugins holds the plugins installed in vendor: composer loads
// each (a package of type composer-plugin) on every command, so their
// directories, and the record that lists them, are held.
func (w *walker) composerPlugins(vendor string) {
	rec := filepath.Join(vendor, "composer", "installed.json")
	w.files.add(rec, filepath.Dir(vendor))
	data := w.read(rec)
	if data == nil {
		return
	}
	// Composer 2's {"packages": [...]}, or Composer 1's bare list.
	var doc struct {
		Packages []composerPackage `json:"packages"`
	}
	if json.Unmarshal(data, &doc) != nil {
		var list []composerPackage
		if json.Unmarshal(data, &list) != nil {
			w.unsure([]string{vendor}, w.rel(rec)+" does not parse, so the plugins composer loads cannot be told")
			return
		}
		doc.Packages = list
	}
	for _, p := range doc.Packages {
		if p.Type != "composer-plugin" {
			continue
		}
		d := filepath.Join(vendor, filepath.FromSlash(p.Name))
		if p.InstallPath != "" {
			d = from(filepath.Join(vendor, "composer"), p.InstallPath)
		}
		if within(d, w.root) && d != w.root {
			w.dirs.add(d, d)
		}
	}
}

// composerPackage is a package installed.json lists.
type composerPackage struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	InstallPath string `json:"install-path"`
}

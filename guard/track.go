package guard

// What the input creates that its later commands may use: terminal
// sessions it starts (which it may then end) and programs it copies or
// links under another name (which run as the program they are). The rules
// that use these facts are in rules.go and daemons.go; this file only
// records them. Like the variables, the facts are flow-insensitive and
// only grow, which the second pass of the walk relies on.

import (
	"path"
	"strings"
)

// tracked is what the input creates.
type tracked struct {
	sessions map[string]bool   // tmux, screen and zellij sessions the input starts, by name
	copies   map[string]string // where a program was copied or linked to -> the program's name
	inProc   bool              // cd /proc ran, so a glob lists PIDs
}

// addSession records a terminal session the input starts.
func (t *tracked) addSession(a arg) {
	if !a.known || a.text == "" {
		return
	}
	if t.sessions == nil {
		t.sessions = make(map[string]bool)
	}
	if len(t.sessions) < maxCands*4 {
		t.sessions[a.text] = true
	}
}

// ownSession reports whether a session is the agent's own: the input
// starts it, or its name is the jail's own name or starts with it and a
// dash (claude-2-dev in the jail claude-2).
func (c *checker) ownSession(a arg) bool {
	if !a.known || a.text == "" {
		return false
	}
	if c.track.sessions[a.text] {
		return true
	}
	return c.slot != "" && (a.text == c.slot || strings.HasPrefix(a.text, c.slot+"-"))
}

// copySpec reads the options of the programs that copy or link files.
func copySpec(name string) (optSpec, bool) {
	switch name {
	case "cp", "mv", "ln":
		return optSpec{vals: "St", permute: true,
			long: []string{"target-directory=", "suffix=", "reflink=", "sparse=", "preserve=", "no-preserve=", "backup="}}, true
	case "install":
		return optSpec{vals: "gmoSt", permute: true,
			long: []string{"group=", "mode=", "owner=", "suffix=", "target-directory=", "strip-program=", "backup="}}, true
	case "rsync":
		return optSpec{vals: "eBfT", permute: true, long: []string{"rsh=", "filter=", "exclude=", "include=", "temp-dir="}}, true
	}
	return optSpec{}, false
}

// copies records where cp, ln, install, mv and rsync put a program, so
// that running the copy counts as running the program.
func (c *checker) copies(name string, args []arg) {
	sp, ok := copySpec(name)
	if !ok {
		return
	}
	opts, ops := parseOpts(args, sp)
	if dir, ok := optVal(opts, "t", "target-directory"); ok {
		for _, src := range ops {
			c.addCopy(src, joinPath(dir, src))
		}
		return
	}
	if len(ops) < 2 {
		return
	}
	dest := ops[len(ops)-1]
	for _, src := range ops[:len(ops)-1] {
		c.addCopy(src, dest)
		c.addCopy(src, joinPath(dest, src))
	}
}

// joinPath is dir/<basename of src>, as cp names a copy into a directory.
func joinPath(dir, src arg) arg {
	if !dir.known || !src.known {
		return arg{text: dir.text + "/" + src.text, src: dir.src + "/" + src.src}
	}
	return knownArg(path.Join(dir.text, baseName(src.text)))
}

// addCopy records that dest now holds the program src, when src names
// one the rules care about.
func (c *checker) addCopy(src, dest arg) {
	prog := c.programOf(src)
	if prog == "" {
		return
	}
	if c.track.copies == nil {
		c.track.copies = make(map[string]string)
	}
	if len(c.track.copies) >= maxCands*8 {
		return
	}
	for _, k := range copyKeys(dest) {
		if strings.TrimPrefix(k, "base:") != prog {
			c.track.copies[k] = prog
		}
	}
}

// programOf names the program a copy source holds: its basename (or
// what an earlier copy made of it), or for a path only known at run time
// ("$(which pkill)") the program its text names.
func (c *checker) programOf(src arg) string {
	for _, k := range copyKeys(src) {
		if p, ok := c.track.copies[k]; ok {
			return p
		}
	}
	if src.known {
		return baseName(src.text)
	}
	toks := tokens(dequote(src.src))
	for i := len(toks) - 1; i >= 0; i-- {
		if isKillTool(toks[i]) || isPortKiller(toks[i]) || contains(specialNames, toks[i]) {
			return toks[i]
		}
	}
	return ""
}

// copyKeys are the names under which a copy can be run again: its path,
// its basename (run through $PATH), or for a path only known at run time,
// its text.
func copyKeys(a arg) []string {
	if !a.known {
		return []string{"src:" + a.src}
	}
	p := path.Clean(a.text)
	return []string{p, "base:" + baseName(p)}
}

// copied returns the program a command word runs when the input made it
// a copy of one, or "".
func (c *checker) copied(name arg) string {
	if len(c.track.copies) == 0 {
		return ""
	}
	if !name.known {
		return c.track.copies["src:"+name.src]
	}
	if strings.Contains(name.text, "/") {
		return c.track.copies[path.Clean(name.text)]
	}
	return c.track.copies["base:"+name.text]
}

// isKillTool reports whether name picks its victims by name or attribute.
func isKillTool(name string) bool {
	switch name {
	case "pkill", "killall", "killall5", "skill", "kill":
		return true
	}
	return false
}

package guard

// What the input sets up that its later commands may use: the values of
// variables and arrays (and whether they came from a PID listing), what
// it writes to files, the positional parameters set gives, the terminal
// sessions it starts (which it may then end) and the programs it copies or
// links under another name (which run as the program they are). The rules
// that use these facts are in rules.go and daemons.go; this file only
// records them. The facts are flow-insensitive and only grow, which the
// second pass of the walk relies on.

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
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
	a = c.jailNamed(a)
	if !a.known || a.text == "" {
		return false
	}
	if c.track.sessions[a.text] {
		return true
	}
	return c.slot != "" && (a.text == c.slot || strings.HasPrefix(a.text, c.slot+"-"))
}

// jailNamed resolves a word that builds a name on $AISAN_JAIL, such as
// "$AISAN_JAIL-dev", to the name it has in the jail the guard runs in:
// the naming the refusals tell the agent to use. Where the input sets
// AISAN_JAIL itself, or the guard runs outside a jail, a is returned as
// it is.
func (c *checker) jailNamed(a arg) arg {
	if a.known || c.slot == "" || len(a.refs) != 1 || a.refs[0] != "AISAN_JAIL" ||
		c.vars["AISAN_JAIL"] != nil || a.opRef || a.array || a.pids {
		return a
	}
	for _, ref := range [...]string{"${AISAN_JAIL}", "$AISAN_JAIL"} {
		if strings.Count(a.text, "$") == 1 && strings.Count(a.text, ref) == 1 {
			return knownArg(strings.Replace(a.text, ref, c.slot, 1))
		}
	}
	return a
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

// varInfo is what the input reveals about a shell variable, whatever the
// control flow.
type varInfo struct {
	pids    bool     // assigned from a PID-listing command
	values  []string // literal values assigned to it
	unknown bool     // some assignment has a value the input does not show
	partial bool     // more values were assigned than kept
	zero    bool     // some assignment may make it 0 or negative (arithmetic, $?)
	array   bool     // assigned as an array or an element of one
	// For a command name only known at run time: a kill word in what is
	// assigned (as written or as a value), and whether "kill" appears in
	// it in any case and surroundings.
	named   string
	namedCI bool
	file    string // a file that kills, named in what is assigned (killfile.go)
	integer bool   // declared with -i: what is assigned is evaluated as arithmetic
}

// fileInfo is what the input writes to a file.
type fileInfo struct {
	texts  []string // text known from echo, printf, here-documents
	pids   bool     // output of a PID listing
	opaque []string // source of writers whose output is not known
}

// writes refuses output redirections to a file that kills, and records
// the text that a statement such as cat > run.sh <<EOF or echo … >>
// run.sh puts in a file, so that running the file later in the same input
// can be checked.
func (c *checker) writes(fr *frame, s *syntax.Stmt) {
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		default:
			continue
		}
		if why := c.fileTargetWhy(c.word(fr, r.Word)); why != "" {
			c.denyInstead(fr.slice(s), why, insteadKernel)
			return
		}
		if r.N != nil && r.N.Value != "1" {
			continue
		}
		name, ok := staticWord(r.Word)
		if !ok {
			continue
		}
		var f feed
		var opaque []string
		if s.Cmd != nil {
			f.pids = c.pidSource(fr, s.Cmd)
		}
		c.produceStmt(fr, s, &f, &opaque)
		f.opaque = strings.Join(opaque, "\n")
		c.writeFile(name, f)
	}
}

// writeFile records what the input writes to a file.
func (c *checker) writeFile(name string, f feed) {
	if len(f.texts) == 0 && !f.pids && f.opaque == "" {
		return
	}
	key := path.Clean(name)
	fi := c.files[key]
	if fi == nil {
		fi = &fileInfo{}
		c.files[key] = fi
	}
	fi.pids = fi.pids || f.pids
	if len(fi.texts) < maxCands {
		fi.texts = append(fi.texts, f.texts...)
	}
	if f.opaque != "" && len(fi.opaque) < maxCands {
		fi.opaque = append(fi.opaque, f.opaque)
	}
}

// written returns the text the input writes to the file name, if any.
func (c *checker) written(name string) []string {
	if fi := c.files[path.Clean(name)]; fi != nil {
		return fi.texts
	}
	return nil
}

// fileFeed is what reading the file name gives, when the input writes it.
func (c *checker) fileFeed(name string) (feed, bool) {
	fi := c.files[path.Clean(name)]
	if fi == nil {
		return feed{}, false
	}
	return feed{texts: fi.texts, pids: fi.pids, opaque: strings.Join(fi.opaque, "\n")}, true
}

// filePids reports whether the input writes a PID listing to the file.
func (c *checker) filePids(name string) bool {
	fi := c.files[path.Clean(name)]
	return fi != nil && fi.pids
}

// arithAssign records an assignment made by arithmetic: let x=-1,
// ((x=-1)), $((x-=2)), x++.
func (c *checker) arithAssign(fr *frame, op syntax.BinAritOperator, x, y syntax.ArithmExpr) {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
	default:
		return
	}
	w, ok := x.(*syntax.Word)
	if !ok {
		return
	}
	name := ""
	if s, ok := staticWord(w); ok && isName(s) {
		name = s
	} else if p, quoted := lonePart(w); !quoted {
		if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil {
			name = pe.Param.Value // a[i]=…
		}
	}
	if name == "" {
		return
	}
	src := name
	if y != nil {
		src = fr.slice(y)
	}
	if op == syntax.Assgn && y != nil {
		if n, ok := c.arith(fr, y, 0); ok {
			v := knownArg(strconv.FormatInt(n, 10))
			v.src = src
			c.assign(name, v)
			return
		}
	}
	c.assign(name, arg{text: src, src: src, zero: true})
}

// integerArg is what a variable with the integer attribute holds after
// a assigned to it: each value evaluated as arithmetic. A value that does
// not evaluate, or an unknown one with fixed text around it ($n-1), may
// be 0 or negative. A lone unknown expansion (local -i pid=$1) is as
// unknown as it is without the attribute, and kill "$pid" is fine.
func (c *checker) integerArg(a arg) arg {
	out := arg{text: a.text, src: a.src, pids: a.pids, zero: a.zero}
	vals := a.cands
	if a.known {
		vals = []string{a.text}
	}
	for _, s := range vals {
		n, ok := c.arithText(s)
		if !ok {
			out.cands = nil
			break
		}
		out.cands = append(out.cands, strconv.FormatInt(n, 10))
	}
	switch {
	case len(vals) == 0:
		for _, seg := range a.skel {
			out.zero = out.zero || seg != ""
		}
	case out.cands == nil:
		out.zero = true
	case a.known:
		out.text, out.known, out.cands = out.cands[0], true, nil
	}
	return out
}

// arithText evaluates text as bash arithmetic, where the input fixes
// what it reads.
func (c *checker) arithText(s string) (int64, bool) {
	if n, ok := parseArithNum(strings.TrimSpace(s)); ok {
		return n, true
	}
	if len(s) > maxOpLen || !c.step(s, 1+len(s)/16) {
		return 0, false
	}
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil {
		return 0, false
	}
	return c.arith(&frame{src: s, base: -1}, x, 0)
}

// assignNode records an assignment, of a word or of an array.
func (c *checker) assignNode(fr *frame, as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	if as.Append && c.vars[as.Name.Value] != nil && c.vars[as.Name.Value].integer {
		c.varInfo(as.Name.Value).zero = true // a+=-5 adds: the sum is not among the values
	}
	switch {
	case as.Value != nil && as.Append && as.Array == nil && as.Index == nil:
		c.appendTo(as.Name.Value, c.word(fr, as.Value))
	case as.Value != nil:
		c.assign(as.Name.Value, c.word(fr, as.Value))
	case !as.Naked && as.Array == nil:
		c.assign(as.Name.Value, knownArg("")) // X= empties X
	}
	if as.Array != nil || as.Index != nil {
		c.varInfo(as.Name.Value).array = true
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				for _, a := range c.fields(fr, []*syntax.Word{el.Value}) {
					c.assign(as.Name.Value, a)
				}
			}
		}
	}
}

// appendTo records name+=a: each value the variable may hold, with a's
// value at its end (c=pk; c+=ill spells pkill), beside the values it
// held, since the append may sit in a branch that does not run. A value
// of a that the input does not show leaves its fixed parts to the
// skeleton. An integer variable adds instead (assignNode), and an array
// gains an element, as assign records it.
func (c *checker) appendTo(name string, a arg) {
	v := c.vars[name]
	if v == nil || v.integer || v.array || len(v.values) == 0 {
		c.assign(name, a)
		return
	}
	olds := slices.Clone(v.values)
	c.assign(name, a)
	tails := a.cands
	if a.known {
		tails = []string{a.text}
	}
	for _, o := range olds {
		for _, t := range tails {
			if len(o)+len(t) > maxOpLen || !c.step(name, 1+(len(o)+len(t))/16) {
				// Too long to be worth spelling out (c+=$c doubles):
				// not known, its text still seen for kill words.
				v.unknown = true
				v.notice(o[:min(len(o), maxOpLen)] + t[:min(len(t), maxOpLen)])
				continue
			}
			v.addValue(o + t)
		}
		if !a.known && v.named == "" && len(a.skel) > 0 {
			v.named = skeletonKillWord(append([]string{o + a.skel[0]}, a.skel[1:]...))
		}
	}
}

func (c *checker) varInfo(name string) *varInfo {
	v := c.vars[name]
	if v == nil {
		v = &varInfo{}
		c.vars[name] = v
	}
	return v
}

// assign records what a variable may hold.
func (c *checker) assign(name string, a arg) {
	v := c.varInfo(name)
	if v.integer {
		a = c.integerArg(a)
	}
	v.pids = v.pids || a.pids
	v.zero = v.zero || a.zero
	if a.known {
		v.addValue(a.text)
	} else if a.cands == nil {
		v.unknown = true
	}
	for _, s := range a.cands {
		v.addValue(s)
	}
	v.notice(a.src)
	if !a.known {
		v.notice(a.text)
		if v.named == "" {
			// c=pk${X}ill; $c m: the value is not known, but its fixed
			// parts spell a kill tool.
			v.named = skeletonKillWord(a.skel)
		}
	}
}

// notice records whether assigned text names a kill tool or a file that
// kills.
func (v *varInfo) notice(s string) {
	if v.named == "" {
		v.named = mentionedKillWord(s)
	}
	if v.file == "" {
		v.file = mentionedKillFile(s)
	}
	v.namedCI = v.namedCI || strings.Contains(strings.ToLower(dequote(s)), "kill")
}

func (v *varInfo) addValue(s string) {
	v.notice(s)
	if len(v.values) >= maxCands {
		v.partial = true
		return
	}
	for _, have := range v.values {
		if have == s {
			return
		}
	}
	v.values = append(v.values, s)
}

// inputArg stands for the words that xargs or parallel read: a variable
// that only this site fills, so that text handed to a shell can refer to it.
func (c *checker) inputArg(src feed) arg {
	c.inputs++
	name := fmt.Sprintf("__aisan_input%d", c.inputs)
	a := arg{text: "${" + name + "}", src: strings.Join(append([]string{src.opaque}, src.texts...), " "), pids: src.pids}
	for _, t := range src.texts {
		for _, f := range strings.Fields(t) {
			if len(a.cands) < maxCands {
				a.cands = append(a.cands, f)
			}
		}
	}
	c.assign(name, a)
	return a
}

// read and mapfile fill variables from stdin: from a PID listing, those
// variables carry PIDs.
func (c *checker) read(name string, args []arg, in feed) {
	value := arg{pids: in.pids}
	seps := c.ifsSeps()
	for _, t := range in.texts {
		for _, f := range splitFields(t, seps) {
			if len(value.cands) < maxCands {
				value.cands = append(value.cands, f)
			}
		}
	}
	sp := optSpec{vals: "adinNptu", flags: "ers"}
	if name != "read" {
		sp = optSpec{vals: "dnOsuCc", flags: "t"}
	}
	opts, vars := parseOpts(args, sp)
	names := make([]string, 0, len(vars)+1)
	if name == "read" {
		for _, v := range optVals(opts, "a") {
			names = append(names, v.text)
		}
	}
	for _, v := range vars {
		names = append(names, v.text)
	}
	if len(names) == 0 {
		names = []string{"REPLY", "MAPFILE"}
	}
	for _, v := range names {
		c.assign(v, value)
	}
}

// setParams returns the positional parameters that set gives, and false
// when it gives none (set -e, set -o pipefail).
func setParams(args []arg) ([]arg, bool) {
	_, ops, ended := parseOptsEnd(args, optSpec{vals: "o", plus: true, dashOp: true})
	return ops, ended || len(ops) > 0
}

// printfVar records the variable that printf -v fills.
func (c *checker) printfVar(args []arg) {
	if len(args) < 2 || !args[0].known || !strings.HasPrefix(args[0].text, "-v") {
		return
	}
	name, rest := args[0].text[2:], args[1:]
	if name == "" {
		if !args[1].known {
			return
		}
		name, rest = args[1].text, args[2:]
	}
	name, _, _ = strings.Cut(name, "[")
	srcs := make([]string, len(rest))
	known := true
	for i, a := range rest {
		srcs[i] = a.src
		known = known && a.known
	}
	v := arg{text: strings.Join(srcs, " "), src: strings.Join(srcs, " ")}
	if t, ok := printfText(rest); ok {
		v.cands = []string{t}
		if known {
			v.text, v.known = t, true
		}
	}
	c.assign(name, v)
}

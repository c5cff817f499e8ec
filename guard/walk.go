package guard

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep the analysis finite whatever the input. Exceeding one is a
// refusal, never a silent allow.
const (
	maxDepth = 12      // nested sh -c, eval, function calls
	maxSteps = 2000000 // units of work over both passes: words resolved, nodes visited, arguments examined
	maxCands = 8       // candidate values kept per variable or word
)

// finding is one refusal.
type finding struct {
	text    string // the refused command as written
	why     string // what makes it dangerous, as a clause
	instead string // what to do instead, when the general advice does not fit; <slot> stands for the jail's name
}

// checker holds the state of one analysis.
type checker struct {
	vars    map[string]*varInfo
	funcs   map[string]funcDef
	active  map[string]bool // functions being examined, against recursion
	parsed  map[string]parseResult
	depth   int
	steps   int
	found   *finding
	collect bool // record commands instead of stopping at the first refusal
	cmds    []Command
	inputs  int                  // xargs and parallel sites seen in this pass, to name their input
	files   map[string]*fileInfo // what the input writes to files, by cleaned path
	listing map[string]bool      // functions being searched for a PID listing, against recursion
	execFds []fdFeed             // descriptors that exec 3<… opens for the rest of the input
	slot    string               // the jail's name, for sessions named after it
	track   tracked              // what the input creates: sessions, copies of programs
	outside int                  // >0 while checking commands that run later, outside the jail (cron, at, systemd-run)
	ownTmux bool                 // the tmux command being checked goes to a server of the agent's own
}

type funcDef struct {
	body *syntax.Stmt
	fr   *frame
}

type parseResult struct {
	file    *syntax.File
	err     error
	partial []*syntax.Stmt // on an error, the complete statements before it
}

// frame is the text being walked and the positional parameters in scope.
type frame struct {
	src       string
	base      int   // offset reported for every command in a nested text; -1 at top level
	params    []arg // $0, $1, …; meaningful only when hasParams
	hasParams bool
	shifted   bool // shift ran: $N may be any later parameter
	paramPids bool // after shift: some parameter carries PIDs
}

// feed is what a command reads on its standard input, as far as the input
// shows it.
type feed struct {
	pids   bool     // the text lists PIDs from pgrep, ps, …
	texts  []string // text known from echo, printf, here-documents
	opaque string   // source of a producer whose output is not known
	fds    []fdFeed // what redirections such as 3<<< give other descriptors
}

// site is where the guard meets a command: the frame its words belong
// to, what it reads on standard input, its text as written (which a
// refusal quotes) and the offset a [Command] reports for it.
type site struct {
	fr   *frame
	in   feed
	text string
	off  int
}

// withIn is the site with other standard input.
func (s site) withIn(in feed) site {
	s.in = in
	return s
}

// withFrame is the site in another frame.
func (s site) withFrame(fr *frame) site {
	s.fr = fr
	return s
}

// fdFeed is what a descriptor other than 0 reads, for /dev/fd/N.
type fdFeed struct {
	fd string
	in feed
}

func newChecker() *checker {
	return &checker{
		vars:    make(map[string]*varInfo),
		funcs:   make(map[string]funcDef),
		active:  make(map[string]bool),
		parsed:  make(map[string]parseResult),
		files:   make(map[string]*fileInfo),
		listing: make(map[string]bool),
	}
}

// stopped reports whether the walk can end early.
func (c *checker) stopped() bool {
	return c.found != nil && !c.collect
}

// step counts cost units of work and reports whether the walk should go
// on. Once the budget is spent the command is refused: the cost of every
// construct is linear in its size, so only pathological input gets there.
func (c *checker) step(text string, cost int) bool {
	c.steps += cost
	if c.steps > maxSteps {
		if c.found == nil {
			c.found = &finding{text: text, why: "the command line is larger or more deeply nested than the guard is willing to check"}
		}
		c.collect = false
		return false
	}
	return !c.stopped()
}

// overBudget reports whether the budget is spent.
func (c *checker) overBudget() bool {
	return c.steps > maxSteps
}

func (c *checker) deny(text, why string) {
	c.denyInstead(text, why, "")
}

// denyInstead refuses with advice of its own.
func (c *checker) denyInstead(text, why, instead string) {
	if c.found == nil {
		c.found = &finding{text: text, why: why, instead: instead}
	}
}

func (c *checker) parse(text string) parseResult {
	if r, ok := c.parsed[text]; ok {
		return r
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	r := parseResult{file: f, err: err}
	if err != nil {
		// Bash runs the statements before a syntax error that comes on a
		// later line, so those are checked as usual.
		// The sequence is read to its end: StmtsSeq yields the error once
		// more after a loop that stops at it, which panics.
		failed := false
		for s, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).StmtsSeq(strings.NewReader(text)) {
			failed = failed || err != nil
			if !failed && s != nil {
				r.partial = append(r.partial, s)
			}
		}
	}
	c.parsed[text] = r
	return r
}

// top walks the whole input.
func (c *checker) top(src string) {
	c.inputs = 0
	c.script(src, -1, nil, false, feed{})
}

// script parses text and walks it. off is the offset to report for its
// commands (-1: their own offsets, at top level).
func (c *checker) script(text string, off int, params []arg, hasParams bool, in feed) {
	if !c.step(text, 1+len(text)/64) {
		return
	}
	if c.depth >= maxDepth {
		c.deny(text, "commands nest deeper than the guard is willing to follow")
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	r := c.parse(text)
	fr := &frame{src: text, base: off, params: params, hasParams: hasParams}
	if r.err != nil {
		c.stmts(fr, r.partial, in)
		if w := coarseKillWord(text); w != "" {
			c.deny(text, "the guard cannot parse this command, and "+quoteWord(w)+" appears in it as a word")
		}
		return
	}
	c.stmts(fr, r.file.Stmts, in)
}

func (c *checker) stmts(fr *frame, list []*syntax.Stmt, in feed) {
	for _, s := range list {
		if c.stopped() {
			return
		}
		c.stmt(fr, s, in)
	}
}

func (c *checker) stmt(fr *frame, s *syntax.Stmt, in feed) {
	if s == nil {
		return
	}
	for _, r := range s.Redirs {
		c.nested(fr, r)
		if r.N != nil && r.N.Value != "0" {
			if f, ok := c.redirInput(fr, r); ok {
				fds := in.fds[:len(in.fds):len(in.fds)]
				in.fds = append(fds, fdFeed{fd: r.N.Value, in: f})
			}
			continue
		}
		if f, ok := c.redirFeed(fr, r); ok {
			f.fds = in.fds
			in = f
		}
	}
	c.writes(fr, s)
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 1 && call.Args[0].Lit() == "exec" {
		for _, f := range in.fds {
			if len(c.execFds) < maxCands {
				c.execFds = append(c.execFds, f)
			}
		}
	}
	if s.Cmd != nil {
		c.command(fr, s.Cmd, in)
	}
}

// redirFeed reports what a redirection feeds to standard input.
func (c *checker) redirFeed(fr *frame, r *syntax.Redirect) (feed, bool) {
	if r.N != nil && r.N.Value != "0" {
		return feed{}, false
	}
	return c.redirInput(fr, r)
}

// redirInput reports what an input redirection gives its descriptor.
func (c *checker) redirInput(fr *frame, r *syntax.Redirect) (feed, bool) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return feed{texts: []string{""}}, true
		}
		text, pids := c.hdocText(fr, r)
		return feed{texts: []string{text}, pids: pids}, true
	case syntax.WordHdoc:
		a := c.word(fr, r.Word)
		return feed{texts: []string{a.text + "\n"}, pids: a.pids}, true
	case syntax.RdrIn:
		a := c.word(fr, r.Word)
		if a.feed != nil {
			return *a.feed, true
		}
		if pidPath(dequote(a.src)) {
			return feed{pids: true}, true
		}
		if a.known {
			if f, ok := c.fileFeed(a.text); ok {
				return f, true
			}
		}
		return feed{}, true
	}
	return feed{}, false
}

// hdocText is the text a here-document delivers, with expansions left as
// written, and whether an expansion in it lists PIDs.
func (c *checker) hdocText(fr *frame, r *syntax.Redirect) (string, bool) {
	quotedDelim := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quotedDelim = true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				quotedDelim = true
			}
		}
	}
	var b strings.Builder
	pids := false
	for _, p := range r.Hdoc.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if quotedDelim {
				b.WriteString(p.Value)
			} else {
				b.WriteString(unescapeHdoc(p.Value))
			}
		case *syntax.CmdSubst:
			pids = pids || c.pidSource(fr, p)
			b.WriteString(fr.slice(p))
		case *syntax.ParamExp:
			pids = pids || c.paramPids(fr, p)
			b.WriteString(fr.slice(p))
		default:
			b.WriteString(fr.slice(p))
		}
	}
	return b.String(), pids
}

func (c *checker) command(fr *frame, cmd syntax.Command, in feed) {
	if c.stopped() {
		return
	}
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		c.call(fr, x, in)
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			c.stmt(fr, x.X, in)
			c.stmt(fr, x.Y, c.produce(fr, []*syntax.Stmt{x.X}))
			return
		}
		c.stmt(fr, x.X, in)
		c.stmt(fr, x.Y, in)
	case *syntax.Subshell:
		c.stmts(fr, x.Stmts, in)
	case *syntax.Block:
		c.stmts(fr, x.Stmts, in)
	case *syntax.IfClause:
		for ic := x; ic != nil; ic = ic.Else {
			c.stmts(fr, ic.Cond, in)
			c.stmts(fr, ic.Then, in)
		}
	case *syntax.WhileClause:
		c.stmts(fr, x.Cond, in)
		c.stmts(fr, x.Do, in)
	case *syntax.ForClause:
		c.nested(fr, x.Loop)
		if wi, ok := x.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			for _, a := range c.fields(fr, wi.Items) {
				c.assign(wi.Name.Value, a)
			}
		}
		c.stmts(fr, x.Do, in)
	case *syntax.CaseClause:
		c.nested(fr, x.Word)
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				c.nested(fr, p)
			}
			c.stmts(fr, item.Stmts, in)
		}
	case *syntax.FuncDecl:
		if x.Name != nil {
			c.funcs[x.Name.Value] = funcDef{body: x.Body, fr: fr}
		}
		for _, n := range x.Names {
			c.funcs[n.Value] = funcDef{body: x.Body, fr: fr}
		}
		// The body is checked where it is defined too, with unknown
		// arguments: a refusal does not wait for a call that the guard
		// might not see.
		body := &frame{src: fr.src, base: fr.base}
		c.stmt(body, x.Body, feed{})
	case *syntax.DeclClause:
		// declare -i (and typeset, local, export -i) gives the names that
		// follow the integer attribute: what is assigned to them then is
		// arithmetic, so declare -i a=0-1 makes $a -1. Options only known
		// at run time might hold -i too.
		//
		// declare -n r=c makes r a name for c: the two share what the
		// guard knows of them, so c=pkill; $r reads pkill.
		integer, nameref := false, false
		for _, as := range x.Args {
			c.nested(fr, as)
			if as.Naked && as.Name == nil && as.Value != nil {
				f := c.word(fr, as.Value)
				integer = integer || !f.known || strings.HasPrefix(f.text, "-") && strings.IndexByte(f.text, 'i') >= 0
				nameref = nameref || f.known && strings.HasPrefix(f.text, "-") && strings.IndexByte(f.text, 'n') >= 0
				continue
			}
			if integer && as.Name != nil {
				c.varInfo(as.Name.Value).integer = true
			}
			if nameref && as.Name != nil && as.Value != nil && as.Array == nil && as.Index == nil {
				if t := c.word(fr, as.Value); t.known && t.text != as.Name.Value {
					c.vars[as.Name.Value] = c.varInfo(t.text)
				} else {
					c.varInfo(as.Name.Value).unknown = true
				}
				continue
			}
			c.assignNode(fr, as)
			c.shellVarNode(fr, x, as)
		}
	case *syntax.TimeClause:
		c.stmt(fr, skipDashDash(x.Stmt), in)
	case *syntax.CoprocClause:
		c.stmt(fr, x.Stmt, in)
	case *syntax.TestDecl:
		c.stmt(fr, x.Body, in)
	default:
		// Arithmetic, [[ ]] and let run no commands of their own, but
		// their words may hold substitutions.
		c.nested(fr, x)
	}
}

// nested walks the command and process substitutions inside node.
func (c *checker) nested(fr *frame, node syntax.Node) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		if c.stopped() {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(fr, n.Stmts, feed{})
			return false
		case *syntax.ProcSubst:
			c.stmts(fr, n.Stmts, feed{})
			return false
		case *syntax.BinaryArithm:
			c.arithAssign(fr, n.Op, n.X, n.Y)
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				c.arithAssign(fr, syntax.AddAssgn, n.X, nil)
			}
		}
		return true
	})
}

// shellVarNode checks an assignment, made by the statement n, to a
// variable whose value a program runs as a shell command.
func (c *checker) shellVarNode(fr *frame, n syntax.Node, as *syntax.Assign) {
	if as.Name == nil || c.stopped() {
		return
	}
	if _, ok := shellVarText(as.Name.Value, ""); !ok {
		return
	}
	st := site{fr: fr, text: fr.slice(n), off: fr.offset(n)}
	if as.Value != nil {
		c.shellVar(st, as.Name.Value, c.word(fr, as.Value))
	}
	if as.Array != nil { // PROMPT_COMMAND=(…) runs each element
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				c.shellVar(st, as.Name.Value, c.word(fr, el.Value))
			}
		}
	}
}

// skipDashDash drops the -- that bash's time keyword accepts before its
// command (time -- cmd, time -p -- cmd), which the parser leaves as the
// command's first word.
func skipDashDash(s *syntax.Stmt) *syntax.Stmt {
	if s == nil {
		return nil
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "--" {
		return s
	}
	c := *call
	c.Args = c.Args[1:]
	t := *s
	t.Cmd = &c
	return &t
}

func (c *checker) call(fr *frame, x *syntax.CallExpr, in feed) {
	for _, as := range x.Assigns {
		c.nested(fr, as)
		c.assignNode(fr, as)
		c.shellVarNode(fr, x, as)
	}
	if len(x.Args) == 0 {
		return
	}
	for _, w := range x.Args {
		c.nested(fr, w)
	}
	if c.stopped() {
		return
	}
	c.examine(site{fr: fr, in: in, text: fr.slice(x), off: fr.offset(x)}, c.fields(fr, x.Args))
}

// produce describes what stmts write to standard output, for the command
// on the right of a pipe.
func (c *checker) produce(fr *frame, list []*syntax.Stmt) feed {
	f := feed{pids: c.pidSource(fr, listNode(list))}
	var opaque []string
	for _, s := range list {
		c.produceStmt(fr, s, &f, &opaque)
	}
	f.opaque = strings.Join(opaque, "\n")
	return f
}

func (c *checker) produceStmt(fr *frame, s *syntax.Stmt, f *feed, opaque *[]string) {
	if s == nil || s.Cmd == nil {
		return
	}
	switch x := s.Cmd.(type) {
	case *syntax.Block:
		for _, t := range x.Stmts {
			c.produceStmt(fr, t, f, opaque)
		}
		return
	case *syntax.Subshell:
		for _, t := range x.Stmts {
			c.produceStmt(fr, t, f, opaque)
		}
		return
	case *syntax.BinaryCmd:
		// For a pipe, what the left side writes may pass through the
		// right side (cat, tee, sort): both count.
		c.produceStmt(fr, x.X, f, opaque)
		c.produceStmt(fr, x.Y, f, opaque)
		return
	case *syntax.CallExpr:
		if len(x.Args) == 0 {
			return
		}
		args := c.fields(fr, x.Args)
		if len(args) > 0 && args[0].known {
			switch baseName(args[0].text) {
			case "echo":
				f.texts = append(f.texts, echoTexts(args[1:])...)
				return
			case "printf":
				if len(args) > 1 && args[1].known && strings.HasPrefix(args[1].text, "-v") {
					return // printf -v sets a variable and prints nothing
				}
				if t, ok := printfText(args[1:]); ok {
					f.texts = append(f.texts, t)
					return
				}
			case "cat":
				if c.catFeed(fr, s, args[1:], f) {
					return
				}
			}
		}
	}
	*opaque = append(*opaque, fr.slice(s))
}

// catFeed adds what cat prints to f: its standard input, and files that
// the input writes. It reports false when cat reads anything else.
func (c *checker) catFeed(fr *frame, s *syntax.Stmt, args []arg, f *feed) bool {
	files := 0
	for _, a := range args {
		if a.known && len(a.text) > 1 && a.text[0] == '-' {
			continue
		}
		files++
		if !a.known {
			return false
		}
		if a.text == "-" {
			continue
		}
		in, ok := c.fileFeed(a.text)
		if !ok || in.opaque != "" {
			return false
		}
		f.texts = append(f.texts, in.texts...)
		f.pids = f.pids || in.pids
	}
	if files > 0 {
		return true
	}
	for _, r := range s.Redirs {
		if in, ok := c.redirFeed(fr, r); ok {
			f.texts = append(f.texts, in.texts...)
			f.pids = f.pids || in.pids
			if in.opaque != "" {
				return false
			}
		}
	}
	return true
}

// listNode wraps statements so that syntax.Walk can visit them.
func listNode(list []*syntax.Stmt) syntax.Node {
	return &syntax.Block{Stmts: list}
}

// pidSource reports whether node runs, anywhere inside it, a command that
// lists PIDs (pgrep, pidof, ps, …) or reads a variable filled from one.
// It errs on the side of yes: any word that names such a tool counts.
func (c *checker) pidSource(fr *frame, node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if found {
			return false
		}
		if !c.step("", 1) && c.overBudget() {
			found = true // fail closed
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			if c.listsPids(fr, n) {
				found = true
				return false
			}
			for i, w := range n.Args {
				s, ok := staticWord(w)
				if !ok {
					if i > 0 && pidPath(dequote(fr.slice(w))) {
						found = true
					}
					continue
				}
				if i > 0 && pidPath(s) || c.filePids(s) {
					found = true
				}
				if def, ok := c.funcs[s]; ok && i == 0 && !c.listing[s] {
					c.listing[s] = true
					found = found || c.pidSource(def.fr, def.body)
					delete(c.listing, s)
				}
			}
		case *syntax.Redirect:
			if n.Word != nil {
				if s, ok := staticWord(n.Word); ok && c.filePids(s) {
					found = true
				}
				if n.Op == syntax.RdrIn && pidPath(dequote(fr.slice(n.Word))) {
					found = true
				}
			}
		case *syntax.ParamExp:
			if c.paramPids(fr, n) {
				found = true
			}
		}
		return !found
	})
	return found
}

// listsPids reports whether a simple command prints PIDs (or container
// IDs) that a kill could be fed with: pgrep, ps, ss -p, top, docker ps,
// wherever the name appears among its words (sudo pgrep). lsof -p $$
// lists the shell's own files and does not count.
func (c *checker) listsPids(fr *frame, call *syntax.CallExpr) bool {
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := staticWord(w)
		if !ok {
			s = fr.slice(w)
		}
		words = append(words, s)
	}
	for i, s := range words {
		if !isPidLister(baseName(s)) {
			continue
		}
		if baseName(s) == "lsof" && ownLsof(words[i+1:]) {
			continue
		}
		return true
	}
	for i := range words {
		if listsContainers(words[i:]) {
			return true
		}
	}
	return false
}

// ownLsof reports whether lsof's only selection is the shell itself
// (-p $$), whose files and PID are the agent's own.
func ownLsof(args []string) bool {
	own := false
	for i, a := range args {
		switch {
		case a == "-p" && i+1 < len(args):
			own = args[i+1] == "$$" || args[i+1] == `"$$"` || args[i+1] == "$BASHPID"
		case a == "-p$$":
			own = true
		case strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "-u") || strings.HasPrefix(a, "-c") || a == "+D" || a == "+d":
			return false
		}
	}
	return own
}

// pidPath reports whether reading or listing a path yields PIDs: /proc
// itself, a glob over its PID directories, a cgroup's process list.
func pidPath(s string) bool {
	if !strings.Contains(s, "/proc") && !strings.Contains(s, "cgroup") && !strings.HasSuffix(s, "tasks") {
		return false // the common case, without the cost of cleaning the path
	}
	p := path.Clean(s)
	if p == "/proc" {
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		first, _, _ := strings.Cut(rest, "/")
		return hasGlob(first)
	}
	b := baseName(p)
	return b == "cgroup.procs" || b == "cgroup.threads" || b == "tasks" && strings.Contains(p, "cgroup")
}

// paramPids reports whether a parameter expansion may yield PIDs.
func (c *checker) paramPids(fr *frame, p *syntax.ParamExp) bool {
	if p.Param == nil {
		return false
	}
	name := p.Param.Value
	if v := c.vars[name]; v != nil && v.pids {
		return true
	}
	if fr.hasParams {
		switch name {
		case "@", "*":
			for _, a := range fr.params[min(1, len(fr.params)):] {
				if a.pids {
					return true
				}
			}
		default:
			if i, ok := paramIndex(name); ok && i < len(fr.params) {
				return fr.params[i].pids
			}
		}
	}
	return false
}

// slice returns the source text of node in this frame.
func (fr *frame) slice(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(fr.src) || start > end {
		return ""
	}
	return fr.src[start:end]
}

// offset is what a Command reports as its position.
func (fr *frame) offset(n syntax.Node) int {
	if fr.base >= 0 {
		return fr.base
	}
	return int(n.Pos().Offset())
}

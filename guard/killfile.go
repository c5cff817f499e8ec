package guard

// Files whose writing signals or freezes processes: a cgroup's cgroup.kill
// and cgroup.freeze, and the kernel's SysRq trigger. A write is refused
// when the path is written out, when every value the input gives the path
// names one, and when the path is only known at run time but the text it
// is computed from names one ($(find /sys/fs/cgroup -name cgroup.kill), a
// variable filled from such a listing, cgroup.$k) and its fixed end does
// not rule it out ("$(…).bak").

import (
	"path"
	"strings"
)

// killFile reports why writing to the file name signals or freezes
// processes, or "".
func killFile(name string) string {
	if !strings.Contains(name, "sysrq") && !strings.Contains(name, "cgroup.") {
		return ""
	}
	p := path.Clean(name)
	if p == "/proc/sysrq-trigger" {
		return "/proc/sysrq-trigger makes the kernel signal, kill or stop every process on the machine"
	}
	return killFileWhy(baseName(p))
}

// killFileWhy is killFile for a file's base name; the SysRq trigger
// counts in /proc only, which killFile checks.
func killFileWhy(base string) string {
	switch base {
	case "cgroup.kill":
		return "writing to cgroup.kill kills every process in that cgroup and below it, which may hold the user's and the other agents' work"
	case "cgroup.freeze":
		return "writing to cgroup.freeze stops every process in that cgroup and below it, which may hold the user's and the other agents' work"
	case "sysrq-trigger":
		return killFile("/proc/sysrq-trigger")
	}
	return ""
}

// killFileNames are the base names killFileWhy knows.
var killFileNames = [...]string{"cgroup.kill", "cgroup.freeze", "sysrq-trigger"}

// mentionedKillFile returns the first kill file that text names, as a
// path's last part or a glob that matches one (-name 'cgroup.k*'), or "".
func mentionedKillFile(text string) string {
	if !strings.Contains(text, "cgroup") && !strings.Contains(text, "sysrq") {
		return "" // the common case, without the cost of the scan
	}
	fields := strings.FieldsFunc(dequote(text), func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '=' || r == '(' || r == ')' || r == '|' ||
			r == ';' || r == '<' || r == '>' || r == '`' || r == '&' || r == '$' || r == ','
	})
	for _, f := range fields {
		b := baseName(f)
		for _, k := range killFileNames {
			if b == k || hasGlob(b) && globMatch(b, k) {
				return k
			}
		}
	}
	return ""
}

// fileTargetWhy reports why writing to the file a word names is refused,
// or "".
func (c *checker) fileTargetWhy(a arg) string {
	if a.known {
		if a.meta {
			// A glob: bash writes to the one file it matches.
			if b := baseName(a.pat); hasGlob(b) {
				for _, k := range killFileNames {
					if globMatch(b, k) {
						return killFileWhy(k)
					}
				}
			}
		}
		return killFile(a.text)
	}
	if why := killFile(dequote(a.src)); why != "" {
		return why // the path's last part is written out: "$(…)/cgroup.kill"
	}
	if a.cands != nil && !a.partial {
		for _, cand := range a.cands {
			if why := killFile(strings.TrimSpace(cand)); why != "" {
				return why
			}
		}
		return ""
	}
	if strings.Contains(a.tail, "/") {
		return "" // the last part is written out, and it is no kill file
	}
	if lb := a.lead[strings.LastIndexByte(a.lead, '/')+1:]; strings.HasPrefix(lb, "cgroup.") || strings.HasPrefix(lb, "sysrq") {
		// cgroup.$k: the fixed start of the last part points at one.
		for _, k := range killFileNames {
			if strings.HasPrefix(k, lb) && strings.HasSuffix(k, a.tail) && len(lb)+len(a.tail) <= len(k) {
				return killFileWhy(k)
			}
		}
	}
	named := []string{mentionedKillFile(a.text)}
	for _, r := range a.refs {
		if v := c.vars[r]; v != nil {
			named = append(named, v.file)
		}
	}
	for _, k := range named {
		if k != "" && strings.HasSuffix(k, a.tail) {
			return killFileWhy(k)
		}
	}
	return ""
}

// writeArgs refuses tee, cp and their kin writing to a file that kills.
func (c *checker) writeArgs(args []arg, text string) {
	for _, a := range args {
		if a.known && strings.HasPrefix(a.text, "-") {
			continue
		}
		if why := c.fileTargetWhy(a); why != "" {
			c.denyInstead(text, why, insteadKernel)
			return
		}
	}
}

// ddOutput is dd's of= operand as the file it names, if a is one.
func ddOutput(a arg) (arg, bool) {
	if !strings.HasPrefix(a.text, "of=") {
		return arg{}, false
	}
	out := a
	out.text = a.text[3:]
	out.src = strings.TrimPrefix(dequote(a.src), "of=")
	out.lead = strings.TrimPrefix(a.lead, "of=")
	if a.known {
		out.tail = out.text
	}
	out.cands = nil
	for _, cand := range a.cands {
		out.cands = append(out.cands, strings.TrimPrefix(cand, "of="))
	}
	return out, true
}

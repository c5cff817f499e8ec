package guard

// Rules for the programs that kill through a server the jail can still
// talk to: container engines, process managers, zellij, cron, systemd-run
// and the bus tools. The PID namespace does not reach these servers, so
// the guard is the one thing between "let me clean up" and everyone
// else's processes. Each program is a table: its global options, and per
// subcommand the options and operands that make it reach past the agent's
// own work ("all", -a, a target list read from a listing). The tables are
// package-level literals, laid out by the linker; nothing is built at
// start-up.

import (
	"fmt"
	"strings"
)

// daemon is a program that acts through a server outside the jail.
type daemon struct {
	opts    optSpec // options before the subcommand
	verbs   []daemonVerb
	instead string // what to do instead, named in every refusal
}

// daemonVerb is one subcommand and what makes it refused.
type daemonVerb struct {
	names  []string // the subcommand as words, aliases included: "container kill", "kill"
	opts   optSpec
	always bool     // refused whatever follows
	need   []string // options without which the verb ends nothing (rm without -f)
	all    []string // options that select every target: a, all
	allOps []string // operands that select every target: all
	own    bool     // the operand (or, with none, the current one) must be a session of the agent's own
	why    string   // the clause, with %s for the verb as written
}

// Where a refusal says what to do instead.
const (
	insteadContainer = "Stop only the containers you started, one by name: `docker stop <name>` (or `podman stop <name>`)."
	insteadPM2       = "Stop only the app you started, by its name or id: `pm2 stop <name>`."
	insteadSuper     = "Stop only the program you started: `supervisorctl stop <name>`."
	insteadSession   = "End only a session you started: name it after this jail (`tmux new-session -d -s <slot>-dev`) and end it by that name (`tmux kill-session -t <slot>-dev`); a pane or window of your own goes with `tmux kill-pane -t <pane>`."
	insteadZellij    = "End only a session you started: name it after this jail (`zellij -s <slot>-dev`) and end it by that name (`zellij kill-session <slot>-dev`)."
	insteadScreen    = "End only a session you started: name it after this jail (`screen -dmS <slot>-dev …`) and end it by that name (`screen -S <slot>-dev -X quit`)."
	insteadBus       = "The bus proxy blocks these calls anyway. Stop a process you started with `kill <PID>` after `pgrep -a <pattern>`; the user's own services are theirs to stop, from their own shell (`systemctl --user stop <unit>`)."
	insteadPort      = "To free a port, see who holds it with `lsof -i :<port>` or `ss -ltnp`, check the process is yours (`ps -o pid,cmd -p <PID>`), then run `kill <PID>` on that PID alone."
	insteadLater     = "Run the command now, inside this jail, on PIDs you started; or ask the user to schedule it from their own shell."
	insteadKernel    = "Stop a process you started with `kill <PID>` after `pgrep -a <pattern>`."
	insteadGPG       = "gpg-agent is the user's, shared by every jail and the host: leave it running, or ask the user to restart it from their own shell."
	insteadServer    = "The server is the user's, shared by every jail, the host and the IDE: leave it running; to be rid of a stuck build or cache, stop only what you started (`kill <PID>` after `pgrep -a <pattern>`), or ask the user."
)

var containerEngine = daemon{
	opts: optSpec{vals: "cHl", long: []string{"config=", "context=", "host=", "log-level=", "tlscacert=", "tlscert=", "tlskey=",
		"url=", "connection=", "root=", "runroot=", "storage-driver=", "cgroup-manager=", "namespace=", "address=", "identity="}},
	verbs: []daemonVerb{
		{names: []string{"kill", "container kill"}, opts: optSpec{vals: "s", long: []string{"signal=", "cidfile="}, permute: true},
			all: []string{"a", "all"}, why: "%s with every container as its target stops the user's and the other agents' containers too"},
		{names: []string{"stop", "container stop", "restart", "container restart", "pause", "container pause"},
			opts: optSpec{vals: "ts", long: []string{"time=", "timeout=", "signal=", "cidfile=", "filter="}, permute: true},
			all:  []string{"a", "all", "filter"}, why: "%s with every container as its target stops the user's and the other agents' containers too"},
		{names: []string{"rm", "container rm", "container remove"}, opts: optSpec{vals: "t", long: []string{"time=", "cidfile=", "filter="}, permute: true},
			need: []string{"f", "force"}, all: []string{"a", "all", "filter"},
			why: "%s -f with every container as its target kills the user's and the other agents' running containers too"},
		{names: []string{"system reset"}, always: true,
			why: "%s stops and removes every container and pod, the user's and the other agents' included"},
		{names: []string{"pod kill", "pod stop", "pod restart", "pod rm"}, opts: optSpec{vals: "st", long: []string{"signal=", "time="}, permute: true},
			all: []string{"a", "all"}, why: "%s with every pod as its target stops the user's and the other agents' pods too"},
	},
	instead: insteadContainer,
}

var pm2 = daemon{
	verbs: []daemonVerb{
		{names: []string{"kill"}, always: true, why: "%s ends the pm2 daemon and every app it runs, the user's included"},
		{names: []string{"stop", "delete", "del", "restart", "reload", "gracefulReload"}, opts: optSpec{permute: true},
			allOps: []string{"all"}, why: "%s all stops every app pm2 runs, the user's included"},
	},
	instead: insteadPM2,
}

var supervisorctl = daemon{
	opts: optSpec{vals: "csupr", long: []string{"configuration=", "serverurl=", "username=", "password=", "history-file="}},
	verbs: []daemonVerb{
		{names: []string{"shutdown"}, always: true, why: "%s ends supervisord and every program it runs"},
		{names: []string{"stop", "restart", "signal"}, allOps: []string{"all"}, opts: optSpec{permute: true},
			why: "%s all stops every program supervisord runs"},
	},
	instead: insteadSuper,
}

var zellij = daemon{
	opts: optSpec{vals: "slc", long: []string{"session=", "layout=", "config=", "config-dir=", "data-dir=", "max-panes=", "new-session-with-layout="}},
	verbs: []daemonVerb{
		{names: []string{"kill-all-sessions", "ka", "delete-all-sessions", "da"}, always: true,
			why: "%s ends every zellij session, the user's included"},
		{names: []string{"kill-session", "k", "delete-session", "d"}, opts: optSpec{permute: true}, own: true,
			why: "%s ends a zellij session this command line did not start, which may be the user's"},
		{names: []string{"action quit", "action q"}, always: true,
			why: "%s ends the zellij session it runs in, which may be the user's"},
	},
	instead: insteadZellij,
}

// daemonOf returns the table of a program that acts through a server.
func daemonOf(name string) (*daemon, bool) {
	switch name {
	case "docker", "podman", "nerdctl":
		return &containerEngine, true
	case "pm2":
		return &pm2, true
	case "supervisorctl":
		return &supervisorctl, true
	case "zellij":
		return &zellij, true
	}
	return nil, false
}

// daemonCommand applies a program's table.
func (c *checker) daemonCommand(st site, name string, d *daemon, args []arg) {
	gopts, ops := parseOpts(args, d.opts)
	if name == "zellij" {
		if s, ok := optVal(gopts, "s", "session"); ok && len(ops) == 0 {
			c.track.addSession(s) // zellij -s NAME starts that session
		}
		c.zellij(st, gopts, ops)
	}
	v, rest := matchVerb(d.verbs, ops)
	if v == nil {
		return
	}
	verb := name + " " + joinTexts(ops[:len(ops)-len(rest)])
	if v.always {
		c.denyInstead(st.text, fmt.Sprintf(v.why, verb), d.instead)
		return
	}
	vopts, vops := parseOpts(rest, v.opts)
	if len(v.need) > 0 && !hasOpt(vopts, v.need...) {
		return
	}
	if v.own {
		target := vops
		if len(target) == 0 {
			// Without an operand the verb ends the session it runs in.
			if s, ok := optVal(gopts, "s", "session"); ok {
				target = []arg{s}
			}
		}
		if len(target) == 0 || !c.ownSession(target[0]) {
			c.denyInstead(st.text, fmt.Sprintf(v.why, verb), d.instead)
		}
		return
	}
	if hasOpt(vopts, v.all...) {
		c.denyInstead(st.text, fmt.Sprintf(v.why, verb), d.instead)
		return
	}
	for _, o := range vops {
		if o.pids {
			c.denyInstead(st.text, fmt.Sprintf("%s takes its targets from a listing (such as `docker ps -q`), which stops every container it shows, the user's and the other agents' included", verb), d.instead)
			return
		}
		if o.known && contains(v.allOps, o.text) {
			c.denyInstead(st.text, fmt.Sprintf(v.why, verb), d.instead)
			return
		}
	}
}

// matchVerb finds the subcommand that ops start with, the longest match
// winning, and returns it with the words after it.
func matchVerb(verbs []daemonVerb, ops []arg) (*daemonVerb, []arg) {
	var best *daemonVerb
	bestLen := 0
	for i := range verbs {
		for _, n := range verbs[i].names {
			words := strings.Fields(n)
			if len(words) <= bestLen || len(words) > len(ops) {
				continue
			}
			match := true
			for k, w := range words {
				match = match && ops[k].known && ops[k].text == w
			}
			if match {
				best, bestLen = &verbs[i], len(words)
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, ops[bestLen:]
}

// listsContainers reports whether a command prints container IDs or
// names, the listing that docker kill $(docker ps -q) is fed from.
func listsContainers(words []string) bool {
	if len(words) < 2 {
		return false
	}
	switch baseName(words[0]) {
	case "docker", "podman", "nerdctl":
	default:
		return false
	}
	_, ops := parseOpts(knownArgs(words[1:]), containerEngine.opts)
	if len(ops) == 0 {
		return false
	}
	switch ops[0].text {
	case "ps":
		return true
	case "container", "pod":
		return len(ops) > 1 && (ops[1].text == "ls" || ops[1].text == "list" || ops[1].text == "ps")
	}
	return false
}

func knownArgs(words []string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = knownArg(w)
	}
	return out
}

// zellij checks what zellij runs in the session's server: zellij run's
// command and the keys action write-chars types.
func (c *checker) zellij(st site, gopts []opt, ops []arg) {
	if len(ops) == 0 || !ops[0].known {
		return
	}
	switch ops[0].text {
	case "attach", "a":
		opts, rest := parseOpts(ops[1:], optSpec{vals: "l", long: []string{"index=", "layout="}, permute: true})
		if hasOpt(opts, "c", "create", "create-background", "b") && len(rest) > 0 {
			c.track.addSession(rest[0])
		}
	case "run", "r":
		_, cmd := parseOpts(ops[1:], optSpec{vals: "ndx", long: []string{"name=", "direction=", "cwd=", "x=", "y=", "width=", "height="}})
		c.examine(st.withIn(feed{}), cmd)
	case "action", "ac":
		if len(ops) > 2 && ops[1].known && (ops[1].text == "write-chars" || ops[1].text == "write") {
			c.script(joinTexts(ops[2:]), st.off, nil, false, feed{})
		}
	}
}

// later checks commands that a scheduler runs later, outside the jail:
// there a PID names one of the host's processes, not the jail's, and no
// namespace keeps the command to the agent's own work.
func (c *checker) later(check func()) {
	c.outside++
	defer func() { c.outside-- }()
	check()
}

// crontab checks the entries that crontab installs: each runs later,
// outside every jail, through the user's shell.
func (c *checker) crontab(st site, args []arg) {
	opts, ops := parseOpts(args, optSpec{vals: "uT", flags: "lreinx"})
	if hasOpt(opts, "l", "r", "e", "T") {
		return // list, remove, edit or test: nothing new runs
	}
	src := st.in
	if len(ops) > 0 && !(ops[0].known && ops[0].text == "-") {
		f := ops[0]
		src = feed{}
		switch {
		case f.feed != nil:
			src = *f.feed
		case f.known:
			if ff, ok := c.fileFeed(f.text); ok {
				src = ff
				break
			}
			fallthrough
		default:
			// The guard reads no files: entries it cannot see run later,
			// outside every jail, where it is the only check.
			c.denyInstead(st.text, "it installs cron entries from a file the guard cannot see, and they run later outside every jail", insteadLater)
			return
		}
	}
	c.later(func() {
		for _, t := range src.texts {
			for _, line := range strings.Split(t, "\n") {
				if cmd, ok := cronCommand(line); ok {
					c.script(cmd, st.off, nil, false, feed{})
				}
			}
		}
		if w := coarseKillWord(src.opaque); w != "" {
			c.denyInstead(st.text, fmt.Sprintf("it installs cron entries the guard cannot see, which run later outside every jail, and %s appears in what it reads", quoteWord(w)), insteadLater)
		}
	})
}

// cronCommand returns the command of a crontab line: what follows the
// five time fields or the @keyword, up to the first unescaped %, which
// cron turns into standard input.
func cronCommand(line string) (string, bool) {
	s := strings.TrimLeft(line, " \t")
	if s == "" || s[0] == '#' || isAssignWord(strings.SplitN(s, " ", 2)[0]) && !strings.HasPrefix(s, "@") {
		return "", false
	}
	fields := 5
	if s[0] == '@' {
		fields = 1
	}
	for k := 0; k < fields; k++ {
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return "", false
		}
		s = s[i:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if s[i] == '%' {
			break
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

var systemdRunSpec = optSpec{vals: "pEMHu", flags: "dGPqrSt",
	long: []string{"unit=", "property=", "description=", "slice=", "setenv=", "uid=", "gid=", "nice=", "working-directory=",
		"on-active=", "on-boot=", "on-startup=", "on-unit-active=", "on-unit-inactive=", "on-calendar=", "timer-property=",
		"path-property=", "socket-property=", "service-type=", "machine=", "host=", "user", "system", "scope", "remain-after-exit",
		"send-sighup", "pty", "pipe", "quiet", "wait", "collect", "same-dir", "no-ask-password", "no-block", "verbose",
		"ignore-failure", "shell", "on-clock-change", "on-timezone-change", "expand-environment=", "json=", "slice-inherit"}}

// systemdRun checks a transient unit: properties that stop other units
// (Conflicts=, or an OnFailure= that ends the manager), command lines in
// Exec…= properties, and the command. Unless --scope runs it in place,
// the service manager runs the command outside the jail.
func (c *checker) systemdRun(st site, args []arg) {
	opts, cmd := parseOpts(args, systemdRunSpec)
	for _, p := range optVals(opts, "p", "property", "timer-property", "path-property", "socket-property") {
		key, val, _ := strings.Cut(p.text, "=")
		switch {
		case key == "Conflicts":
			c.denyInstead(st.text, fmt.Sprintf("its unit has Conflicts=%s, so starting it stops those units, which may be the user's", val), insteadBus)
			return
		case key == "OnFailure" || key == "OnSuccess" || key == "Upholds" || key == "Requires" || key == "Wants" || key == "PropagatesStopTo" || key == "StopPropagatedFrom":
			for _, u := range strings.Fields(val) {
				if endsManager(u) || strings.HasPrefix(key, "Propagates") || strings.HasPrefix(key, "StopPropagated") {
					c.denyInstead(st.text, fmt.Sprintf("its unit has %s=%s, which stops the user's service manager or other units", key, val), insteadBus)
					return
				}
			}
		case strings.HasPrefix(key, "Exec"):
			c.later(func() { c.script(strings.TrimLeft(val, "-@:+!"), st.off, nil, false, feed{}) })
		}
	}
	if hasOpt(opts, "scope") {
		c.examine(st, cmd)
		return
	}
	c.later(func() { c.examine(st.withIn(feed{}), cmd) })
}

// busMethod reports whether a D-Bus method stops, kills or restarts units,
// sessions or the service manager itself. args are the call's arguments,
// for StartUnit("exit.target") and isolate jobs.
func busMethod(iface, method string, args []arg) bool {
	switch method {
	case "StopUnit", "KillUnit", "RestartUnit", "TryRestartUnit", "ReloadOrRestartUnit", "ReloadOrTryRestartUnit",
		"QueueSignalUnit", "FreezeUnit", "KillUnitSubgroup", "EnqueueMarkedJobs", "Exit", "Reboot", "SoftReboot",
		"PowerOff", "Halt", "KExec", "SwitchRoot", "KillSession", "TerminateSession", "KillUser", "TerminateUser",
		"TerminateSeat", "LockSessions", "SetUnitProperties":
		// SetUnitProperties kills by effect: MemoryMax=1 or TasksMax=1
		// on a unit ends or starves what runs in it.
		return true
	case "SetProperties":
		return iface == "" || strings.Contains(iface, "systemd1") || !strings.Contains(iface, ".")
	case "Stop", "Kill", "Restart", "TryRestart", "ReloadOrRestart", "ReloadOrTryRestart", "QueueSignal", "Freeze", "Terminate":
		return iface == "" || strings.Contains(iface, "systemd1") || strings.Contains(iface, "login1") || !strings.Contains(iface, ".")
	case "StartUnit", "StartUnitReplace", "EnqueueUnitJob", "StartTransientUnit":
		for _, a := range args {
			if !a.known {
				continue
			}
			for _, f := range strings.Fields(a.text) {
				if endsManager(f) || f == "isolate" || f == "replace-irreversibly" {
					return true
				}
			}
		}
	}
	return false
}

// busCall checks busctl, dbus-send, gdbus and qdbus for method calls that
// stop units or sessions, on any bus.
func (c *checker) busCall(name string, args []arg, text string) {
	var iface, method string
	var rest []arg
	switch name {
	case "busctl":
		_, ops := parseOpts(args, optSpec{vals: "HMj", permute: true,
			long: []string{"address=", "expect-reply=", "auto-start=", "allow-interactive-authorization=", "timeout=",
				"augment-creds=", "watch-bind=", "json=", "destination=", "match=", "size=", "limit-messages="}})
		if len(ops) < 5 || !ops[0].known || ops[0].text != "call" {
			return
		}
		iface, method, rest = ops[3].text, ops[4].text, ops[5:]
		if !ops[4].known {
			method = "StopUnit" // only known at run time: assume the worst
		}
	case "dbus-send":
		opts, ops := parseOpts(args, optSpec{permute: true, long: []string{"dest=", "type=", "address=", "reply-timeout=", "sender=", "bus="}})
		t, _ := optVal(opts, "type")
		if !hasOpt(opts, "print-reply") && t.text != "method_call" || len(ops) < 2 {
			return
		}
		iface, method, rest = splitMember(ops[1]), memberName(ops[1]), ops[2:]
	case "gdbus":
		opts, ops := parseOpts(args, optSpec{vals: "adomt", flags: "eyi", permute: true,
			long: []string{"address=", "dest=", "object-path=", "method=", "timeout=", "session", "system", "interactive"}})
		m, ok := optVal(opts, "m", "method")
		if len(ops) == 0 || !ops[0].known || ops[0].text != "call" || !ok {
			return
		}
		iface, method, rest = splitMember(m), memberName(m), ops[1:]
	case "qdbus", "qdbus6", "qdbus-qt5", "qdbus-qt6":
		_, ops := parseOpts(args, optSpec{permute: true, long: []string{"address="}})
		if len(ops) < 3 {
			return
		}
		iface, method, rest = splitMember(ops[2]), memberName(ops[2]), ops[3:]
	}
	if busMethod(iface, method, rest) {
		c.denyInstead(text, fmt.Sprintf("it calls %s over D-Bus, which stops or kills units or sessions of the user's service manager, outside this jail", method), insteadBus)
	}
}

// splitMember is the interface of IFACE.Member; memberName the member.
func splitMember(a arg) string {
	if i := strings.LastIndexByte(a.text, '.'); i >= 0 {
		return a.text[:i]
	}
	return ""
}

func memberName(a arg) string {
	if !a.known {
		return "StopUnit" // only known at run time: assume the worst
	}
	return a.text[strings.LastIndexByte(a.text, '.')+1:]
}

// isPortKiller names the helpers that kill whatever holds a port or
// matches a name: kill-port, fkill and their kin.
func isPortKiller(name string) bool {
	switch name {
	case "kill-port", "killport", "kill-port-process", "fkill", "fkill-cli", "port-kill", "kill-ports", "portkill":
		return true
	}
	return false
}

// packageName turns a package spec (kill-port@1.6, @scope/fkill@latest,
// npm:kill-port) into the command it provides.
func packageName(spec string) string {
	s := strings.TrimPrefix(spec, "npm:")
	if i := strings.LastIndexByte(s, '@'); i > 0 {
		s = s[:i]
	}
	return baseName(s)
}

// packageRunner handles npm exec, pnpm dlx, yarn dlx, bun x and their
// kin, which fetch a package and run its command like npx does.
func (c *checker) packageRunner(st site, name string, args []arg) {
	_, ops := parseOpts(args, optSpec{vals: "wC", long: []string{"workspace=", "prefix=", "dir=", "cwd=", "filter=", "registry="}})
	verb := ""
	if len(ops) > 0 && ops[0].known {
		verb = ops[0].text
	}
	switch {
	case name == "npm" && (verb == "exec" || verb == "x"),
		name == "pnpm" && (verb == "dlx" || verb == "exec"),
		name == "yarn" && (verb == "dlx" || verb == "exec"),
		name == "bun" && verb == "x":
		c.npx(st, ops[1:])
	case name == "bun" && verb == "exec" && len(ops) > 1:
		c.script(joinTexts(ops[1:]), st.off, nil, false, st.in)
	case name == "bun":
		c.interpreter(st, name, args)
	}
}

// gpgAgent refuses `gpgconf --kill` and gpg-connect-agent's KILLAGENT:
// the agent's sockets are in the runtime directory every jail shares, so
// these end the user's gpg-agent (its cached passphrases, and the signing
// and ssh of the other agents and the host) outside this jail.
func (c *checker) gpgAgent(st site, name string, args []arg) {
	for _, a := range args {
		if !a.known {
			continue
		}
		t := strings.ToLower(a.text)
		switch {
		case name == "gpgconf" && (shortOpt(a.text, 'K') || strings.HasPrefix(t, "--ki") && strings.HasPrefix("--kill", strings.SplitN(t, "=", 2)[0])):
			c.denyInstead(st.text, "gpgconf --kill ends the user's gpg-agent (or every GnuPG daemon) outside this jail, through the sockets every jail shares", insteadGPG)
			return
		case name == "gpg-connect-agent" && strings.HasPrefix(strings.TrimSpace(t), "killagent"):
			c.denyInstead(st.text, "KILLAGENT ends the user's gpg-agent outside this jail, through the socket every jail shares", insteadGPG)
			return
		}
	}
}

// shortOpt reports whether word is a cluster of short options (-vK) that
// holds letter.
func shortOpt(word string, letter byte) bool {
	return len(word) > 1 && word[0] == '-' && word[1] != '-' && strings.IndexByte(word[1:], letter) >= 0
}

// sharedServer refuses the commands that stop a build or device server
// the user runs once for every process of theirs: Gradle's daemons (the
// IDE's and every jail's builds), adb's server (every device session),
// sccache's and watchman's (every build and watch using them).
func (c *checker) sharedServer(st site, name string, args []arg) {
	for _, a := range args {
		if !a.known {
			return
		}
		var why string
		switch {
		case (name == "gradle" || name == "gradlew") && a.text == "--stop":
			why = "gradle --stop stops every Gradle daemon of the user, the other agents' and the IDE's builds' included"
		case name == "sccache" && a.text == "--stop-server":
			why = "sccache --stop-server stops the user's one sccache server, which every build of theirs compiles through"
		case name == "adb" && (a.text == "shell" || a.text == "exec-out"):
			// What follows runs on the device.
			return
		case name == "adb" && a.text == "kill-server":
			why = "adb kill-server stops the user's adb server, every device session of the host and the other agents with it"
		case name == "watchman" && a.text == "shutdown-server":
			why = "watchman shutdown-server stops the user's watchman, which every watch of theirs (editors, test runners, bundlers) goes through"
		}
		if why != "" {
			c.denyInstead(st.text, why, insteadServer)
			return
		}
	}
}

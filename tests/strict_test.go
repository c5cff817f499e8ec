package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The strict-mode tests run `aisan … --strict` as the unprivileged test
// user against the real bwrap and probe the box from inside, the way an
// agent that wanted out would: credential paths, $HOME, what survives the
// box, git metadata, the network, host sockets, the session keyring.

// strictHelper is the part of the test binary's helper that the strict
// tests use.
func strictHelper(name string, args []string) (int, bool) {
	switch name {
	case "tcp":
		// tcp ADDR: prints the first line the server sends, or the error.
		c, err := net.DialTimeout("tcp", args[0], 2*time.Second)
		if err != nil {
			fmt.Println("error:", errnoName(err))
			return 0, true
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Println(strings.TrimSpace(line))
	case "egress":
		// egress VAR [HOST]: dials the endpoint in $VAR (its host part
		// replaced by HOST when given), sends "ping", half-closes, prints
		// the answer.
		addr := os.Getenv(args[0])
		if len(args) > 1 {
			_, port, _ := net.SplitHostPort(addr)
			addr = net.JoinHostPort(args[1], port)
		}
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			fmt.Println("error:", errnoName(err))
			return 0, true
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte("ping\n"))
		c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(c)
		fmt.Print(string(b))
	case "sockets":
		// Prints every Unix socket file under /, /proc and /sys aside.
		filepath.WalkDir("/", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if p == "/proc" || p == "/sys" {
				return filepath.SkipDir
			}
			// A bind-mounted socket reads as its mount point's type in
			// the directory listing: ask the file itself.
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 {
				fmt.Println(p)
			}
			return nil
		})
	case "keyring":
		// keyring DESC: searches the session keyring for a user key.
		_, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", args[0], 0)
		if errors.Is(err, unix.ENOKEY) {
			fmt.Println("ENOKEY")
		} else {
			fmt.Println(errnoName(err))
		}
	default:
		return 0, false
	}
	return 0, true
}

// strictRepo is a git repository with one commit, and a home whose
// gitconfig names the user, for a strict box to run in.
func strictRepo(t *testing.T) (repo, home string, env []string) {
	t.Helper()
	requireJail(t)
	if _, err := exec.LookPath("git"); err != nil {
		need(t, "git", err)
	}
	home, env = testEnv(t)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Strict Tester\n\temail = strict@example.invalid\n[credential]\n\thelper = store\n"), 0o600)
	repo = worktree(t)
	hostGit(t, repo, env, "init", "-q")
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "init")
	return repo, home, env
}

// hostGit runs git on the host, as the user would after the box.
func hostGit(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	r := runCmd(t, dir, env, "", "git", args...)
	if r.code != 0 {
		t.Fatalf("host git %q in %s: exit %d: %s", args, dir, r.code, r.stderr)
	}
	return r.stdout
}

// strict runs `aisan run --strict [opts] -- argv` in dir.
func strict(t *testing.T, dir string, env []string, opts []string, argv ...string) result {
	t.Helper()
	args := append([]string{"run", "--strict"}, opts...)
	args = append(append(args, "--"), argv...)
	return aisanIn(t, dir, append(env, "AISAN_NO_SCOPE=1"), "", args...)
}

// helperOpts make the box run the test binary as helper h.
func helperOpts(h string) []string { return []string{"--env", "AISAN_TEST_HELPER=" + h} }

// credentialFakes are credential files the strict box must never show.
var credentialFakes = []string{
	".claude/.credentials.json", ".codex/auth.json", ".local/share/opencode/auth.json",
	".aws/credentials", ".config/gcloud/application_default_credentials.json", ".docker/config.json",
	".netrc", ".git-credentials", ".config/gh/hosts.yml", ".ssh/id_ed25519", ".kube/config",
	".npmrc", ".pypirc", ".gnupg/private-keys-v1.d/0123.key",
}

// TestStrictNoCredentialAndEmptyHome: with fake credentials at every
// listed path on the host, none exists inside, and $HOME holds only the
// generated gitconfig.
func TestStrictNoCredentialAndEmptyHome(t *testing.T) {
	repo, home, env := strictRepo(t)
	var probe strings.Builder
	for _, c := range credentialFakes {
		p := filepath.Join(home, c)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("fake-secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&probe, "test -e %q && echo FOUND %q; ", p, c)
	}
	r := strict(t, repo, env, nil, "sh", "-c", probe.String()+"echo HOME:; ls -A \"$HOME\"; cat \"$HOME/.gitconfig\"")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "FOUND") {
		t.Fatalf("a credential is visible inside:\n%s", r.stdout)
	}
	_, after, _ := strings.Cut(r.stdout, "HOME:\n")
	if list, _, _ := strings.Cut(after, "#"); strings.TrimSpace(list) != ".gitconfig" {
		t.Fatalf("$HOME inside holds more than the gitconfig: %q", list)
	}
	if !strings.Contains(after, "Strict Tester") || strings.Contains(after, "credential") || strings.Contains(after, "helper") {
		t.Fatalf("generated gitconfig:\n%s", after)
	}
	// Control: the same probe outside finds them all.
	out, _ := exec.Command("sh", "-c", probe.String()).Output()
	if n := strings.Count(string(out), "FOUND"); n != len(credentialFakes) {
		t.Fatalf("control: the probe found %d of %d fakes outside", n, len(credentialFakes))
	}
}

// TestStrictRefusesCredentialMounts: a bind spec naming a credential (or a
// directory holding one) is refused before anything starts, naming the
// file and line; so is a repository that holds one.
func TestStrictRefusesCredentialMounts(t *testing.T) {
	repo, home, env := strictRepo(t)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("fake"), 0o600)
	spec := filepath.Join(t.TempDir(), "binds.toml")
	os.WriteFile(spec, []byte("# tools\nro = [\n  \"~/.ssh\",\n]\n"), 0o600)
	r := strict(t, repo, env, []string{"--binds", spec}, "true")
	if r.code == 0 || !strings.Contains(r.stderr, spec+":3") || !strings.Contains(r.stderr, "id_ed25519") && !strings.Contains(r.stderr, ".ssh") {
		t.Fatalf("credential bind: exit %d, stderr %q", r.code, r.stderr)
	}
	r = aisanIn(t, repo, env, "", "explain", "run", "--strict", "--binds", spec, "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, spec+":3") {
		t.Fatalf("explain of a refused box: exit %d, stderr %q", r.code, r.stderr)
	}
	// A repository at $HOME (dotfiles) holds the key too, but is refused
	// before that: a box there would write what the host runs
	// (TestHandoffWorkdirHostExec).
	hostGit(t, home, env, "init", "-q")
	env = append(env, "AISAN_HOME="+filepath.Join(t.TempDir(), "aisan")) // outside the repository at ~
	r = strict(t, home, env, nil, "true")
	if r.code == 0 || !strings.Contains(r.stderr, "a strict box does not start in "+home+": it is "+home+" (your home") {
		t.Fatalf("repository at ~: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStrictWritesVanish: writes outside the repository and the state
// directory are gone after the box; the repository is writable at its
// real path.
func TestStrictWritesVanish(t *testing.T) {
	repo, home, env := strictRepo(t)
	tag := fmt.Sprintf("aisan-strict-%d", time.Now().UnixNano())
	r := strict(t, repo, env, nil, "sh", "-c",
		fmt.Sprintf("echo x > /tmp/%[1]s && echo x > \"$HOME/%[1]s\" && echo x > %[2]q/kept && pwd && touch /usr/%[1]s 2>/dev/null; touch /etc/%[1]s 2>/dev/null; true", tag, repo))
	if r.code != 0 || strings.TrimSpace(r.stdout) != repo {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{"/tmp/" + tag, filepath.Join(home, tag), "/usr/" + tag, "/etc/" + tag} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s survived the box", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(repo, "kept")); err != nil || string(b) != "x\n" {
		t.Errorf("the repository write did not land: %q %v", b, err)
	}
}

// TestStrictGitCannotAttackHost: the box tries each way of making host git
// run a program of its choosing; then the host runs git status and git
// commit, and nothing the box chose runs. What the box could write (its
// copies of the hooks and the config, a planted commondir) is held for
// review; moving .git aside and git's own config writes fail.
func TestStrictGitCannotAttackHost(t *testing.T) {
	repo, _, env := strictRepo(t)
	// Outside the repository: the box's own git runs its copies' hooks,
	// and a mark it left in the repository would prove nothing about the
	// host.
	pwned := filepath.Join(t.TempDir(), "PWNED")
	attack := fmt.Sprintf(`
set -u
evil=%[1]q/evil.sh
printf '#!/bin/sh\ntouch %[2]q 2>/dev/null; exit 0\n' > "$evil"; chmod +x "$evil"
try() { if "$@" 2>/dev/null; then echo "ALLOWED: $*"; else echo "refused: $*"; fi; }
try sh -c 'cp "$0" .git/hooks/pre-commit' "$evil"
try sh -c 'cp "$0" .git/hooks/post-commit' "$evil"
try git config core.fsmonitor "$evil"
try git config core.hooksPath "%[1]s/hooks2"
try git config core.pager "$evil"
try sh -c 'printf "[core]\n\tfsmonitor = %%s\n" "$0" >> .git/config' "$evil"
try mv .git .git-aside
mkdir -p evilgit/hooks evilgit/objects evilgit/refs
printf '[core]\n\tfsmonitor = %%s\n' "$evil" > evilgit/config
cp "$evil" evilgit/hooks/pre-commit
git commit -q --allow-empty -m "from the box" && echo "box commit ok"
echo "$PWD/evilgit" > .git/commondir && echo "planted commondir"
`, repo, pwned)
	r := strict(t, repo, env, nil, "sh", "-c", attack)
	t.Logf("box:\n%s", r.stdout)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, must := range []string{"refused: mv .git", "refused: git config core.fsmonitor"} {
		if !strings.Contains(r.stdout, must) {
			t.Errorf("want %q:\n%s", must, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "box commit ok") {
		t.Errorf("a commit in the box failed:\n%s\n%s", r.stdout, r.stderr)
	}
	for _, f := range []string{".git/commondir", ".git/config", ".git/hooks/pre-commit", ".git/hooks/post-commit"} {
		if !strings.Contains(r.stderr, f) || !strings.Contains(r.stderr, "held for review") {
			t.Errorf("the box's end does not say it held %s: %q", f, r.stderr)
		}
	}
	hostGit(t, repo, env, "status")
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "on the host")
	if _, err := os.Lstat(pwned); err == nil {
		t.Fatal("host git ran a program the box chose")
	}
	if log := hostGit(t, repo, env, "log", "--format=%s"); !strings.Contains(log, "from the box") || !strings.Contains(log, "on the host") {
		t.Fatalf("log: %q", log)
	}
	// Control: the same attack on the host's own git dir does run.
	os.WriteFile(filepath.Join(repo, ".git/hooks/post-commit"), []byte("#!/bin/sh\ntouch "+pwned+"\n"), 0o755)
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "control")
	if _, err := os.Lstat(pwned); err != nil {
		t.Fatal("control: a planted hook does not run on this host, so the test proves nothing")
	}
}

// TestStrictLinkedWorktree: a linked worktree commits from inside, with
// absolute and with relative pointers, and sees no sibling worktree.
func TestStrictLinkedWorktree(t *testing.T) {
	for _, relative := range []bool{false, true} {
		t.Run(map[bool]string{false: "absolute", true: "relative"}[relative], func(t *testing.T) {
			main, _, env := strictRepo(t)
			parent := filepath.Dir(main)
			wt, sib := filepath.Join(parent, "wt"), filepath.Join(parent, "sib")
			hostGit(t, main, env, "worktree", "add", "-q", wt)
			hostGit(t, main, env, "worktree", "add", "-q", sib)
			os.WriteFile(filepath.Join(main, "main-only"), []byte("x"), 0o644)
			if relative {
				os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../proj/.git/worktrees/wt\n"), 0o644)
				os.WriteFile(filepath.Join(main, ".git/worktrees/wt/gitdir"), []byte("../../../../wt/.git\n"), 0o644)
			}
			r := strict(t, wt, env, nil, "sh", "-c", fmt.Sprintf(`
git commit -q --allow-empty -m "wt from the box" && echo commit-ok
ls %[1]q/.git/worktrees
test -e %[2]q && echo SIBLING-VISIBLE
test -e %[1]q/.git/worktrees/sib && echo SIBLING-GITDIR-VISIBLE
test -e %[1]q/main-only && echo MAIN-WORKTREE-VISIBLE
echo x >> %[1]q/.git/config 2>/dev/null && echo CONFIG-EDITED
echo x > .git 2>/dev/null && echo POINTER-WRITABLE
true`, main, sib))
			if r.code != 0 || !strings.Contains(r.stdout, "commit-ok") {
				t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(main, ".git/config")); strings.HasSuffix(string(b), "x\n") {
				t.Errorf("the box's edit of the common config reached it:\n%s", b)
			}
			if strings.Contains(r.stdout, "CONFIG-EDITED") && !strings.Contains(r.stderr, ".git/config") {
				t.Errorf("the box's edit of the common config was not held: %q", r.stderr)
			}
			for _, bad := range []string{"SIBLING", "MAIN-WORKTREE-VISIBLE", "POINTER-WRITABLE"} {
				if strings.Contains(r.stdout, bad) {
					t.Errorf("%s:\n%s", bad, r.stdout)
				}
			}
			if lines := strings.Fields(strings.NewReplacer("commit-ok", "", "CONFIG-EDITED", "").Replace(r.stdout)); len(lines) != 1 || lines[0] != "wt" {
				t.Errorf("worktrees dir inside lists %q, want only wt", lines)
			}
			if log := hostGit(t, wt, env, "log", "-1", "--format=%s"); strings.TrimSpace(log) != "wt from the box" {
				t.Errorf("host log in wt: %q", log)
			}
			hostGit(t, sib, env, "status")
		})
	}
}

// TestStrictNoNetwork: only lo, no route, IPv4 or IPv6, proven from the
// interfaces and routing tables; a host loopback listener is unreachable.
// No packet is sent anywhere but the box's own loopback.
func TestStrictNoNetwork(t *testing.T) {
	repo, _, env := strictRepo(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host-listener\n"))
			c.Close()
		}
	}()
	// Control: the listener answers outside.
	if r := runCmd(t, "", helperEnv("tcp"), "", self(), l.Addr().String()); strings.TrimSpace(r.stdout) != "host-listener" {
		t.Fatalf("control: the host listener does not answer outside: %q", r.stdout)
	}
	r := strict(t, repo, env, nil, "sh", "-c", "cat /proc/net/route; echo ---; cat /proc/net/if_inet6; echo ---; ls /sys/class/net 2>/dev/null; ip -o link; echo ---; ip route; ip -6 route; echo ---")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	parts := strings.Split(r.stdout, "---\n")
	if len(parts) < 4 {
		t.Fatalf("output %q", r.stdout)
	}
	if routes := strings.Split(strings.TrimSpace(parts[0]), "\n"); len(routes) != 1 {
		t.Errorf("IPv4 routing table not empty:\n%s", parts[0])
	}
	for _, line := range strings.Split(strings.TrimSpace(parts[1]), "\n") {
		if line != "" && !strings.HasSuffix(strings.TrimSpace(line), " lo") {
			t.Errorf("an IPv6 address not on lo: %q", line)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(parts[2]), "\n") {
		if !strings.Contains(line, ": lo:") {
			t.Errorf("an interface other than lo: %q", line)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(parts[3]), "\n") {
		if line != "" && !strings.Contains(line, " dev lo") {
			t.Errorf("a route off lo: %q", line)
		}
	}
	r = strict(t, repo, env, helperOpts("tcp"), self(), l.Addr().String())
	if got := strings.TrimSpace(r.stdout); got != "error: ECONNREFUSED" {
		t.Errorf("the host listener from inside: %q (stderr %q), want ECONNREFUSED", got, r.stderr)
	}
}

// unixStub serves a host Unix socket that answers "stub:" and what it
// read.
func unixStub(t *testing.T, name string) string {
	return serveUnix(t, name, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		fmt.Fprintf(c, "%s:%s", name, b)
	})
}

// serveUnix serves a host Unix socket, name.sock in a directory of its
// own, handing each connection to handle (which need not close it).
func serveUnix(t *testing.T, name string, handle func(net.Conn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "aisan-stub-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, name+".sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return sock
}

// TestStrictEgressRelay: an egress endpoint reaches its host socket on
// 127.0.0.1 and ::1; no other host socket is in the box; a raw relay is
// refused with --net.
func TestStrictEgressRelay(t *testing.T) {
	repo, _, env := strictRepo(t)
	sock := unixStub(t, "stub")
	other := unixStub(t, "other")
	opts := append(helperOpts("egress"), "--egress", "stub="+sock)
	for _, host := range []string{"127.0.0.1", "::1"} {
		r := strict(t, repo, env, opts, self(), "AISAN_EGRESS_STUB", host)
		if r.code != 0 || r.stdout != "stub:ping\n" {
			t.Errorf("egress over %s: exit %d, stdout %q, stderr %q", host, r.code, r.stdout, r.stderr)
		}
	}
	r := strict(t, repo, env, append(helperOpts("sockets"), "--egress", "stub="+sock), self())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The relay's socket, and the host proxy's every box gets (with an
	// empty list unless hosts are granted).
	socks := strings.Fields(r.stdout)
	if len(socks) != 2 || !strings.HasSuffix(socks[0], "/egress/hosts.sock") || !strings.HasSuffix(socks[1], "/egress/stub.sock") {
		t.Errorf("sockets inside: %q, want only this box's egress sockets", socks)
	}
	if strings.Contains(r.stdout, other) || strings.Contains(r.stdout, sock) {
		t.Errorf("a host socket path is visible: %q", r.stdout)
	}
	r = strict(t, repo, env, []string{"--net", "--egress", "stub=" + sock}, "true")
	if r.code == 0 || !strings.Contains(r.stderr, "raw relay") {
		t.Errorf("raw relay with --net: exit %d, stderr %q", r.code, r.stderr)
	}
	r = strict(t, repo, env, []string{"--egress", "anthropic"}, "true")
	if r.code == 0 || !strings.Contains(r.stderr, "no Claude login") {
		t.Errorf("a built-in backend without a host login: exit %d, stderr %q; want a refusal naming the missing login", r.code, r.stderr)
	}
}

// TestStrictNoHostSecretsByOtherChannels: PID 1's environment is the
// box's, not the host's; the session keyring is the box's own; no
// capability is left.
func TestStrictNoHostSecretsByOtherChannels(t *testing.T) {
	repo, _, env := strictRepo(t)
	// Credentials, the session keyring among them, belong to a thread: a
	// process without a session keyring that adds a key gets one on the
	// calling thread only, and a child forked from another thread of ours
	// would not have it (the control would fail, the check inside would
	// pass for nothing). So the key is added, and every child started,
	// from this one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	desc := fmt.Sprintf("aisan-strict-test-%d", time.Now().UnixNano())
	id, err := unix.AddKey("user", desc, []byte("host-secret"), unix.KEY_SPEC_SESSION_KEYRING)
	need(t, "a session keyring for the test user", err)
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	// Control: the key is found from a child outside.
	if r := runCmd(t, "", helperEnv("keyring"), "", self(), desc); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("control: the key is not found outside: %q %q", r.stdout, r.stderr)
	}
	env = append(env, "AISAN_TEST_HOST_SECRET=very-secret")
	r := strict(t, repo, env, helperOpts("keyring"), self(), desc)
	if got := strings.TrimSpace(r.stdout); got != "ENOKEY" {
		t.Errorf("the host session key from inside: %q (stderr %q), want ENOKEY", got, r.stderr)
	}
	r = strict(t, repo, env, nil, "sh", "-c", "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; grep CapEff /proc/self/status")
	if r.code != 0 || strings.Contains(r.stdout, "very-secret") || !strings.Contains(r.stdout, "AISAN_JAIL=") {
		t.Errorf("process environments inside: exit %d\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "CapEff:\t0000000000000000") {
		t.Errorf("capabilities left: %s", r.stdout)
	}
}

// TestStrictBindSpec: a bind spec's ro directory is visible and read-only,
// its path entry is on PATH, its env reaches the box, its tmpfs is empty
// and writable; an overlay is refused on this bwrap with the version
// needed.
func TestStrictBindSpec(t *testing.T) {
	repo, _, env := strictRepo(t)
	tools := t.TempDir()
	os.MkdirAll(filepath.Join(tools, "bin"), 0o755)
	os.WriteFile(filepath.Join(tools, "bin", "hello-tool"), []byte("#!/bin/sh\necho hello from the tool\n"), 0o755)
	dir := t.TempDir()
	spec := filepath.Join(dir, "b.toml")
	os.WriteFile(spec, []byte(fmt.Sprintf("ro = [%q]\npath = [%q]\ntmpfs = [\"/scratch-x\"]\nenv = [\"FROM_SPEC=yes\"]\n", tools, filepath.Join(tools, "bin"))), 0o600)
	r := strict(t, repo, env, []string{"--binds", spec, "--env", "FROM_FLAG=1"}, "sh", "-c",
		"hello-tool; echo $FROM_SPEC $FROM_FLAG; touch "+tools+"/x 2>/dev/null && echo TOOLS-WRITABLE; touch /scratch-x/y && ls /scratch-x")
	if r.code != 0 || r.stdout != "hello from the tool\nyes 1\ny\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	ov := filepath.Join(dir, "ov.toml")
	os.WriteFile(ov, []byte(fmt.Sprintf("overlay = [%q]\n", tools)), 0o600)
	r = strict(t, repo, env, []string{"--binds", ov}, "true")
	out, _ := exec.Command("bwrap", "--version").Output()
	if strings.Contains(string(out), " 0.8.") || strings.Contains(string(out), " 0.9.") {
		if r.code == 0 || !strings.Contains(r.stderr, "0.10.0") {
			t.Errorf("overlay on %s: exit %d, stderr %q", strings.TrimSpace(string(out)), r.code, r.stderr)
		}
	}
}

// modelStub serves a host Unix socket that refuses every HTTP request
// with 403 in the shape the clients read, so that a client pointed at it
// fails at once, showing the message, instead of waiting for a network.
func modelStub(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "aisan-model-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "model.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"type":"error","error":{"type":"permission_error","message":"no model in this test"}}`)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// TestStrictAgentsStartOffline: the real clients start in a strict box:
// --version works, and one non-interactive run fails cleanly for want of
// a model. Until the egress backends exist, codex and opencode are routed
// by a wrapper to a raw relay whose host side refuses every request; the
// backends will route them the same way, with a real answer.
func TestStrictAgentsStartOffline(t *testing.T) {
	for _, tc := range []struct {
		agent   string
		wrapper string // routes the client to $AISAN_EGRESS_MODEL
		run     []string
	}{
		{"claude", "", []string{"-p", "say hi"}},
		{"codex", `export AISAN_KEY=placeholder
exec %[1]q -c model_provider='"aisan"' -c model_providers.aisan.name='"aisan"' \
  -c model_providers.aisan.base_url="\"http://$AISAN_EGRESS_MODEL\"" -c model_providers.aisan.wire_api='"responses"' \
  -c model_providers.aisan.env_key='"AISAN_KEY"' -c model_providers.aisan.requires_openai_auth=false \
  -c model_providers.aisan.request_max_retries=0 -c model_providers.aisan.stream_max_retries=0 \
  -c model_providers.aisan.supports_websockets=false "$@"`, []string{"exec", "--skip-git-repo-check", "say hi"}},
		{"opencode", `export OPENCODE_CONFIG_CONTENT="{\"share\":\"disabled\",\"autoupdate\":false,\"provider\":{\"aisan\":{\"npm\":\"@ai-sdk/openai-compatible\",\"options\":{\"baseURL\":\"http://$AISAN_EGRESS_MODEL/v1\"},\"models\":{\"m\":{}}}},\"model\":\"aisan/m\",\"small_model\":\"aisan/m\"}"
export OPENCODE_AUTH_CONTENT='{"aisan":{"type":"api","key":"placeholder"}}'
exec %[1]q "$@"`, []string{"run", "say hi"}},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			bin := nodeBin(t, tc.agent)
			repo, home, _ := strictRepo(t)
			env := jailEnv(home, bin)
			v := runJailed(t, repo, env, tc.agent, "--strict", "--", "--version")
			if v.code != 0 || strings.TrimSpace(v.stdout) == "" {
				t.Fatalf("--version: exit %d, stdout %q", v.code, v.stdout)
			}
			opts := []string{tc.agent, "--strict"}
			if tc.wrapper != "" {
				wdir := t.TempDir()
				os.WriteFile(filepath.Join(wdir, tc.agent), []byte("#!/bin/sh\nset -e\n"+fmt.Sprintf(tc.wrapper, filepath.Join(bin, tc.agent))+"\n"), 0o755)
				spec := filepath.Join(wdir, "agent.toml")
				os.WriteFile(spec, []byte(fmt.Sprintf("ro = [%q]\n", filepath.Dir(bin))), 0o600)
				env = append(env, "PATH="+wdir+":"+bin+":"+os.Getenv("PATH"))
				opts = append(opts, "--binds", spec, "--egress", "model="+modelStub(t))
			}
			r := runJailed(t, repo, env, append(append(opts, "--"), tc.run...)...)
			t.Logf("stdout: %s", r.stdout)
			if r.code == 0 {
				t.Errorf("a run without a model succeeded: %q", r.stdout)
			}
			if r.took > 45*time.Second {
				t.Errorf("the run took %v: it should fail at once without a network", r.took)
			}
			if r.code > 128 || r.code < 0 {
				t.Errorf("the run did not exit by itself (status %d)", r.code)
			}
			if tc.wrapper != "" && !strings.Contains(r.stdout+r.stderr, "no model in this test") {
				t.Errorf("the refusal from the model stub was not shown")
			}
		})
	}
}

// TestStrictSubmodulePinned: a submodule's config and hooks are the box's
// copies (the host's stay as they were) and its gitdir pointer is
// read-only; committing inside it still works.
func TestStrictSubmodulePinned(t *testing.T) {
	repo, _, env := strictRepo(t)
	sub := worktree(t)
	hostGit(t, sub, env, "init", "-q")
	hostGit(t, sub, env, "commit", "-q", "--allow-empty", "-m", "sub")
	hostGit(t, repo, env, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	before, _ := os.ReadFile(filepath.Join(repo, ".git/modules/sub/config"))
	r := strict(t, repo, env, nil, "sh", "-c", `
for f in .git/modules/sub/config .git/modules/sub/hooks/post-commit; do echo x >> "$f"; done
if echo x >> sub/.git 2>/dev/null; then echo "WRITABLE sub/.git"; fi
cd sub && git commit -q --allow-empty -m "in the submodule" && echo sub-commit-ok`)
	if r.code != 0 || strings.Contains(r.stdout, "WRITABLE") || !strings.Contains(r.stdout, "sub-commit-ok") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(repo, ".git/modules/sub/config")); string(after) != string(before) {
		t.Errorf("the box's edit of the submodule's config reached it")
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git/modules/sub/hooks/post-commit")); err == nil {
		t.Errorf("the box's submodule hook reached the repository")
	}
	if !strings.Contains(r.stderr, ".git/modules/sub/hooks/post-commit") || !strings.Contains(r.stderr, ".git/modules/sub/config") {
		t.Errorf("the submodule's edits were not held: %q", r.stderr)
	}
}

// TestStrictExitStatusAndSignals: the agent's status comes back as in the
// deny-list jail, 128+N for a signal.
func TestStrictExitStatusAndSignals(t *testing.T) {
	repo, _, env := strictRepo(t)
	if r := strict(t, repo, env, nil, "sh", "-c", "exit 7"); r.code != 7 {
		t.Errorf("exit 7 came back as %d: %s", r.code, r.stderr)
	}
	if r := strict(t, repo, env, nil, "sh", "-c", "kill -TERM $$"); r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("death by SIGTERM came back as %d: %s", r.code, r.stderr)
	}
}

// TestStrictNetKeepsHostNetwork: with --net the box is in the host's
// network namespace (the same interfaces), the launch warns what that
// exposes, and credential files stay unmounted. No packet is sent.
func TestStrictNetKeepsHostNetwork(t *testing.T) {
	repo, home, env := strictRepo(t)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "auth.json"), []byte("{}"), 0o600)
	ifaces := func(procNetDev string) []string {
		var out []string
		for _, line := range strings.Split(procNetDev, "\n")[2:] {
			if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				out = append(out, name)
			}
		}
		return out
	}
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	r := strict(t, repo, env, []string{"--net"}, "sh", "-c", "cat /proc/net/dev; test -e "+filepath.Join(home, ".codex", "auth.json")+" && echo CREDENTIAL-VISIBLE; true")
	if r.code != 0 || strings.Contains(r.stdout, "CREDENTIAL-VISIBLE") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got, want := strings.Join(ifaces(r.stdout), " "), strings.Join(ifaces(string(host)), " "); got != want {
		t.Errorf("interfaces inside %q, on the host %q", got, want)
	}
	if !strings.Contains(r.stderr, "aisan: warning: --net: this box shares the host's network") || !strings.Contains(r.stderr, "abstract-namespace sockets") {
		t.Errorf("no --net warning: %q", r.stderr)
	}
}

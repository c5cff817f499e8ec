package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The trust tests plant, from inside a real strict box, what the next box
// would be defined by: the bind spec and the egress file a project keeps in
// its repository, which the box can write. The next launch with the same
// files must refuse, name the file, show the change and run nothing, until
// the user approves it ('aisan trust').

// refusedLaunch checks that a launch was refused for file, with the hint,
// and ran nothing: the box would have made ran in the repository.
func refusedLaunch(t *testing.T, what string, r result, repo string, wants ...string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("%s: the launch was not refused: stdout %q, stderr %q", what, r.stdout, r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%s: stderr lacks %q:\n%s", what, w, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "ran")); err == nil {
		t.Errorf("%s: the box ran although the launch was refused", what)
	}
	if strings.Contains(r.stdout, "hunter2") {
		t.Errorf("%s: the box got the host's secret: %q", what, r.stdout)
	}
}

// TestTrustBindSpecInRepo: a bind spec kept in the repository (and its
// include) needs approval; a box that adds a host secret by name and a
// writable host file to it gets the next launch refused with the diff;
// approving the change lets it through.
func TestTrustBindSpecInRepo(t *testing.T) {
	repo, home, env := strictRepo(t)
	tools := filepath.Join(home, "tools")
	// A plain data file: one the host runs (~/.bashrc) is refused even
	// when approved (TestStrictHostExecRefused).
	notes := filepath.Join(home, "notes.txt")
	os.Mkdir(tools, 0o755)
	os.WriteFile(notes, []byte("the user's\n"), 0o644)
	spec := filepath.Join(repo, "aisan.toml")
	inc := filepath.Join(repo, "inc.toml")
	os.WriteFile(spec, []byte("include = [\"inc.toml\"]\n"), 0o644)
	os.WriteFile(inc, []byte(fmt.Sprintf("ro = [%q]\n", tools)), 0o644)
	binds := []string{"--binds", "aisan.toml"}
	env = append(env, "HOST_SECRET=hunter2")
	touch := []string{"sh", "-c", "touch ran; echo \"secret=$HOST_SECRET\""}

	r := strict(t, repo, env, binds, touch...)
	refusedLaunch(t, "a spec never approved", r, repo,
		"aisan: error: bind spec "+spec+" lies where a strict box can write ("+repo+": ", "and you have not approved it\n",
		"aisan: hint: read it; if it is what you want, approve this content: aisan trust "+spec)
	if r := aisanIn(t, repo, env, "", "trust", "aisan.toml", "inc.toml"); r.code != 0 {
		t.Fatalf("aisan trust: %d %s", r.code, r.stderr)
	}

	// The box plants, as an agent asked to "fix the build" might.
	plant := fmt.Sprintf(`printf 'env = ["HOST_SECRET"]\nrw = [%q]\n' >> inc.toml && echo planted`, notes)
	if r := strict(t, repo, env, binds, "sh", "-c", plant); r.code != 0 || r.stdout != "planted\n" {
		t.Fatalf("the approved launch: %d %q %q", r.code, r.stdout, r.stderr)
	}
	slots := len(slotList(t, env))
	r = strict(t, repo, env, binds, touch...)
	refusedLaunch(t, "an include the box changed", r, repo,
		"aisan: error: bind spec "+inc+" lies where a strict box can write", "has changed since you approved it on ",
		"\n+env = [\"HOST_SECRET\"]\n", fmt.Sprintf("\n+rw = [%q]\n", notes),
		"aisan: hint: read the change; if it is what you want, approve this content: aisan trust "+inc)
	if n := len(slotList(t, env)); n != slots {
		t.Errorf("the refused launch left %d slots, want %d: it must not start", n, slots)
	}

	// The user reads the change and approves it: it applies.
	if r := aisanIn(t, repo, env, "", "trust", "inc.toml"); r.code != 0 {
		t.Fatalf("aisan trust: %d %s", r.code, r.stderr)
	}
	r = strict(t, repo, env, binds, "sh", "-c", "echo \"secret=$HOST_SECRET\"")
	if r.code != 0 || r.stdout != "secret=hunter2\n" {
		t.Errorf("after approving: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestTrustRemembersWritable: a spec in a directory an earlier box was
// given read-write (not this launch's repository) needs approval too.
func TestTrustRemembersWritable(t *testing.T) {
	repo, home, env := strictRepo(t)
	shared := filepath.Join(home, "shared")
	cfg := filepath.Join(home, ".config", "aisan")
	os.MkdirAll(shared, 0o755)
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "a.toml"), []byte(fmt.Sprintf("rw = [%q]\n", shared)), 0o600)
	planted := filepath.Join(shared, "b.toml")
	r := strict(t, repo, env, []string{"--binds", filepath.Join(cfg, "a.toml")}, "sh", "-c", fmt.Sprintf(`printf 'env = ["HOST_SECRET"]\n' > %q`, planted))
	if r.code != 0 {
		t.Fatalf("the box with a writable shared directory: %d %q", r.code, r.stderr)
	}
	other := worktree(t)
	hostGit(t, other, env, "init", "-q")
	r = strict(t, other, append(env, "HOST_SECRET=hunter2"), []string{"--binds", planted}, "sh", "-c", "touch ran; echo $HOST_SECRET")
	refusedLaunch(t, "a spec where an earlier box wrote", r, other,
		"aisan: error: bind spec "+planted+" lies where a strict box can write ("+shared+": given read-write to a strict box)")
}

// TestTrustEgressFileInRepo: an egress file kept in the repository needs
// approval; a box that swaps its token_command gets the next launch
// refused with the diff, and the host never runs the box's command (the
// next box's call would have made it run).
func TestTrustEgressFileInRepo(t *testing.T) {
	repo, _, env := strictRepo(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "rbe.test")
	up := startGRPCUpstream(t, ca)
	helper := filepath.Join(dir, "token")
	os.WriteFile(helper, []byte("#!/bin/sh\necho host-token\n"), 0o755)
	pwned := filepath.Join(dir, "pwned")
	conf := filepath.Join(repo, "rbe.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf("upstream = %q\ninstance = \"projects/p/instances/default\"\ntoken_command = %q\n", up.addr, helper)), 0o644)
	env = append(env, "SSL_CERT_FILE="+ca.pemPath)
	opts := append(helperOpts("grpc-call"), "--egress", "reapi=rbe.toml")
	call := "caps=/build.bazel.remote.execution.v2.Capabilities/GetCapabilities@projects/p/instances/default"

	r := strict(t, repo, env, opts, self(), call)
	refusedLaunch(t, "an egress file never approved", r, repo,
		"egress file "+conf+" lies where a strict box can write", "aisan trust "+conf)
	aisanIn(t, repo, env, "", "trust", "rbe.toml")
	if r := strict(t, repo, env, opts, self(), call); !strings.Contains(r.stdout, "caps: code=0") {
		t.Fatalf("the approved launch: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// The box swaps the token command for its own.
	evil := fmt.Sprintf(`token_command = "/bin/sh -c 'touch %s; echo x'"`, pwned)
	plant := fmt.Sprintf(`grep -v '^token_command' rbe.toml > t && printf '%%s\n' %q >> t && mv t rbe.toml && echo planted`, evil)
	if r := strict(t, repo, env, []string{"--egress", "reapi=rbe.toml"}, "sh", "-c", plant); r.stdout != "planted\n" {
		t.Fatalf("planting: %d %q %q", r.code, r.stdout, r.stderr)
	}
	calls := len(up.seen())
	r = strict(t, repo, env, opts, self(), call)
	refusedLaunch(t, "an egress file the box changed", r, repo,
		"egress file "+conf+" lies where a strict box can write", "has changed since you approved it",
		"\n-token_command = "+fmt.Sprintf("%q", helper)+"\n", "\n+"+evil+"\n", "aisan trust "+conf)
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the host ran the box's token_command")
	}
	if n := len(up.seen()); n != calls {
		t.Errorf("the upstream saw %d more calls", n-calls)
	}
}

// TestTrustCredentialSourceInRepo: a token_command program or a
// token_file in the repository is refused even when approved: the host
// runs or reads it while the box lives.
func TestTrustCredentialSourceInRepo(t *testing.T) {
	repo, _, env := strictRepo(t)
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	prog := filepath.Join(repo, "token.sh")
	os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+pwned+"\necho t\n"), 0o755)
	tok := filepath.Join(repo, "token")
	os.WriteFile(tok, []byte("t0ken\n"), 0o600)
	for _, tc := range []struct{ name, cred, want string }{
		{"program", fmt.Sprintf("token_command = %q", prog), "the token_command program in egress file"},
		{"argument", fmt.Sprintf("token_command = %q", "/bin/sh "+prog), "a token_command argument in egress file"},
		{"file", fmt.Sprintf("token_file = %q", tok), "token_file in egress file"},
	} {
		conf := filepath.Join(dir, tc.name+".toml")
		os.WriteFile(conf, []byte("upstream = \"127.0.0.1:1\"\ninstance = \"i\"\n"+tc.cred+"\n"), 0o600)
		aisanIn(t, repo, env, "", "trust", prog, tok)
		r := strict(t, repo, env, []string{"--egress", "reapi=" + conf}, "sh", "-c", "touch ran")
		refusedLaunch(t, tc.name, r, repo, tc.want, "lies where a strict box can write ("+repo+": ", "never uses one from there",
			"aisan: hint: move it where no box is given read-write")
		if strings.Contains(r.stderr, "t0ken") {
			t.Errorf("%s: the refusal shows the token", tc.name)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the host ran the token_command program from the repository")
	}
}

// TestTrustSealedProgramWithLinks: a token_command program with a second
// hard link is run when no box can write it by any name (another user's,
// writable by no group or other, as Debian's perl is: perl and
// perl5.N.N are one file), and refused when it is the user's own, whose
// other name may lie anywhere.
func TestTrustSealedProgramWithLinks(t *testing.T) {
	repo, _, env := strictRepo(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "rbe.test")
	up := startGRPCUpstream(t, ca)
	env = append(env, "SSL_CERT_FILE="+ca.pemPath)
	sealed := sealedLinkedProgram(t)
	own := filepath.Join(dir, "token")
	os.WriteFile(own, []byte("#!/bin/sh\necho own-token\n"), 0o755)
	if err := os.Link(own, filepath.Join(dir, "token.again")); err != nil {
		t.Fatal(err)
	}
	call := "caps=/build.bazel.remote.execution.v2.Capabilities/GetCapabilities@i"
	for _, tc := range []struct {
		name, file, command string
		refused             bool
	}{
		{"another user's", "sealed.toml", sealed.command, false},
		{"the user's own", "own.toml", own, true},
	} {
		conf := filepath.Join(dir, tc.file)
		os.WriteFile(conf, []byte(fmt.Sprintf("upstream = %q\ninstance = \"i\"\ntoken_command = %q\n", up.addr, tc.command)), 0o600)
		r := strict(t, repo, env, append(helperOpts("grpc-call"), "--egress", "reapi="+conf), self(), call)
		if tc.refused {
			refusedLaunch(t, tc.name, r, repo, "the token_command program in egress file "+conf,
				"lies where a strict box can write ("+dir+": a file with 2 hard links")
			continue
		}
		if r.code != 0 || !strings.Contains(r.stdout, "caps: code=0") {
			t.Fatalf("%s (%s, %d links): exit %d, stdout %q, stderr %q", tc.name, sealed.path, sealed.links, r.code, r.stdout, r.stderr)
		}
		if seen := up.seen(); len(seen) != 1 || !strings.HasSuffix(seen[0], " Bearer sealed-token") {
			t.Errorf("%s: the upstream saw %q; want one call with the token the program printed", tc.name, seen)
		}
	}
}

// linkedProgram is a program the test user cannot write, with more than
// one hard link, and a token_command that runs it to print sealed-token.
type linkedProgram struct {
	path, command string
	links         uint64
}

// sealedLinkedProgram finds such a program among the system's: Debian
// installs perl under two names of one file.
func sealedLinkedProgram(t *testing.T) linkedProgram {
	t.Helper()
	for _, c := range []struct{ path, args string }{
		{"/usr/bin/perl", `-e 'print "sealed-token\n"'`},
		{"/usr/bin/dash", `-c 'echo sealed-token'`},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Nlink > 1 && int(st.Uid) != os.Geteuid() && fi.Mode().Perm()&0o022 == 0 {
			return linkedProgram{path: c.path, command: c.path + " " + c.args, links: uint64(st.Nlink)}
		}
	}
	need(t, "a system program with a second hard link (Debian's /usr/bin/perl)", errors.New("none found"))
	return linkedProgram{}
}

// TestTrustStoreOutOfReach: nothing in a deny-list jail or a strict box
// (whose bind spec even names the trust directory read-write) can approve
// a file by writing aisan's trust store.
func TestTrustStoreOutOfReach(t *testing.T) {
	repo, home, env := strictRepo(t)
	store := filepath.Join(home, ".aisan", "trust")
	os.MkdirAll(filepath.Join(store, "approved"), 0o700)
	cfg := filepath.Join(t.TempDir(), "rw-trust.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("rw = [%q]\n", store)), 0o600)
	try := fmt.Sprintf(`for f in %[1]s/approved/x.json %[1]s/writable.json; do (echo '{}' > "$f") 2>/dev/null && echo "wrote $f"; done; echo tried`, store)
	r := strict(t, repo, env, []string{"--binds", cfg}, "sh", "-c", try)
	if r.stdout != "tried\n" {
		t.Errorf("a strict box with the trust directory in its bind spec: %q %q", r.stdout, r.stderr)
	}
	r = aisanIn(t, repo, env, "", "run", "--", "sh", "-c", try)
	if r.stdout != "tried\n" {
		t.Errorf("a deny-list jail: %q %q", r.stdout, r.stderr)
	}
	// Nor by running aisan trust there.
	os.WriteFile(filepath.Join(repo, "aisan.toml"), []byte("ro = []\n"), 0o644)
	r = aisanIn(t, repo, env, "", "run", "--", "sh", "-c", `"$0" trust aisan.toml; echo "status=$?"`, aisanBin)
	if !strings.Contains(r.stdout, "status=1") || strings.Contains(r.stdout, "trusted") {
		t.Errorf("aisan trust in a deny-list jail: %q %q; want it refused", r.stdout, r.stderr)
	}
	if r := aisanIn(t, repo, env, "", "trust", "--list"); strings.Contains(r.stdout, "aisan.toml") {
		t.Errorf("after aisan trust in a jail, the host lists:\n%s", r.stdout)
	}
}

package tests

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictRawRelayBoxLink: a raw relay named by a path in the
// repository (a project's own service socket) is what the box reaches.
// The box writes the repository, so it can move the socket's directory
// aside and leave a symbolic link at that path to another socket of the
// user's (an agent's, a container engine's), outside every box. The
// user's next launch with the same --egress must not relay that socket:
// it is refused, naming the link.
func TestStrictRawRelayBoxLink(t *testing.T) {
	repo, home, env := strictRepo(t)
	serve := func(p, msg string) {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(msg + "\n"))
				c.Close()
			}
		}()
	}
	os.MkdirAll(filepath.Join(repo, ".run"), 0o755)
	db := filepath.Join(repo, ".run", "db.sock")
	agent := filepath.Join(home, "agent.sock")
	serve(db, "the project's service")
	serve(agent, "the user's agent, outside the box")
	read := `P=$AISAN_EGRESS_DB; exec 3<>/dev/tcp/127.0.0.1/${P##*:} && head -n1 <&3`
	opts := []string{"--egress", "db=" + db}

	r := strict(t, repo, env, opts, "bash", "-c", read+`; mv .run .run-moved && mkdir .run && ln -s `+agent+` .run/db.sock && echo planted`)
	if !strings.Contains(r.stdout, "the project's service") || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the first launch: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = strict(t, repo, env, opts, "bash", "-c", read)
	if strings.Contains(r.stdout, "outside the box") {
		t.Errorf("the next launch relayed the socket the box's link points at: %q", r.stdout)
	}
	if r.code == 0 || !strings.Contains(r.stderr, filepath.Join(repo, ".run", "db.sock")) || !strings.Contains(r.stderr, "where a box writes") {
		t.Errorf("the next launch: code %d, stderr %q; want it refused, naming the link", r.code, r.stderr)
	}
}

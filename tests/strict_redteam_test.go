package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The red-team tests attack a real strict box's runtime surfaces from
// inside, as an agent that wanted out would.

// lineStub serves a host Unix socket that answers each line with
// "host-socket:" and the line.
func lineStub(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "aisan-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "host.sock")
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
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "host-socket:%s\n", sc.Text())
				}
			}()
		}
	}()
	return sock
}

// TestRTStrictCallerDescriptors: a strict box "starts from nothing of
// the host's" (PassFDs false), yet every descriptor the launching
// process holds open without close-on-exec reaches the agent: here a
// connection to a host Unix socket (which the box then talks through,
// a host service outside its egress list) and a host file the box's
// mounts do not show. An IDE, terminal multiplexer or orchestrating
// agent that leaks a descriptor into the shell that runs 'aisan claude
// --strict' hands it to the box.
func TestRTStrictCallerDescriptors(t *testing.T) {
	repo, home, env := strictRepo(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "host-secret.txt")
	os.WriteFile(secret, []byte("host-secret-value\n"), 0o600)
	sf, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	c, err := net.Dial("unix", lineStub(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cf, err := c.(*net.UnixConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	_ = home
	script := `ls -l /proc/self/fd | sed 's/^/fd: /'; cat /proc/self/fd/39 2>&1; echo ping >&40 && { read -t 3 l <&40; echo "said: $l"; }`
	cmd := exec.Command(aisanBin, "run", "--strict", "--", "bash", "-c", script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), append(env, "AISAN_NO_SCOPE=1")...)
	extra := make([]*os.File, 38)
	extra[36], extra[37] = sf, cf // descriptors 39 and 40
	cmd.ExtraFiles = extra
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	isolate(cmd)
	cmd.Run()
	t.Logf("box said:\n%s\nstderr: %s", out.String(), errb.String())
	if strings.Contains(out.String(), "host-secret-value") {
		t.Errorf("the box read a host file through a descriptor its launcher held")
	}
	if strings.Contains(out.String(), "host-socket:ping") {
		t.Errorf("the box talked to a host Unix socket through a descriptor its launcher held")
	}
}

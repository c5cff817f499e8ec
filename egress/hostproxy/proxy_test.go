package hostproxy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/jail/jailtest"
)

func hello(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello from %s %s", r.Host, r.URL.Path)
}

// TestRefusals drives the proxy socket with raw requests, as an attacker
// in the box would: each refusal is a 403 (502 for a host-side failure)
// with one line of reason, and one audit entry.
func TestRefusals(t *testing.T) {
	port := serve(t, http.HandlerFunc(hello), nil)
	sink := &memSink{}
	ps := fmt.Sprint(port)
	sock, _ := startProxy(t, []string{"loop.test", "*.wild.test", "exact.test:" + ps, "unmapped.test:" + ps, "own.test"},
		"loop.test=127.0.0.1,a.wild.test=::ffff:127.0.0.1,exact.test=127.0.0.1,other.test=127.0.0.1,zero.test=0.0.0.0,own.test=203.0.113.77", sink)
	cases := []struct {
		why, req, status, body, method, path string
	}{
		{"a name not on the list", "CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n", "403",
			`aisan: other.test:443 is not on this box's host allow-list; to allow it, start the box with --allow-host other.test (or allow_hosts = ["other.test"] in a bind spec)`, "CONNECT", "other.test:443"},
		{"a listed name on a port it does not allow", "CONNECT loop.test:" + ps + " HTTP/1.1\r\n\r\n", "403",
			"--allow-host loop.test:" + ps + " ", "CONNECT", "loop.test:" + ps},
		{"a bare name resolving to loopback", "CONNECT loop.test:443 HTTP/1.1\r\n\r\n", "403",
			"aisan: loop.test resolves only to loopback addresses, allowed only when named exactly with the port; to allow it, start the box with --allow-host loop.test:443", "CONNECT", "loop.test:443"},
		{"a wildcard name resolving to mapped loopback", "CONNECT a.wild.test:443 HTTP/1.1\r\n\r\n", "403",
			"a.wild.test resolves only to loopback addresses", "CONNECT", "a.wild.test:443"},
		{"plain HTTP to a bare name resolving to loopback", "GET http://loop.test/ HTTP/1.1\r\nHost: loop.test\r\n\r\n", "403",
			"loop.test resolves only to loopback", "GET", "loop.test:80"},
		{"the host's own address", "CONNECT own.test:443 HTTP/1.1\r\n\r\n", "403",
			"this host's own", "CONNECT", "own.test:443"},
		{"the loopback address itself", "CONNECT 127.0.0.1:" + ps + " HTTP/1.1\r\n\r\n", "403",
			"127.0.0.1:" + ps + " is not on this box's host allow-list", "CONNECT", "127.0.0.1:" + ps},
		{"a Host header does not steer the decision", "GET http://other.test:" + ps + "/ HTTP/1.1\r\nHost: exact.test:" + ps + "\r\n\r\n", "403",
			"other.test:" + ps + " is not on", "GET", "other.test:" + ps},
		{"origin-form", "GET / HTTP/1.1\r\nHost: exact.test:" + ps + "\r\n\r\n", "403",
			"not a proxy request", "GET", "exact.test:" + ps},
		{"https absolute-form", "GET https://exact.test:" + ps + "/ HTTP/1.1\r\n\r\n", "403",
			"https:// requests are not proxied", "GET", "exact.test:" + ps},
		{"an http: URL without a host", "GET http:exact.test:" + ps + "/ HTTP/1.1\r\n\r\n", "403",
			"has no host", "GET", ""},
		{"a transfer coding the proxy cannot pass on", "POST http://exact.test:" + ps + "/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "403",
			"unsupported transfer encoding", "-", "-"},
		{"not HTTP at all", "\x16\x03\x01\x02\x00garbage\r\n\r\n", "403",
			"not an HTTP proxy request", "-", "-"},
		{"a raw TCP-style line", "SSH-2.0-OpenSSH_9.2\r\n\r\n", "403",
			"not an HTTP proxy request", "-", "-"},
		{"a CONNECT without a port", "CONNECT exact.test HTTP/1.1\r\n\r\n", "403",
			`bad target "exact.test": no port`, "CONNECT", "exact.test"},
		{"a listed name the host cannot resolve", "CONNECT unmapped.test:" + ps + " HTTP/1.1\r\n\r\n", "502",
			"cannot resolve unmapped.test on the host", "CONNECT", "unmapped.test:" + ps},
	}
	for _, c := range cases {
		sink.reset()
		got := raw(t, sock, c.req)
		status, body, _ := strings.Cut(got, "\r\n\r\n")
		if !strings.HasPrefix(status, "HTTP/1.1 "+c.status+" ") || !strings.Contains(body, c.body) ||
			strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "\n") {
			t.Errorf("%s: answer\n%s\nwant %s with %q on one line", c.why, got, c.status, c.body)
			continue
		}
		e := sink.waitFor(t, c.method, c.path)
		if fmt.Sprint(e.Status) != c.status || e.Backend != "hosts" || e.Refused == "" || !strings.Contains("aisan: "+e.Refused+"\n", c.body) {
			t.Errorf("%s: audit %+v", c.why, e)
		}
		if n := sink.len(); n != 1 {
			t.Errorf("%s: %d audit entries, want 1", c.why, n)
		}
	}
	// An exactly named loopback host does work, for both kinds of request.
	if got := raw(t, sock, "GET http://exact.test:"+ps+"/x HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic eA==\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.HasSuffix(got, "hello from exact.test:"+ps+" /x") {
		t.Errorf("plain HTTP to an exact pattern:\n%s", got)
	}
	// A connection that sends nothing is no decision.
	sink.reset()
	c, _ := net.Dial("unix", sock)
	c.Close()
	raw(t, sock, "CONNECT other.test:443 HTTP/1.1\r\n\r\n")
	if sink.waitFor(t, "CONNECT", "other.test:443"); sink.len() != 1 {
		t.Errorf("empty connection logged: %d entries", sink.len())
	}
}

// TestGoClientThroughTunnel: the client's own TLS, verified against the
// test CA for the mapped name, end to end through a CONNECT tunnel; the
// audit line lands in a real log file.
func TestGoClientThroughTunnel(t *testing.T) {
	ca := newCA(t)
	port := serve(t, http.HandlerFunc(hello), ca.serverConfig(t, "registry.test"))
	logPath := filepath.Join(t.TempDir(), "egress.log")
	f, err := audit.Open(logPath)
	must(t, err)
	sock, _ := startProxy(t, []string{hostPort("registry.test", port)}, "registry.test=127.0.0.1", f)
	proxyURL, _ := url.Parse("http://" + tcpRelay(t, sock))
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	resp, err := cl.Get("https://" + hostPort("registry.test", port) + "/pkg")
	must(t, err, "GET through the proxy")
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if want := "hello from " + hostPort("registry.test", port) + " /pkg"; body.String() != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	cl.CloseIdleConnections()
	// Wait for the tunnel's line, then read the file.
	for range 500 {
		if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte(`"status":200`)) {
			break
		}
		sleepMS(10)
	}
	f.Close()
	b, err := os.ReadFile(logPath)
	must(t, err)
	var e audit.Entry
	must(t, json.Unmarshal(bytes.TrimSpace(b), &e), "audit line", string(b))
	if e.Backend != "hosts" || e.Method != "CONNECT" || e.Path != hostPort("registry.test", port) || e.Status != 200 || e.Refused != "" || e.BytesUp == 0 || e.BytesDown == 0 {
		t.Fatalf("audit line %+v", e)
	}
}

// TestCurl: curl in a namespace with only loopback, given nothing but the
// box env and the CA, fetches over HTTPS and plain HTTP, and is refused a
// name not on the list.
func TestCurl(t *testing.T) {
	ca := newCA(t)
	tport := serve(t, http.HandlerFunc(hello), ca.serverConfig(t, "registry.test"))
	hport := serve(t, http.HandlerFunc(hello), nil)
	sink := &memSink{}
	sock, _ := startProxy(t, []string{hostPort("registry.test", tport), hostPort("plain.test", hport)},
		"registry.test=127.0.0.1,plain.test=127.0.0.1,other.test=127.0.0.1", sink)
	env := boxEnv(t, "CURL_CA_BUNDLE="+ca.file)
	u := "https://" + hostPort("registry.test", tport) + "/a"
	out, err := inBox(t, sock, env, "curl", "-sS", "--fail", "--max-time", "20", u)
	if err != nil || out != "hello from "+hostPort("registry.test", tport)+" /a" {
		t.Fatalf("curl %s: %v\n%s", u, err, out)
	}
	sink.waitFor(t, "CONNECT", hostPort("registry.test", tport))
	u = "http://" + hostPort("plain.test", hport) + "/b"
	out, err = inBox(t, sock, env, "curl", "-sS", "--fail", "--max-time", "20", u)
	if err != nil || out != "hello from "+hostPort("plain.test", hport)+" /b" {
		t.Fatalf("curl %s: %v\n%s", u, err, out)
	}
	if e := sink.waitFor(t, "GET", hostPort("plain.test", hport)); e.Status != 200 {
		t.Fatalf("audit %+v", e)
	}
	u = "https://" + hostPort("other.test", tport) + "/"
	out, err = inBox(t, sock, env, "curl", "-sS", "--max-time", "20", u)
	if err == nil || !strings.Contains(out, "403") {
		t.Fatalf("curl %s was not refused: %v\n%s", u, err, out)
	}
	if e := sink.waitFor(t, "CONNECT", hostPort("other.test", tport)); e.Status != 403 {
		t.Fatalf("audit %+v", e)
	}
	// NO_PROXY keeps loopback (the model relays) direct: nothing listens on
	// port 1 in the box, so curl fails to connect instead of asking us.
	sink.reset()
	out, err = inBox(t, sock, env, "curl", "-sS", "--max-time", "5", "http://127.0.0.1:1/")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 || sink.len() != 0 {
		t.Fatalf("curl to the box's loopback went through the proxy (%v, %d audit entries):\n%s", err, sink.len(), out)
	}
	// Without the proxy the box reaches nothing at all: no route, no DNS.
	out, err = inBox(t, sock, []string{"CURL_CA_BUNDLE=" + ca.file}, "curl", "-sS", "--max-time", "5", "https://"+hostPort("127.0.0.1", tport)+"/")
	if err == nil {
		t.Fatalf("the namespace reached the host's loopback directly:\n%s", out)
	}
}

// TestGitClone: git clone over HTTPS from git http-backend, through the
// proxy, trusting the test CA through GIT_SSL_CAINFO.
func TestGitClone(t *testing.T) {
	for _, tool := range []string{"git"} {
		_, err := exec.LookPath(tool)
		jailtest.Need(t, tool, err)
	}
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	_, err := os.Stat(backend)
	jailtest.Need(t, "git-http-backend", err)
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gitEnv := []string{"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "PATH=" + os.Getenv("PATH")}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.MkdirAll(work, 0o755))
	git(work, "init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(work, "README"), []byte("through the allow-list\n"), 0o644))
	git(work, "add", "README")
	git(work, "commit", "-qm", "first")
	git(root, "clone", "-q", "--bare", work, filepath.Join(root, "srv", "repo.git"))
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Join(root, "srv"), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}}
	ca := newCA(t)
	port := serve(t, h, ca.serverConfig(t, "git.test"))
	sink := &memSink{}
	sock, _ := startProxy(t, []string{hostPort("git.test", port)}, "git.test=127.0.0.1", sink)
	dest := filepath.Join(t.TempDir(), "clone")
	u := "https://" + hostPort("git.test", port) + "/repo.git"
	out, err := inBox(t, sock, boxEnv(t, "GIT_SSL_CAINFO="+ca.file, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"), "git", "clone", "-q", u, dest)
	if err != nil {
		t.Fatalf("git clone %s: %v\n%s", u, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dest, "README"))
	if err != nil || string(b) != "through the allow-list\n" {
		t.Fatalf("cloned README: %q, %v", b, err)
	}
	if e := sink.waitFor(t, "CONNECT", hostPort("git.test", port)); e.Status != 200 {
		t.Fatalf("audit %+v", e)
	}
}

// npmRegistry serves one package, the way a registry does: a packument
// naming the tarball's URL and integrity, and the tarball.
func npmRegistry(t *testing.T, base, name string) http.Handler {
	t.Helper()
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	files := map[string]string{
		"package/package.json": fmt.Sprintf(`{"name":%q,"version":"1.0.0","main":"index.js"}`, name),
		"package/index.js":     "module.exports = 'fetched through the allow-list';\n",
	}
	for _, n := range []string{"package/package.json", "package/index.js"} {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[n]))
	}
	tw.Close()
	gz.Close()
	sum := sha512.Sum512(tgz.Bytes())
	tarPath := "/" + name + "/-/" + name + "-1.0.0.tgz"
	pack, _ := json.Marshal(map[string]any{
		"name":      name,
		"dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": name, "version": "1.0.0",
			"dist": map[string]string{"tarball": base + tarPath, "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])},
		}},
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + name:
			w.Header().Set("Content-Type", "application/json")
			w.Write(pack)
		case tarPath:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tgz.Bytes())
		default:
			http.NotFound(w, r)
		}
	})
}

// TestNpmInstall: npm, told only the box env, a registry URL and the CA,
// installs a package from a loopback registry stand-in.
func TestNpmInstall(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		if _, e := os.Stat("/opt/aisan-test-npm/bin/npm"); e == nil {
			npm, err = "/opt/aisan-test-npm/bin/npm", nil
		}
	}
	jailtest.Need(t, "npm", err)
	ca := newCA(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	base := "https://" + hostPort("registry.test", port)
	srv := &http.Server{Handler: npmRegistry(t, base, "aisan-probe-pkg"), TLSConfig: ca.serverConfig(t, "registry.test")}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	sink := &memSink{}
	sock, _ := startProxy(t, []string{hostPort("registry.test", port)}, "registry.test=127.0.0.1", sink)
	proj := t.TempDir()
	must(t, os.WriteFile(filepath.Join(proj, "package.json"), []byte(`{"name":"probe","version":"0.0.0","private":true}`), 0o644))
	env := boxEnv(t,
		"npm_config_registry="+base+"/", "npm_config_cafile="+ca.file, "npm_config_cache="+t.TempDir(),
		"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false", "npm_config_loglevel=error")
	out, err := inBox(t, sock, env, npm, "install", "--prefix", proj, "aisan-probe-pkg")
	if err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(proj, "node_modules", "aisan-probe-pkg", "index.js"))
	if err != nil || !strings.Contains(string(b), "fetched through the allow-list") {
		t.Fatalf("installed package: %q, %v\n%s", b, err, out)
	}
	if e := sink.waitFor(t, "CONNECT", hostPort("registry.test", port)); e.Status != 200 {
		t.Fatalf("audit %+v", e)
	}
}

// TestClientsAndTheProxyVariables backs the package doc's list: with the
// box env alone, node's built-in fetch and its http module ignore the
// proxy (so in the box they cannot even look the name up), while curl and
// Python's urllib (what pip builds on) go through it.
func TestClientsAndTheProxyVariables(t *testing.T) {
	port := serve(t, http.HandlerFunc(hello), nil)
	sink := &memSink{}
	sock, _ := startProxy(t, []string{hostPort("plain.test", port)}, "plain.test=127.0.0.1", sink)
	u := "http://" + hostPort("plain.test", port) + "/"
	cases := []struct {
		name    string
		argv    []string
		proxied bool
	}{
		{"node fetch", []string{"node", "-e", `fetch(process.argv[1]).then(r => r.text()).then(t => console.log(t), e => { console.log("FAILED " + (e.cause && e.cause.code || e)); process.exit(3) })`, u}, false},
		{"node http", []string{"node", "-e", `require("http").get(process.argv[1], r => r.pipe(process.stdout)).on("error", e => { console.log("FAILED " + e.code); process.exit(3) })`, u}, false},
		{"curl", []string{"curl", "-sS", "--max-time", "10", u}, true},
		{"python urllib", []string{"python3", "-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())", u}, true},
	}
	for _, c := range cases {
		sink.reset()
		out, err := inBox(t, sock, boxEnv(t), c.argv...)
		went := err == nil && strings.HasPrefix(out, "hello from")
		if went != c.proxied || went != (sink.len() == 1) {
			t.Errorf("%s: proxied=%v (want %v), %d audit entries, %v\n%s", c.name, went, c.proxied, sink.len(), err, out)
		}
		t.Logf("%s in the box: %s", c.name, strings.TrimSpace(out))
	}
}

// TestEarlyBytesAndHalfClose: bytes sent right behind the CONNECT head
// reach the server, and a client that shuts its write side still gets the
// whole answer.
func TestEarlyBytesAndHalfClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := new(bytes.Buffer)
		b.ReadFrom(c) // until the client's half-close
		c.Write(bytes.ToUpper(b.Bytes()))
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sock, _ := startProxy(t, []string{hostPort("echo.test", port)}, "echo.test=127.0.0.1", &memSink{})
	c, err := net.Dial("unix", sock)
	must(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\nearly ", hostPort("echo.test", port))
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200 ") {
		t.Fatalf("CONNECT answer %q", line)
	}
	br.ReadString('\n')
	c.Write([]byte("late"))
	c.(*net.UnixConn).CloseWrite()
	rest := new(bytes.Buffer)
	rest.ReadFrom(br)
	if rest.String() != "EARLY LATE" {
		t.Fatalf("echo %q", rest)
	}
}

// TestHeadLimits: a request head that never ends, or ends too slowly, is
// refused with its own reason rather than held open.
func TestHeadLimits(t *testing.T) {
	sink := &memSink{}
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	must(t, err)
	p := New(Config{Audit: sink, HeaderTimeout: 300 * time.Millisecond, Resolver: Overrides{}.Then(nil)})
	go p.Serve(ln)
	defer p.Close()
	sock := filepath.Join(dir, "s")
	got := raw(t, sock, "CONNECT a.test:443 HTTP/1.1\r\nX: "+strings.Repeat("x", 70<<10)+"\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403 ") || !strings.Contains(got, "request head larger than 64 KiB") {
		t.Errorf("huge head: %q", got)
	}
	got = raw(t, sock, "CONNECT a.test:443 HTTP/1.1\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403 ") || !strings.Contains(got, "no complete request head within 300ms") {
		t.Errorf("slow head: %q", got)
	}
	if e := sink.waitFor(t, "-", "-"); e.Status != 403 {
		t.Errorf("audit %+v", e)
	}
}

// TestMaxConns: the proxy has the cap every box-facing server has: a
// connection beyond it is not read until one closes.
func TestMaxConns(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	must(t, err)
	p := New(Config{Resolver: Overrides{}.Then(nil), MaxConns: 1})
	go p.Serve(ln)
	defer p.Close()
	first, err := net.Dial("unix", sock)
	must(t, err)
	defer first.Close()
	second, err := net.Dial("unix", sock)
	must(t, err)
	defer second.Close()
	io.WriteString(second, "CONNECT a.test:443 HTTP/1.1\r\n\r\n")
	second.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := second.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection beyond the cap was answered: %v", err)
	}
	first.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(second).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 403 ") {
		t.Fatalf("once the first closed: %q %v", line, err)
	}
}

// TestCloseCutsTunnels: the slot's end stops the proxy even while a box
// holds a tunnel open to a server that never closes.
func TestCloseCutsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			held <- c
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sink := &memSink{}
	sock, p := startProxy(t, []string{hostPort("hold.test", port)}, "hold.test=127.0.0.1", sink)
	c, err := net.Dial("unix", sock)
	must(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", hostPort("hold.test", port))
	if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200 ") {
		t.Fatalf("CONNECT answer %q", line)
	}
	defer (<-held).Close()
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cut an open tunnel")
	}
	if e := sink.waitFor(t, "CONNECT", hostPort("hold.test", port)); e.Status != 200 {
		t.Fatalf("audit %+v", e)
	}
}

// TestDrainKeepsOpenTunnelsUntilTheDeadline: Drain stops new connections
// at once, leaves an open tunnel working until its context ends, then
// cuts it; Serve returns nil.
func TestDrainKeepsOpenTunnelsUntilTheDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(c, c) // an echo: the tunnel works while it answers
			c.Close()
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sock, p := startProxy(t, []string{hostPort("hold.test", port)}, "hold.test=127.0.0.1", &memSink{})
	c, err := net.Dial("unix", sock)
	must(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", hostPort("hold.test", port))
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		must(t, err)
		if line == "\r\n" {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	done := make(chan struct{})
	go func() { p.Drain(ctx); close(done) }()
	time.Sleep(50 * time.Millisecond)
	if _, err := net.Dial("unix", sock); err == nil {
		t.Error("a new connection was accepted while draining")
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	io.WriteString(c, "ping")
	got := make([]byte, 4)
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
		t.Fatalf("the open tunnel during the drain: %q %v", got, err)
	}
	select {
	case <-done:
		t.Fatal("Drain returned with a tunnel open before its deadline")
	case <-time.After(100 * time.Millisecond):
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not cut the tunnel at its deadline")
	}
	if d := time.Since(t0); d < 350*time.Millisecond {
		t.Errorf("Drain returned after %v, before its deadline", d)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the tunnel is still open after the drain")
	}
}

// TestFailureCauseStaysOnHost: when the host cannot resolve a listed name,
// cannot connect to it, or gets no answer from it, the box gets a 502 that
// says which and for what target, while the cause (the resolver's error,
// the addresses dialled) goes to the host's egress log only.
func TestFailureCauseStaysOnHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { hang.Close() })
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			c.Close() // no answer at all
		}
	}()
	mute := uint16(hang.Addr().(*net.TCPAddr).Port)
	sink := &memSink{}
	sock, _ := startProxy(t, []string{"nowhere.test:443", hostPort("closed.test", closed), hostPort("mute.test", mute)},
		"closed.test=127.0.0.1,mute.test=127.0.0.1", sink)
	cases := []struct{ why, req, method, path, box string }{
		{"a name the host cannot resolve", "CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n", "CONNECT", "nowhere.test:443",
			"cannot resolve nowhere.test on the host"},
		{"a port nothing listens on", "CONNECT " + hostPort("closed.test", closed) + " HTTP/1.1\r\n\r\n", "CONNECT", hostPort("closed.test", closed),
			"cannot connect to " + hostPort("closed.test", closed)},
		{"an upstream that closes without answering", "GET http://" + hostPort("mute.test", mute) + "/ HTTP/1.1\r\n\r\n", "GET", hostPort("mute.test", mute),
			"cannot read the response from " + hostPort("mute.test", mute)},
	}
	for _, c := range cases {
		sink.reset()
		got := raw(t, sock, c.req)
		status, body, _ := strings.Cut(got, "\r\n\r\n")
		e := sink.waitFor(t, c.method, c.path)
		cause, ok := strings.CutPrefix(e.Refused, c.box+": ")
		if !ok || cause == "" {
			t.Errorf("%s: the egress log says %q, want %q and the cause", c.why, e.Refused, c.box)
			continue
		}
		if !strings.HasPrefix(status, "HTTP/1.1 502 ") || !strings.HasPrefix(body, "aisan: "+c.box+" (") || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: answer\n%s\nwant a 502 saying %q", c.why, got, c.box)
		}
		if strings.Contains(body, cause) || strings.Contains(body, "127.0.0.1") {
			t.Errorf("%s: the box is told the host-side cause %q:\n%s", c.why, cause, body)
		}
	}
}

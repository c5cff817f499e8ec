package hostproxy

// Test stand-ins: every server here listens on 127.0.0.1, every name is
// mapped through Overrides with no fallback resolver, and outside clients
// (curl, git, npm, node) run in a fresh network namespace that has only
// loopback, reaching the proxy through a relay like the box's. Nothing can
// leave this machine, not even a DNS query from a client that ignores the
// proxy.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/jail/jailtest"
)

// boxPort is where the in-namespace relay listens, like the box's.
const boxPort = 8717

func TestMain(m *testing.M) {
	if sock := os.Getenv("HOSTPROXY_TEST_BOX_SOCK"); sock != "" {
		os.Exit(boxMain(sock))
	}
	os.Exit(m.Run())
}

// boxMain runs inside the namespace: loopback up, a 127.0.0.1 relay to the
// proxy's socket, then the command, whose status it returns.
func boxMain(sock string) int {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("HOSTPROXY_TEST_BOX_ARGV")), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "box: bad argv:", err)
		return 125
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "box: ip link set lo up: %v\n%s", err, out)
		return 125
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(boxPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, "box:", err)
		return 125
	}
	go relay(ln, func() (net.Conn, error) { return net.Dial("unix", sock) })
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "box:", err)
		return 126
	}
	return 0
}

// relay is the box's relay: accept on ln, pump each connection to dial().
func relay(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := dial()
			if err != nil {
				return
			}
			defer u.Close()
			pump(c, u)
		}()
	}
}

var userNS = sync.OnceValue(func() error {
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return err
		}
	}
	if out, err := exec.Command("unshare", "-rn", "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("unshare -rn ip link set lo up: %v: %s", err, out)
	}
	return nil
})

// inBox runs argv in a fresh network namespace whose only way out is the
// proxy at sock, with env (plus PATH) as its whole environment.
func inBox(t *testing.T, sock string, env []string, argv ...string) (string, error) {
	t.Helper()
	jailtest.Need(t, "a network namespace (unshare -rn) for outside clients", userNS())
	if _, err := exec.LookPath(argv[0]); err != nil {
		jailtest.Need(t, argv[0], err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(argv)
	cmd := exec.CommandContext(t.Context(), "unshare", "-rn", self)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTPROXY_TEST_BOX_SOCK=" + sock, "HOSTPROXY_TEST_BOX_ARGV=" + string(a)}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// testCA issues server certificates for loopback stand-ins.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // PEM, for SSL_CERT_FILE and friends
	pool *x509.CertPool
}

func newCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "aisan hostproxy test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, file: file, pool: pool}
}

func (ca *testCA) serverConfig(t testing.TB, names ...string) *tls.Config {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// serve starts h on 127.0.0.1, over TLS when tc is set, and returns the port.
func serve(t testing.TB, h http.Handler, tc *tls.Config) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: tc, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if tc != nil {
			srv.ServeTLS(ln, "", "")
		} else {
			srv.Serve(ln)
		}
	}()
	t.Cleanup(func() { srv.Close() })
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// memSink collects audit entries.
type memSink struct {
	mu sync.Mutex
	es []audit.Entry
}

func (m *memSink) reset() {
	m.mu.Lock()
	m.es = nil
	m.mu.Unlock()
}

func (m *memSink) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.es)
}

func (m *memSink) Log(e audit.Entry) {
	m.mu.Lock()
	m.es = append(m.es, e)
	m.mu.Unlock()
}

// waitFor returns the first entry for path, waiting for tunnels to finish
// (an allowed tunnel is logged when it ends).
func (m *memSink) waitFor(t testing.TB, method, path string) audit.Entry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		m.mu.Lock()
		for _, e := range m.es {
			if e.Method == method && e.Path == path {
				m.mu.Unlock()
				return e
			}
		}
		m.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t.Fatalf("no audit entry %s %s in %+v", method, path, m.es)
	return audit.Entry{}
}

// startProxy serves a proxy with the allow-list and AISAN_RESOLVE-style
// overrides on a Unix socket, with no fallback resolver.
func startProxy(t testing.TB, allow []string, resolve string, sink audit.Sink) (sock string, p *Proxy) {
	t.Helper()
	l, err := ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseResolve(resolve)
	if err != nil {
		t.Fatal(err)
	}
	local, err := LocalAddrs()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hostproxy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "hosts.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	// fakeOwn stands for an interface address this machine may not have;
	// the dial guard below keeps a regression from ever reaching it.
	local = append(local, fakeOwn)
	p = New(Config{Allow: l, Resolver: o.Then(nil), Local: local, Audit: sink})
	base := p.dial
	p.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("the proxy dialled %s, which is not on this machine's loopback", addr)
			return nil, errors.New("test guard: off-machine dial refused")
		}
		return base(ctx, addr)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return sock, p
}

// tcpRelay is a 127.0.0.1 relay to sock in this namespace, for Go clients.
func tcpRelay(t testing.TB, sock string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go relay(ln, func() (net.Conn, error) { return net.Dial("unix", sock) })
	return ln.Addr().String()
}

// raw sends req to the proxy socket and returns the whole answer.
func raw(t testing.TB, sock, req string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	b, _ := io.ReadAll(c)
	return string(b)
}

func hostPort(name string, port uint16) string {
	return net.JoinHostPort(name, strconv.Itoa(int(port)))
}

var fakeOwn = netip.MustParseAddr("203.0.113.77")

func boxEnv(t testing.TB, extra ...string) []string {
	t.Helper()
	env, err := BoxEnv("http://127.0.0.1:" + strconv.Itoa(boxPort))
	if err != nil {
		t.Fatal(err)
	}
	return append(env, append([]string{"HOME=" + t.TempDir(), "LANG=C"}, extra...)...)
}

func must(t testing.TB, err error, what ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(what, " "), err)
	}
}

func sleepMS(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test, and a server
// certificate it signed for the given names (and 127.0.0.1).
type testCA struct {
	pemPath string
	server  tls.Certificate
}

func newTestCA(t *testing.T, dir string, names ...string) testCA {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aisan test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return testCA{pemPath: p, server: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// TestStrictAllowHost: a strict box given --allow-host reaches exactly
// the listed host, through the host-side proxy, with its own TLS (curl,
// and git clone over HTTPS); a name not on the list, a name that resolves
// to the host's loopback through a wildcard, and a direct connection to
// the host are refused; every decision is a line in 'aisan logs --egress'.
// Every destination is on this machine: names map to 127.0.0.1 through
// AISAN_RESOLVE.
func TestStrictAllowHost(t *testing.T) {
	repo, _, env := strictRepo(t)
	ca := newTestCA(t, repo, "registry.test", "other.test", "x.wild.test")

	// A registry stand-in: a greeting, and a git repository served over
	// git's "dumb" HTTP protocol.
	served := filepath.Join(t.TempDir(), "served")
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	hostGit(t, src, env, "init", "-q")
	os.WriteFile(filepath.Join(src, "README"), []byte("cloned through the allow-list\n"), 0o644)
	hostGit(t, src, env, "add", "README")
	hostGit(t, src, env, "commit", "-q", "-m", "one")
	hostGit(t, src, env, "clone", "-q", "--bare", src, filepath.Join(served, "repo.git"))
	hostGit(t, filepath.Join(served, "repo.git"), env, "update-server-info")
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello from the registry")) })
	mux.Handle("/", http.FileServer(http.Dir(served)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.server}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// A listed name on a port where nothing listens: the box is told
	// what failed, not why. (A name the host cannot resolve is the unit
	// tests' case: here the lookup would leave the machine.)
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(gone.Addr().(*net.TCPAddr).Port)
	gone.Close()

	env = append(env, "AISAN_RESOLVE=registry.test=127.0.0.1,other.test=127.0.0.1,x.wild.test=127.0.0.1,gone.test=127.0.0.1")
	script := `
c() { curl -sS --max-time 10 --cacert "$CA" "$@"; }
echo "allowed: $(c https://registry.test:$P/hello) rc=$?"
echo "other: $(c -o /dev/null https://other.test:$P/hello 2>&1) rc=$?"
echo "wild: $(c -o /dev/null https://x.wild.test:$P/hello 2>&1) rc=$?"
echo "direct: $(c --noproxy '*' -o /dev/null https://127.0.0.1:$P/hello 2>&1) rc=$?"
GIT_SSL_CAINFO="$CA" git clone -q https://registry.test:$P/repo.git "$HOME/clone" 2>&1
echo "clone: $(cat "$HOME/clone/README" 2>&1)"
echo "proxy: $HTTPS_PROXY $https_proxy no=$NO_PROXY"
echo "gone: $(curl -sS --max-time 10 -x "$HTTPS_PROXY" http://gone.test:$Q/ 2>&1)"
`
	opts := []string{"--allow-host", "registry.test:" + port, "--allow-host", "*.wild.test:" + port,
		"--allow-host", "gone.test:" + closed,
		"--env", "CA=" + ca.pemPath, "--env", "P=" + port, "--env", "Q=" + closed}
	r := strict(t, repo, env, opts, "sh", "-c", script)
	out := r.stdout
	for _, want := range []string{
		"allowed: hello from the registry rc=0",
		"clone: cloned through the allow-list",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("box output lacks %q:\n%s\nstderr: %s", want, out, r.stderr)
		}
	}
	for what, want := range map[string]string{
		"other:":  "response 403", // not on the list
		"wild:":   "response 403", // on the list, but a wildcard resolving to loopback
		"direct:": "(7)",          // no route to the host: the box's loopback is its own
	} {
		if line := lineWith(out, what); !strings.Contains(line, want) {
			t.Errorf("%s was not refused as it should be (want %q): %q", what, want, line)
		}
	}
	// The cause (the address dialled and its error) stays in the host's
	// log.
	if line, want := lineWith(out, "gone:"), "aisan: cannot connect to gone.test:"+closed+" ("; !strings.Contains(line, want) ||
		strings.Contains(line, "127.0.0.1") || strings.Contains(line, "connection refused") {
		t.Errorf("the box's 502 should say %q and no more: %q", want, line)
	}
	if !strings.Contains(lineWith(out, "proxy:"), "http://127.0.0.1:") {
		t.Errorf("the box's proxy variables: %q", lineWith(out, "proxy:"))
	}

	var slotName string
	for n, e := range slotList(t, env) {
		if e.Kind == "run" {
			slotName = n
		}
	}
	logs := aisan(t, env, "", "logs", "--egress", slotName)
	if logs.code != 0 {
		t.Fatalf("aisan logs --egress: code %d, stderr %q", logs.code, logs.stderr)
	}
	for _, want := range []string{"registry.test:" + port, "other.test:" + port, "x.wild.test:" + port, "refused", "loopback", "connection refused"} {
		if !strings.Contains(logs.stdout, want) {
			t.Errorf("the egress log lacks %q:\n%s", want, logs.stdout)
		}
	}
	if j := aisan(t, env, "", "logs", "--egress", "--json", slotName); !strings.Contains(j.stdout, `"backend":"hosts"`) {
		t.Errorf("logs --egress --json: %q", j.stdout)
	}

	// --allow-host with --net is refused as meaningless.
	r = strict(t, repo, env, []string{"--net", "--allow-host", "registry.test"}, "true")
	if r.code != 2 || !strings.Contains(r.stderr, "--net") {
		t.Errorf("--allow-host with --net: code %d, stderr %q", r.code, r.stderr)
	}
}

func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

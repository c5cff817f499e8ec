package hostproxy

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// TestLookupIgnoresSearchDomains: the host looks up the very name that
// matched. A resolver with a search list would otherwise answer a name
// the box made up under a wildcard (nx.wild.test, which does not exist)
// with the address of nx.wild.test.corp.test, a host of the host's own
// network that no pattern names. The test runs in its own network and
// mount namespaces, with a resolv.conf and a DNS server of its own on
// their loopback; nothing leaves them.
func TestLookupIgnoresSearchDomains(t *testing.T) {
	if !inOwnNetns(t, "-rmn") {
		return
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(conf, []byte("nameserver 127.0.0.1\nsearch corp.test\noptions ndots:1 attempts:1 timeout:2\n"), 0o644)
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 localhost\n198.51.100.10 h.wild.test\n"), 0o644)
	for f, to := range map[string]string{conf: "/etc/resolv.conf", hosts: "/etc/hosts"} {
		if err := syscall.Mount(f, to, "", syscall.MS_BIND, ""); err != nil {
			jailtest.Need(t, "bind-mounting "+to+" in a mount namespace", err)
		}
	}
	// The host's network: nx.wild.test does not exist, the search
	// domain's host does.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:53")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	var mu sync.Mutex
	var asked []string
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var m dnsmessage.Message
			if m.Unpack(buf[:n]) != nil || len(m.Questions) != 1 {
				continue
			}
			q := m.Questions[0]
			mu.Lock()
			asked = append(asked, q.Name.String())
			mu.Unlock()
			m.Header.Response, m.Header.RecursionAvailable = true, true
			m.Header.RCode = dnsmessage.RCodeNameError
			if q.Name.String() == "nx.wild.test.corp.test." {
				m.Header.RCode = dnsmessage.RCodeSuccess
				if q.Type == dnsmessage.TypeA {
					m.Answers = []dnsmessage.Resource{{
						Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
						Body:   &dnsmessage.AResource{A: [4]byte{198, 51, 100, 9}},
					}}
				}
			}
			b, _ := m.Pack()
			pc.WriteTo(b, from)
		}
	}()

	l, err := ParseList([]string{"*.wild.test"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Allow: l, Resolver: HostResolver})
	// The dial is recorded, never made: no packet goes to 198.51.100.10
	// (a documentation address), even inside this namespace.
	var dialled []string
	p.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return nil, errors.New("test: no dial")
	}
	sock := t.TempDir() + "/hosts.sock"
	pl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(pl)
	t.Cleanup(func() { p.Close() })

	got := raw(t, sock, "CONNECT nx.wild.test:443 HTTP/1.1\r\n\r\n")
	mu.Lock()
	if len(dialled) > 0 || !strings.Contains(got, "cannot resolve nx.wild.test") {
		t.Errorf("nx.wild.test was looked up as another name (asked %q, dialled %q):\n%s", asked, dialled, got)
	}
	mu.Unlock()
	// A name under the wildcard that /etc/hosts lists still resolves.
	got = raw(t, sock, "CONNECT h.wild.test:443 HTTP/1.1\r\n\r\n")
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(dialled, "198.51.100.10:443") {
		t.Errorf("h.wild.test, listed in /etc/hosts, was not dialled at its address (dialled %q):\n%s", dialled, got)
	}
	for _, q := range asked {
		if q != "nx.wild.test." {
			t.Errorf("the host asked its DNS for %q, not the name that matched", q)
		}
	}
}

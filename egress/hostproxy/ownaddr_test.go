package hostproxy

import (
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestAddressGainedAfterStart: an address this machine gains while the
// box runs (a new IPv6 temporary address, a DHCP renewal, a VPN coming
// up) is its own as much as those it had at the start, so a name that
// resolves to it is refused unless a pattern names the host exactly with
// its port; so is an address a local route sends to this machine. The
// test runs in a network namespace of its own, where it may add
// addresses and routes to lo; nothing leaves that namespace.
func TestAddressGainedAfterStart(t *testing.T) {
	// A public-looking address, added to this namespace's lo below, as
	// is the local route's range: every connection the test makes stays
	// on lo inside a network namespace of its own.
	const gained = "198.51.100.7"
	if !inOwnNetns(t, "-rn") {
		return
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	// A host service listening on every address, as many do.
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("host service")) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)

	l, err := ParseList([]string{"*.wild.test:" + strconv.Itoa(int(port))})
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseResolve("x.wild.test=" + gained)
	if err != nil {
		t.Fatal(err)
	}
	local, err := LocalAddrs()
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Allow: l, Resolver: o.Then(nil), Local: local})
	sock := t.TempDir() + "/hosts.sock"
	pl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(pl)
	t.Cleanup(func() { p.Close() })

	// Only now does the machine gain the address.
	if out, err := exec.Command("ip", "addr", "add", gained+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v: %s", err, out)
	}
	if c := Classify(netip.MustParseAddr(gained), mustLocal(t)); c != HostOwn {
		t.Fatalf("setup: %s is %q, want this host's own", gained, c)
	}
	got := raw(t, sock, "GET http://x.wild.test:"+strconv.Itoa(int(port))+"/ HTTP/1.1\r\nHost: x.wild.test\r\n\r\n")
	if strings.Contains(got, "host service") || !strings.Contains(got, "403") || !strings.Contains(got, string(HostOwn)) {
		t.Errorf("a name resolving to an address the host gained after the start reached a host service, or was not refused as the host's own:\n%s", got)
	}

	// Gained between the check and the dial: the connection itself shows
	// it went to this machine (a lister that has not seen it yet stands
	// for the race).
	stale := New(Config{Allow: l, Resolver: o.Then(nil), Local: local, LocalAddrs: func() ([]netip.Addr, error) { return local, nil }})
	sock2 := t.TempDir() + "/hosts2.sock"
	pl2, err := net.Listen("unix", sock2)
	if err != nil {
		t.Fatal(err)
	}
	go stale.Serve(pl2)
	t.Cleanup(func() { stale.Close() })
	got = raw(t, sock2, "CONNECT x.wild.test:"+strconv.Itoa(int(port))+" HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if strings.Contains(got, "host service") || !strings.Contains(got, "403") || !strings.Contains(got, string(HostOwn)) {
		t.Errorf("a connection that reached this host's own address was kept:\n%s", got)
	}

	// A whole range routed to this machine (a local route, as for
	// AnyIP): on no interface, so no listing shows it, yet it is the
	// host's own.
	if out, err := exec.Command("ip", "route", "add", "local", "198.51.100.128/25", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip route add local: %v: %s", err, out)
	}
	o2, _ := ParseResolve("y.wild.test=198.51.100.200")
	routed := New(Config{Allow: l, Resolver: o2.Then(nil), Local: local})
	sock3 := t.TempDir() + "/hosts3.sock"
	pl3, err := net.Listen("unix", sock3)
	if err != nil {
		t.Fatal(err)
	}
	go routed.Serve(pl3)
	t.Cleanup(func() { routed.Close() })
	got = raw(t, sock3, "GET http://y.wild.test:"+strconv.Itoa(int(port))+"/ HTTP/1.1\r\nHost: y.wild.test\r\n\r\n")
	if strings.Contains(got, "host service") || !strings.Contains(got, "403") || !strings.Contains(got, string(HostOwn)) {
		t.Errorf("an address of a local route reached a host service:\n%s", got)
	}
}

func mustLocal(t *testing.T) []netip.Addr {
	t.Helper()
	l, err := LocalAddrs()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

//go:build !aisanfront

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// TestCheckRawSocketsBindSpec: a raw egress socket named through a link
// in a bind spec's rw directory or cache is refused (the box could point
// the link at another socket for the next launch); through a read-only
// bind it is the user's path, and passes.
func TestCheckRawSocketsBindSpec(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "real", "db.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(shared, "db.sock")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		opts    strictbox.Options
		refused bool
	}{
		{"read-only bind", strictbox.Options{Binds: []jail.Mount{{Kind: jail.ROBind, Src: shared, Dst: shared}}}, false},
		{"rw bind", strictbox.Options{Binds: []jail.Mount{{Kind: jail.Bind, Src: shared, Dst: shared}}}, true},
		{"cache", strictbox.Options{Caches: []strictbox.Cache{{Path: shared}}}, true},
	} {
		o := tc.opts
		o.Egress = []strictbox.EgressRequest{{Name: "db", Socket: link}}
		err := checkRawSockets(&o)
		if tc.refused != (err != nil) {
			t.Errorf("%s: refused %v, want %v (%v)", tc.name, err != nil, tc.refused, err)
		}
		if err == nil && o.Egress[0].Socket != sock {
			t.Errorf("%s: the relay's path is %q, want the resolved %q", tc.name, o.Egress[0].Socket, sock)
		}
		if err != nil && !strings.Contains(err.Error(), "db.sock") {
			t.Errorf("%s: the refusal does not name the path: %v", tc.name, err)
		}
	}
}

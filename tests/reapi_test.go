package tests

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec moves gRPC messages as bytes, so no generated code is needed on
// either side.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// instanceMessage is a REAPI request whose field 1 (instance_name) is s.
func instanceMessage(s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
}

// byteStreamWrite is the one method grpc-call streams.
const byteStreamWrite = "/google.bytestream.ByteStream/Write"

// blobByte is byte i of the blobs grpc-call writes.
func blobByte(i int) byte { return byte(i * 7 % 251) }

// writeBlob streams a blob of size bytes to ByteStream Write in 1 MiB
// messages, the first naming resource, and returns the committed size.
// A resource "A|B" names A in the first message and B in every later one.
func writeBlob(ctx context.Context, conn *grpc.ClientConn, resource string, size int) (uint64, error) {
	resource, later, _ := strings.Cut(resource, "|")
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, byteStreamWrite, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return 0, err
	}
	chunk := make([]byte, 1<<20)
	for off := 0; off < size; off += len(chunk) {
		var m []byte
		if off == 0 {
			m = protowire.AppendString(protowire.AppendTag(m, 1, protowire.BytesType), resource)
		} else if later != "" {
			m = protowire.AppendString(protowire.AppendTag(m, 1, protowire.BytesType), later)
		}
		m = protowire.AppendVarint(protowire.AppendTag(m, 2, protowire.VarintType), uint64(off))
		n := min(len(chunk), size-off)
		if off+n == size {
			m = protowire.AppendVarint(protowire.AppendTag(m, 3, protowire.VarintType), 1)
		}
		for i := range n {
			chunk[i] = blobByte(off + i)
		}
		m = protowire.AppendBytes(protowire.AppendTag(m, 10, protowire.BytesType), chunk[:n])
		if err := s.SendMsg(&m); err == io.EOF {
			// The server ended the call: its status comes from RecvMsg.
			break
		} else if err != nil {
			return 0, err
		}
	}
	if err := s.CloseSend(); err != nil {
		return 0, err
	}
	var resp []byte
	if err := s.RecvMsg(&resp); err != nil {
		return 0, err
	}
	_, _, n := protowire.ConsumeTag(resp)
	if n < 0 {
		return 0, fmt.Errorf("bad WriteResponse %x", resp)
	}
	v, _ := protowire.ConsumeVarint(resp[n:])
	return v, nil
}

// grpcHelper is the gRPC client run inside boxes: grpc-call
// LABEL=METHOD@INSTANCE... dials $AISAN_EGRESS_REAPI (h2c), makes each call
// with one message naming INSTANCE and the box's own "authorization"
// header, and prints "LABEL: code=N message". ByteStream Write is
// streamed instead: INSTANCE is the resource name, whose last segment is
// the size written, and the line ends with "committed=N".
func grpcHelper(name string, args []string) (int, bool) {
	if name != "grpc-call" {
		return 0, false
	}
	conn, err := grpc.NewClient(os.Getenv("AISAN_EGRESS_REAPI"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println("dial error:", err)
		return 1, true
	}
	defer conn.Close()
	for _, a := range args {
		label, call, _ := strings.Cut(a, "=")
		method, inst, _ := strings.Cut(call, "@")
		limit := 10 * time.Second
		if method == byteStreamWrite {
			limit = time.Minute
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer box-own-token")
		if method == byteStreamWrite {
			size, _ := strconv.Atoi(inst[strings.LastIndexByte(inst, '/')+1:])
			committed, err := writeBlob(ctx, conn, inst, size)
			cancel()
			st, _ := status.FromError(err)
			fmt.Printf("%s: code=%d %s committed=%d\n", label, st.Code(), st.Message(), committed)
			continue
		}
		in, out := instanceMessage(inst), []byte(nil)
		err = conn.Invoke(ctx, method, &in, &out, grpc.ForceCodec(rawCodec{}))
		cancel()
		st, _ := status.FromError(err)
		fmt.Printf("%s: code=%d %s\n", label, st.Code(), st.Message())
	}
	return 0, true
}

// grpcUpstream is a TLS gRPC server on loopback, standing in for a remote
// build service: it answers every method and records what reached it.
type grpcUpstream struct {
	mu    sync.Mutex
	calls []string // method, authorization
	addr  string
	// written is what ByteStream Write received: its size and whether
	// every byte was the one grpc-call sent.
	written int
	intact  bool
	// laterNames are the resource names later Write messages carried.
	laterNames []string
}

// receiveBlob reads a ByteStream Write to its end, checking each byte.
func (u *grpcUpstream) receiveBlob(stream grpc.ServerStream, msg []byte) error {
	total, intact := 0, true
	for later := false; ; later = true {
		for len(msg) > 0 {
			num, typ, n := protowire.ConsumeTag(msg)
			if n < 0 {
				return fmt.Errorf("bad WriteRequest")
			}
			msg = msg[n:]
			if num == 10 && typ == protowire.BytesType {
				data, m := protowire.ConsumeBytes(msg)
				for i, c := range data {
					intact = intact && c == blobByte(total+i)
				}
				total += len(data)
				n = m
			} else if num == 1 && typ == protowire.BytesType && later {
				name, m := protowire.ConsumeBytes(msg)
				u.mu.Lock()
				u.laterNames = append(u.laterNames, string(name))
				u.mu.Unlock()
				n = m
			} else {
				n = protowire.ConsumeFieldValue(num, typ, msg)
			}
			if n < 0 {
				return fmt.Errorf("bad WriteRequest")
			}
			msg = msg[n:]
		}
		msg = nil
		if err := stream.RecvMsg(&msg); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	u.mu.Lock()
	u.written, u.intact = total, intact
	u.mu.Unlock()
	reply := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(total))
	return stream.SendMsg(&reply)
}

func startGRPCUpstream(t *testing.T, ca testCA) *grpcUpstream {
	t.Helper()
	u := &grpcUpstream{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.addr = ln.Addr().String()
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})),
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			md, _ := metadata.FromIncomingContext(stream.Context())
			var msg []byte
			stream.RecvMsg(&msg)
			u.mu.Lock()
			u.calls = append(u.calls, method+" "+strings.Join(md.Get("authorization"), ","))
			u.mu.Unlock()
			if method == byteStreamWrite {
				return u.receiveBlob(stream, msg)
			}
			reply := []byte{}
			return stream.SendMsg(&reply)
		}),
	)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return u
}

func (u *grpcUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}

// reapiUpstream starts a TLS gRPC upstream on loopback and writes an
// egress file for it, instance projects/p/instances/default, whose token
// command (a file "token" beside it) runs the shell lines script. trust
// is the SSL_CERT_FILE setting that makes the host trust the upstream.
func reapiUpstream(t *testing.T, script string) (up *grpcUpstream, conf, trust string) {
	t.Helper()
	dir := t.TempDir()
	ca := newTestCA(t, dir, "rbe.test")
	up = startGRPCUpstream(t, ca)
	helper := filepath.Join(dir, "token")
	os.WriteFile(helper, []byte("#!/bin/sh\n"+script+"\n"), 0o755)
	conf = filepath.Join(dir, "reapi.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf("upstream = %q\ninstance = \"projects/p/instances/default\"\ntoken_command = %q\n", up.addr, helper)), 0o600)
	return up, conf, "SSL_CERT_FILE=" + ca.pemPath
}

// TestStrictREAPI: a gRPC client in a real strict box reaches a TLS
// upstream through --egress reapi=FILE. Allowed calls arrive with the
// host's credential and without the box's own authorization; a foreign
// method, UpdateActionResult and a foreign instance are refused with
// PERMISSION_DENIED before the credential command runs; a failing
// credential command gives UNAUTHENTICATED. Every stream is in the
// egress log.
func TestStrictREAPI(t *testing.T) {
	repo, _, env := strictRepo(t)
	count := filepath.Join(t.TempDir(), "token-runs")
	up, conf, trust := reapiUpstream(t, "echo run >> "+count+"\necho host-token-123")
	helper := filepath.Join(filepath.Dir(conf), "token")
	env = append(env, trust)

	const inst = "projects/p/instances/default"
	const blobSize = 48<<20 + 12345
	const v2 = "/build.bazel.remote.execution.v2."
	calls := []string{
		"caps=" + v2 + "Capabilities/GetCapabilities@" + inst,
		"cas=" + v2 + "ContentAddressableStorage/FindMissingBlobs@" + inst,
		"foreign=/some.Other/Method@" + inst,
		"poison=" + v2 + "ActionCache/UpdateActionResult@" + inst,
		"instance=" + v2 + "ContentAddressableStorage/FindMissingBlobs@projects/other/instances/x",
		// Bulk data: many 1 MiB messages in 16 KiB frames, joined and
		// batched on the way; every byte must arrive as sent.
		"write=" + byteStreamWrite + "@" + inst + "/uploads/u1/blobs/0123/" + strconv.Itoa(blobSize),
	}
	opts := append(helperOpts("grpc-call"), "--egress", "reapi="+conf)
	r := strict(t, repo, env, opts, append([]string{self()}, calls...)...)
	if r.code != 0 {
		t.Fatalf("box: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for what, want := range map[string]string{"caps:": "code=0", "cas:": "code=0", "foreign:": "code=7", "poison:": "code=7", "instance:": "code=7",
		"write:": "code=0  committed=" + strconv.Itoa(blobSize)} {
		if l := lineWith(r.stdout, what); !strings.Contains(l, want) {
			t.Errorf("%s %q; want %s\n%s", what, l, want, r.stdout)
		}
	}
	seen := up.seen()
	if len(seen) != 3 {
		t.Errorf("the upstream saw %q; want exactly the three allowed calls", seen)
	}
	up.mu.Lock()
	if up.written != blobSize || !up.intact {
		t.Errorf("ByteStream Write: the upstream got %d bytes (intact %v); want %d as sent", up.written, up.intact, blobSize)
	}
	up.mu.Unlock()
	for _, s := range seen {
		if !strings.HasSuffix(s, " Bearer host-token-123") || strings.Contains(s, "box-own-token") {
			t.Errorf("the upstream got %q; want the host's credential only", s)
		}
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "run") > 3 {
		t.Errorf("the credential command ran %d times for 3 allowed calls", strings.Count(string(b), "run"))
	}

	// A failing credential command: UNAUTHENTICATED.
	os.WriteFile(helper, []byte("#!/bin/sh\necho no login >&2\nexit 1\n"), 0o755)
	r = strict(t, repo, env, opts, self(), calls[0])
	if !strings.Contains(r.stdout, "code=16") {
		t.Errorf("with a failing credential command: %q; want code=16", r.stdout)
	}

	var slotName string
	for n := range slotList(t, env) {
		slotName = n
	}
	logs := aisan(t, env, "", "logs", "--egress", slotName)
	if !strings.Contains(logs.stdout, "GetCapabilities") || !strings.Contains(logs.stdout, "UpdateActionResult") {
		t.Errorf("egress log: %q", logs.stdout)
	}
}

// TestStrictREAPIWriteLaterNames: a ByteStream Write from a real strict
// box whose first message names the configured instance and whose later
// messages name another is refused with PERMISSION_DENIED, and the
// upstream never receives a later message naming the other instance; a
// Write whose later messages repeat its own name passes. Only the first
// message used to be read.
func TestStrictREAPIWriteLaterNames(t *testing.T) {
	repo, _, env := strictRepo(t)
	up, conf, trust := reapiUpstream(t, "echo host-token-123")
	env = append(env, trust)

	const size = "3145728" // three messages
	own := "projects/p/instances/default/uploads/u1/blobs/0123/" + size
	other := "projects/p/instances/other/uploads/u1/blobs/0123/" + size
	opts := append(helperOpts("grpc-call"), "--egress", "reapi="+conf)
	r := strict(t, repo, env, opts, self(), "same="+byteStreamWrite+"@"+own+"|"+own, "swap="+byteStreamWrite+"@"+own+"|"+other)
	if r.code != 0 {
		t.Fatalf("box: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if l := lineWith(r.stdout, "same:"); !strings.Contains(l, "code=0 ") || !strings.Contains(l, "committed="+size) {
		t.Errorf("a Write repeating its own name: %q; want code=0 committed=%s", l, size)
	}
	if l := lineWith(r.stdout, "swap:"); !strings.Contains(l, "code=7") || !strings.Contains(l, "request message 2") {
		t.Errorf("a Write naming another instance later: %q; want code=7 naming request message 2", l)
	}
	up.mu.Lock()
	names := up.laterNames
	up.mu.Unlock()
	if slices.Contains(names, other) || !slices.Contains(names, own) {
		t.Errorf("later messages that reached the upstream named %q; want %q only", names, own)
	}
}

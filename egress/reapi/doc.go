// Package reapi is strict mode's gRPC egress: remote builds (the Remote
// Execution API, --egress reapi=FILE) and any other gRPC service named by
// an allow-list (--egress grpc:NAME=FILE).
//
// # Shape
//
// Inside the box a build client (siso, bazel, reclient) dials the
// loopback address its AISAN_EGRESS_ variable names, and speaks
// plaintext HTTP/2 with prior knowledge; the in-box relay pumps those
// bytes to a Unix socket in the slot's run dir. [Server.Serve] answers
// there with net/http's HTTP/2 server, limited to unencrypted HTTP/2 (no
// HTTP/1, no Upgrade), checks every stream, and forwards the streams that
// pass over one shared HTTP/2-only http.Transport to the real service over
// TLS (ALPN h2), with the host's bearer attached. The transport dials only
// when the first stream has passed, pools its connections, pings idle
// ones, and moves new streams to a fresh connection when the upstream
// sends GOAWAY or runs out of streams.
//
// net/http rather than golang.org/x/net/http2's Server and Transport: the
// x/net types are deprecated in favour of this same code as net/http
// bundles it, which since Go 1.24 serves prior-knowledge h2c through
// [http.Protocols]. x/net is still used for its HPACK decoder (see
// schemeconn.go).
//
// # Threat model
//
// The box is not trusted: it holds no credential and may send anything.
// The policy (policy.go) runs entirely before the credential source is
// asked, so a refused stream never spends a token or reaches the
// upstream. Per stream it pins :method, :scheme and :authority, takes
// :path only from an exact allow-list, and reads the first request
// message with protowire to make sure it names the configured instance
// (and every later message of a stream, as it passes, to make sure none
// names another): a host token usually reaches more instances than the one this box may
// use, and an instance the user trusts must not be written from a box.
// ActionCache/UpdateActionResult is off by default for the same reason.
// Operation names are checked too: either they sit under the instance
// (Operations = "prefix", for services like RBE that name them so) or
// this box's own Execute calls returned them.
//
// Only gRPC's own request headers, and those the file names, reach the
// upstream; the box's authorization never does. A refusal is a
// trailers-only gRPC answer (PERMISSION_DENIED for policy,
// UNAUTHENTICATED when the host has no credential) whose grpc-message is
// percent-encoded and free of control characters, so clients report a
// decision instead of retrying what looks like a network fault. The
// credential helper's own error stays in the host's audit log.
//
// # Limits and audit
//
// A box holds at most Options.MaxConns connections; the bytes its streams
// keep on the host (first messages until they are checked and sent, room
// to retry a stream the upstream turned away before it ran) come out of
// one budget, reserved before a message is read, so a box can slow only
// itself. Each stream is one audit.Entry: Status is the gRPC status
// (-1 when the stream ended without one), Refused says why it did not
// complete, and no header or message is ever logged.
//
// # Throughput
//
// A ByteStream Write crosses two sockets here where a direct client's
// crosses one, so the rest of its path is kept near a direct client's
// cost. On the box's side, runs of DATA frames for one stream that are
// already read are handed to the server as one frame (schemeconn.go), so
// the server's per-frame hand-offs happen once per read instead of once
// per 16 KiB; the request is read from the server through a pooled 256
// KiB buffer, so the box's window is refilled in few WINDOW_UPDATEs. On
// the upstream's side, reads are cut so that each DATA frame fills whole
// TLS records (a 16 KiB frame and its header would otherwise leave as a
// full record and a 9-byte one), and the transport's flush after every
// frame goes to a writer of the connection's own (batchconn.go) that
// sends what gathered while it was busy in one write. No buffer is
// allocated per frame or per stream past the first message (make bench).
//
// # What is not checked
//
// Response bodies are passed through untouched, except that Execute's
// answers are watched for operation names. A later message of a
// streaming request is checked as it passes (later.go) rather than
// before: the bytes of a message ahead of the one that condemns it have
// already left, so the upstream sees the stream reset inside a message it
// never gets whole.
package reapi

// Package egress is the host side of strict mode: it serves the Unix
// sockets that a box's in-box relays connect to, checks every request
// against a backend's policy, attaches the real credential (which never
// enters the box) and streams the answer back.
//
// egress knows sockets, not mounts: it never imports jail (the leaf data
// package jail/agent excepted). cmd/aisan hands it socket paths and a
// per-box token as plain strings.
//
// # Threat model
//
// Everything in the box may be hostile: the client, its tools, a prompt
// injection. The box can send any bytes to its socket. What it must not get
// is the credential, a request the user did not mean a model session to
// make (another API, a stored file, a server-side tool that reaches the
// internet on its behalf), or a parser differential that makes the
// upstream read something the policy did not check.
//
// # Shape
//
// A [Backend] is data plus pure functions: its [Route] table, header
// allow-lists both ways, a body policy, an error shape and the function
// that yields the credential headers. [Server] runs the same pipeline for
// every backend (see server.go for the order of the checks) and is the one
// place that fails closed: any error or panic before forwarding is a
// [Refusal] in the API's own shape, sent without reading the credential
// and without contacting the upstream. The upstream request is rebuilt by
// [Backend.Rewrite] (httputil.ReverseProxy's Rewrite hook, never
// Director) from the route, the allowed headers, the checked bytes and the
// credential, so nothing the box spelled can reach the upstream unchecked.
//
// The backends live in egress/anthropic and egress/openai; egress/backend
// builds one by name from the host's configuration and says what the box
// needs to reach it; egress/cred holds the credential sources (including
// the refresh of the host's Claude and Codex logins); egress/egresstest
// holds loopback stand-ins for tests.
//
// # Wiring (for cmd/aisan)
//
//	spec, err := backend.New("anthropic", backend.Options{APIKey: apiKey})
//	ln, err := egress.ListenUnix(filepath.Join(runDir, "anthropic.sock")) // or ListenLoopback() with --net
//	go egress.Serve(ctx, ln, spec.Backend, egress.Options{Token: tok, Audit: auditFile})
//	boxEnv := spec.BoxEnv("http://127.0.0.1:8713", tok) // tok "" without --net
package egress

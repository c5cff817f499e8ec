// Package hostproxy is the host side of a strict box's network allow-list:
// an HTTP proxy that lets the box reach the hosts a user named, by name,
// and nothing else.
//
// # For users
//
// A strict box has no network of its own: only loopback, and no DNS. With
// --allow-host PATTERN (repeatable; allow_hosts = [...] in a bind spec)
// the box gets an HTTP proxy instead, and HTTPS_PROXY, HTTP_PROXY,
// ALL_PROXY, their lowercase forms and NO_PROXY=localhost,127.0.0.1,::1
// in its environment, so curl, git, npm, pip and go fetch through it
// while the loopback model relays stay direct.
//
// Patterns:
//
//	registry.example.com      that name, ports 443 and 80
//	*.githubusercontent.com   any name below it (not the name itself), 443 and 80
//	git.example.com:8443      that name, that port only
//	192.0.2.7:443             that address and port (an address always needs its port)
//
// Names are matched without case and without a trailing dot. Non-ASCII
// names are refused: write the punycode form (xn--…), which is what
// clients send. "*.com" (a wildcard over a whole top-level domain) is
// refused.
//
// The host looks the name up itself, after the name has matched, and
// connects to exactly the address it checked. A name that only a wildcard
// allows is looked up as an absolute name, without the host resolver's
// search list, so that a made-up name under the wildcard cannot resolve
// to a host of a search domain. Addresses inside this
// machine or its networks (loopback, 0.0.0.0 and ::, link-local, private,
// 100.64.0.0/10, their IPv4-mapped IPv6 forms, and the host's own
// interface addresses as they are at that request, the ones gained while
// the box runs included) are refused unless a pattern names the host
// exactly with its port, so a public-looking name pointed at 127.0.0.1
// cannot reach a host service: --allow-host devbox.internal:8080 allows it,
// *.internal or devbox.internal do not. Multicast and broadcast are never
// allowed.
//
// AISAN_RESOLVE=name=address[,name=address…] makes the host side resolve
// the listed names to the given addresses instead of asking DNS (for
// split-horizon setups and tests). The address checks still apply.
//
// The proxy never looks inside TLS: CONNECT carries the client's own TLS
// to the server, and the decision is on the CONNECT name (for plain
// http:// requests, on the URL's host, which is also sent as Host). A
// model host in the list is reached directly, without credentials: the
// model relays are the only way to a credential. Anything refused answers
// 403 with one line naming the host and the --allow-host pattern that
// would allow it; a host-side failure (the name does not resolve, the
// dial or the upstream fails) answers 502 naming what failed for which
// target, and only the egress log says why (the resolver's error, the
// addresses dialled). Every decision is a line (backend "hosts") in the
// slot's egress log. --allow-host with --net is refused: the host network
// already reaches everything.
//
// Clients that ignore the proxy variables cannot reach anything from the
// box: node's built-in fetch and its http and https modules (as of node
// 20; npm itself does use the proxy), Go programs that set their own
// Transport without ProxyFromEnvironment, and anything that opens raw
// sockets (ssh, git over ssh://, database clients). For git, use https://
// remotes. curl, git over https, npm and Python's urllib (and so pip) do
// use it.
//
// A wildcard lets the box choose which subdomain names the host looks up,
// and so send a few bytes to that domain's name servers. Prefer exact
// names where the set of hosts is known.
//
// # For callers
//
// cmd/aisan parses the patterns with [ParseList] (after [CheckNet]),
// gathers [LocalAddrs] once (the proxy asks again at every decision, see
// [Config.LocalAddrs]), builds a [Config] with the resolver
// ([HostResolver], wrapped by [Overrides.Then] when AISAN_RESOLVE is set)
// and the slot's audit sink, and calls [Proxy.Serve] on a Unix socket in
// the slot's run dir, which the in-box relay connects to. [BoxEnv] gives
// the box's environment for the relay's loopback endpoint. A refusal is
// logged when it is answered; an allowed tunnel when it ends, with its
// byte counts and duration (status 200). The policy is
// pure: [Decide] and [Check] take the list, the target, the resolved
// addresses and the host facts, and do no I/O.
package hostproxy

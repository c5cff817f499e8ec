// Package egress is the host side of strict mode: it serves the Unix
// sockets that a box's in-box relays connect to, checks every request
// against a backend's policy, attaches the real credential (which never
// enters the box) and streams the answer back.
//
// egress knows sockets, not mounts: it never imports jail (the leaf data
// package jail/agent excepted). cmd/aisan hands it socket paths and a
// per-box token as plain strings.
package egress

// Package fdpass is the one message by which the in-box relay (package
// jail/relay, inside the box's init) hands a box's TCP connection to the
// host's egress server (package egress) instead of copying its bytes:
//
//	agent ──TCP──▶ relay (127.0.0.1:PORT in the box)
//	                 │ accepts, then on the endpoint's Unix socket sends
//	                 │ one byte, Marker, with the accepted connection
//	                 │ attached (SCM_RIGHTS), and closes its copy
//	                 ▼
//	               egress server (host): a first message of exactly Marker
//	                 and one TCP socket serves that socket as the box's
//	                 connection; anything else attached is refused; a
//	                 first message with nothing attached starts a byte
//	                 stream (a client on the socket itself)
//
// It is a leaf (a constant, no imports), so that both ends, one in the
// lean init and one in the host's proxy, name the same byte.
package fdpass

// Marker is the one byte sent with a handed-over connection.
const Marker = 0xA5

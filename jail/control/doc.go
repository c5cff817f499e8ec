// Package control is the channel from aisan's command line to a running
// box's host side: the wrapper that launched a strict box, or the keeper
// that holds it after its agent exited. Through it 'aisan allow' and
// 'aisan deny' change what the box may reach, spend and send while it
// runs, and 'aisan list' and 'aisan report' read what it has used.
//
// # Protocol (aisan-control/1)
//
//	aisan allow/deny/…                       wrapper or keeper of SLOT
//	(the user, outside every box)            (the box's host side)
//	      │  connect  $XDG_RUNTIME_DIR/aisan/<id>/control.sock
//	      │           (0600, in the slot's 0700 run directory)
//	      │                                  peer check: the same user,
//	      │                                  in the same PID namespace
//	      │  one request line, JSON ───────▶ (a process in any box has a
//	      │  {"proto":"aisan-control/1",      namespace of its own, so
//	      │   "op":"allow-host",              none passes), else closed
//	      │   "host":"pkg.example.com",       unanswered
//	      │   "for_ms":600000}
//	      │                  ◀─────────────── one answer line, JSON:
//	      │                                   {"ok":true,"text":"…"} or
//	      ▼  close                            {"ok":false,"error":"…","hint":"…"}
//
// A request is at most [MaxLine] bytes and names [Proto]; its operation
// is one of the Op constants, with exactly the fields that operation
// takes (see [ParseRequest]). Nothing else is ever read from the
// socket, and one request is answered per connection.
//
// # Who may steer a box
//
// No box can reach the socket: a strict box binds none of aisan's
// runtime directory but its egress sockets, and a deny-list jail sees it
// read-only, which stops no connect(2). So the server checks the peer
// itself ([CheckPeer]): its user must be the box's user (the socket's
// mode says so too), and it must run in the server's own PID namespace,
// which every aisan jail and box leaves at its start. The peer is named
// by a pidfd, so a peer that exits and whose PID is reused cannot pass
// as another process.
//
// Grants never widen anything but the hosts a box may name: its mounts,
// its credentials and its network stay as launched. This package carries
// requests; what they may change is the handler's (jail/strictbox).
package control

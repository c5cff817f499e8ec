// Package boxconn is the one connection policy of every server a box can
// reach (the model egress, REAPI and gRPC, the host allow-list proxy): a
// box holds at most MaxConns open connections to one server, so it cannot
// pile up connections, goroutines and descriptors in the host process.
// Connections beyond the cap are not accepted until one closes: they
// wait, unread, in the kernel's backlog (a client sees a slow connect,
// not a reset, and the box alone is slowed).
//
// It is a leaf (standard library only), so that each server shares it
// without importing the others.
package boxconn

import (
	"net"
	"sync"
)

// MaxConns is the cap of a server that names none.
const MaxConns = 64

// Limit is ln with Accept held while max connections it gave are open
// (max <= 0 means MaxConns). Closing a connection frees its place.
func Limit(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = MaxConns
	}
	return &listener{Listener: ln, sem: make(chan struct{}, max)}
}

type listener struct {
	net.Listener
	sem chan struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &conn{Conn: c, release: func() { <-l.sem }}, nil
}

// conn frees its place once, on its first Close.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the connection when it can.
func (c *conn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return nil
}

package main

import (
	"net"
	"sync"
)

// Defaults of the connection bounds.
const (
	// defaultMaxConnections is the default of --max-connections: far more
	// than the clients a server of this kind has (SDK connection pools
	// hold a handful each), few enough that the file descriptors and the
	// memory of a connection each (buffers, a goroutine) stay small.
	defaultMaxConnections = 1024
)

// limitListener accepts at most max connections at a time: once that many
// are open, Accept waits until one closes, and new clients wait in the
// kernel's queue (and time out there) instead of taking the server's file
// descriptors and memory.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

// limitConnections returns ln accepting at most max connections at a time.
func limitConnections(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max)}
}

// Accept waits for a free slot, then for a connection; the slot is freed
// when the connection closes. It returns the listener's error.
func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, free: func() { <-l.slots }}, nil
}

// limitedConn frees its slot once, on the first Close.
type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// FuzzProxyRequest feeds arbitrary bytes to the proxy as a client's side of
// a connection, over net.Pipe. The proxy must not panic, must end the
// connection, must return from Serve when its listener closes, must answer,
// when it answers, with one of its statuses, and must never dial an address
// the rules do not grant.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT 192.0.2.1:80 HTTP/1.1\r\nHost: 192.0.2.1:80\r\n\r\nhello",
		"CONNECT ok.example.com:443 HTTP/1.1\r\n\r\n\x16\x03\x01",
		"CONNECT private.example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT gone.example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\n\r\n",
		"GET http://192.0.2.1/path?q=1 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic eA==\r\nConnection: X\r\nX: 1\r\n\r\n",
		"POST http://ok.example.com:443/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST http://192.0.2.1/ HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
		"HEAD http://192.0.2.1/ HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: 192.0.2.1\r\n\r\n",
		"GET https://192.0.2.1/ HTTP/1.1\r\n\r\n",
		"GET http://[::ffff:192.0.2.1]:80/ HTTP/1.1\r\n\r\n",
		"CONNECT [fe80::1%25eth0]:80 HTTP/1.1\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT 192.0.2.1:80 HTTP/1.1\r\nX: " + string(bytes.Repeat([]byte("a"), 600)) + "\r\n\r\n",
		"CONNECT 192.0.2.1:80",
		"\x00\xff\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	rules := parseRules(f, "192.0.2.1:80", "ok.example.com:443", "private.example.com:443", "gone.example.com:443")
	resolve := fakeResolver(map[string][]string{
		"ok.example.com":      {"203.0.113.7"},
		"private.example.com": {"203.0.113.8", "10.0.0.1"},
	})
	granted := map[string]bool{"192.0.2.1:80": true, "203.0.113.7:443": true}
	statuses := map[int]bool{200: true, 400: true, 403: true, 431: true, 502: true}

	f.Fuzz(func(t *testing.T, request []byte) {
		var upstreams sync.WaitGroup
		p := &Proxy{
			Server:         "fuzz",
			Rules:          rules,
			Resolve:        resolve,
			MaxHeaderBytes: 512,
			HeaderTimeout:  2 * time.Second,
			IdleTimeout:    2 * time.Second,
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if !granted[addr] {
					t.Errorf("dialled %s %s, which the rules do not grant", network, addr)
					return nil, errors.New("not granted")
				}
				up, server := net.Pipe()
				upstreams.Go(func() { fakeUpstream(server) })
				return up, nil
			},
			onPanic: func(v any, stack []byte) { t.Errorf("panic: %v\n%s", v, stack) },
		}
		client, server := net.Pipe()
		defer client.Close()
		client.SetDeadline(time.Now().Add(testDeadline))
		ln := newPipeListener(&halfClosable{Conn: server, eof: make(chan struct{})})
		served := make(chan error, 1)
		go func() { served <- p.Serve(ln) }()

		var answer bytes.Buffer
		read := make(chan error, 1)
		go func() {
			_, err := io.Copy(&answer, client)
			read <- err
		}()
		client.Write(request) // the proxy may stop reading: its error is no failure
		ln.conn.closeWrite()
		if err := <-read; isTimeout(err) {
			t.Fatalf("the proxy did not end the connection; answered %q", answer.Bytes())
		}
		ln.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(testDeadline):
			t.Fatal("Serve did not return after its listener closed")
		}
		upstreams.Wait()

		if answer.Len() == 0 {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(&answer), nil)
		if err != nil {
			t.Fatalf("the proxy answered %q, which is not an HTTP response: %v", answer.Bytes(), err)
		}
		if !statuses[resp.StatusCode] {
			t.Errorf("the proxy answered %s", resp.Status)
		}
	})
}

// fakeUpstream plays a granted host on c: it answers any request with a
// 200 and drains what comes, until the proxy closes c.
func fakeUpstream(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(testDeadline))
	var wg sync.WaitGroup
	wg.Go(func() { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") })
	io.Copy(io.Discard, c)
	c.Close()
	wg.Wait()
}

// halfClosable gives a net.Pipe end the half-close of a TCP connection,
// seen from the proxy's side: after closeWrite, once what the client wrote
// has been read, the proxy reads io.EOF and can still write its answer.
type halfClosable struct {
	net.Conn
	eof  chan struct{}
	once sync.Once
}

func (h *halfClosable) closeWrite() {
	h.once.Do(func() {
		close(h.eof)
		h.Conn.SetReadDeadline(time.Unix(1, 0)) // wakes a read under way
	})
}

func (h *halfClosable) Read(b []byte) (int, error) {
	select {
	case <-h.eof:
		return 0, io.EOF
	default:
	}
	n, err := h.Conn.Read(b)
	if err != nil && isTimeout(err) {
		select {
		case <-h.eof:
			return n, io.EOF
		default:
		}
	}
	return n, err
}

// pipeListener hands out one connection, then waits to be closed.
type pipeListener struct {
	conn   *halfClosable
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener(c *halfClosable) *pipeListener {
	l := &pipeListener{conn: c, conns: make(chan net.Conn, 1), closed: make(chan struct{})}
	l.conns <- c
	return l
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.conn.LocalAddr() }

var _ net.Listener = (*pipeListener)(nil)

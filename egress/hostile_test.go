package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The client of the proxy is the sandboxed server, which may be hostile.

func TestHostileRequests(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		status int // 0: closed without an answer
	}{
		{"header over the bound", "CONNECT example.com:443 HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", 431},
		{"request line over the bound", "GET http://example.com/" + strings.Repeat("a", 20<<10) + " HTTP/1.1\r\n\r\n", 431},
		{"many small headers", "CONNECT example.com:443 HTTP/1.1\r\n" + strings.Repeat("X-A: b\r\n", 3000) + "\r\n", 431},
		{"malformed request line", "HELLO\r\n\r\n", 400},
		{"no version", "CONNECT example.com:443\r\n\r\n", 400},
		{"malformed header", "CONNECT example.com:443 HTTP/1.1\r\nno colon\r\n\r\n", 400},
		{"a TLS hello instead of a request", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400},
		{"binary", "\x00\xff\x00\xff\r\n\r\n", 400},
		{"left mid-request", "CONNECT exam", 0},
	}
	addr := serve(t, &Proxy{Server: "x"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			go func() {
				io.WriteString(c, tt.raw)
				if tt.status == 0 {
					c.(*net.TCPConn).CloseWrite()
				}
			}()
			br := bufio.NewReader(c)
			if tt.status == 0 {
				if rest := readToEnd(t, br); rest != "" {
					t.Errorf("answered %q", rest)
				}
				return
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status %s, want %d", resp.Status, tt.status)
			}
			readToEnd(t, br)
		})
	}
}

// TestSlowloris sends half a request line and stalls: the header timeout
// closes the connection.
func TestSlowloris(t *testing.T) {
	addr := serve(t, &Proxy{Server: "x", HeaderTimeout: 100 * time.Millisecond})
	for _, part := range []string{"", "CONNECT 127.", "CONNECT example.com:443 HTTP/1.1\r\nHost: exa"} {
		c := dial(t, addr)
		io.WriteString(c, part)
		if rest := readToEnd(t, c); rest != "" {
			t.Errorf("after %q, answered %q", part, rest)
		}
	}
}

// TestIdleTunnel leaves a tunnel without traffic: the idle timeout closes
// both ends.
func TestIdleTunnel(t *testing.T) {
	echo := echoServer(t)
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, echo), IdleTimeout: 100 * time.Millisecond})
	resp, br, c := exchange(t, addr, http.MethodConnect, "CONNECT "+echo+" HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	io.WriteString(c, "ping")
	if rest := readToEnd(t, br); rest != "ping" {
		t.Errorf("read %q before the close, want the echo %q", rest, "ping")
	}
}

func TestMaxConns(t *testing.T) {
	addr := serve(t, &Proxy{Server: "x", MaxConns: 2})
	// Two connections that hold their slots, sending nothing: the proxy
	// accepts in order, so the third is the one beyond the bound.
	first := dial(t, addr)
	dial(t, addr)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the third connection got %s, want 503", resp.Status)
	}
	readToEnd(t, br)

	// When one of the two ends, its slot serves the next connection: it
	// gets the proxy's answer to its request, not a 503. The slot is free
	// a moment after the proxy closes the connection, so a 503 before it
	// is retried.
	first.Close()
	for {
		resp, br, _ := exchange(t, addr, http.MethodConnect, "CONNECT example.com:443 HTTP/1.1\r\n\r\n")
		readToEnd(t, br)
		if resp.StatusCode == http.StatusForbidden {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %s", resp.Status)
		}
	}
}

func TestDenialsKeepsTheNewest(t *testing.T) {
	reportedBy := &collected[Denial]{}
	p := &Proxy{Server: "ring", OnDenied: reportedBy.add}
	addr := serve(t, p)
	before := time.Now()
	for i := range 25 {
		resp, br, _ := exchange(t, addr, http.MethodConnect, fmt.Sprintf("CONNECT h%02d.example.com:443 HTTP/1.1\r\n\r\n", i))
		readToEnd(t, br)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %s", resp.Status)
		}
	}
	after := time.Now()
	denials := p.Denials()
	if len(denials) != 20 {
		t.Fatalf("%d denials kept, want 20", len(denials))
	}
	for i, d := range denials {
		want := fmt.Sprintf("h%02d.example.com", i+5)
		if d.Host != want || d.Port != 443 || d.Server != "ring" || d.Reason != ReasonNotAllowed {
			t.Errorf("denial %d is %+v, want %s:443", i, d, want)
		}
		if d.Time.Before(before) || d.Time.After(after) {
			t.Errorf("denial %d has the time %v, outside the test", i, d.Time)
		}
	}
	if reported := reportedBy.get(); len(reported) != 25 || reported[24] != denials[19] {
		t.Errorf("OnDenied was called %d times, the last with %+v", len(reported), reported[len(reported)-1])
	}
	if allowed, denied := p.Counts(); allowed != 0 || denied != 25 {
		t.Errorf("Counts = %d, %d; want 0, 25", allowed, denied)
	}
}

// TestDenialsConcurrent denies from many connections at once while the
// ring and the counts are read: with -race, it checks that they are safe
// for concurrent use.
func TestDenialsConcurrent(t *testing.T) {
	const clients, each = 8, 10
	p := &Proxy{Server: "x"}
	addr := serve(t, p)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for j := range each {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				c.SetDeadline(time.Now().Add(testDeadline))
				fmt.Fprintf(c, "CONNECT h%d-%d.example.com:443 HTTP/1.1\r\n\r\n", i, j)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				c.Close()
				if err != nil || resp.StatusCode != http.StatusForbidden {
					t.Errorf("%v, %v", resp, err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := len(p.Denials()); n > 20 {
				t.Errorf("%d denials kept", n)
			}
			p.Counts()
			runtime.Gosched()
		}
	})
	wg.Wait()
	close(stop)
	reader.Wait()
	if _, denied := p.Counts(); denied != clients*each || len(p.Denials()) != 20 {
		t.Errorf("denied %d, %d kept; want %d, 20", denied, len(p.Denials()), clients*each)
	}
}

// TestServeEnds closes the listener while connections are in every phase:
// Serve returns, every client sees its connection end, and no goroutine is
// left behind.
func TestServeEnds(t *testing.T) {
	echo := echoServer(t)
	before := runtime.NumGoroutine()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{
		Server:  "x",
		Rules:   parseRules(t, echo),
		onPanic: func(v any, stack []byte) { t.Errorf("panic: %v\n%s", v, stack) },
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	addr := ln.Addr().String()

	tunnel := dial(t, addr)
	io.WriteString(tunnel, "CONNECT "+echo+" HTTP/1.1\r\n\r\nping")
	tunnelBr := bufio.NewReader(tunnel)
	if resp, err := http.ReadResponse(tunnelBr, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v, %v", resp, err)
	}
	if buf, err := tunnelBr.Peek(4); err != nil {
		t.Fatalf("read %q, %v through the tunnel", buf, err)
	}
	midHeader := dial(t, addr)
	io.WriteString(midHeader, "CONNECT exa")
	silent := dial(t, addr)

	ln.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(testDeadline):
		t.Fatal("Serve did not return after its listener closed")
	}
	readToEnd(t, tunnelBr)
	readToEnd(t, midHeader)
	readToEnd(t, silent)
	for _, c := range []net.Conn{tunnel, midHeader, silent} {
		c.Close()
	}

	// The echo server's goroutine for the tunnel ends once it has seen
	// the proxy close; wait for that, no more.
	deadline := time.Now().Add(testDeadline)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the proxy:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

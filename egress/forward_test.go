package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is what an upstream server saw of the requests it got.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) last(t *testing.T) *http.Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("the upstream got %d requests, want 1", len(s.reqs))
	}
	return s.reqs[0]
}

// recordingServer answers "hello from PATH" and keeps every request it got.
func recordingServer(t *testing.T) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		io.WriteString(w, "hello from "+r.URL.RequestURI())
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func proxyClient(proxy string, user *url.Userinfo) *http.Client {
	return &http.Client{
		Timeout:   testDeadline,
		Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy, User: user})},
	}
}

func TestForward(t *testing.T) {
	upstream, seen := recordingServer(t)
	p := &Proxy{Server: "x", Rules: parseRules(t, upstream.Listener.Addr().String())}
	addr := serve(t, p)

	resp, err := proxyClient(addr, url.UserPassword("agent", "pw")).Get(upstream.URL + "/path?q=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from /path?q=1" {
		t.Fatalf("got %s %q through the proxy", resp.Status, body)
	}
	r := seen.last(t)
	if r.RequestURI != "/path?q=1" {
		t.Errorf("the upstream got the request URI %q, want the origin form /path?q=1", r.RequestURI)
	}
	if r.Host != upstream.Listener.Addr().String() {
		t.Errorf("the upstream got Host %q", r.Host)
	}
	for _, h := range []string{"Proxy-Authorization", "Proxy-Connection"} {
		if _, ok := r.Header[h]; ok {
			t.Errorf("the upstream got %s", h)
		}
	}
	if allowed, denied := p.Counts(); allowed != 1 || denied != 0 {
		t.Errorf("Counts = %d, %d; want 1, 0", allowed, denied)
	}
}

func TestForwardDropsHopHeaders(t *testing.T) {
	upstream, seen := recordingServer(t)
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, upstream.Listener.Addr().String())})
	host := upstream.Listener.Addr().String()
	raw := "GET http://" + host + "/ HTTP/1.1\r\n" +
		"Host: elsewhere.example\r\n" +
		"Proxy-Authorization: Basic YWdlbnQ6cHc=\r\n" +
		"Proxy-Connection: keep-alive\r\n" +
		"Connection: keep-alive, X-Hop\r\n" +
		"X-Hop: 1\r\n" +
		"Keep-Alive: timeout=5\r\n" +
		"Te: trailers\r\n" +
		"Upgrade: websocket\r\n" +
		"X-End-To-End: kept\r\n\r\n"
	resp, br, _ := exchange(t, addr, http.MethodGet, raw)
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	if !resp.Close {
		t.Errorf("the answer does not say Connection: close")
	}
	readToEnd(t, br)
	r := seen.last(t)
	for _, h := range []string{"Proxy-Authorization", "Proxy-Connection", "X-Hop", "Keep-Alive", "Te", "Upgrade"} {
		if _, ok := r.Header[h]; ok {
			t.Errorf("the upstream got %s", h)
		}
	}
	if r.Header.Get("X-End-To-End") != "kept" {
		t.Errorf("the upstream did not get X-End-To-End")
	}
	if r.Host != host {
		t.Errorf("the upstream got Host %q, want the URL's %q", r.Host, host)
	}
	if ua, ok := r.Header["User-Agent"]; ok {
		t.Errorf("the upstream got User-Agent %q, which the client did not send", ua)
	}
}

// rawServer answers every connection with response once it has read a
// request's header, and closes it.
func rawServer(t *testing.T, response string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(testDeadline))
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, response)
			}
			c.Close()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

func TestForwardResponse(t *testing.T) {
	host := rawServer(t, "HTTP/1.1 200 OK\r\n"+
		"Connection: X-Hop\r\n"+
		"X-Hop: 1\r\n"+
		"Keep-Alive: timeout=5\r\n"+
		"Proxy-Authenticate: Basic\r\n"+
		"X-End-To-End: kept\r\n"+
		"Trailer: X-Sum\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n"+
		"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 11\r\n\r\n")
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, host)})
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		t.Run(proto, func(t *testing.T) {
			resp, br, _ := exchange(t, addr, http.MethodGet, "GET http://"+host+"/ "+proto+"\r\n\r\n")
			body, err := io.ReadAll(resp.Body)
			if err != nil || string(body) != "hello world" {
				t.Fatalf("body %q, %v", body, err)
			}
			readToEnd(t, br)
			for _, h := range []string{"X-Hop", "Keep-Alive", "Proxy-Authenticate"} {
				if v := resp.Header.Get(h); v != "" {
					t.Errorf("the client got the upstream's hop-by-hop header %s: %q", h, v)
				}
			}
			if resp.Header.Get("X-End-To-End") != "kept" {
				t.Errorf("the client did not get X-End-To-End")
			}
			chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
			if want := proto == "HTTP/1.1"; chunked != want {
				t.Errorf("chunked = %v, want %v", chunked, want)
			}
			if proto == "HTTP/1.1" && resp.Trailer.Get("X-Sum") != "11" {
				t.Errorf("trailer %v, want X-Sum: 11", resp.Trailer)
			}
		})
	}
}

// TestForwardStreams sends a body whose second half waits for the upstream
// to have read the first: a proxy that buffered the body would never pass
// it on.
func TestForwardStreams(t *testing.T) {
	firstRead := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := make([]byte, len("first,"))
		if _, err := io.ReadFull(r.Body, first); err != nil {
			t.Errorf("upstream: %v", err)
			return
		}
		close(firstRead)
		rest, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, string(first)+string(rest))
	}))
	defer upstream.Close()
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, upstream.Listener.Addr().String())})

	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, "first,")
		select {
		case <-firstRead:
			io.WriteString(pw, "second")
			pw.Close()
		case <-time.After(testDeadline):
			pw.CloseWithError(io.ErrNoProgress)
		}
	}()
	resp, err := proxyClient(addr, nil).Post(upstream.URL+"/upload", "text/plain", pr)
	if err != nil {
		t.Fatalf("%v (did the proxy wait for the whole body?)", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "first,second" {
		t.Errorf("got %s %q", resp.Status, body)
	}
}

// TestForwardContinue relays the upstream's 100 Continue, which a client
// that sent Expect: 100-continue waits for before its body.
func TestForwardContinue(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // net/http sends 100 Continue here
		io.WriteString(w, "got "+string(body))
	}))
	defer upstream.Close()
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, upstream.Listener.Addr().String())})
	host := upstream.Listener.Addr().String()
	c := dial(t, addr)
	io.WriteString(c, "PUT http://"+host+"/ HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
	buf := make([]byte, len("HTTP/1.1 100 Continue\r\n"))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("read %q, %v; want a 100 Continue before the body", buf, err)
	}
	io.WriteString(c, "body")
	rest := readToEnd(t, c)
	resp, err := http.ReadResponse(bufioReader(rest[strings.Index(rest, "HTTP/1.1 200"):]), nil)
	if err != nil {
		t.Fatalf("%v in %q", err, rest)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "got body" {
		t.Errorf("got %q", body)
	}
}

func TestForwardRefusals(t *testing.T) {
	upstream, seen := recordingServer(t)
	host := upstream.Listener.Addr().String()
	tests := []struct {
		name       string
		raw        string
		status     int
		proxyError string
	}{
		{"host not in allow_hosts", "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 403, ErrorBlocked},
		{"other port of a granted host", "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403, ErrorBlocked},
		{"default port is 80", "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403, ErrorBlocked},
		{"origin form", "GET /path HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400, ""},
		{"https in absolute form", "GET https://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400, ""},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400, ""},
		{"other scheme", "GET ftp://" + host + "/ HTTP/1.1\r\n\r\n", 400, ""},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, ""},
	}
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, host)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, br, _ := exchange(t, addr, http.MethodGet, tt.raw)
			body := readToEnd(t, br)
			if resp.StatusCode != tt.status || resp.Header.Get("X-Proxy-Error") != tt.proxyError {
				t.Errorf("got %s, X-Proxy-Error %q (%s); want %d, %q", resp.Status, resp.Header.Get("X-Proxy-Error"), body, tt.status, tt.proxyError)
			}
		})
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.reqs) != 0 {
		t.Errorf("the upstream got %d requests", len(seen.reqs))
	}
}

package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/logrec"
)

// testDeadline ends a test's connection that hangs, so that a regression
// fails the test instead of hanging it; no test waits for it to pass.
const testDeadline = 10 * time.Second

func parseRules(t testing.TB, entries ...string) []Rule {
	t.Helper()
	var rules []Rule
	for _, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	return rules
}

// serve serves p on a new loopback listener and returns its address. When
// the test ends, it closes the listener and fails the test if Serve does not
// return. A panic serving a connection fails the test.
func serve(t testing.TB, p *Proxy) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if p.onPanic == nil {
		p.onPanic = func(v any, stack []byte) { t.Errorf("panic serving a connection: %v\n%s", v, stack) }
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(testDeadline):
			t.Errorf("Serve did not return after its listener closed")
		}
	})
	return ln.Addr().String()
}

// echoServer returns the address of a server that echoes every connection
// until its client half-closes, then half-closes too. It stops when the test
// ends.
func echoServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				// Plain Reader and Writer: a copy from a socket to
				// itself must not take the splice path.
				io.Copy(struct{ io.Writer }{c}, struct{ io.Reader }{c})
				c.(*net.TCPConn).CloseWrite()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testDeadline))
	t.Cleanup(func() { c.Close() })
	return c
}

// exchange sends raw to the proxy at addr and reads the answer's header; the
// body is left to read from the returned reader.
func exchange(t testing.TB, addr, method, raw string) (*http.Response, *bufio.Reader, net.Conn) {
	t.Helper()
	c := dial(t, addr)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	return resp, br, c
}

// readToEnd reads c until it ends and fails the test if it does not.
func readToEnd(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if isTimeout(err) {
		t.Fatalf("the proxy did not close the connection (read %q)", b)
	}
	return string(b)
}

// fakeResolver answers from a table; a name not in it does not resolve.
func fakeResolver(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		addrs, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

func TestConnect(t *testing.T) {
	echo := echoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)
	closed := closedAddr(t)
	// The public address some tests resolve a name to; the test's Dial
	// takes it to the echo server, as the network would.
	const public = "203.0.113.7"

	tests := []struct {
		name       string
		rules      []string
		resolve    map[string][]string
		target     string
		status     int
		proxyError string // the X-Proxy-Error header
		reason     string // part of the denial's reason, when the policy refuses
		dialled    string // the address the proxy must dial, when not target
	}{
		{name: "address rule", rules: []string{echo}, target: echo, status: 200},
		{name: "name dialled at its checked address", rules: []string{"api.example.com:" + echoPort},
			resolve: map[string][]string{"api.example.com": {public}},
			target:  "API.Example.com.:" + echoPort, status: 200, dialled: public + ":" + echoPort},
		{name: "name and the address rule that grants its loopback address",
			rules:   []string{"svc.example.com:" + echoPort, echo},
			resolve: map[string][]string{"svc.example.com": {"127.0.0.1"}},
			target:  "svc.example.com:" + echoPort, status: 200, dialled: echo},
		{name: "name resolving to loopback", rules: []string{"svc.example.com:" + echoPort},
			resolve: map[string][]string{"svc.example.com": {"127.0.0.1"}},
			target:  "svc.example.com:" + echoPort, status: 403, proxyError: ErrorBlocked,
			reason: "resolves to a loopback address (127.0.0.1)"},
		{name: "name resolving to private", rules: []string{"db.example.com:5432"},
			resolve: map[string][]string{"db.example.com": {"10.0.0.1"}},
			target:  "db.example.com:5432", status: 403, proxyError: ErrorBlocked,
			reason: "resolves to a private address (10.0.0.1)"},
		{name: "one address of several is private", rules: []string{"db.example.com:5432"},
			resolve: map[string][]string{"db.example.com": {public, "10.1.2.3"}},
			target:  "db.example.com:5432", status: 403, proxyError: ErrorBlocked,
			reason: "resolves to a private address (10.1.2.3)"},
		{name: "name resolving to the metadata address", rules: []string{"meta.example.com:80"},
			resolve: map[string][]string{"meta.example.com": {"169.254.169.254"}},
			target:  "meta.example.com:80", status: 403, proxyError: ErrorBlocked,
			reason: "resolves to the cloud metadata address (169.254.169.254)"},
		{name: "name resolving to a mapped loopback address", rules: []string{"v6.example.com:443"},
			resolve: map[string][]string{"v6.example.com": {"::ffff:127.0.0.1"}},
			target:  "v6.example.com:443", status: 403, proxyError: ErrorBlocked,
			reason: "resolves to a loopback address (127.0.0.1)"},
		{name: "host not in allow_hosts", rules: []string{"api.github.com:443"},
			target: "example.com:443", status: 403, proxyError: ErrorBlocked, reason: ReasonNotAllowed},
		{name: "port not in allow_hosts", rules: []string{"api.github.com:443"},
			target: "api.github.com:22", status: 403, proxyError: ErrorBlocked, reason: ReasonNotAllowed},
		{name: "address not in allow_hosts", rules: []string{"127.0.0.1:1"},
			target: echo, status: 403, proxyError: ErrorBlocked, reason: ReasonNotAllowed},
		{name: "subdomain rule does not grant the apex", rules: []string{"*.example.com:443"},
			target: "example.com:443", status: 403, proxyError: ErrorBlocked, reason: ReasonNotAllowed},
		{name: "does not resolve", rules: []string{"gone.example.com:443"},
			target: "gone.example.com:443", status: 502, proxyError: ErrorUnreachable},
		{name: "dial failed", rules: []string{closed}, target: closed, status: 502, proxyError: ErrorUnreachable},
		{name: "no port", rules: []string{"example.com:443"}, target: "example.com", status: 400},
		{name: "port out of range", target: "example.com:70000", status: 400},
		{name: "not a host name", target: "exa_m%20ple.com:443", status: 400},
		{name: "address with a zone", target: "[fe80::1%25lo]:443", status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dialledBy, reportedBy := &collected[string]{}, &collected[Denial]{}
			logs := &logrec.Handler{}
			p := &Proxy{
				Server:  "x",
				Rules:   parseRules(t, tt.rules...),
				Logger:  slog.New(logs),
				Resolve: fakeResolver(tt.resolve),
				Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
					dialledBy.add(addr)
					if strings.HasPrefix(addr, public+":") {
						addr = echo
					}
					var d net.Dialer
					return d.DialContext(ctx, network, addr)
				},
				OnDenied: reportedBy.add,
			}
			addr := serve(t, p)
			// The first bytes of the tunnel come with the request, as a
			// client that does not wait for the 200 sends them.
			raw := fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\nearly,", tt.target)
			resp, br, c := exchange(t, addr, http.MethodConnect, raw)
			dialled := dialledBy.get()
			if resp.StatusCode != tt.status {
				body, _ := io.ReadAll(br)
				t.Fatalf("status %s (%s), want %d", resp.Status, body, tt.status)
			}
			if got := resp.Header.Get("X-Proxy-Error"); got != tt.proxyError {
				t.Errorf("X-Proxy-Error = %q, want %q", got, tt.proxyError)
			}
			if tt.status == 200 {
				checkEcho(t, c, br)
				want := tt.dialled
				if want == "" {
					want = tt.target
				}
				if !slices.Equal(dialled, []string{want}) {
					t.Errorf("dialled %q, want [%s]", dialled, want)
				}
			} else {
				body := readToEnd(t, br)
				if tt.status == 403 && !strings.Contains(body, "do not retry") {
					t.Errorf("the 403's text does not tell an agent not to retry around it: %q", body)
				}
				if tt.status == 403 && len(dialled) > 0 {
					t.Errorf("dialled %q for a refused connection", dialled)
				}
			}

			allowed, denied := p.Counts()
			denials := p.Denials()
			reported := reportedBy.get()
			if tt.reason == "" {
				if denied != 0 || len(denials) != 0 || len(reported) != 0 {
					t.Errorf("denied %d, Denials %v, OnDenied %v: want none", denied, denials, reported)
				}
				if wantAllowed := uint64(len(dialled)); allowed != wantAllowed {
					t.Errorf("allowed %d, want %d", allowed, wantAllowed)
				}
				return
			}
			if allowed != 0 || denied != 1 || len(denials) != 1 || len(reported) != 1 {
				t.Fatalf("Counts %d, %d; Denials %v; OnDenied %v: want one denial", allowed, denied, denials, reported)
			}
			d := denials[0]
			host, port, _ := net.SplitHostPort(tt.target)
			if d.Server != "x" || d.Host != strings.ToLower(host) || fmt.Sprint(d.Port) != port || d.Reason != tt.reason || d.Time.IsZero() {
				t.Errorf("denial %+v, want server x, host %s, port %s, reason %q", d, host, port, tt.reason)
			}
			if reported[0] != d {
				t.Errorf("OnDenied got %+v, Denials has %+v", reported[0], d)
			}
			recs := logs.Records("sandbox denied")
			if len(recs) != 1 {
				t.Fatalf("%d \"sandbox denied\" records, want 1", len(recs))
			}
			for k, want := range map[string]string{"server": "x", "kind": "egress", "host": d.Host, "port": port, "reason": tt.reason} {
				if got := recs[0].Attrs[k].String(); got != want {
					t.Errorf("log attribute %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// checkEcho checks a tunnel to the echo server both ways, and that a
// half-close passes through it: the client's end of input reaches the
// server, whose answer still comes back, then the server's end.
func checkEcho(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	if _, err := io.WriteString(c, "hello"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("early,hello"))
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "early,hello" {
		t.Fatalf("read %q, %v through the tunnel; want %q", buf, err, "early,hello")
	}
	if _, err := io.WriteString(c, " and goodbye"); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	if rest := readToEnd(t, br); rest != " and goodbye" {
		t.Errorf("after the half-close, read %q; want %q", rest, " and goodbye")
	}
}

func TestConnectHTTPS(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secret of "+r.URL.Path)
	}))
	defer upstream.Close()
	addr := serve(t, &Proxy{Server: "x", Rules: parseRules(t, upstream.Listener.Addr().String())})
	client := upstream.Client()
	client.Timeout = testDeadline
	client.Transport.(*http.Transport).Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: addr})
	resp, err := client.Get(upstream.URL + "/door")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "secret of /door" {
		t.Errorf("got %s %q through the proxy", resp.Status, body)
	}
}

// collected keeps what callbacks on the proxy's goroutines got.
type collected[T any] struct {
	mu sync.Mutex
	v  []T
}

func (c *collected[T]) add(v T) {
	c.mu.Lock()
	c.v = append(c.v, v)
	c.mu.Unlock()
}

func (c *collected[T]) get() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.v)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

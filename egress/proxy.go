package egress

// One connection is one request. The proxy reads the request's header
// itself (http.ReadRequest, under a size bound and a deadline), decides,
// and then either splices a CONNECT tunnel or forwards one plain-HTTP
// request and answers "Connection: close". It does not use http.Server:
// the proxy needs its own bounds on every phase of a connection, to close
// every connection when its listener closes and to wait for them, and to
// keep a client that is the sandboxed server itself from holding anything
// it cannot bound. Clients open a new connection for the next request,
// which every proxy client does when told to close.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The defaults of the Proxy's bounds.
const (
	defaultMaxConns       = 64
	defaultMaxHeaderBytes = 16 << 10
	defaultHeaderTimeout  = 10 * time.Second
	defaultIdleTimeout    = 5 * time.Minute
)

const (
	dialTimeout            = 10 * time.Second       // resolving and connecting, together
	writeTimeout           = 10 * time.Second       // writing one of the proxy's own answers
	lingerTimeout          = 500 * time.Millisecond // reading what a client still sends after its answer
	lingerBytes            = 256 << 10              // … and how much of it
	maxResponseHeaderBytes = 1 << 20                // an upstream's response header (net/http's default)
	max1xx                 = 16                     // informational answers relayed before the final one
	keptDenials            = 20
)

// Values of the X-Proxy-Error header on the proxy's own answers.
const (
	// ErrorBlocked marks a 403: the sandbox's policy refused the connection.
	ErrorBlocked = "blocked-by-mcphost-sandbox"
	// ErrorUnreachable marks a 502: a granted host did not resolve, or no
	// address of it answered.
	ErrorUnreachable = "upstream-unreachable"
	// ErrorUpstream marks a 502: a granted host's answer to a plain-HTTP
	// request was not one the proxy could pass on.
	ErrorUpstream = "upstream-failed"
)

// ReasonNotAllowed is the reason of a [Denial] of a host and port that no
// rule grants; the others say what the name resolves to.
const ReasonNotAllowed = "not in allow_hosts"

// Proxy is the egress proxy of one contained stdio server: the only way out
// of the server's network namespace. It serves HTTP proxy requests (CONNECT
// host:port for TLS and any TCP tunnel; plain HTTP in absolute form) and lets
// through only those to a host and port its Rules grant. A name is resolved
// once; every address it resolves to is checked (see [Proxy.Serve]) and the
// connection goes to a checked address, never to the name again.
//
// The client is the sandboxed server and is not trusted: each phase of a
// connection has a bound. The fields are read when a connection arrives and
// must not change while Serve runs.
type Proxy struct {
	// Server is the name of the server the proxy serves, for logs and
	// denials.
	Server string
	// Rules are the server's allow_hosts.
	Rules []Rule
	// Logger receives a Warn line for every denial and a Debug line for
	// every connection let through; nil discards.
	Logger *slog.Logger
	// Resolve resolves a host name; nil uses net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address ("ip:port"); nil uses a net.Dialer. The
	// context ends when the dial has taken too long.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnDenied, when set, is called for every connection the policy
	// refuses, on the connection's goroutine, before the client gets its
	// 403.
	OnDenied func(Denial)

	// MaxConns bounds the connections open at once (default 64): one more
	// is answered 503 and closed.
	MaxConns int
	// MaxHeaderBytes bounds a request's line and header (default 16 KiB):
	// a longer one is answered 431 and closed.
	MaxHeaderBytes int
	// HeaderTimeout bounds the time a client has to send its request's
	// line and header (default 10 s); then the connection is closed.
	HeaderTimeout time.Duration
	// IdleTimeout closes a tunnel or a forwarded request when no byte has
	// moved either way for this long (default 5 minutes).
	IdleTimeout time.Duration

	allowed, denied atomic.Uint64

	mu     sync.Mutex
	ring   [keptDenials]Denial
	denial int // denials recorded; the newest is ring[(denial-1)%keptDenials]

	// onPanic replaces the Error log of a panic serving a connection
	// (tests fail on it).
	onPanic func(v any, stack []byte)
}

// Denial is a connection the sandbox's policy refused.
type Denial struct {
	Server string    `json:"server"` // the server that asked
	Host   string    `json:"host"`   // the host it asked for: a name, lower-case, or an address
	Port   uint16    `json:"port"`   // the port it asked for
	Reason string    `json:"reason"` // ReasonNotAllowed, or "resolves to a loopback address (127.0.0.1)" and the like
	Time   time.Time `json:"time"`   // when
}

// Counts returns how many connections the policy let through and how many
// it refused since the proxy was made. A connection let through whose host
// then did not answer counts as allowed.
func (p *Proxy) Counts() (allowed, denied uint64) {
	return p.allowed.Load(), p.denied.Load()
}

// Denials returns the last 20 denials, the newest last.
func (p *Proxy) Denials() []Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(p.denial, keptDenials)
	out := make([]Denial, 0, n)
	for i := p.denial - n; i < p.denial; i++ {
		out = append(out, p.ring[i%keptDenials])
	}
	return out
}

// Serve serves proxy requests on ln until ln is closed; then it closes every
// connection it has open, waits for their goroutines to end, and returns
// nil. It returns an error when Accept fails otherwise. Serve may run on
// several listeners at once; they share the counts and denials.
//
// A request is let through when a Rule grants its host and port and, for a
// host name, when none of the addresses the name resolves to is one of the
// machine's own or of its networks (loopback, unspecified, link-local with
// the cloud metadata address, private, shared, multicast, reserved), unless
// an address rule grants that very address and port: an operator who writes
// "127.0.0.1:8080" means it. Anything else gets a 403 with the header
// "X-Proxy-Error: blocked-by-mcphost-sandbox" and a text that tells an agent
// not to retry around it, and is logged, counted, kept among the
// [Proxy.Denials] and passed to OnDenied.
func (p *Proxy) Serve(ln net.Listener) error {
	// The connections live as long as the listener, which is the server's
	// network namespace: no caller's context bounds them, closing ln does.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	slots := make(chan struct{}, positive(p.MaxConns, defaultMaxConns))
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// As net/http does: out of descriptors or a connection
			// aborted before Accept is a reason to wait, not to stop.
			if t, ok := err.(interface{ Temporary() bool }); ok && t.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				p.logger().Warn("egress accept failed", "server", p.Server, "err", err)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("egress: %q: accept: %w", p.Server, err)
		}
		backoff = 0
		select {
		case slots <- struct{}{}:
		default:
			p.busy(c, cap(slots))
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			p.serveConn(ctx, c)
		})
	}
}

// busy answers a connection beyond MaxConns. It runs on the accept loop:
// the answer is small enough for any new socket's buffer, and its deadline
// bounds it all the same.
func (p *Proxy) busy(c net.Conn, limit int) {
	p.logger().Warn("egress connection refused", "server", p.Server, "reason", "too many connections", "limit", limit)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	writeAnswer(c, http.StatusServiceUnavailable, "", fmt.Sprintf(
		"mcphost sandbox: server %q has %d connections open through its proxy, the most it may; retry when one has closed.",
		p.Server, limit))
	c.Close()
}

// serveConn serves the one request of a connection.
func (p *Proxy) serveConn(ctx context.Context, c net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer p.recoverPanic()

	c.SetReadDeadline(time.Now().Add(positive(p.HeaderTimeout, defaultHeaderTimeout)))
	maxHeader := positive(p.MaxHeaderBytes, defaultMaxHeaderBytes)
	conn := &firstError{r: c}
	lim := &io.LimitedReader{R: conn, N: int64(maxHeader)}
	br := bufio.NewReader(lim)
	req, err := http.ReadRequest(br)
	if err != nil {
		switch {
		case lim.N <= 0:
			answer(c, http.StatusRequestHeaderFieldsTooLarge, "", fmt.Sprintf(
				"mcphost proxy: a request's line and header may have %d bytes at most.", maxHeader))
		case conn.err != nil:
			// The client left, or was too slow (what it sent of a line
			// reads as a malformed one): there is no one to answer.
		default:
			answer(c, http.StatusBadRequest, "", fmt.Sprintf("mcphost proxy: %v.", err))
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	lim.N = math.MaxInt64

	// From here on, no byte moving either way for IdleTimeout ends the
	// connection (cancel closes both ends).
	idle := newIdleWatch(positive(p.IdleTimeout, defaultIdleTimeout), cancel)
	defer idle.stop()
	client := &tracked{Conn: c, idle: idle}
	lim.R = client

	t, err := requestTarget(req)
	if err != nil {
		answer(c, http.StatusBadRequest, "", fmt.Sprintf("mcphost proxy: %v.", err))
		return
	}
	up := p.open(ctx, c, t)
	if up == nil {
		return
	}
	defer up.Close()
	stopUp := context.AfterFunc(ctx, func() { up.Close() })
	defer stopUp()
	upstream := &tracked{Conn: up, idle: idle}
	if req.Method == http.MethodConnect {
		tunnel(br, client, upstream)
	} else {
		forward(br, client, upstream, req)
	}
}

// recoverPanic keeps a bug in serving one connection from ending mcphost.
func (p *Proxy) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	stack := debug.Stack()
	if p.onPanic != nil {
		p.onPanic(v, stack)
		return
	}
	p.logger().Error("egress: panic serving a connection", "server", p.Server, "err", v, "stack", string(stack))
}

// target is the host and port a request asks for.
type target struct {
	host string     // a lower-case name without a trailing dot, or addr's text
	addr netip.Addr // set when the request names an address
	port uint16
}

func (t target) String() string { return net.JoinHostPort(t.host, strconv.Itoa(int(t.port))) }

// requestTarget returns where req asks to go: the authority of a CONNECT,
// or the host of an absolute http URL (port 80 unless it names one). It
// refuses, with a reason a client can act on, anything else: a request in
// origin form is a request to a server, not to a proxy.
func requestTarget(req *http.Request) (target, error) {
	if req.ProtoMajor != 1 {
		return target{}, fmt.Errorf("the proxy speaks HTTP/1.x, not %s", req.Proto)
	}
	if req.Method == http.MethodConnect {
		host, port, err := net.SplitHostPort(req.URL.Host)
		if err != nil || req.URL.Host == "" {
			return target{}, fmt.Errorf("CONNECT needs host:port, such as \"CONNECT example.com:443 HTTP/1.1\"")
		}
		return parseTarget(host, port)
	}
	if req.URL.Host == "" {
		return target{}, fmt.Errorf("%s %s is not a proxy request: send CONNECT host:port, or the absolute URL (%s http://host/path)",
			req.Method, req.URL, req.Method)
	}
	if req.URL.Scheme != "http" {
		return target{}, fmt.Errorf("the proxy forwards http:// URLs only: for %s:// use CONNECT host:port", req.URL.Scheme)
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return parseTarget(req.URL.Hostname(), port)
}

// parseTarget checks a requested host and port.
func parseTarget(host, portText string) (target, error) {
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return target{}, fmt.Errorf("the port %q is not a number from 1 to 65535", portText)
	}
	t := target{port: uint16(port)}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return target{}, fmt.Errorf("the address %q has a zone", host)
		}
		t.addr = a.Unmap()
		t.host = t.addr.String()
		return t, nil
	}
	t.host = strings.TrimSuffix(strings.ToLower(host), ".")
	if problem := nameProblem(t.host); problem != "" {
		return target{}, fmt.Errorf("the host %q %s", host, problem)
	}
	return t, nil
}

// open decides on a connection to t and makes it: the policy first, then
// the addresses a name resolves to, then the dial, to a checked address. On
// a refusal or a failure it answers the client itself and returns nil.
func (p *Proxy) open(ctx context.Context, c net.Conn, t target) net.Conn {
	if _, ok := Allowed(p.Rules, t.host, t.port); !ok {
		p.deny(c, t, ReasonNotAllowed, t.String())
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addrs := []netip.Addr{t.addr}
	if !t.addr.IsValid() {
		found, err := p.resolve(ctx, t.host)
		if err != nil || len(found) == 0 {
			p.unreachable(c, t, "does not resolve", err)
			return nil
		}
		addrs = addrs[:0]
		for _, a := range found {
			a = a.Unmap().WithZone("")
			if what := forbidden(a); what != "" {
				if _, ok := Allowed(p.Rules, a.String(), t.port); !ok {
					p.deny(c, t, fmt.Sprintf("resolves to %s (%s)", what, a), netip.AddrPortFrom(a, t.port).String())
					return nil
				}
			}
			addrs = append(addrs, a)
		}
	}
	p.allowed.Add(1)
	var err error
	for _, a := range addrs {
		addr := netip.AddrPortFrom(a, t.port).String()
		var up net.Conn
		if up, err = p.dial(ctx, "tcp", addr); err == nil {
			p.logger().Debug("egress allowed", "server", p.Server, "kind", "egress", "host", t.host, "port", t.port, "addr", addr)
			return up
		}
		if ctx.Err() != nil {
			break
		}
	}
	p.unreachable(c, t, "dial failed", err)
	return nil
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if p.Resolve != nil {
		return p.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, network, addr)
}

// deny refuses a connection to t by policy: it records, logs and reports
// the denial, then answers 403. grant is the allow_hosts entry that would
// let it through.
func (p *Proxy) deny(c net.Conn, t target, reason, grant string) {
	d := Denial{Server: p.Server, Host: t.host, Port: t.port, Reason: reason, Time: time.Now()}
	p.denied.Add(1)
	p.mu.Lock()
	p.ring[p.denial%keptDenials] = d
	p.denial++
	p.mu.Unlock()
	p.logger().Warn("sandbox denied", "server", p.Server, "kind", "egress", "host", t.host, "port", t.port, "reason", reason)
	if p.OnDenied != nil {
		p.OnDenied(d)
	}
	answer(c, http.StatusForbidden, ErrorBlocked, fmt.Sprintf(
		"mcphost sandbox: server %q may not connect to %s (%s). "+
			"This is a policy of the operator; do not retry through another host, port or protocol. "+
			"An operator can grant it with sandbox { allow_hosts = [%q] }.",
		p.Server, t, reason, grant))
}

// unreachable answers 502 for a granted host that could not be reached.
func (p *Proxy) unreachable(c net.Conn, t target, reason string, err error) {
	p.logger().Debug("egress upstream unreachable", "server", p.Server, "kind", "egress", "host", t.host, "port", t.port, "reason", reason, "err", err)
	answer(c, http.StatusBadGateway, ErrorUnreachable, fmt.Sprintf("mcphost proxy: %s %s.", t, reason))
}

var discard = slog.New(slog.DiscardHandler)

func (p *Proxy) logger() *slog.Logger {
	if p.Logger == nil {
		return discard
	}
	return p.Logger
}

// tunnel answers a CONNECT and splices the client and the upstream until
// both directions have ended. cr is the client's side to read: it holds
// what the client sent after its request.
func tunnel(cr io.Reader, client, upstream *tracked) {
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { splice(upstream, cr, client) })
	splice(client, upstream, upstream)
	wg.Wait()
}

// splice copies src to dst. When src ends, it half-closes dst, so that the
// other direction can still finish; on an error, or when dst cannot be
// half-closed, it closes both connections, which ends the other direction
// too.
func splice(dst *tracked, src io.Reader, srcConn *tracked) {
	buf := copyBuffers.Get().(*[]byte)
	_, err := io.CopyBuffer(dst, src, *buf)
	copyBuffers.Put(buf)
	if err == nil && closeWrite(dst.Conn) == nil {
		return
	}
	dst.Close()
	srcConn.Close()
}

// copyBuffers are the buffers of splice: two per tunnel, 32 KiB each, as
// io.Copy would allocate them.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// hopHeaders are the headers of one connection, which a proxy does not pass
// on (RFC 9110 §7.6.1), with the proxy's own credentials.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// forward passes one plain-HTTP request on to upstream, in origin form and
// without its hop-by-hop headers, and its answer back to the client; both
// bodies are streamed. cr is the client's side to read, with the request's
// body.
func forward(cr io.Reader, client, upstream *tracked, req *http.Request) {
	removeHopHeaders(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // or Request.Write adds Go's
	}
	req.RequestURI = ""
	req.Close = true
	sent := make(chan error, 1)
	go func() {
		err := req.Write(upstream)
		if err != nil {
			upstream.Close() // the upstream waits for a body that will not come
		}
		sent <- err
	}()
	// endRequest ends the request's goroutine: the upstream is closed, and
	// a client still sending the body has a moment to stop.
	endRequest := func() {
		upstream.Close()
		client.SetReadDeadline(time.Now().Add(lingerTimeout))
		<-sent
		client.SetReadDeadline(time.Time{})
	}

	resp, err := readResponse(upstream, req, client)
	if err != nil {
		endRequest()
		answer(client.Conn, http.StatusBadGateway, ErrorUpstream, fmt.Sprintf("mcphost proxy: the answer from %s: %v.", req.Host, err))
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	resp.Close = true
	if !req.ProtoAtLeast(1, 1) {
		resp.TransferEncoding = nil // an HTTP/1.0 client reads the body to the close
	}
	resp.Write(client)
	closeWrite(client.Conn)
	endRequest()
}

// readResponse reads the final answer to req from upstream, relaying the
// informational ones (100 Continue) to the client.
func readResponse(upstream *tracked, req *http.Request, client io.Writer) (*http.Response, error) {
	lim := &io.LimitedReader{R: upstream}
	br := bufio.NewReader(lim)
	for range max1xx {
		lim.N = maxResponseHeaderBytes
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			if lim.N <= 0 {
				return nil, fmt.Errorf("a header larger than %d bytes", maxResponseHeaderBytes)
			}
			return nil, err
		}
		lim.N = math.MaxInt64
		switch {
		case resp.StatusCode >= 200:
			return resp, nil
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("a switch of protocols, which the proxy does not carry (use CONNECT)")
		}
		removeHopHeaders(resp.Header)
		var b strings.Builder
		fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
		resp.Header.Write(&b)
		b.WriteString("\r\n")
		if _, err := io.WriteString(client, b.String()); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("more than %d informational answers", max1xx)
}

// answer writes one of the proxy's own answers and closes c gently: it
// half-closes c and reads, for a moment, what the client still sends, so
// that the close does not reset the connection before the client has read
// the answer.
func answer(c net.Conn, code int, proxyError, text string) {
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if writeAnswer(c, code, proxyError, text) != nil {
		return
	}
	if closeWrite(c) != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, io.LimitReader(c, lingerBytes))
}

func writeAnswer(w io.Writer, code int, proxyError, text string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
	if proxyError != "" {
		fmt.Fprintf(&b, "X-Proxy-Error: %s\r\n", proxyError)
	}
	fmt.Fprintf(&b, "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n", len(text)+1, text)
	_, err := io.WriteString(w, b.String())
	return err
}

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// firstError is a reader that keeps the first error it read.
type firstError struct {
	r   io.Reader
	err error
}

func (f *firstError) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// tracked is a connection whose reads and writes count as activity.
type tracked struct {
	net.Conn
	idle *idleWatch
}

func (t *tracked) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	if n > 0 {
		t.idle.touch()
	}
	return n, err
}

func (t *tracked) Write(b []byte) (int, error) {
	n, err := t.Conn.Write(b)
	if n > 0 {
		t.idle.touch()
	}
	return n, err
}

// idleWatch calls expire once nothing has touched it for timeout. One timer
// serves a connection in both directions: a long download with nothing
// sent the other way is not idle.
type idleWatch struct {
	start   time.Time
	last    atomic.Int64 // time.Since(start) at the latest touch
	timeout time.Duration
	expire  func()

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

func newIdleWatch(timeout time.Duration, expire func()) *idleWatch {
	w := &idleWatch{start: time.Now(), timeout: timeout, expire: expire}
	w.mu.Lock()
	w.timer = time.AfterFunc(timeout, w.check)
	w.mu.Unlock()
	return w
}

func (w *idleWatch) touch() { w.last.Store(int64(time.Since(w.start))) }

func (w *idleWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	idle := time.Since(w.start) - time.Duration(w.last.Load())
	if idle < w.timeout {
		w.timer.Reset(w.timeout - idle)
		return
	}
	w.done = true
	w.expire()
}

// stop ends the watch; when it returns, expire is not running and will not
// run.
func (w *idleWatch) stop() {
	w.mu.Lock()
	w.done = true
	w.timer.Stop()
	w.mu.Unlock()
}

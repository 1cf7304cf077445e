package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"testing"

	"github.com/mcphost/mcphost/internal/benchpair"
)

// BenchmarkConnect measures a connection through the proxy against its
// physical limit, a direct connection to the same echo server in the same
// run: connect (CONNECT through the proxy, its 200 read), send 1 KiB, read
// it back, close. The proxy's share is the policy check, a second
// connection and the splice.
func BenchmarkConnect(b *testing.B) {
	echo := echoServer(b)
	proxy := serve(b, &Proxy{Server: "bench", Rules: parseRules(b, echo)})
	payload := bytes.Repeat([]byte("x"), 1<<10)
	roundTrip := func(c net.Conn, r io.Reader) error {
		if _, err := c.Write(payload); err != nil {
			return err
		}
		got := make([]byte, len(payload))
		if _, err := io.ReadFull(r, got); err != nil {
			return err
		}
		if !bytes.Equal(got, payload) {
			return fmt.Errorf("read back %d bytes that differ", len(got))
		}
		return nil
	}
	direct := func() error {
		c, err := net.Dial("tcp", echo)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testDeadline))
		return roundTrip(c, c)
	}
	connectRequest := "CONNECT " + echo + " HTTP/1.1\r\nHost: " + echo + "\r\n\r\n"
	viaProxy := func() error {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testDeadline))
		if _, err := io.WriteString(c, connectRequest); err != nil {
			return err
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("CONNECT: %s", resp.Status)
		}
		return roundTrip(c, br)
	}
	benchpair.Compare(b, "proxy", direct, viaProxy)
}

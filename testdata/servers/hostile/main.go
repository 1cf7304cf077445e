// Command hostile is a stdio MCP server that tries everything a compromised
// server would, and reports what it reached, so that tests can see what
// mcphost's sandbox leaves open. Every attempt is harmless: files are only
// read or created, connections carry one line, the fork bomb is bounded
// and reaped.
//
// Build (from the module root):
//
//	go build -o hostile ./testdata/servers/hostile
//
// Tool: probe {targets} → structuredContent {"attempts": {NAME: {"reached":
// bool, "detail": "..."}}}; the text is the same JSON. The targets say what
// to try (paths and addresses differ per test):
//
//	read        paths to read (owner token, store, config, file() secret, another server's home, /etc/shadow, /proc/PID/environ)
//	write       paths to create (a shell rc file, .git/hooks/x)
//	tcp         host:port to connect to directly (the daemon's API port)
//	unix        socket paths to connect to
//	udp         host:port to send one datagram to
//	proxy       host:port to CONNECT to through HTTPS_PROXY (expected refused)
//	signal      a pid to send signal 0 to (the daemon)
//	fork        how many processes to try to start at once
//	envPrefix   names or prefixes of variables that must be absent
//
// With -once '<targets JSON>' it prints the report and exits instead of
// serving MCP.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Targets says what to try.
type Targets struct {
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
	TCP       []string `json:"tcp,omitempty"`
	Unix      []string `json:"unix,omitempty"`
	UDP       []string `json:"udp,omitempty"`
	Proxy     []string `json:"proxy,omitempty"`
	Signal    int      `json:"signal,omitempty"`
	Fork      int      `json:"fork,omitempty"`
	EnvPrefix []string `json:"envPrefix,omitempty"`
}

// Attempt is what one try got.
type Attempt struct {
	Reached bool   `json:"reached"`
	Detail  string `json:"detail"`
}

// Report maps each attempt ("read /x", "tcp 127.0.0.1:80") to its result.
type Report struct {
	Attempts map[string]Attempt `json:"attempts"`
	UID      int                `json:"uid"`
}

func run(t Targets) Report {
	r := Report{Attempts: map[string]Attempt{}, UID: os.Getuid()}
	put := func(name string, err error, ok string) {
		if err != nil {
			r.Attempts[name] = Attempt{Detail: err.Error()}
			return
		}
		r.Attempts[name] = Attempt{Reached: true, Detail: ok}
	}
	for _, p := range t.Read {
		b, err := os.ReadFile(p)
		put("read "+p, err, fmt.Sprintf("%d bytes", len(b)))
	}
	for _, p := range t.Write {
		err := os.WriteFile(p, []byte("# written by a hostile server\n"), 0o644)
		put("write "+p, err, "created")
	}
	for _, a := range t.TCP {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err == nil {
			c.Close()
		}
		put("tcp "+a, err, "connected")
	}
	for _, p := range t.Unix {
		c, err := net.DialTimeout("unix", p, 2*time.Second)
		if err == nil {
			c.Close()
		}
		put("unix "+p, err, "connected")
	}
	for _, a := range t.UDP {
		c, err := net.Dial("udp", a)
		if err == nil {
			_, err = c.Write([]byte("hostile datagram\n"))
			c.Close()
		}
		// Sent is not reached: the test checks its listener too.
		put("udp "+a, err, "sent")
	}
	for _, a := range t.Proxy {
		put("proxy "+a, viaProxy(a), "tunnel established")
	}
	if t.Signal > 0 {
		put(fmt.Sprintf("signal %d", t.Signal), syscall.Kill(t.Signal, 0), "signal delivered")
	}
	if t.Fork > 0 {
		n, err := forkMany(t.Fork)
		if n >= t.Fork {
			err = nil
		} else if err == nil {
			err = fmt.Errorf("started %d of %d", n, t.Fork)
		}
		put(fmt.Sprintf("fork %d", t.Fork), err, fmt.Sprintf("started %d processes", n))
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range t.EnvPrefix {
			if strings.HasPrefix(k, p) {
				r.Attempts["env "+k] = Attempt{Reached: true, Detail: "set"}
			}
		}
	}
	return r
}

// viaProxy asks the proxy in HTTPS_PROXY for a tunnel to addr.
func viaProxy(addr string) error {
	p := os.Getenv("HTTPS_PROXY")
	if p == "" {
		return errors.New("no HTTPS_PROXY")
	}
	u, err := url.Parse(p)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy answered %s (%s)", resp.Status, resp.Header.Get("X-Proxy-Error"))
	}
	return nil
}

// forkMany starts up to n sleeping children at once, then ends them all.
func forkMany(n int) (int, error) {
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for i := 0; i < n; i++ {
		c := exec.Command("/bin/sleep", "60")
		if err := c.Start(); err != nil {
			return len(cmds), err
		}
		cmds = append(cmds, c)
	}
	return len(cmds), nil
}

func probe(_ context.Context, _ *mcp.CallToolRequest, t Targets) (*mcp.CallToolResult, Report, error) {
	r := run(t)
	b, _ := json.Marshal(r)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, r, nil
}

func hello(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "still here"}}}, nil, nil
}

func main() {
	once := flag.String("once", "", "print the report for these targets (JSON) and exit")
	flag.Parse()
	if *once != "" {
		var t Targets
		if err := json.Unmarshal([]byte(*once), &t); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		_ = json.NewEncoder(os.Stdout).Encode(run(t))
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "probe", Description: "Tries to reach what a sandboxed server must not, and reports what it reached."}, probe)
	mcp.AddTool(s, &mcp.Tool{Name: "hello", Description: "Answers, to show the server still works."}, hello)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "hostile: %v\n", err)
		os.Exit(1)
	}
}

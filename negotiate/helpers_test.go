package negotiate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	pkgProbeAnswer = "github.com/mcphost/mcphost/testdata/servers/probeanswer"
	pkgModernOnly  = "github.com/mcphost/mcphost/testdata/servers/modernonly"
	pkgLockfile    = "github.com/mcphost/mcphost/testdata/servers/lockfile"
	pkgMisbehave   = "github.com/mcphost/mcphost/testdata/servers/misbehave"
	pkgWellbehaved = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// memCache is an in-memory EraCache that counts its calls.
type memCache struct {
	mu                  sync.Mutex
	m                   map[string]Verdict
	gets, puts, deletes int
}

func newMemCache() *memCache { return &memCache{m: map[string]Verdict{}} }

func (c *memCache) Get(_ context.Context, key string) (Verdict, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	v, ok := c.m[key]
	return v, ok, nil
}

func (c *memCache) Put(_ context.Context, key string, v Verdict) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.puts++
	c.m[key] = v
	return nil
}

func (c *memCache) Delete(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deletes++
	delete(c.m, key)
	return nil
}

func (c *memCache) entry(key string) (Verdict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[storeKey(key)]
	return v, ok
}

func (c *memCache) counts() (gets, puts, deletes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets, c.puts, c.deletes
}

// syncBuffer is a goroutine-safe stderr sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// procs builds commands the way the host does (own process group, stderr
// captured, WaitDelay) and remembers each one, so tests can count process
// starts and check that earlier processes were reaped.
type procs struct {
	bin    string
	args   []string
	stderr syncBuffer

	cmds []*exec.Cmd
	// unreapedAtStart[i] is how many earlier commands had not been waited
	// for when command i was created.
	unreapedAtStart []int
}

func newProcs(t *testing.T, pkg string, args ...string) *procs {
	t.Helper()
	return &procs{bin: testbin.Build(t, pkg), args: args}
}

func (p *procs) newCommand() *exec.Cmd {
	unreaped := 0
	for _, c := range p.cmds {
		if c.Process != nil && c.ProcessState == nil {
			unreaped++
		}
	}
	p.unreapedAtStart = append(p.unreapedAtStart, unreaped)
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stderr = &p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	p.cmds = append(p.cmds, cmd)
	return cmd
}

func (p *procs) starts() int { return len(p.cmds) }

// newClient returns a Spec.Client that counts its calls.
func newClient(calls *int) func() *mcp.Client {
	return func() *mcp.Client {
		if calls != nil {
			*calls++
		}
		return mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: "test"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{},
		})
	}
}

func stdioSpec(p *procs, mode string, d time.Duration) Spec {
	return Spec{
		Name:             "test",
		Mode:             mode,
		Transport:        TransportStdio,
		DiscoveryTimeout: d,
		NewCommand:       p.newCommand,
		Client:           newClient(nil),
	}
}

// connect runs Connect and arranges for the session (and its process group)
// to end with the test.
func connect(t *testing.T, spec Spec) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := Connect(ctx, spec)
	if err == nil {
		t.Cleanup(func() { closeResult(res) })
	}
	return res, err
}

func closeResult(res *Result) {
	_ = res.Session.Close()
	if res.Cmd != nil && res.Cmd.Process != nil {
		_ = syscall.Kill(-res.Cmd.Process.Pid, syscall.SIGKILL)
	}
}

// mustConnect is connect that fails the test on error.
func mustConnect(t *testing.T, spec Spec, p *procs) *Result {
	t.Helper()
	res, err := connect(t, spec)
	if err != nil {
		stderr := ""
		if p != nil {
			stderr = p.stderr.String()
		}
		t.Fatalf("Connect: %v\nserver stderr:\n%s", err, stderr)
	}
	return res
}

// callText calls a tool and returns its one text block.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("tools/call %s: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call %s: content %T", name, res.Content[0])
	}
	return tc.Text
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// record is one line of a fixture's -record file.
type record struct {
	PID    int             `json:"pid"`
	Method string          `json:"method"`
	Call   bool            `json:"call"`
	Meta   json.RawMessage `json:"meta"`
}

func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func methods(recs []record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Method)
	}
	return out
}

func countMethod(recs []record, method string) int {
	n := 0
	for _, r := range recs {
		if r.Method == method {
			n++
		}
	}
	return n
}

// checkModernMeta fails unless meta carries the 2026-07-28 triple.
func checkModernMeta(t *testing.T, what string, meta json.RawMessage) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil || m == nil {
		t.Errorf("%s: _meta %s is not an object", what, meta)
		return
	}
	var version string
	if err := json.Unmarshal(m[mcp.MetaKeyProtocolVersion], &version); err != nil || version != ModernVersion {
		t.Errorf("%s: _meta protocolVersion %s, want %q", what, m[mcp.MetaKeyProtocolVersion], ModernVersion)
	}
	var caps map[string]any
	if err := json.Unmarshal(m[mcp.MetaKeyClientCapabilities], &caps); err != nil || caps == nil {
		t.Errorf("%s: _meta clientCapabilities %s, want an object", what, m[mcp.MetaKeyClientCapabilities])
	}
	var info struct{ Name, Version string }
	if err := json.Unmarshal(m[mcp.MetaKeyClientInfo], &info); err != nil || info.Name != ClientName || info.Version == "" {
		t.Errorf("%s: _meta clientInfo %s, want name %q and a version", what, m[mcp.MetaKeyClientInfo], ClientName)
	}
}

func recordPath(t *testing.T) string { return filepath.Join(t.TempDir(), "frames.jsonl") }

func hasPrefix(s, prefix string) bool { return strings.HasPrefix(s, prefix) }

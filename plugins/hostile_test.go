package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/internal/wasmguest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) == 0 {
		t.Fatalf("result has no content: %+v", r)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] is %T", r.Content[0])
	}
	return tc.Text
}

// runTool runs the result stage for tool with a one-line text result.
func runTool(t *testing.T, s *Set, tool string) (*mcp.CallToolResult, []Outcome, error) {
	t.Helper()
	return s.RunResult(t.Context(), ResultInput{Server: "srv", Tool: tool, Result: textResult("x")})
}

// wantFail checks that err is an *Error for plugin whose message contains
// want, and that the outcome trail says the same.
func wantFail(t *testing.T, res *mcp.CallToolResult, outs []Outcome, err error, plugin, want string) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if pe.Plugin != plugin || !strings.Contains(pe.Err.Error(), want) {
		t.Fatalf("err = %v, want plugin %q and %q", err, plugin, want)
	}
	if res != nil {
		t.Fatalf("a failed run returned a result: %+v", res)
	}
	if len(outs) == 0 || outs[len(outs)-1].Plugin != plugin || !strings.Contains(outs[len(outs)-1].Error, want) {
		t.Fatalf("outcomes = %+v, want the last to be %q with %q", outs, plugin, want)
	}
}

// hostile loads the hostile plugin in mode "tool": the tool name picks the
// behaviour of each call.
func hostile(t *testing.T, rt *Runtime, edit func(*Spec)) *Set {
	t.Helper()
	sp := spec(t, "hostile", "hostile", []string{StageResult, StageDisplay}, map[string]string{"mode": "tool"})
	if edit != nil {
		edit(&sp)
	}
	return load(t, rt, sp)
}

func TestInfiniteLoopStoppedAtTimeout(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, func(sp *Spec) { sp.Timeout = time.Second })
	start := time.Now()
	res, outs, err := runTool(t, s, "loop")
	wantFail(t, res, outs, err, "hostile", "timed out")
	t.Logf("loop stopped after %v", time.Since(start))
	// The next call runs on a fresh instance: its only earlier calls are
	// the warm-up calls of its two stages.
	res, _, err = runTool(t, s, "count")
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "calls=3" {
		t.Errorf("after the loop: %q, want calls=3 (a fresh instance)", got)
	}
	res, _, err = runTool(t, s, "count")
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "calls=4" {
		t.Errorf("next call: %q, want calls=4 (the instance is reused)", got)
	}
}

func TestCancelledCallRetiresInstance(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitBusy(s.pools[0])
		cancel()
	}()
	res, outs, err := s.RunResult(ctx, ResultInput{Server: "srv", Tool: "loop", Result: textResult("x")})
	wantFail(t, res, outs, err, "hostile", "cancel")
	res, _, err = runTool(t, s, "count")
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "calls=3" {
		t.Errorf("after cancel: %q, want calls=3 (a fresh instance)", got)
	}
}

func TestMemoryExhaustion(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, func(sp *Spec) { sp.MemoryLimit = 16 << 20 })
	res, outs, err := runTool(t, s, "alloc")
	wantFail(t, res, outs, err, "hostile", "out of memory")
	if _, _, err := runTool(t, s, "count"); err != nil {
		t.Fatalf("after out of memory: %v", err)
	}
}

func TestMemoryLimitBelowModule(t *testing.T) {
	rt := newRuntime(t, Options{})
	sp := spec(t, "small", "hostile", result, nil)
	sp.MemoryLimit = 1 << 20 // the Go module declares more
	_, errs := rt.Load(t.Context(), []Spec{sp})
	if len(errs) != 1 || errs[0].Field != "memory_limit" {
		t.Fatalf("errs = %v, want one on memory_limit", errs)
	}
	if errs[0].BadModule {
		t.Errorf("a memory limit below the module's is a bad module: %+v", errs[0])
	}
	t.Log(errs[0].Error())
}

func TestPanicTraps(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	res, outs, err := runTool(t, s, "panic")
	wantFail(t, res, outs, err, "hostile", "trap")
	// The guest's stderr names the panic.
	if !strings.Contains(err.Error(), "panic: hostile panic") {
		t.Errorf("err = %v, want the guest's panic message", err)
	}
	if _, _, err := runTool(t, s, "count"); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

func TestInvalidOutputs(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	for tool, want := range map[string]string{
		"notjson":    "not strict JSON",
		"wrongshape": "content must be an array",
		"unknownkey": `unknown key "extra"`,
		"oversized":  "over the 2097152-byte limit",
		"rc":         "status 3",
		"fail":       "plugin error: deliberate failure",
		"http":       "host call refused: HTTP request",
		"varset":     "host call refused: Vars are disabled",
	} {
		t.Run(tool, func(t *testing.T) {
			res, outs, err := runTool(t, s, tool)
			wantFail(t, res, outs, err, "hostile", want)
			if !strings.HasPrefix(tool, "f") && tool != "rc" && tool != "http" && tool != "varset" && !strings.Contains(err.Error(), "invalid output") {
				t.Errorf("err = %v, want an invalid output", err)
			}
		})
	}
}

func TestMissingExport(t *testing.T) {
	rt := newRuntime(t, Options{})
	specs := []Spec{
		spec(t, "ok", "identity", result, nil),
		spec(t, "none", "noexport", result, nil),
		spec(t, "guard-as-result", "app-guard", result, nil),
	}
	s, errs := rt.Load(t.Context(), specs)
	if s != nil {
		t.Error("Load returned a set despite errors")
	}
	if len(errs) != 2 {
		t.Fatalf("errs = %v, want 2", errs)
	}
	for i, e := range errs {
		if e.Plugin != i+1 || e.Field != "path" || !strings.Contains(e.Err.Error(), `does not export "on_result"`) {
			t.Errorf("errs[%d] = %+v", i, e)
		}
		if !e.BadModule {
			t.Errorf("errs[%d] is not a bad module: %+v", i, e)
		}
	}
}

func TestCorruptWasm(t *testing.T) {
	rt := newRuntime(t, Options{})
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("\x00asm\x01\x00\x00\x00this is not a module"), 0o600); err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(wasmPath(t, "identity"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.wasm")
	if err := os.WriteFile(truncated, real[:len(real)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	specs := []Spec{
		{Name: "garbage", Path: garbage, Stages: result},
		{Name: "truncated", Path: truncated, Stages: result},
		{Name: "missing", Path: filepath.Join(dir, "missing.wasm"), Stages: result},
		{Name: "dir", Path: dir, Stages: result},
	}
	_, errs := rt.Load(t.Context(), specs)
	if len(errs) != len(specs) {
		t.Fatalf("errs = %v, want %d", errs, len(specs))
	}
	for i, e := range errs {
		if e.Plugin != i || e.Field != "path" || e.Name != specs[i].Name {
			t.Errorf("errs[%d] = %+v", i, e)
		}
		if !e.BadModule {
			t.Errorf("errs[%d] is not a bad module: %+v", i, e)
		}
		t.Log(e.Error())
	}
}

// startLoopModule is a wasm module, assembled by hand, whose start function
// loops forever: wazero runs it while instantiating, before any export is
// called. It exports an on_result that returns 0, so nothing but the start
// function stands in the way of loading it.
var startLoopModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
	// type section: 0 = () -> (), 1 = () -> i32
	0x01, 0x08, 0x02, 0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7f,
	// function section: func 0 has type 0, func 1 type 1
	0x03, 0x03, 0x02, 0x00, 0x01,
	// export section: "on_result" = func 1
	0x07, 0x0d, 0x01, 0x09, 'o', 'n', '_', 'r', 'e', 's', 'u', 'l', 't', 0x00, 0x01,
	// start section: func 0
	0x08, 0x01, 0x00,
	// code section
	0x0a, 0x0e, 0x02,
	0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // func 0: loop br 0 end end
	0x04, 0x00, 0x41, 0x00, 0x0b, // func 1: i32.const 0 end
}

// TestStartFunctionLoopIsLoadError loads a module whose start function never
// returns: instantiation runs under the warm-up deadline, so Load reports a
// load error instead of hanging (and so would the pool's filler).
func TestStartFunctionLoopIsLoadError(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := filepath.Join(t.TempDir(), "startloop.wasm")
	if err := os.WriteFile(p, startLoopModule, 0o600); err != nil {
		t.Fatal(err)
	}
	// The test's deadline only keeps a regression from hanging the test
	// binary: Load's context ending interrupts instantiation too.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s, errs := rt.Load(ctx, []Spec{{Name: "startloop", Path: p, Stages: result}})
	if s != nil {
		s.Close()
		t.Fatal("Load returned a set")
	}
	if ctx.Err() != nil {
		t.Fatalf("Load returned only when the test's context ended (%v): instantiation is not bounded", errs)
	}
	if len(errs) != 1 || errs[0].Field != "path" || errs[0].Name != "startloop" || !errs[0].BadModule {
		t.Fatalf("errs = %+v, want one on path, a bad module", errs)
	}
	if msg := errs[0].Err.Error(); !strings.Contains(msg, "instantiate") || !strings.Contains(msg, "timed out") || !strings.Contains(msg, "start function") {
		t.Errorf("err = %q, want an instantiation timeout naming the start function", msg)
	}
	t.Log(errs[0].Error())
}

// TestModuleLocksForgotten checks that the per-module compile locks last
// only as long as the loads that use them, failed ones included.
func TestModuleLocksForgotten(t *testing.T) {
	rt := newRuntime(t, Options{})
	id := wasmPath(t, "identity")
	load(t, rt, spec(t, "a", "identity", result, nil), spec(t, "b", "identity", result, nil))
	if _, errs := rt.Load(t.Context(), []Spec{{Name: "c", Path: id, Stages: display, MemoryLimit: pageSize}}); errs == nil {
		t.Fatal("a 64 KiB memory limit loaded")
	}
	rt.mu.Lock()
	n := len(rt.modules)
	rt.mu.Unlock()
	if n != 0 {
		t.Errorf("%d module locks left after the loads", n)
	}
}

func TestSpecErrors(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := wasmPath(t, "identity")
	specs := []Spec{
		{Name: "a", Path: p},
		{Name: "b", Path: p, Stages: []string{"results"}},
		{Name: "c", Path: p, Stages: result, Tools: []string{"["}},
		{Name: "d", Path: p, Stages: result, OnError: "ignore"},
		{Name: "e", Path: p, Stages: result, PoolSize: -1},
		{Name: "e", Path: p, Stages: result},
		{Name: "f", Path: p, Stages: []string{StageResult, StageResult}},
	}
	_, errs := rt.Load(t.Context(), specs)
	want := []struct {
		plugin int
		field  string
	}{{0, "stages"}, {1, "stages"}, {2, "tools"}, {3, "on_error"}, {4, "pool_size"}, {5, "name"}, {6, "stages"}}
	if len(errs) != len(want) {
		t.Fatalf("errs = %v", errs)
	}
	for i, w := range want {
		if errs[i].Plugin != w.plugin || errs[i].Field != w.field {
			t.Errorf("errs[%d] = %+v, want %+v", i, errs[i], w)
		}
	}
}

func TestWarmupFailureIsLoadError(t *testing.T) {
	rt := newRuntime(t, Options{})
	_, errs := rt.Load(t.Context(), []Spec{spec(t, "w", "hostile", result, map[string]string{"mode": "failwarmup"})})
	if len(errs) != 1 || errs[0].Field != "path" || !strings.Contains(errs[0].Err.Error(), "warm-up") {
		t.Fatalf("errs = %v", errs)
	}
	if errs[0].BadModule {
		t.Errorf("a failing warm-up call is a bad module: %+v", errs[0])
	}
	// A bad config of an example plugin fails the same way.
	_, errs = rt.Load(t.Context(), []Spec{spec(t, "r", "redact", result, map[string]string{"pattern": "("})})
	if len(errs) != 1 || !strings.Contains(errs[0].Err.Error(), "redact: config pattern") {
		t.Fatalf("errs = %v", errs)
	}
}

func TestNoFilesEnvArgsClockOrNetwork(t *testing.T) {
	rt := newRuntime(t, Options{})
	t.Setenv("MCPHOST_SECRET_FOR_TEST", "leak")
	s := hostile(t, rt, nil)
	for tool, want := range map[string]string{
		"openfile": "read=true readdir=true create=true", // every attempt failed
		"readenv":  `env=[] home="" args=[]`,
	} {
		res, _, err := runTool(t, s, tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if got := textOf(t, res); got != want {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
	res, _, err := runTool(t, s, "clock")
	if err != nil {
		t.Fatal(err)
	}
	if got, real := textOf(t, res), "year="+time.Now().Format("2006"); got == real {
		t.Errorf("the guest sees the real clock: %q", got)
	}
}

func TestGuestOutputBounded(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	// 16 KiB to stdout: kept in a 4 KiB buffer, the call succeeds.
	if _, outs, err := runTool(t, s, "stdout"); err != nil || outs[0].Changed {
		t.Fatalf("outs = %+v, err = %v", outs, err)
	}
	in := <-s.pools[0].idle
	n := len(in.out.b)
	s.pools[0].idle <- in
	if n != outputBufferBytes {
		t.Errorf("buffer holds %d bytes, want %d", n, outputBufferBytes)
	}
}

func TestPluginLogsRateLimited(t *testing.T) {
	var lines atomic.Int64
	h := countHandler{n: &lines}
	rt := newRuntime(t, Options{Logger: slog.New(h)})
	SetLogLevel(slog.LevelInfo) // process-wide, as main would set it
	t.Cleanup(func() { extism.SetLogLevel(extism.LogLevelOff) })
	s := hostile(t, rt, nil)
	if _, _, err := runTool(t, s, "log"); err != nil { // 100 lines
		t.Fatal(err)
	}
	// The bucket refills at LogPerSecond; the test takes well under 2s.
	if n, most := lines.Load(), int64(wasmguest.LogBurst+2*wasmguest.LogPerSecond); n < 1 || n > most {
		t.Errorf("%d plugin log lines reached the logger, want 1..%d", n, most)
	}
}

// countHandler counts the "plugin log" records.
type countHandler struct{ n *atomic.Int64 }

func (h countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "plugin log" {
		h.n.Add(1)
	}
	return nil
}
func (h countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countHandler) WithGroup(string) slog.Handler      { return h }

func TestOnErrorFailAndSkip(t *testing.T) {
	rt := newRuntime(t, Options{})
	failing := spec(t, "failing", "hostile", result, map[string]string{"mode": "fail"})
	tag := spec(t, "tag", "hostile", result, map[string]string{"mode": "tag", "tag": "+B"})

	t.Run("skip", func(t *testing.T) {
		f := failing
		f.OnError = OnErrorSkip
		s := load(t, rt, f, tag)
		res, outs, err := runTool(t, s, "t")
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "x+B" {
			t.Errorf("text = %q, want x+B", got)
		}
		if len(outs) != 2 || !outs[0].Skipped || !strings.Contains(outs[0].Error, "deliberate failure") || outs[0].Changed ||
			outs[1].Plugin != "tag" || !outs[1].Changed || outs[1].Error != "" {
			t.Errorf("outcomes = %+v", outs)
		}
	})
	t.Run("fail", func(t *testing.T) {
		s := load(t, rt, tag, failing)
		res, outs, err := runTool(t, s, "t")
		wantFail(t, res, outs, err, "failing", "deliberate failure")
		if len(outs) != 2 || !outs[0].Changed || outs[1].Skipped {
			t.Errorf("outcomes = %+v", outs)
		}
	})
}

func TestWidenedCSPRejected(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	in := DisplayInput{
		Server: "srv", Result: textResult("x"),
		Display: Display{Type: "mcp_app", ResourceURI: "ui://a", HTML: "<p>",
			CSP:         &CSP{ConnectDomains: []string{"https://api.example.com"}},
			Permissions: map[string]any{"clipboardWrite": map[string]any{}}},
	}
	for tool, want := range map[string]string{
		"widencsp":      "never widen",
		"addpermission": `permission "camera" added`,
	} {
		in.Tool = tool
		d, outs, err := s.RunDisplay(t.Context(), in)
		var pe *Error
		if !errors.As(err, &pe) || pe.Stage != StageDisplay || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", tool, err, want)
		}
		if d.Type != "" || len(outs) != 1 {
			t.Errorf("%s: display = %+v, outcomes = %+v", tool, d, outs)
		}
	}
}

func TestIsErrorNeverCleared(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	failed := textResult("boom")
	failed.IsError = true
	res, outs, err := s.RunResult(t.Context(), ResultInput{Server: "srv", Tool: "clearerror", Result: failed})
	wantFail(t, res, outs, err, "hostile", "isError cleared")

	res, outs, err = s.RunResult(t.Context(), ResultInput{Server: "srv", Tool: "seterror", Result: textResult("fine")})
	if err != nil || !res.IsError || !outs[0].Changed {
		t.Errorf("setting isError: res = %+v, outs = %+v, err = %v", res, outs, err)
	}
}

func TestChainOrder(t *testing.T) {
	rt := newRuntime(t, Options{})
	a := spec(t, "a", "hostile", result, map[string]string{"mode": "tag", "tag": "A"})
	b := spec(t, "b", "hostile", result, map[string]string{"mode": "tag", "tag": "B"})
	for _, c := range []struct {
		specs []Spec
		want  string
	}{{[]Spec{a, b}, "xAB"}, {[]Spec{b, a}, "xBA"}} {
		s := load(t, rt, c.specs...)
		res, outs, err := runTool(t, s, "t")
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != c.want {
			t.Errorf("text = %q, want %q", got, c.want)
		}
		if len(outs) != 2 || outs[0].Plugin != c.specs[0].Name || outs[1].Plugin != c.specs[1].Name {
			t.Errorf("outcomes = %+v", outs)
		}
	}
}

func TestMatching(t *testing.T) {
	rt := newRuntime(t, Options{})
	sp := spec(t, "tag", "hostile", result, map[string]string{"mode": "tag", "tag": "!"})
	sp.Servers = []string{"fs-*"}
	sp.Tools = []string{"read_*", "git/?og"}
	s := load(t, rt, sp)
	for _, c := range []struct {
		server, tool string
		want         bool
	}{
		{"fs-home", "read_file", true},
		{"fs-home", "read_a/b", true}, // '*' crosses '/'
		{"fs-home", "git/log", true},
		{"fs-home", "write_file", false},
		{"web", "read_file", false},
	} {
		if got := s.Has(StageResult, c.server, c.tool); got != c.want {
			t.Errorf("Has(%q, %q) = %v", c.server, c.tool, got)
		}
		res, outs, err := s.RunResult(t.Context(), ResultInput{Server: c.server, Tool: c.tool, Result: textResult("x")})
		if err != nil {
			t.Fatal(err)
		}
		if ran := len(outs) == 1; ran != c.want || (textOf(t, res) == "x!") != c.want {
			t.Errorf("%s/%s: outcomes %+v, text %q", c.server, c.tool, outs, textOf(t, res))
		}
	}
	if s.Has(StageDisplay, "fs-home", "read_file") {
		t.Error("Has(display) for a result-only plugin")
	}
}

func TestRecycleAfterFixedCalls(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	// An instance's count includes its two warm-up calls, so the first
	// instance serves RecycleAfter-2 calls and the next call finds a fresh one.
	for i := 1; i <= RecycleAfter-1; i++ {
		res, _, err := runTool(t, s, "count")
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("calls=%d", i+2)
		if i == RecycleAfter-1 {
			want = "calls=3"
		}
		if got := textOf(t, res); got != want {
			t.Fatalf("call %d saw %q, want %q", i, got, want)
		}
	}
}

func TestClosedSet(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	s.Close()
	if _, _, err := runTool(t, s, "count"); err == nil {
		t.Error("a closed set ran a plugin")
	}
	s.Close() // idempotent
}

func TestCloseWaitsForCalls(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, func(sp *Spec) { sp.Timeout = 300 * time.Millisecond })
	done := make(chan error, 1)
	go func() {
		_, _, err := runTool(t, s, "loop")
		done <- err
	}()
	waitBusy(s.pools[0])
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the loop call succeeded")
		}
	default:
		t.Error("Close returned before the call in flight")
	}
}

// waitBusy returns once p's only instance is checked out.
func waitBusy(p *pool) {
	for len(p.idle) > 0 {
		time.Sleep(time.Millisecond)
	}
}

func TestRuntimeCloseClosesSets(t *testing.T) {
	rt, err := NewRuntime(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, errs := rt.Load(t.Context(), []Spec{spec(t, "i", "identity", result, nil)})
	if errs != nil {
		t.Fatal(errs)
	}
	if err := rt.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RunResult(t.Context(), ResultInput{Tool: "t", Result: textResult("x")}); err == nil {
		t.Error("a set of a closed runtime ran")
	}
	if _, errs := rt.Load(t.Context(), nil); errs == nil {
		t.Error("a closed runtime loaded")
	}
}

func TestRun(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := hostile(t, rt, nil)
	out, took, err := s.Run(t.Context(), "hostile", StageResult, []byte(`{"server":"s","tool":"count","result":{"content":[]}}`))
	if err != nil || !strings.Contains(string(out), "calls=3") || took <= 0 {
		t.Fatalf("out = %s, took = %v, err = %v", out, took, err)
	}
	_, _, err = s.Run(t.Context(), "hostile", StageResult, []byte(`{"server":"s","tool":"notjson","result":{"content":[]}}`))
	if err == nil || !strings.Contains(err.Error(), "invalid output") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = s.Run(t.Context(), "hostile", StageDisplay, []byte(`{"tool":"widencsp","display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"connectDomains":[]}}}`))
	if err == nil || !strings.Contains(err.Error(), "never widen") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := s.Run(t.Context(), "nope", StageResult, nil); err == nil {
		t.Error("ran an unknown plugin")
	}
}

// TestHammer drives one pool from many goroutines with a plugin that is slow
// on every third call of an instance (slower than the timeout): the slow
// calls time out and are replaced, the others go on, and the pool never
// holds more than its size.
func TestHammer(t *testing.T) {
	rt := newRuntime(t, Options{})
	sp := spec(t, "slow", "hostile", result, map[string]string{"mode": "slowsometimes", "spin": "20000000000"})
	sp.PoolSize = 3
	sp.Timeout = 300 * time.Millisecond
	s := load(t, rt, sp)
	p := s.pools[0]

	stop := make(chan struct{})
	var watch sync.WaitGroup
	var maxLive atomic.Int64
	watch.Go(func() {
		for {
			p.mu.Lock()
			live := p.live
			p.mu.Unlock()
			if int64(live) > maxLive.Load() {
				maxLive.Store(int64(live))
			}
			select {
			case <-stop:
				return
			default:
				time.Sleep(time.Millisecond)
			}
		}
	})

	const workers, calls = 8, 12
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range calls {
				_, outs, err := runTool(t, s, "t")
				switch {
				case err == nil:
					ok.Add(1)
				case strings.Contains(outs[0].Error, "timed out"):
					failed.Add(1)
				default:
					t.Errorf("unexpected failure: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	t.Logf("%d calls succeeded, %d timed out, at most %d instances", ok.Load(), failed.Load(), maxLive.Load())
	if ok.Load() == 0 || failed.Load() == 0 {
		t.Errorf("want both fast and slow calls: %d ok, %d timed out", ok.Load(), failed.Load())
	}
	if maxLive.Load() > int64(sp.PoolSize) {
		t.Errorf("the pool held %d instances, over its size %d", maxLive.Load(), sp.PoolSize)
	}
	// The pool recovers: of three calls in a row at most one is slow.
	recovered := false
	for range 3 {
		if _, _, err := runTool(t, s, "t"); err == nil {
			recovered = true
		}
	}
	if !recovered {
		t.Error("no call succeeded after the hammer")
	}
}

func TestWarnsAboutWASIOutputEnv(t *testing.T) {
	t.Setenv("EXTISM_ENABLE_WASI_OUTPUT", "1")
	var warned atomic.Int64
	rt, err := NewRuntime(Options{Logger: slog.New(levelCounter{slog.LevelWarn, &warned})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(t.Context())
	if warned.Load() != 1 {
		t.Errorf("%d warnings, want 1", warned.Load())
	}
}

// levelCounter counts records at one level.
type levelCounter struct {
	level slog.Level
	n     *atomic.Int64
}

func (h levelCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h levelCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level == h.level {
		h.n.Add(1)
	}
	return nil
}
func (h levelCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h levelCounter) WithGroup(string) slog.Handler      { return h }

package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Set is one config generation's plugins, ready to run. It is safe for
// concurrent use. Close it when the generation is replaced.
//
// Each instance joins its pool after one warm-up call of each of its stage
// exports on a minimal input with server and tool "" (and, for the display
// stage, a display record with type "mcp_app" and everything else empty);
// the call must succeed and its output is ignored. This runs a Go reactor's
// _initialize before any request pays for it, and makes a plugin that cannot
// start a load error.
type Set struct {
	rt     *Runtime
	pools  []*pool // config order
	byName map[string]*pool
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	inflight  sync.WaitGroup
	closeOnce sync.Once
}

var errClosed = errors.New("plugins: set closed")

// Len returns the number of plugins.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.pools)
}

// Names returns the plugins' names in config order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.pools))
	for i, p := range s.pools {
		names[i] = p.spec.Name
	}
	return names
}

// Close waits for the calls in flight, then closes every pool. Calls
// started after Close fail. It is safe to call more than once.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.inflight.Wait()
		s.closeNow()
		s.rt.mu.Lock()
		delete(s.rt.sets, s)
		s.rt.mu.Unlock()
	})
}

func (s *Set) closeNow() {
	s.cancel()
	var wg sync.WaitGroup
	for _, p := range s.pools {
		wg.Go(p.close)
	}
	wg.Wait()
}

func (s *Set) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Has reports whether any plugin runs at stage for this server and tool.
func (s *Set) Has(stage, server, tool string) bool {
	if s == nil {
		return false
	}
	for _, p := range s.pools {
		if p.matches(stage, server, tool) {
			return true
		}
	}
	return false
}

func (p *pool) matches(stage, server, tool string) bool {
	return slices.Contains(p.spec.Stages, stage) && matchAny(p.spec.Servers, server) && matchAny(p.spec.Tools, tool)
}

// matchAny reports whether name matches one of the patterns; no pattern
// matches every name. Patterns have path.Match syntax, but '*' and '?' also
// match '/'.
func matchAny(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	n := strings.ReplaceAll(name, "/", "\x00")
	for _, g := range patterns {
		if g == "*" {
			return true
		}
		if ok, _ := path.Match(strings.ReplaceAll(g, "/", "\x00"), n); ok {
			return true
		}
	}
	return false
}

// prefix encodes the part of a plugin input common to all plugins of a
// run: `{"server":…,"tool":…,"arguments":…,"principal":…`.
func prefix(server, tool string, args json.RawMessage, pr Principal) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if pr.Groups == nil {
		pr.Groups = []string{}
	}
	b, err := json.Marshal(struct {
		Server    string          `json:"server"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Principal Principal       `json:"principal"`
	}{server, tool, args, pr})
	if err != nil {
		return nil, fmt.Errorf("plugins: encode input: %w", err)
	}
	return b[:len(b)-1], nil // drop the closing brace
}

func envelope(pre []byte, key string, value []byte) []byte {
	b := make([]byte, 0, len(pre)+len(key)+len(value)+6)
	b = append(b, pre...)
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, value...)
	return append(b, '}')
}

// RunResult runs every result-stage plugin that matches in.Server and
// in.Tool, in config order, each on the previous one's result. It returns
// the final result (in.Result itself when no plugin changed it) and one
// Outcome per plugin run.
//
// A plugin that fails (see [Error]) with on_error = "skip" passes its input
// on, and its Outcome says so. With on_error = "fail" RunResult stops and
// returns a nil result and an *[Error] naming the plugin: the caller must
// then not show the unprocessed result. Calls on a closed Set fail.
func (s *Set) RunResult(ctx context.Context, in ResultInput) (*mcp.CallToolResult, []Outcome, error) {
	if s == nil || !s.Has(StageResult, in.Server, in.Tool) {
		return in.Result, nil, nil
	}
	if !s.enter() {
		return nil, nil, errClosed
	}
	defer s.inflight.Done()
	pre, err := prefix(in.Server, in.Tool, in.Arguments, in.Principal)
	if err != nil {
		return nil, nil, err
	}
	cur := in.Result
	curEnc, err := encodeResult(cur)
	if err != nil {
		return nil, nil, fmt.Errorf("plugins: encode result: %w", err)
	}
	var outcomes []Outcome
	for _, p := range s.pools {
		if !p.matches(StageResult, in.Server, in.Tool) {
			continue
		}
		var (
			next    *mcp.CallToolResult
			nextEnc []byte
			changed bool
		)
		start := time.Now()
		_, err := p.invoke(ctx, ExportResult, envelope(pre, "result", curEnc), func(out []byte) error {
			var err error
			next, changed, nextEnc, err = validateResult(out, cur, curEnc, in.ValidateStructured)
			return err
		})
		o := Outcome{Plugin: p.spec.Name, Stage: StageResult, DurationMs: ms(time.Since(start))}
		if err != nil {
			o.Error = err.Error()
			if p.spec.OnError == OnErrorSkip {
				o.Skipped = true
				outcomes = append(outcomes, o)
				continue
			}
			outcomes = append(outcomes, o)
			return nil, outcomes, &Error{Plugin: p.spec.Name, Stage: StageResult, Err: err}
		}
		if changed {
			o.Changed = true
			cur, curEnc = next, nextEnc
		}
		outcomes = append(outcomes, o)
	}
	return cur, outcomes, nil
}

// RunDisplay runs every display-stage plugin that matches, in config
// order, each on the previous one's record, and returns the final record.
// Failures are handled as in [Set.RunResult]; with on_error = "fail" the
// returned record is the zero Display and the App must not render.
func (s *Set) RunDisplay(ctx context.Context, in DisplayInput) (Display, []Outcome, error) {
	if s == nil || !s.Has(StageDisplay, in.Server, in.Tool) {
		return in.Display, nil, nil
	}
	if !s.enter() {
		return Display{}, nil, errClosed
	}
	defer s.inflight.Done()
	pre, err := prefix(in.Server, in.Tool, in.Arguments, in.Principal)
	if err != nil {
		return Display{}, nil, err
	}
	resEnc, err := encodeResult(in.Result)
	if err != nil {
		return Display{}, nil, fmt.Errorf("plugins: encode result: %w", err)
	}
	pre = append(append(pre, `,"result":`...), resEnc...)
	cur := in.Display
	curEnc, err := encodeDisplay(cur)
	if err != nil {
		return Display{}, nil, fmt.Errorf("plugins: encode display: %w", err)
	}
	var outcomes []Outcome
	for _, p := range s.pools {
		if !p.matches(StageDisplay, in.Server, in.Tool) {
			continue
		}
		var (
			next    Display
			nextEnc []byte
			changed bool
		)
		start := time.Now()
		_, err := p.invoke(ctx, ExportDisplay, envelope(pre, "display", curEnc), func(out []byte) error {
			var err error
			next, changed, nextEnc, err = validateDisplay(out, cur, curEnc, p.validSource)
			return err
		})
		o := Outcome{Plugin: p.spec.Name, Stage: StageDisplay, DurationMs: ms(time.Since(start))}
		if err != nil {
			o.Error = err.Error()
			if p.spec.OnError == OnErrorSkip {
				o.Skipped = true
				outcomes = append(outcomes, o)
				continue
			}
			outcomes = append(outcomes, o)
			return Display{}, outcomes, &Error{Plugin: p.spec.Name, Stage: StageDisplay, Err: err}
		}
		if changed {
			o.Changed = true
			cur, curEnc = next, nextEnc
		}
		outcomes = append(outcomes, o)
	}
	return cur, outcomes, nil
}

// Run runs one plugin's stage export on a raw input (a result or display
// stage input document, as the contract describes), whatever the plugin's
// servers and tools, and validates the output against that input. It
// returns the plugin's output as it came (empty means unchanged), the time
// the call took and the error, if any (on_error does not apply). It is the
// engine of `mcphost plugin run`.
func (s *Set) Run(ctx context.Context, name, stage string, input []byte) (out []byte, took time.Duration, err error) {
	if s == nil {
		return nil, 0, fmt.Errorf("plugins: no plugin %q", name)
	}
	p := s.byName[name]
	if p == nil {
		return nil, 0, fmt.Errorf("plugins: no plugin %q", name)
	}
	if !slices.Contains(p.spec.Stages, stage) {
		return nil, 0, fmt.Errorf("plugins: plugin %q has no stage %q", name, stage)
	}
	var env struct {
		Result  *mcp.CallToolResult `json:"result"`
		Display *Display            `json:"display"`
	}
	if err := json.Unmarshal(input, &env); err != nil {
		return nil, 0, fmt.Errorf("plugins: input: %w", err)
	}
	if stage == StageDisplay && env.Display == nil {
		return nil, 0, errors.New(`plugins: input: a display stage input needs "display"`)
	}
	var validate func([]byte) error
	if stage == StageResult {
		validate = func(out []byte) error {
			_, _, err := ValidateResultOutput(out, env.Result, nil)
			return err
		}
	} else {
		validate = func(out []byte) error {
			_, _, err := ValidateDisplayOutput(out, *env.Display, p.validSource)
			return err
		}
	}
	if !s.enter() {
		return nil, 0, errClosed
	}
	defer s.inflight.Done()
	start := time.Now()
	out, err = p.invoke(ctx, exportOf(stage), input, validate)
	took = time.Since(start)
	if err != nil {
		return nil, took, &Error{Plugin: name, Stage: stage, Err: err}
	}
	return out, took, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Command client is mcphost's adapter for the client scenarios of the
// official MCP conformance suite (npm @modelcontextprotocol/conformance; see
// ../README.md and ../run.sh).
//
// The suite starts a mock MCP server for one scenario and runs this program
// with the server's URL as the last argument and
//
//	MCP_CONFORMANCE_SCENARIO          the scenario name
//	MCP_CONFORMANCE_PROTOCOL_VERSION  the wire revision under test
//	MCP_CONFORMANCE_CONTEXT           optional JSON with scenario data
//
// It then checks what the mock observed. The program drives mcphost's own
// client stack, the one the daemon uses: a host.Host with one
// streamable_http server, version_negotiation "auto" for the 2026-07-28
// wire (negotiate.Connect: raw server/discover probe, classification, a
// session pinned to the verdict, the header shim, catalog walk) and "legacy"
// for older wires (initialize pinned to 2025-11-25). Tool discovery and
// tool calls go through host.Tools and host.CallTool, so a scenario sees
// exactly the requests mcphost would send.
//
// It exits 0 when the scenario ran as intended and 1 with a message on
// stderr otherwise. Scenarios that need client features mcphost does not
// have (OAuth, sampling, roots) fail at once with "not supported by
// mcphost: …"; they are listed in ../baseline.yml. A server's elicitation
// (a legacy elicitation/create or an input_required round) goes through
// mcphost's own elicitation path (host.CallToolRequest.Elicit, the door the
// CLI uses), answered by acceptDefaults: accept with no content, so the
// host applies the schema's defaults (SEP-1034) and checks the answer
// against the schema before it is sent.
//
// When MCPHOST_CONFORMANCE_OUTCOMES names a file, one line
// "SCENARIO<TAB>ok|fail<TAB>message" is appended to it, so that run.sh can
// tell an adapter failure from a scenario whose checks merely went unexercised.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds. The suite kills a client after its --timeout (run.sh passes 30 s);
// the adapter gives up well before, with a message.
const (
	scenarioDeadline = 25 * time.Second
	discoveryTimeout = 15 * time.Second
	callTimeout      = 10 * time.Second
)

// serverName is the name of the one configured server.
const serverName = "conformance"

// scenarioFunc runs one scenario against a connected host.
type scenarioFunc func(ctx context.Context, s *session, sc map[string]any) error

// scenarios maps each supported scenario to its driver.
var scenarios = map[string]scenarioFunc{
	// Legacy wire (2025-11-25 and earlier).
	"initialize":                          runConnectOnly,
	"tools_call":                          runToolsCall,
	"sse-retry":                           runSSERetry,
	"elicitation-sep1034-client-defaults": runElicitationDefaults,
	// 2026-07-28 wire.
	"request-metadata":                 runConnectOnly,
	"json-schema-ref-no-deref":         runConnectOnly,
	"json-schema-2020-12-preservation": runSchemaPreservation,
	"http-standard-headers":            runStandardHeaders,
	"http-custom-headers":              runCustomHeaders,
	"http-invalid-tool-headers":        runInvalidToolHeaders,
	"sep-2322-client-request-state":    runRequestState,
}

// unsupported explains, per scenario, the client feature mcphost lacks.
func unsupported(scenario string) (string, bool) {
	switch {
	case strings.HasPrefix(scenario, "auth/"):
		return authUnsupported(scenario)
	case strings.HasPrefix(scenario, "sep-2640-"):
		return "the skills extension (SEP-2640)", true
	case strings.Contains(scenario, "sampling"):
		return "sampling (the client advertises no sampling capability)", true
	case strings.Contains(scenario, "roots"):
		return "roots (the client advertises no roots capability)", true
	}
	return "", false
}

func main() {
	if len(os.Args) < 2 {
		fail("", errors.New("usage: conformance-client [ARGS...] SERVER_URL (the suite passes the mock server's URL last)"))
	}
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if scenario == "" {
		fail("", errors.New("MCP_CONFORMANCE_SCENARIO is not set"))
	}
	wire := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	if wire == "" {
		wire = negotiate.LegacyVersion // the suite's own default
	}
	var sc map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			fail(scenario, fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not a JSON object: %v", err))
		}
	}

	if why, ok := unsupported(scenario); ok {
		fail(scenario, errors.New("not supported by mcphost: "+why))
	}
	if strings.HasPrefix(scenario, "auth/") {
		ctx, cancel := context.WithTimeout(context.Background(), scenarioDeadline)
		err := runAuth(ctx, scenario, serverURL, wire, sc)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (the adapter's %s deadline passed)", err, scenarioDeadline)
		}
		cancel()
		if err != nil {
			fail(scenario, err)
		}
		outcome(scenario, "ok", "")
		fmt.Fprintf(os.Stderr, "conformance-client: scenario %q done\n", scenario)
		return
	}
	run, ok := scenarios[scenario]
	if !ok {
		known := make([]string, 0, len(scenarios))
		for name := range scenarios {
			known = append(known, name)
		}
		sort.Strings(known)
		fail(scenario, fmt.Errorf("unknown scenario %q (this adapter knows: %s)", scenario, strings.Join(known, ", ")))
	}

	ctx, cancel := context.WithTimeout(context.Background(), scenarioDeadline)
	defer cancel()
	s, err := connect(ctx, serverURL, wire)
	if err == nil {
		err = run(ctx, s, sc)
		if cerr := s.h.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the host: %w", cerr)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (the adapter's %s deadline passed)", err, scenarioDeadline)
		}
		fail(scenario, err)
	}
	outcome(scenario, "ok", "")
	fmt.Fprintf(os.Stderr, "conformance-client: scenario %q done\n", scenario)
}

// fail reports err and exits 1.
func fail(scenario string, err error) {
	outcome(scenario, "fail", err.Error())
	if scenario == "" {
		fmt.Fprintf(os.Stderr, "conformance-client: %v\n", err)
	} else {
		fmt.Fprintf(os.Stderr, "conformance-client: scenario %q failed: %v\n", scenario, err)
	}
	os.Exit(1)
}

// outcome appends one line to $MCPHOST_CONFORMANCE_OUTCOMES, when set.
func outcome(scenario, result, msg string) {
	path := os.Getenv("MCPHOST_CONFORMANCE_OUTCOMES")
	if path == "" || scenario == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance-client: recording the outcome: %v\n", err)
		return
	}
	defer f.Close()
	msg = strings.Join(strings.Fields(msg), " ") // one line
	// One write of one short line: O_APPEND keeps parallel scenarios apart.
	_, _ = f.WriteString(scenario + "\t" + result + "\t" + msg + "\n")
}

// session is a started host with one ready server.
type session struct {
	h      *host.Host
	status host.ServerStatus
}

// connect starts a host whose only server is the mock at url, negotiated
// for the wire revision, and waits until it is ready.
func connect(ctx context.Context, url, wire string) (*session, error) {
	mode, wantEra := config.NegotiationLegacy, host.EraLegacy
	if wire >= negotiate.ModernVersion {
		mode, wantEra = config.NegotiationAuto, host.EraModern
	}
	level := slog.LevelDebug
	if os.Getenv("MCPHOST_CONFORMANCE_QUIET") != "" {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := &config.Config{Servers: []config.Server{{
		Name:               serverName,
		Transport:          config.TransportStreamableHTTP,
		URL:                url,
		VersionNegotiation: mode,
		StdioProbe:         config.StdioProbeSibling,
		HTTPProbeTimeout:   config.HTTPProbeTimeoutFallback,
		DiscoveryTimeout:   discoveryTimeout,
		CallTimeout:        callTimeout,
		Enabled:            true,
	}}}
	h, err := host.New(cfg, host.Options{Logger: logger, Version: "conformance"})
	if err != nil {
		return nil, err
	}
	h.Start(ctx)
	if err := h.WaitSettled(ctx); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("waiting for the server to connect: %w", err)
	}
	st, err := h.Server(serverName)
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	if st.State != host.StateReady {
		_ = h.Close()
		return nil, fmt.Errorf("connecting with version_negotiation = %q for the %s wire: server is %s: %s", mode, wire, st.State, st.LastError)
	}
	fmt.Fprintf(os.Stderr, "conformance-client: connected: era=%s protocolVersion=%s evidence=%q tools=%d prompts=%d resources=%d\n",
		st.Era, st.ProtocolVersion, st.Evidence, st.Tools, st.Prompts, st.Resources)
	if st.Era != wantEra {
		_ = h.Close()
		return nil, fmt.Errorf("the suite speaks the %s wire, so a %s session was expected, but mcphost connected %s at %s (%s)",
			wire, wantEra, st.Era, st.ProtocolVersion, st.Evidence)
	}
	return &session{h: h, status: st}, nil
}

// tools returns the server's tools as mcphost lists them.
func (s *session) tools() ([]*mcp.Tool, error) {
	ts, err := s.h.Tools(serverName)
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Tool)
	}
	return out, nil
}

// tool returns the listed tool called name.
func (s *session) tool(name string) (*mcp.Tool, error) {
	ts, err := s.tools()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ts, func(t *mcp.Tool) bool { return t.Name == name })
	if i < 0 {
		names := make([]string, 0, len(ts))
		for _, t := range ts {
			names = append(names, t.Name)
		}
		return nil, fmt.Errorf("tool %q not listed (mcphost lists: %s)", name, strings.Join(names, ", "))
	}
	return ts[i], nil
}

// call calls a tool through host.CallTool. A result with isError set is a
// failure too: the mock servers' tools always succeed.
func (s *session) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encoding the arguments of %q: %w", name, err)
	}
	res, err := s.h.CallTool(ctx, host.CallToolRequest{Server: serverName, Tool: name, Arguments: raw, Elicit: acceptDefaults})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return res, fmt.Errorf("tool %q returned an error result: %s", name, resultText(res))
	}
	fmt.Fprintf(os.Stderr, "conformance-client: called %q: %s\n", name, resultText(res))
	return res, nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// acceptDefaults answers every question of a server: accept, leaving each
// field to its default, which mcphost fills in from the requested schema.
func acceptDefaults(_ context.Context, q host.Elicitation) (host.ElicitationAnswer, error) {
	fmt.Fprintf(os.Stderr, "conformance-client: %s asks (%s mode): %q; accepting with the schema's defaults\n", q.Server, q.Mode, q.Message)
	return host.ElicitationAnswer{Action: host.ElicitAccept}, nil
}

// runElicitationDefaults calls the tool that elicits with a schema of
// defaults; the mock checks that each omitted field came back with its
// default.
func runElicitationDefaults(ctx context.Context, s *session, _ map[string]any) error {
	if _, err := s.tool("test_client_elicitation_defaults"); err != nil {
		return err
	}
	_, err := s.call(ctx, "test_client_elicitation_defaults", map[string]any{})
	return err
}

// runRequestState calls the MRTR tools (SEP-2322): two that answer
// input_required (with and without requestState), answered by the
// pipeline's rounds and retried under a new JSON-RPC id with the state
// echoed byte for byte; one called between them, which must carry
// neither; one whose result has no resultType (complete).
func runRequestState(ctx context.Context, s *session, _ map[string]any) error {
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if _, err := s.call(ctx, name, map[string]any{}); err != nil {
			return err
		}
	}
	return nil
}

// runConnectOnly: connecting is the scenario (initialize or server/discover,
// then the catalog walk with tools/list).
func runConnectOnly(context.Context, *session, map[string]any) error { return nil }

// runToolsCall: list tools, call add_numbers(5, 3).
func runToolsCall(ctx context.Context, s *session, _ map[string]any) error {
	if _, err := s.tool("add_numbers"); err != nil {
		return err
	}
	_, err := s.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	return err
}

// runSSERetry: call test_reconnection, whose answer stream the mock closes
// early; the transport must reconnect and still get the result.
func runSSERetry(ctx context.Context, s *session, _ map[string]any) error {
	if _, err := s.tool("test_reconnection"); err != nil {
		return err
	}
	_, err := s.call(ctx, "test_reconnection", map[string]any{})
	return err
}

// runSchemaPreservation echoes the focal tool's inputSchema, as mcphost
// holds it after tools/list, back through json_schema_echo, so the mock can
// see which JSON Schema 2020-12 keywords survived.
func runSchemaPreservation(ctx context.Context, s *session, _ map[string]any) error {
	focal, err := s.tool("json_schema_2020_12_tool")
	if err != nil {
		return err
	}
	if _, err := s.tool("json_schema_echo"); err != nil {
		return err
	}
	_, err = s.call(ctx, "json_schema_echo", map[string]any{"schema": focal.InputSchema})
	return err
}

// runStandardHeaders exercises every request kind mcphost sends, so the mock
// sees Mcp-Method on each and Mcp-Name on tools/call. The catalog walk at
// connect already sent tools/list, prompts/list and resources/list.
// mcphost's host has no resources/read or prompts/get, so the mock's
// Mcp-Name checks for those stay SKIPPED (unexercised), not failed.
func runStandardHeaders(ctx context.Context, s *session, _ map[string]any) error {
	ts, err := s.tools()
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return errors.New("the server lists no tools")
	}
	for _, t := range ts {
		if _, err := s.call(ctx, t.Name, map[string]any{}); err != nil {
			return err
		}
	}
	prompts, err := s.h.Prompts(serverName)
	if err != nil {
		return err
	}
	resources, _, err := s.h.Resources(serverName)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "conformance-client: listed %d prompts and %d resources; "+
		"not supported by mcphost: resources/read and prompts/get (the host has no API for them), so they are not sent\n",
		len(prompts), len(resources))
	return nil
}

// runCustomHeaders makes the tool calls the scenario context names; the mock
// checks their Mcp-Param-* headers (from the tools' x-mcp-header
// annotations, which go-sdk reads from this session's tools/list).
func runCustomHeaders(ctx context.Context, s *session, sc map[string]any) error {
	calls := toolCalls(sc)
	if len(calls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
	}
	for _, c := range calls {
		if _, err := s.call(ctx, c.name, c.args); err != nil {
			return err
		}
	}
	return nil
}

// runInvalidToolHeaders calls every tool mcphost lists: tools whose
// x-mcp-header annotations are invalid must already be gone from the list
// (go-sdk filters them), and the valid one must remain.
func runInvalidToolHeaders(ctx context.Context, s *session, _ map[string]any) error {
	ts, err := s.tools()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(ts, func(t *mcp.Tool) bool { return t.Name == "valid_tool" }) {
		return errors.New("valid_tool is not listed: a malformed tool must not hide the valid ones")
	}
	for _, t := range ts {
		if _, err := s.call(ctx, t.Name, map[string]any{"region": "us-west1"}); err != nil {
			return err
		}
	}
	return nil
}

type toolCall struct {
	name string
	args map[string]any
}

// toolCalls reads {"toolCalls": [{"name": …, "arguments": {…}}, …]}.
func toolCalls(sc map[string]any) []toolCall {
	raw, _ := sc["toolCalls"].([]any)
	var out []toolCall
	for _, item := range raw {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		name, _ := obj["name"].(string)
		args, _ := obj["arguments"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		if name != "" {
			out = append(out, toolCall{name: name, args: args})
		}
	}
	return out
}

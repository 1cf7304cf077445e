package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

const elicitPkg = "github.com/mcphost/mcphost/testdata/servers/elicit"

// eras are the two ways a server asks: a legacy session's requests on
// the session, a 2026-07-28 session's input_required rounds.
var eras = []struct{ name, negotiation, era string }{
	{"legacy", config.NegotiationLegacy, host.EraLegacy},
	{"modern", config.NegotiationAuto, host.EraModern},
}

func elicitServer(t testing.TB, negotiation string, roots ...string) config.Server {
	s := stdioServer("ask", testbin.Build(t, elicitPkg))
	s.VersionNegotiation = negotiation
	s.Roots = roots
	return s
}

// answering is a CLI-door Elicit that accepts with content (nil: the
// schema's defaults are the server's business) and records the questions.
func answering(action string, content map[string]any, asked *[]host.Elicitation) func(context.Context, host.Elicitation) (host.ElicitationAnswer, error) {
	return func(_ context.Context, e host.Elicitation) (host.ElicitationAnswer, error) {
		*asked = append(*asked, e)
		return host.ElicitationAnswer{Action: action, Content: content}, nil
	}
}

// TestElicitOneShotDoor: the CLI's door answers through its Elicit
// function, in both eras, and declines everything without one; what
// mcphost refuses never reaches it.
func TestElicitOneShotDoor(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := startHost(t, host.Options{}, elicitServer(t, era.negotiation, "file:///home/me/project", "file:///srv/data"))
			if st := mustStatus(t, h, "ask"); st.Era != era.era {
				t.Fatalf("era %q, want %q (%s)", st.Era, era.era, st.LastError)
			}
			refusedWant := "error: " // legacy: a JSON-RPC error with the reason
			if era.era == host.EraModern {
				refusedWant = "decline (mcphost refused the elicitation: " // modern: a decline with the reason
			}
			tests := []struct {
				tool    string
				answer  func(context.Context, host.Elicitation) (host.ElicitationAnswer, error)
				want    string // prefix of the result text
				wantIn  string // and a part of it
				asked   int
				wantErr string
			}{
				{tool: "ask_name", want: "hello Bob, 30", asked: 1},
				{tool: "ask_password", want: "user ada, password of 6 bytes", asked: 1},
				{tool: "open_url", want: "accept", asked: 1},
				{tool: "bad_url", want: "decline (mcphost declined the url: ", wantIn: `scheme "javascript" is not http or https`},
				{tool: "deep_schema", want: refusedWant, wantIn: "nested properties"},
				{tool: "huge_schema", want: refusedWant, wantIn: "mcphost accepts at most"},
				{tool: "roots", want: "[file:///home/me/project file:///srv/data]"},
				{tool: "multi", want: "hello Bob; roots [file:///home/me/project file:///srv/data]", asked: 1},
				{tool: "ask_name", answer: func(context.Context, host.Elicitation) (host.ElicitationAnswer, error) {
					return host.ElicitationAnswer{}, errors.New("stdin is not a terminal")
				}, want: "decline (stdin is not a terminal)"},
				{tool: "ask_name", answer: func(context.Context, host.Elicitation) (host.ElicitationAnswer, error) {
					return host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"name": "Bob", "age": 900}}, nil
				}, want: "decline (", wantIn: "maximum"},
			}
			if era.era == host.EraLegacy {
				tests = append(tests,
					struct {
						tool    string
						answer  func(context.Context, host.Elicitation) (host.ElicitationAnswer, error)
						want    string
						wantIn  string
						asked   int
						wantErr string
					}{tool: "sample", want: "error: ", wantIn: "mcphost has no model"},
					struct {
						tool    string
						answer  func(context.Context, host.Elicitation) (host.ElicitationAnswer, error)
						want    string
						wantIn  string
						asked   int
						wantErr string
					}{tool: "loop", want: "asked 20 times: accept,accept,accept,accept,accept,accept,accept,accept,decline", asked: questions.MaxElicitationsPerCall})
			} else {
				tests = append(tests,
					struct {
						tool    string
						answer  func(context.Context, host.Elicitation) (host.ElicitationAnswer, error)
						want    string
						wantIn  string
						asked   int
						wantErr string
					}{tool: "sample", wantErr: "mcphost has no model"},
					struct {
						tool    string
						answer  func(context.Context, host.Elicitation) (host.ElicitationAnswer, error)
						want    string
						wantIn  string
						asked   int
						wantErr string
					}{tool: "loop", wantErr: "still asks for input after 10 rounds", asked: questions.MaxElicitationsPerCall})
			}
			for _, tc := range tests {
				t.Run(tc.tool, func(t *testing.T) {
					var asked []host.Elicitation
					answer := tc.answer
					if answer == nil {
						content := map[string]any{"name": "Bob", "age": 30}
						if tc.tool == "ask_password" {
							content = map[string]any{"user": "ada", "password": "s3cret"}
						}
						if tc.tool == "open_url" {
							content = nil
						}
						if tc.tool == "loop" {
							content = map[string]any{"ok": true}
						}
						answer = answering(host.ElicitAccept, content, &asked)
					}
					res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: tc.tool, Elicit: answer})
					if tc.wantErr != "" {
						if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
							t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
						}
					} else {
						if err != nil {
							t.Fatal(err)
						}
						got := textOf(res)
						if !strings.HasPrefix(got, tc.want) || !strings.Contains(got, tc.wantIn) {
							t.Fatalf("result %q, want it to start with %q and contain %q", got, tc.want, tc.wantIn)
						}
					}
					if tc.answer == nil && len(asked) != tc.asked {
						t.Fatalf("asked %d times, want %d", len(asked), tc.asked)
					}
					for _, e := range asked {
						if e.Server != "ask" || e.Tool != tc.tool || e.CallID == "" {
							t.Fatalf("question %+v does not name its call", e)
						}
					}
				})
			}
			// Without an Elicit function every question is declined.
			res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "ask_name"})
			if err != nil || !strings.HasPrefix(textOf(res), "decline (nobody can answer here") {
				t.Fatalf("no Elicit: %v %q, want a decline saying nobody can answer", err, textOf(res))
			}
		})
	}
}

// waitEvent reads events until one of type typ ("" for any).
func waitEvent(t *testing.T, events <-chan host.Event, typ string) host.Event {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("event stream closed")
			}
			if ev.Type == typ || typ == "" {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", typ)
		}
	}
}

// TestElicitBroker: a session call's question waits in the broker for its
// principal; an answer that does not match the schema is refused and the
// question stays open; another principal can neither see nor answer it;
// the entry records the round with the password redacted.
func TestElicitBroker(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			h := startHost(t, host.Options{Store: st}, elicitServer(t, era.negotiation))
			alice := host.Principal{Name: "alice", Groups: []string{}}
			bob := host.Principal{Name: "bob", Groups: []string{}}
			sess, err := h.CreateSession(t.Context(), alice, "t")
			if err != nil {
				t.Fatal(err)
			}
			events, stop, err := h.Subscribe(host.Caller{Principal: alice})
			if err != nil {
				t.Fatal(err)
			}
			defer stop()

			type result struct {
				entry *store.Entry
				err   error
			}
			done := make(chan result, 1)
			go func() {
				e, err := h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "ask_password", Arguments: json.RawMessage(`{}`)})
				done <- result{e, err}
			}()
			ev := waitEvent(t, events, host.EventElicitation)
			q := ev.Data.(host.Elicitation)
			if q.Mode != questions.ElicitForm || q.Server != "ask" || q.Tool != "ask_password" || q.SessionID != sess.ID || !strings.Contains(string(q.RequestedSchema), `"password"`) {
				t.Fatalf("question %+v", q)
			}
			if got := h.PendingElicitations(alice); len(got) != 1 || got[0].ID != q.ID {
				t.Fatalf("alice's pending %+v", got)
			}
			if got := h.PendingElicitations(bob); len(got) != 0 {
				t.Fatalf("bob sees %+v", got)
			}
			if err := h.AnswerElicitation(bob, q.ID, host.ElicitationAnswer{Action: host.ElicitDecline}); !errors.Is(err, host.ErrNotFound) {
				t.Fatalf("bob's answer: %v, want ErrNotFound", err)
			}
			var ae *host.ElicitationAnswerError
			if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"user": "ada"}}); !errors.As(err, &ae) {
				t.Fatalf("answer without the required password: %v, want an ElicitationAnswerError", err)
			}
			if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: "maybe"}); !errors.As(err, &ae) {
				t.Fatalf("unknown action: %v, want an ElicitationAnswerError", err)
			}
			if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"user": "ada", "password": "hunter2"}}); err != nil {
				t.Fatal(err)
			}
			if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitDecline}); !errors.Is(err, host.ErrNotFound) {
				t.Fatalf("second answer: %v, want ErrNotFound", err)
			}
			doneEv := waitEvent(t, events, host.EventElicitationDone).Data.(questions.ElicitationDone)
			if doneEv.ID != q.ID || doneEv.Outcome != host.ElicitAccept {
				t.Fatalf("done event %+v", doneEv)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !strings.Contains(string(r.entry.Result), "user ada, password of 7 bytes") {
				t.Fatalf("result %s", r.entry.Result)
			}
			var trail pipeline.Trail
			if err := json.Unmarshal(r.entry.Trail, &trail); err != nil {
				t.Fatal(err)
			}
			if len(trail.Input) != 1 {
				t.Fatalf("trail input %+v, want one question", trail.Input)
			}
			in := trail.Input[0]
			wantRound := 0
			if era.era == host.EraModern {
				wantRound = 1
			}
			if in.Kind != "elicitation" || in.Outcome != host.ElicitAccept || in.Round != wantRound || in.Content["user"] != "ada" || in.Content["password"] != "[redacted]" {
				t.Fatalf("trail %+v", in)
			}
			entries, _, err := h.Entries(t.Context(), alice, sess.ID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.Contains(string(e.Trail), "hunter2") || strings.Contains(string(e.Arguments), "hunter2") {
					t.Fatalf("the password is in the transcript: %s", e.Trail)
				}
			}

			// A question nobody answers ends when the call is cancelled.
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				e, err := h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "ask_name", Arguments: json.RawMessage(`{}`)})
				done <- result{e, err}
			}()
			waitEvent(t, events, host.EventElicitation)
			cancel()
			if ev := waitEvent(t, events, host.EventElicitationDone).Data.(questions.ElicitationDone); ev.Outcome != questions.ElicitCancelled {
				t.Fatalf("done %+v, want cancelled", ev)
			}
			<-done
			if got := h.PendingElicitations(alice); len(got) != 0 {
				t.Fatalf("still pending: %+v", got)
			}
		})
	}
}

// TestElicitTimeout: an unanswered question expires after the
// elicitation_timeout, and the server gets a cancel.
func TestElicitTimeout(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// elicitation_timeout, not the approval timeout, bounds the wait.
	h, err := host.New(&config.Config{Servers: []config.Server{elicitServer(t, config.NegotiationLegacy)}, ElicitationTimeout: 50 * time.Millisecond},
		host.Options{Store: st, ApprovalTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(t.Context())
	t.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	alice := host.Principal{Name: "alice", Groups: []string{}}
	sess, err := h.CreateSession(t.Context(), alice, "t")
	if err != nil {
		t.Fatal(err)
	}
	e, err := h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "ask_name", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(e.Result), `"cancel"`) || !strings.Contains(string(e.Trail), `"outcome":"expired"`) {
		t.Fatalf("result %s trail %s, want a cancel recorded as expired", e.Result, e.Trail)
	}
}

// TestElicitAttribution: on a legacy session a question belongs to the
// call in flight; with two calls of one principal in flight, to the most
// recent; with calls of two principals in flight it is declined, saying
// why.
func TestElicitAttribution(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := startHost(t, host.Options{Store: st}, elicitServer(t, config.NegotiationLegacy))
	alice := host.Principal{Name: "alice", Groups: []string{}}
	bob := host.Principal{Name: "bob", Groups: []string{}}
	aliceSess, err := h.CreateSession(t.Context(), alice, "a")
	if err != nil {
		t.Fatal(err)
	}
	bobSess, err := h.CreateSession(t.Context(), bob, "b")
	if err != nil {
		t.Fatal(err)
	}
	aliceEvents, stopA, err := h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stopA()
	bobEvents, stopB, err := h.Subscribe(host.Caller{Principal: bob})
	if err != nil {
		t.Fatal(err)
	}
	defer stopB()
	type result struct {
		entry *store.Entry
		err   error
	}
	start := func(p host.Principal, sid, callID string) chan result {
		done := make(chan result, 1)
		go func() {
			e, err := h.Call(t.Context(), host.SessionCall{Principal: p, SessionID: sid, CallID: callID, Server: "ask", Tool: "ask_name", Arguments: json.RawMessage(`{}`)})
			done <- result{e, err}
		}()
		return done
	}

	// Alice's first call waits for her answer; her second call's question
	// goes to the second call (the most recent in flight).
	first := start(alice, aliceSess.ID, "first")
	if q := waitEvent(t, aliceEvents, host.EventElicitation).Data.(host.Elicitation); q.CallID != "first" {
		t.Fatalf("first question for %q", q.CallID)
	}
	second := start(alice, aliceSess.ID, "second")
	q2 := waitEvent(t, aliceEvents, host.EventElicitation).Data.(host.Elicitation)
	if q2.CallID != "second" {
		t.Fatalf("second question for %q, want the most recent call", q2.CallID)
	}

	// Bob's call while alice's are in flight: nobody can tell whose the
	// question is, so it is declined, and nobody is asked.
	r := <-start(bob, bobSess.ID, "bobs")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(string(r.entry.Result), "calls of 2 principals are in flight") {
		t.Fatalf("bob's result %s, want a decline naming the ambiguity", r.entry.Result)
	}
	select {
	case ev := <-bobEvents:
		if ev.Type == host.EventElicitation {
			t.Fatalf("bob was asked: %+v", ev.Data)
		}
	default:
	}
	for _, q := range h.PendingElicitations(alice) {
		if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitDecline}); err != nil {
			t.Fatal(err)
		}
	}
	for _, done := range []chan result{first, second} {
		if r := <-done; r.err != nil || !strings.Contains(string(r.entry.Result), "decline") {
			t.Fatalf("alice's call: %v %s", r.err, r.entry.Result)
		}
	}
}

// TestRootsReload: a reload that changes only the roots of an unsandboxed
// server keeps its process; the server hears roots/list_changed and lists
// the new roots. Adding the first roots reconnects (the capability
// changes). (A contained server restarts instead: TestRootsFilesystemServer.)
func TestRootsReload(t *testing.T) {
	s := elicitServer(t, config.NegotiationLegacy, "file:///srv/a")
	s.Sandbox.Mode = config.SandboxOff
	h := startHost(t, host.Options{}, s)
	pid := textOf(call(t, h, "ask", "pid", `{}`))
	if got := textOf(call(t, h, "ask", "roots", `{}`)); got != "[file:///srv/a]" {
		t.Fatalf("roots %q", got)
	}
	s.Roots = []string{"file:///srv/b", "file:///srv/c"}
	res, err := h.Reload(t.Context(), &config.Config{Servers: []config.Server{s}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 1 || len(res.Servers) != 1 || strings.Join(res.Servers[0].Changed, ",") != "roots" {
		t.Fatalf("plan %+v, want ask kept with its roots changed", res.Servers)
	}
	if got := textOf(call(t, h, "ask", "pid", `{}`)); got != pid {
		t.Fatalf("pid %s after the reload, want %s (kept)", got, pid)
	}
	if got := textOf(call(t, h, "ask", "roots_changed", `{}`)); got == "0" {
		t.Fatal("the server heard no roots/list_changed")
	}
	if got := textOf(call(t, h, "ask", "roots", `{}`)); got != "[file:///srv/b file:///srv/c]" {
		t.Fatalf("roots after the reload %q", got)
	}

	s.Roots = nil
	res, err = h.Reload(t.Context(), &config.Config{Servers: []config.Server{s}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restarted) != 1 {
		t.Fatalf("plan %+v, want ask restarted: it no longer declares roots", res.Servers)
	}
	if err := h.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := textOf(call(t, h, "ask", "roots", `{}`)); got != "[]" {
		t.Fatalf("roots without any %q, want an empty list", got)
	}
}

// TestElicitTrailURL: the trail keeps a url-mode request's URL without
// its query, which may carry a one-time code.
func TestElicitTrailURL(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := startHost(t, host.Options{Store: st}, elicitServer(t, config.NegotiationLegacy))
	alice := host.Principal{Name: "alice", Groups: []string{}}
	sess, err := h.CreateSession(t.Context(), alice, "t")
	if err != nil {
		t.Fatal(err)
	}
	events, stop, err := h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	done := make(chan *store.Entry, 1)
	go func() {
		e, err := h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "open_url", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Error(err)
		}
		done <- e
	}()
	q := waitEvent(t, events, host.EventElicitation).Data.(host.Elicitation)
	if q.Mode != host.ElicitURL || q.URL != "https://example.com/authorize?x=1" {
		t.Fatalf("question %+v, want the whole URL shown", q)
	}
	if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"x": 1}}); err == nil {
		t.Fatal("a url-mode answer with content was taken")
	}
	if err := h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept}); err != nil {
		t.Fatal(err)
	}
	e := <-done
	if e == nil {
		t.FailNow()
	}
	if !strings.Contains(string(e.Trail), `"url":"https://example.com/authorize"`) || strings.Contains(string(e.Trail), "x=1") {
		t.Fatalf("trail %s, want the URL without its query", e.Trail)
	}
}

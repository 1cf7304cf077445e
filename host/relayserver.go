package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RelayHandler returns the path prefix under which this replica serves
// its singleton servers to the other replicas (the prefix + NAME), and the
// handler that serves them, behind the node's hop-only front
// (cluster.Node.HopOnly), which verifies each request's proof. It answers
// 403 to a request that did not come through it as a replica's, 404 for a
// server that is no singleton here, and 503 while another replica runs it
// (the caller looks again).
func (h *Host) RelayHandler() (path string, handler http.Handler) {
	return upstream.RelayPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hop, ok := cluster.HopOf(r)
		if !ok {
			http.Error(w, "the singleton relay is for mcphost replicas only", http.StatusForbidden)
			return
		}
		name, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), upstream.RelayPath))
		if err != nil {
			http.Error(w, "bad server name", http.StatusNotFound)
			return
		}
		c, err := h.gen().Conn(name)
		if err != nil || !c.Singleton() {
			http.Error(w, fmt.Sprintf("replica %s has no singleton server %q", h.opts.Replica, name), http.StatusNotFound)
			return
		}
		if !c.Holds() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("replica %s does not run singleton server %q now", h.opts.Replica, name), http.StatusServiceUnavailable)
			return
		}
		h.relay(name).serve(w, r, hop)
	})
}

// relays are the relay servers of the host's singleton servers, one per
// name, made on first use and kept for the host's life.
type relays struct {
	mu sync.Mutex
	m  map[string]*relay
}

func (h *Host) relay(name string) *relay {
	h.relays.mu.Lock()
	defer h.relays.mu.Unlock()
	if rl := h.relays.m[name]; rl != nil {
		return rl
	}
	if h.relays.m == nil {
		h.relays.m = map[string]*relay{}
	}
	rl := newRelay(h, name)
	h.relays.m[name] = rl
	return rl
}

// relay is one singleton server's go-sdk server for the other replicas.
type relay struct {
	h       *Host
	name    string
	srv     *mcp.Server
	handler http.Handler

	mu   sync.Mutex
	from map[*mcp.ServerSession]string // session → the replica it serves
}

func newRelay(h *Host, name string) *relay {
	rl := &relay{h: h, name: name, from: map[*mcp.ServerSession]string{}}
	rl.srv = mcp.NewServer(&mcp.Implementation{Name: "mcphost-relay", Version: h.opts.Version}, &mcp.ServerOptions{
		// The holder's session has what it has; the relay says all lists
		// may change (it tells when the holder's catalog does).
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			c, cs, _, err := rl.upstream()
			if err != nil {
				return err
			}
			return c.Subscribe(ctx, cs, relayOwner(req), req.Params.URI)
		},
		UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			c, cs, _, err := rl.upstream()
			if err != nil {
				return nil // no session: no subscription left on the server
			}
			return c.Unsubscribe(ctx, cs, relayOwner(req), req.Params.URI)
		},
		GetSessionID: h.opts.Cluster.SessionID,
	})
	rl.srv.AddReceivingMiddleware(rl.methods)
	rl.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rl.srv }, &mcp.StreamableHTTPOptions{})
	go rl.watch()
	return rl
}

// Headers the relay's methods read what the request's verified hop said
// from (go-sdk hands a method the request's headers, and its context only
// to initialize). serve sets them from cluster.HopOf, over anything the
// request carried under these names.
const (
	relayHeaderFrom      = "Mcphost-Relay-From"
	relayHeaderPrincipal = "Mcphost-Relay-Principal"
)

// serve serves one request of a replica, hop its verified proof; a new
// session replaces the replica's older ones (a replica keeps one session
// per server), which a proof of its own is needed for.
func (rl *relay) serve(w http.ResponseWriter, r *http.Request, hop cluster.Hop) {
	r.Header.Set(relayHeaderFrom, hop.From)
	if hop.Principal != "" {
		r.Header.Set(relayHeaderPrincipal, hop.Principal)
	} else {
		r.Header.Del(relayHeaderPrincipal)
	}
	rl.handler.ServeHTTP(w, r)
}

// hopOf is what the verified hop of req said (serve): the replica that
// sent it and the principal it is for.
func hopOf(req mcp.Request) cluster.Hop {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return cluster.Hop{}
	}
	return cluster.Hop{From: extra.Header.Get(relayHeaderFrom), Principal: extra.Header.Get(relayHeaderPrincipal)}
}

// relayOwner is whom a relayed subscription belongs to: the replica the
// relay session serves.
func relayOwner(req mcp.Request) string { return "replica " + hopOf(req).From }

// upstream returns the holder's connection, session and catalog of the
// server.
func (rl *relay) upstream() (*upstream.Conn, *mcp.ClientSession, *upstream.Catalog, error) {
	c, err := rl.h.gen().Conn(rl.name)
	if err != nil {
		return nil, nil, nil, err
	}
	if !c.Holds() {
		return nil, nil, nil, fmt.Errorf("replica %s no longer runs singleton server %q", rl.h.opts.Replica, rl.name)
	}
	cs, cat, err := c.Current()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("on replica %s: %w", rl.h.opts.Replica, err)
	}
	return c, cs, cat, nil
}

// methods answers the relay's requests from the holder's session: lists
// from its catalog, the rest passed to the server.
func (rl *relay) methods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			c, cs, _, err := rl.upstream()
			if err != nil {
				return nil, relayError(err)
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			if ir, _ := res.(*mcp.InitializeResult); ir != nil {
				up := cs.InitializeResult()
				ir.ServerInfo, ir.Instructions = up.ServerInfo, up.Instructions
				// The server's extensions (MCP Apps among them) are the
				// server's to declare: the relaying replica renders its
				// Apps as the holder does.
				if up.Capabilities != nil && len(up.Capabilities.Extensions) > 0 {
					var caps mcp.ServerCapabilities
					if ir.Capabilities != nil {
						caps = *ir.Capabilities
					}
					caps.Extensions = maps.Clone(up.Capabilities.Extensions)
					ir.Capabilities = &caps
				}
				ir.Meta = mcp.Meta{upstream.MetaRelayEra: c.Era(), upstream.MetaRelayReplica: rl.h.opts.Replica}
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					if from := hopOf(req).From; from != "" {
						rl.adopt(ss, from)
					}
				}
			}
			return res, nil
		case "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
			// go-sdk's own handling (subscriptions reach the Subscribe
			// handlers above; the log level filters ss.Log).
			return next(ctx, method, req)
		}
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		c, cs, cat, err := rl.upstream()
		if err != nil {
			return nil, relayError(err)
		}
		switch req.(type) {
		case *mcp.ListToolsRequest:
			return &mcp.ListToolsResult{Tools: orEmpty(cat.Tools)}, nil
		case *mcp.ListPromptsRequest:
			return &mcp.ListPromptsResult{Prompts: orEmpty(cat.Prompts)}, nil
		case *mcp.ListResourcesRequest:
			return &mcp.ListResourcesResult{Resources: orEmpty(cat.Resources)}, nil
		case *mcp.ListResourceTemplatesRequest:
			return &mcp.ListResourceTemplatesResult{ResourceTemplates: orEmpty(cat.Templates)}, nil
		case *mcp.CallToolRequest, *mcp.ReadResourceRequest, *mcp.GetPromptRequest, *mcp.CompleteRequest:
			// What reaches the server is done for a principal, whom the
			// calling replica's pipeline checked; the holder records it.
			hop := hopOf(req)
			if hop.Principal == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the singleton relay passes %s only for a principal, named in the calling replica's signed hop", method)}
			}
			start := time.Now()
			res, err := rl.pass(ctx, c, cs, req, hop.Principal)
			rl.audit(ctx, hop, method, req, start, err)
			if err != nil {
				return nil, err
			}
			return res, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("the singleton relay does not pass %s", method)}
	}
}

// pass passes a call, read, prompt or completion, made for principal, to
// the holder's session.
func (rl *relay) pass(ctx context.Context, c *upstream.Conn, cs *mcp.ClientSession, req mcp.Request, principal string) (mcp.Result, error) {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		return rl.call(ctx, c, cs, r, principal)
	case *mcp.ReadResourceRequest:
		res, err := cs.ReadResource(ctx, r.Params)
		return res, relayError(err)
	case *mcp.GetPromptRequest:
		res, err := cs.GetPrompt(ctx, r.Params)
		return res, relayError(err)
	case *mcp.CompleteRequest:
		res, err := cs.Complete(ctx, r.Params)
		return res, relayError(err)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the singleton relay does not pass this request"}
}

// PhaseRelay is the phase of the audit records a singleton server's holder
// adds for what it passed to the server for another replica.
const phaseRelay = "relay"

// audit records on the holder what a relayed request did: for whom, from
// which replica, the tool, resource or prompt, whether it failed. The
// policy decisions that let it through are the calling replica's records.
// A failure to store it is logged.
func (rl *relay) audit(ctx context.Context, hop cluster.Hop, method string, req mcp.Request, start time.Time, err error) {
	st := rl.h.store
	if st == nil {
		return
	}
	a := store.Audit{At: start.UTC(), Principal: hop.Principal, Origin: "relay", Server: rl.name, Phase: phaseRelay,
		Effect: "allow", Reason: method + " relayed from replica " + hop.From, Error: err != nil,
		DurationUs: float64(time.Since(start).Microseconds())}
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		a.Tool = r.Params.Name
		a.CallID, _ = r.Params.Meta[upstream.MetaRelayCall].(string)
		if a.CallID != "" {
			a.CallID = hop.From + "/" + a.CallID
		}
	case *mcp.ReadResourceRequest:
		a.Tool = r.Params.URI
	case *mcp.GetPromptRequest:
		a.Tool = r.Params.Name
	case *mcp.CompleteRequest:
		if r.Params.Ref != nil {
			a.Tool = r.Params.Ref.Name + r.Params.Ref.URI
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if serr := st.AppendAudit(sctx, a); serr != nil {
		rl.h.opts.Logger.Warn("recording a relayed request in the audit log", "server", rl.name, "principal", hop.Principal, "err", serr)
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// relayError keeps a JSON-RPC error of the server as it is (its code
// matters to the caller) and says where anything else happened.
func relayError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// call passes a relayed tools/call to the holder's session: progress goes
// back on the relay with the caller's token, and the log messages that
// belong to the call (upstream/serverlog.go) on the relay's stream of the call;
// what the server asks is put to the calling replica for its call
// (passBack), in both eras.
func (rl *relay) call(ctx context.Context, c *upstream.Conn, cs *mcp.ClientSession, r *mcp.CallToolRequest, principal string) (*mcp.CallToolResult, error) {
	p := r.Params
	ss := r.Session
	args, err := pipeline.ObjectArguments(p.Arguments)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	ref, _ := p.Meta[upstream.MetaRelayCall].(string)
	// What goes back is sent in order from a goroutine of its own: it is
	// reported on the session's goroutine, which must not block, so a
	// caller that reads its stream too slowly loses notifications, never
	// the call. A log message may be attributed to the call on another
	// stream's goroutine just as it ends: send then drops it.
	queue := make(chan func(), 64)
	done := make(chan struct{})
	var (
		mu     sync.Mutex
		closed bool
	)
	send := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		select {
		case queue <- f:
		default:
		}
	}
	defer func() {
		mu.Lock()
		closed = true
		close(queue)
		mu.Unlock()
		<-done
	}()
	go func() {
		defer close(done)
		for f := range queue {
			f()
		}
	}()
	var onProgress func(Progress)
	if tok := p.GetProgressToken(); tok != nil {
		onProgress = func(pr Progress) {
			send(func() {
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: pr.Progress, Total: pr.Total, Message: pr.Message})
			})
		}
	}
	ctx = withQuestions(ctx, nil)
	call := &upstream.Call{Principal: principal, Server: rl.name, Tool: p.Name, Ctx: ctx,
		Log: func(lp *mcp.LoggingMessageParams) {
			send(func() { _ = ss.Log(ctx, lp) })
		},
		PassBack: func(ctx context.Context, ep *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			fwd := *ep
			fwd.Meta = maps.Clone(ep.Meta)
			if fwd.Meta == nil {
				fwd.Meta = mcp.Meta{}
			}
			fwd.Meta[upstream.MetaRelayCall] = ref
			return ss.Elicit(ctx, &fwd)
		}}
	remove := c.Track(call)
	defer remove()
	cctx := context.WithValue(ctx, upstream.RelayCallKey{}, call)
	res, err := c.CallTool(cctx, cs, p.Name, args, nil, onProgress)
	if err == nil && res.NeedsInput() {
		res, err = rl.h.answerRounds(cctx, c, cs, call, p.Name, args, res, onProgress)
	}
	if err != nil {
		return nil, relayError(err)
	}
	return res, nil
}

// adopt records that ss serves replica from, and closes that replica's
// older sessions of this server (a replica that reconnected left them).
// Its initialize came with a proof of its own from that replica
// (cluster.HopOnly refuses a replayed one), so a captured initialize
// cannot close the replica's live session.
func (rl *relay) adopt(ss *mcp.ServerSession, from string) {
	rl.mu.Lock()
	var old []*mcp.ServerSession
	for s, f := range rl.from {
		if f == from && s != ss {
			old = append(old, s)
			delete(rl.from, s)
		}
	}
	rl.from[ss] = from
	rl.mu.Unlock()
	for _, s := range old {
		_ = s.Close()
	}
	go func() {
		_ = ss.Wait()
		rl.mu.Lock()
		delete(rl.from, ss)
		rl.mu.Unlock()
	}()
}

// watch tells the relay's sessions what changes on the holder: a new
// catalog (list_changed), the server's log messages that no call owns
// (those of a relayed call go on its own stream: relay.call) and resource
// updates;
// it closes every session when the holder stops running the server, and
// those of replicas gone from the directory every minute. It runs for the
// host's life.
func (rl *relay) watch() {
	h := rl.h
	changes, stop := h.WatchChanges()
	defer stop()
	stopLogs := h.WatchLogs(func(server, _ string, p *mcp.LoggingMessageParams) {
		if server != rl.name {
			return
		}
		for ss := range rl.srv.Sessions() {
			go func() { _ = ss.Log(context.Background(), p) }()
		}
	})
	defer stopLogs()
	stopUpdates := h.WatchResourceUpdates(func(ctx context.Context, server, uri string) {
		if server == rl.name {
			go func() {
				_ = rl.srv.ResourceUpdated(context.WithoutCancel(ctx), &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}()
		}
	})
	defer stopUpdates()
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	var last *upstream.Catalog
	for {
		select {
		case <-h.life.closed:
			rl.closeAll()
			return
		case <-sweep.C:
			rl.sweep()
			continue
		case <-changes:
		}
		c, err := h.gen().Conn(rl.name)
		if err != nil || !c.Holds() {
			rl.closeAll()
			last = nil
			continue
		}
		cat := c.Catalog()
		if cat != last && last != nil {
			rl.listsChanged()
		}
		last = cat
	}
}

// sentinel is the name of the tool, prompt and resource the relay adds
// and removes to make go-sdk send its list_changed notifications (it has
// no other way to send them); its methods never list them, since the
// lists come from the holder's catalog.
const sentinel = "mcphost-relay-list-changed"

func (rl *relay) listsChanged() {
	rl.srv.AddTool(&mcp.Tool{Name: sentinel, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("not a tool")
	})
	rl.srv.RemoveTools(sentinel)
	rl.srv.AddPrompt(&mcp.Prompt{Name: sentinel}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errors.New("not a prompt")
	})
	rl.srv.RemovePrompts(sentinel)
	rl.srv.AddResource(&mcp.Resource{Name: sentinel, URI: "mcphost-relay:" + sentinel}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, errors.New("not a resource")
	})
	rl.srv.RemoveResources("mcphost-relay:" + sentinel)
}

func (rl *relay) closeAll() {
	for ss := range rl.srv.Sessions() {
		_ = ss.Close()
	}
}

// sweep closes the sessions of replicas that left the directory.
func (rl *relay) sweep() {
	rl.mu.Lock()
	from := make(map[*mcp.ServerSession]string, len(rl.from))
	for s, f := range rl.from {
		from[s] = f
	}
	rl.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for s, f := range from {
		if _, ok, err := rl.h.opts.Cluster.Lookup(ctx, f); err == nil && !ok {
			_ = s.Close()
		}
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"
)

// The client commands (servers, tools, call, resources, prompts) go
// through the running daemon when there is one for the config's data_dir,
// so that calls are in its transcript and audit log and no server is
// started a second time; -local runs them one-shot in-process as before,
// and -daemon URL names a daemon explicitly.
//
// The daemon is found through data_dir/daemon.url, which `mcphost serve`
// writes once it listens and removes when it stops. A stale file (the
// daemon was killed) or a daemon that does not accept the token is no
// daemon: the command runs locally.

// daemonFile in data_dir holds the base URL of the daemon serving it.
const daemonFile = "daemon.url"

// daemonProbe bounds the check that a daemon answers; daemonRequest bounds
// every other quick request (the client's timeout). A call, a read and a
// prompt get wait: the server's call_timeout bounds them, and an `ask`
// waits for its approval in the WebShell.
const (
	daemonProbe   = 2 * time.Second
	daemonRequest = 30 * time.Second
)

// cliSessionTitle is the transcript session the CLI's calls go to.
const cliSessionTitle = "mcphost CLI"

// writeDaemonFile records base as data_dir's daemon and returns the
// function that removes the record again (when it is still this daemon's).
func writeDaemonFile(dataDir, base string) (remove func(), err error) {
	path := filepath.Join(dataDir, daemonFile)
	if err := os.WriteFile(path, []byte(base+"\n"), 0o644); err != nil {
		return func() {}, fmt.Errorf("recording the daemon's URL in %s: %w", path, err)
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == base {
			_ = os.Remove(path)
		}
	}, nil
}

// daemonFor returns the daemon a client command should go through, or nil
// to run locally. A code >= 0 means the command must stop with it (an
// explicit -daemon that cannot be used).
func (e *env) daemonFor(ctx context.Context, cf clientFlags, cfg *config.Config) (*apiclient.Client, int) {
	tell := *cf.verbose || isTerminal(e.stderr)
	if *cf.local {
		e.sayLocal(cf)
		return nil, -1
	}
	explicit := *cf.daemon != ""
	base := strings.TrimRight(*cf.daemon, "/")
	why := "-daemon"
	if !explicit {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, daemonFile))
		if err != nil {
			if tell {
				fmt.Fprintf(e.stderr, "mcphost: running in-process as %s: no daemon serves data_dir %s (start one with mcphost serve, or name one with -daemon URL)\n", principalName(*cf.as), cfg.DataDir)
			}
			return nil, -1
		}
		base = strings.TrimRight(strings.TrimSpace(string(b)), "/")
		why = "it serves data_dir " + cfg.DataDir
	}
	fail := func(format string, args ...any) (*apiclient.Client, int) {
		if explicit {
			fmt.Fprintf(e.stderr, "mcphost: -daemon %s: %s\n", base, termsafe.Line(fmt.Sprintf(format, args...)))
			return nil, exitFailure
		}
		if *cf.verbose {
			fmt.Fprintf(e.stderr, "mcphost: not using the daemon at %s (%s); running locally\n", base, termsafe.Line(fmt.Sprintf(format, args...)))
		}
		return nil, -1
	}
	if u, err := neturl.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail("not an http(s) URL")
	}
	token, err := cliToken(cfg, *cf.as)
	if err != nil {
		return fail("%v", err)
	}
	d := apiclient.New(base, token).WithTimeout(daemonRequest)
	pctx, cancel := context.WithTimeout(ctx, daemonProbe)
	defer cancel()
	var me struct {
		Name string `json:"name"`
	}
	if err := d.Me(pctx, &me); err != nil {
		var ae *apiclient.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			if explicit {
				return fail("the daemon does not accept the token of %q", *cf.as)
			}
			// Not a silent fallback: a local run would start a second copy
			// of every server, keep no transcript and answer no `ask`.
			fmt.Fprintf(e.stderr, "mcphost: the daemon at %s does not accept the token of %q (a principal it does not have, or another data_dir): give that principal's token (the config's principal block, or %s), name another daemon with -daemon URL, or run in-process with -local\n", base, *cf.as, tokenEnv)
			return nil, exitFailure
		}
		return fail("%v", err)
	}
	if tell {
		fmt.Fprintf(e.stderr, "mcphost: through the daemon at %s (%s) as %s (%s)\n", base, why, termsafe.Line(me.Name), credentialSource(*cf.as))
	}
	return d, -1
}

// sayLocal says, with -v or on a terminal, that -local runs the command
// in-process.
func (e *env) sayLocal(cf clientFlags) {
	if *cf.verbose || isTerminal(e.stderr) {
		fmt.Fprintf(e.stderr, "mcphost: running in-process as %s (-local): no transcript, and the servers start in this process\n", principalName(*cf.as))
	}
}

// principalName is the principal -as names, the owner by default.
func principalName(as string) string {
	if as == "" {
		return "owner"
	}
	return as
}

// credentialSource says where the CLI's token for -as comes from.
func credentialSource(as string) string {
	switch {
	case as != "" && as != "owner":
		return fmt.Sprintf("the token of principal %q in the config", as)
	case os.Getenv(tokenEnv) != "":
		return "the token in $" + tokenEnv
	}
	return "the owner token in data_dir"
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// cliToken is the bearer token of the -as principal: the owner's from
// $MCPHOST_TOKEN or data_dir (what `mcphost serve` wrote), or the token the
// config gives a principal block.
func cliToken(cfg *config.Config, as string) (string, error) {
	if as == "" || as == "owner" {
		return gatewayToken(cfg)
	}
	for _, p := range cfg.Principals {
		if p.Name == as {
			return p.Token, nil
		}
	}
	return "", fmt.Errorf("-as %q: the config has no such principal", as)
}

// daemonServers returns the statuses of the servers the principal may see.
func daemonServers(ctx context.Context, d *apiclient.Client) ([]host.ServerStatus, error) {
	var out []host.ServerStatus
	err := d.Servers(ctx, &out)
	return out, err
}

// daemonTools returns the tools the principal may see, of server ("" all).
// Each input schema is kept as the daemon wrote it, in the order its
// server gave the properties (decoding into a map would sort them).
func daemonTools(ctx context.Context, d *apiclient.Client, server string) ([]host.ToolView, error) {
	var raw []json.RawMessage
	if err := d.Tools(ctx, &raw); err != nil {
		return nil, err
	}
	tools, err := toolViews(raw)
	if err != nil {
		return nil, err
	}
	if server == "" {
		return tools, nil
	}
	kept := tools[:0]
	for _, t := range tools {
		if t.Server == server {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// toolViews decodes the daemon's tools, keeping each input schema as the
// daemon wrote it (a map would sort its properties), in one pass: the
// outer InputSchema takes the field from the embedded view.
func toolViews(raw []json.RawMessage) ([]host.ToolView, error) {
	tools := make([]host.ToolView, len(raw))
	for i, r := range raw {
		var v struct {
			host.ToolView
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("the daemon's tool %d: %w", i, err)
		}
		tools[i] = v.ToolView
		if len(v.InputSchema) > 0 {
			tools[i].InputSchema = v.InputSchema
		}
	}
	return tools, nil
}

// cliSession returns the id of the principal's CLI session, creating it on
// the first call.
func cliSession(ctx context.Context, d *apiclient.Client) (string, error) {
	var list []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := d.Sessions(ctx, &list); err != nil {
		return "", err
	}
	for _, s := range list {
		if s.Title == cliSessionTitle {
			return s.ID, nil
		}
	}
	return d.CreateSession(ctx, cliSessionTitle)
}

// daemonOf loads the -config and returns the daemon to go through (see
// daemonFor); a bad config stops the command with its diagnostics.
func (e *env) daemonOf(ctx context.Context, cf clientFlags) (*apiclient.Client, int) {
	if *cf.local {
		e.sayLocal(cf)
		return nil, -1
	}
	cfg, ok := e.loadConfig(*cf.config)
	if !ok {
		return nil, exitUsage
	}
	e.sayConfig(cf, cfg)
	return e.daemonFor(ctx, cf, cfg)
}

// toolOfView is the tool a ToolView describes, for printing.
func toolOfView(v host.ToolView) host.Tool {
	return host.Tool{Server: v.Server, Tool: &mcp.Tool{
		Name: v.Name, Title: v.Title, Description: v.Description,
		InputSchema: v.InputSchema, OutputSchema: v.OutputSchema,
		Annotations: v.Annotations, Meta: v.Meta,
	}}
}

// knownServer fails unless the principal may see server on the daemon.
func (e *env) knownServer(ctx context.Context, d *apiclient.Client, server string) error {
	statuses, err := daemonServers(ctx, d)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range statuses {
		if s.Name == server {
			return nil
		}
		names = append(names, s.Name)
	}
	return fmt.Errorf("unknown server %q (the daemon has: %s)", server, strings.Join(names, ", "))
}

// callViaDaemon makes the call in the principal's CLI session of the
// daemon, so it runs the daemon's pipeline (its servers, policies, plugins,
// approvals) and lands in its transcript and audit log. KEY=VALUE pairs
// are typed by the tool's schema as the daemon lists it.
func (e *env) callViaDaemon(ctx context.Context, d *apiclient.Client, server, tool string, rawArgs []byte, pairs []string, asJSON, stdinUsed bool) int {
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "mcphost call: %s\n", termsafe.Line(err.Error()))
		var de *apiclient.Error
		if errors.As(err, &de) {
			switch {
			case de.Code == "denied_by_policy":
				return exitDenied
			case de.Status == http.StatusNotFound, de.Status == http.StatusBadRequest:
				return exitUsage
			}
		}
		return exitFailure
	}
	if pairs != nil {
		views, err := daemonTools(ctx, d, server)
		if err != nil {
			return fail(err)
		}
		rawArgs = []byte("{}") // a tool the daemon does not list: it names the tools the server has
		for _, v := range views {
			if v.Name != tool {
				continue
			}
			if rawArgs, err = kvArguments(v.InputSchema, pairs); err != nil {
				fmt.Fprintf(e.stderr, "mcphost call: %s.%s: %s\n", server, termsafe.Line(tool), termsafe.Line(err.Error()))
				return exitUsage
			}
		}
	}
	if len(bytes.TrimSpace(rawArgs)) == 0 {
		rawArgs = []byte("{}")
	}
	session, err := cliSession(ctx, d)
	if err != nil {
		return fail(err)
	}
	var entry store.Entry
	err = e.daemonCall(ctx, d, session, server, tool, rawArgs, &entry)
	// A -32042 asks the person to visit URLs first: on a terminal the
	// call is retried once they have.
	for try := 0; err == nil && entry.Status == store.StatusError; try++ {
		els, ok := urlElicitationsOf(entry.ErrorCode, entry.ErrorData)
		if !ok {
			break
		}
		if try == maxURLRetries || !e.visitURLs(server+"."+termsafe.Line(tool), els, stdinUsed) {
			return exitFailure
		}
		entry = store.Entry{}
		err = e.daemonCall(ctx, d, session, server, tool, rawArgs, &entry)
	}
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: the request ends, and with it the call (and its
		// approval, if it waited for one).
		fmt.Fprintln(e.stderr, "mcphost call: cancelled")
		return exitFailure
	}
	if err != nil {
		var de *apiclient.Error
		if errors.As(err, &de) && de.Code == "denied_by_policy" && de.Rule != "" {
			de.Message = fmt.Sprintf("denied by policy %q: %s", de.Rule, de.Message)
		}
		return fail(err)
	}
	if len(entry.Result) == 0 || string(entry.Result) == "null" {
		msg := entry.Error
		if msg == "" {
			msg = "the call has no result (status " + entry.Status + ")"
		}
		fmt.Fprintf(e.stderr, "mcphost call: %s\n", termsafe.Line(msg))
		return exitFailure
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(entry.Result, &res); err != nil {
		return fail(fmt.Errorf("decoding the result: %v", err))
	}
	app := appOfEntry(entry.Display, d.Base()+"/", entry.SessionID, entry.ID)
	return e.printResult(&res, app, server, tool, asJSON)
}

// daemonCall makes one call through the daemon into entry. There is no
// deadline of the CLI's own: the server's call_timeout bounds the call,
// and an `ask` waits for its approval in the WebShell, which the watcher
// says at once.
func (e *env) daemonCall(ctx context.Context, d *apiclient.Client, session, server, tool string, rawArgs []byte, entry *store.Entry) error {
	callID := "cli-" + rand.Text()
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	progress := newProgressView(e.stderr)
	go func() {
		defer close(watched)
		e.watchCall(wctx, d, session, callID, progress)
	}()
	err := d.Call(ctx, session, apiclient.CallRequest{Server: server, Tool: tool, Arguments: rawArgs, CallID: callID}, entry)
	stopWatch()
	<-watched
	progress.done()
	return err
}

// callPollFirst is how long the CLI lets a call through the daemon run
// before it first asks for its state (most calls end sooner), and
// callPoll how often it asks after that.
const (
	callPollFirst = 300 * time.Millisecond
	callPoll      = time.Second
)

// watchCall follows the call callID of session while it runs, until ctx
// ends: it says on stderr, once, that the call waits for a person to
// approve it (where, under which rule, and for how long), and shows the
// call's progress as the daemon last heard it.
func (e *env) watchCall(ctx context.Context, d *apiclient.Client, session, callID string, progress *progressView) {
	t := time.NewTimer(callPollFirst)
	defer t.Stop()
	said := false
	path := "/api/v1/sessions/" + neturl.PathEscape(session) + "/calls/" + neturl.PathEscape(callID)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var st struct {
			Status   string `json:"status"`
			Approval *struct {
				Rule    string    `json:"rule"`
				Message string    `json:"message"`
				Expires time.Time `json:"expires"`
			} `json:"approval"`
			Progress *host.Progress `json:"progress"`
		}
		if err := d.Do(ctx, http.MethodGet, path, nil, &st); err == nil {
			if st.Status == "pending_approval" && st.Approval != nil && !said {
				said = true
				left := time.Until(st.Approval.Expires).Round(time.Second)
				progress.done()
				fmt.Fprintf(e.stderr, "mcphost call: waiting for a person to approve it in the WebShell at %s/ (policy %q: %s; %s left, then it is denied)\n",
					d.Base(), termsafe.Line(st.Approval.Rule), termsafe.Line(st.Approval.Message), left)
			}
			if st.Progress != nil && ctx.Err() == nil {
				progress.show(*st.Progress)
			}
		}
		t.Reset(callPoll)
	}
}

// daemonErrorText words a failed request of the admin commands (auth,
// reload), which name the daemon by the config's listen or -url: no answer
// asks whether it runs, a refused token names where the token comes from,
// and any other error answer gives its status and the daemon's message
// (or, from something that is not the API, its body), escaped.
func daemonErrorText(err error) string {
	var ae *apiclient.Error
	switch {
	case errors.Is(err, apiclient.ErrNoAnswer):
		return termsafe.Line(err.Error()) + " (is mcphost serve running?)"
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		return fmt.Sprintf("the daemon did not accept the token (%s, or the owner token in data_dir)", tokenEnv)
	case errors.As(err, &ae):
		return fmt.Sprintf("the daemon answered %d: %s", ae.Status, termsafe.Line(messageOf(ae)))
	}
	return termsafe.Line(err.Error())
}

// messageOf is the daemon's message in an error answer or, when the answer
// is not the API's, its body.
func messageOf(ae *apiclient.Error) string {
	if ae.Message != "" {
		return ae.Message
	}
	return strings.TrimSpace(string(ae.Body))
}

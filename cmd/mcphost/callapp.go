package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"
)

// What `mcphost call` says beyond the tool's result (issue 31 row 12):
// the MCP App the tool links, and a server's -32042 (URL elicitation
// required), which asks the person to visit URLs before the call can
// succeed.

// callApp sums up the App of a call for `call`: the display record
// without its HTML. -json prints it as "app" beside the CallToolResult.
type callApp struct {
	ResourceURI string `json:"resourceUri"`
	Server      string `json:"serverName"`
	// Shown is whether the WebShell renders the App; when it does not,
	// Warning says why and the WebShell shows the text fallback.
	Shown   bool     `json:"shown"`
	Warning string   `json:"warning,omitempty"`
	Dropped []string `json:"dropped,omitempty"` // CSP sources left out, with the reason
	// WebShell, SessionID and EntryID say where to open it: the daemon's
	// WebShell, the session and its entry of the call. A -local call has
	// no WebShell: they are empty and Note says so.
	WebShell  string `json:"webshell,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	EntryID   string `json:"entryId,omitempty"`
	Note      string `json:"note,omitempty"`
}

// appOfEntry reads the App of a call entry's display record (nil when the
// record is null or not an App's).
func appOfEntry(display json.RawMessage, webShell, sessionID, entryID string) *callApp {
	var d apps.Display
	if len(display) == 0 || json.Unmarshal(display, &d) != nil || d.ResourceURI == "" {
		return nil
	}
	return &callApp{
		ResourceURI: d.ResourceURI, Server: d.ServerName, Shown: d.Warning == "" && d.HTML != "",
		Warning: d.Warning, Dropped: d.Dropped, WebShell: webShell, SessionID: sessionID, EntryID: entryID,
	}
}

// localApp is the App a tool links, for a -local call: it renders
// nowhere.
func localApp(server string, link *apps.Link) *callApp {
	if link == nil {
		return nil
	}
	return &callApp{ResourceURI: link.ResourceURI, Server: server,
		Note: "an in-process call has no WebShell: call the tool through the daemon (mcphost serve) to open the App there"}
}

// printApp says on stderr which App the call has and where to open it,
// or why it falls back to text. Every string came from a server.
func (e *env) printApp(a *callApp) {
	uri := termsafe.Line(a.ResourceURI)
	switch {
	case a.Note != "":
		fmt.Fprintf(e.stderr, "App: %s (%s)\n", uri, a.Note)
	case a.Warning != "":
		fmt.Fprintf(e.stderr, "App: %s (not shown: the WebShell shows the text instead)\n", uri)
		fmt.Fprintf(e.stderr, "App warning: %s\n", termsafe.Line(a.Warning))
	default:
		fmt.Fprintf(e.stderr, "App: %s (open in the WebShell: %s, session %q, entry %s)\n", uri, a.WebShell, cliSessionTitle, termsafe.Line(a.EntryID))
	}
	for _, d := range a.Dropped {
		fmt.Fprintf(e.stderr, "App CSP source dropped: %s\n", termsafe.Line(d))
	}
}

// resultWithApp is the -json document of a call: the CallToolResult as it
// is printed without an App, with "app" after its fields when the tool
// links one.
func resultWithApp(res *mcp.CallToolResult, a *callApp) any {
	if a == nil {
		return res
	}
	raw, err := json.Marshal(res)
	appRaw, err2 := json.Marshal(a)
	raw = bytes.TrimSpace(raw)
	if err != nil || err2 != nil || len(raw) < 2 || raw[len(raw)-1] != '}' {
		return res
	}
	doc := append([]byte{}, raw[:len(raw)-1]...)
	if len(raw) > 2 {
		doc = append(doc, ',')
	}
	doc = append(append(append(doc, `"app":`...), appRaw...), '}')
	return json.RawMessage(doc)
}

// urlElicitation is one URL a -32042 error asks the person to visit.
type urlElicitation struct {
	URL     string `json:"url"`
	Message string `json:"message"`
	ID      string `json:"elicitationId"`
}

// urlElicitationsOf returns the URLs of a -32042 error (code and data of
// the JSON-RPC error), or ok false for any other error.
func urlElicitationsOf(code int64, data json.RawMessage) (els []urlElicitation, ok bool) {
	if code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	var d struct {
		Elicitations []urlElicitation `json:"elicitations"`
	}
	_ = json.Unmarshal(data, &d) // without a list there is nothing to show but the error
	return d.Elicitations, true
}

// rpcErrorOf returns the code and data of the JSON-RPC error in err.
func rpcErrorOf(err error) (int64, json.RawMessage) {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code, je.Data
	}
	return 0, nil
}

// maxURLRetries bounds how often `call` retries after a -32042.
const maxURLRetries = 5

// visitURLs shows the URLs a -32042 error of SERVER.TOOL asks for and,
// with a terminal on stdin (not used for the arguments), waits for Enter
// and reports true: retry the call. Without one it says to run the command
// again and reports false.
func (e *env) visitURLs(what string, els []urlElicitation, stdinUsed bool) bool {
	fmt.Fprintf(e.stderr, "mcphost call: %s needs you to visit a URL first (the server answered -32042, URL elicitation required):\n", what)
	if len(els) == 0 {
		fmt.Fprintln(e.stderr, "  (the server named no URL)")
	}
	for _, el := range els {
		u, err := apps.CheckLink(el.URL)
		if err != nil {
			u = fmt.Sprintf("(a URL mcphost does not show: %v)", err)
		}
		if el.Message != "" {
			fmt.Fprintf(e.stderr, "  %s: %s\n", termsafe.Line(el.Message), u)
		} else {
			fmt.Fprintf(e.stderr, "  %s\n", u)
		}
	}
	f, ok := e.stdin.(*os.File)
	if !ok || stdinUsed || !term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(e.stderr, "mcphost call: not retried (stdin is not a terminal): open the URL in a browser, then run the same command again")
		return false
	}
	return promptRetry(bufio.NewReader(f), e.stderr)
}

// promptRetry asks on out to press Enter once the URL is visited, and
// reports whether a line came (false at the end of input).
func promptRetry(in *bufio.Reader, out io.Writer) bool {
	fmt.Fprint(out, "Open the URL, then press Enter to retry (Ctrl-C or Ctrl-D to stop): ")
	_, err := in.ReadString('\n')
	if err != nil {
		fmt.Fprintln(out)
		return false
	}
	return true
}

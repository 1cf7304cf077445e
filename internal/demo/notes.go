package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notes demo limits: what one process keeps in memory.
const (
	maxNotes    = 1000
	maxNoteSize = 4096 // bytes
)

// notes is the state of one notes server: what it keeps lives and dies
// with its process, which is why a cluster runs it with placement =
// "singleton".
type notes struct {
	mu   sync.Mutex
	list []string
}

type addNoteArgs struct {
	Text string `json:"text" jsonschema:"the note, up to 4096 bytes"`
}

type noteCount struct {
	Count int `json:"count" jsonschema:"how many notes this process holds"`
}

type noteList struct {
	Notes []string `json:"notes" jsonschema:"the notes, oldest first"`
}

// NewNotesServer returns the notes demo: a server that keeps notes in its
// process's memory (add_note, list_notes). It is stateful on purpose: two
// processes of it hold two different lists, so it is the example of a
// server a cluster runs once, on one replica (placement = "singleton").
func NewNotesServer(version string) *mcp.Server {
	n := &notes{}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcphost-demo-notes", Title: "Notes (demo)", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add_note", Description: "Keeps a note in this server's memory and returns how many it holds."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addNoteArgs) (*mcp.CallToolResult, noteCount, error) {
			text := strings.TrimSpace(in.Text)
			switch {
			case text == "":
				return errorResult("add_note: text is empty; give the note's text"), noteCount{}, nil
			case len(text) > maxNoteSize:
				return errorResult(fmt.Sprintf("add_note: the note is %d bytes; a note holds at most %d", len(text), maxNoteSize)), noteCount{}, nil
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			if len(n.list) >= maxNotes {
				return errorResult(fmt.Sprintf("add_note: this server already holds %d notes, its limit", maxNotes)), noteCount{}, nil
			}
			n.list = append(n.list, text)
			c := len(n.list)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d notes", c)}}}, noteCount{Count: c}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list_notes", Description: "Lists the notes this server holds, oldest first."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, noteList, error) {
			n.mu.Lock()
			list := append([]string{}, n.list...)
			n.mu.Unlock()
			text := "no notes"
			if len(list) > 0 {
				text = strings.Join(list, "\n")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, noteList{Notes: list}, nil
		})
	return s
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// ServeNotes runs the notes demo as one MCP session over in and out, as
// [ServeRevenue] does.
func ServeNotes(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := NewNotesServer(buildVersion()).Run(ctx, t)
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return fmt.Errorf("demo: notes session: %w", err)
}

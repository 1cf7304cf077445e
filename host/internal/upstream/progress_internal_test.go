package upstream

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressCounting: what counts as a report read for a watched call,
// and that the wait at the call's end gives up on a report that is never
// delivered (one go-sdk could not decode) instead of hanging.
func TestProgressCounting(t *testing.T) {
	c := logConn(config.LogMessagesOwn, new([]string))
	nobody := func() logOwner { return logOwner{} }
	var heard []Progress
	token, stop := c.watchProgress(func(p Progress) { heard = append(heard, p) })
	w := func() *progressWatch { v, _ := c.progress.Load(token); return v.(*progressWatch) }()
	msg := func(method string, params any) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		read int64
	}{
		{"its token", msg(methodProgress, map[string]any{"progressToken": token, "progress": 1}), 1},
		{"another token", msg(methodProgress, map[string]any{"progressToken": "mcphost-999", "progress": 1}), 0},
		{"no token", msg(methodProgress, map[string]any{"progress": 1}), 0},
		{"another method naming the token", msg("notifications/message", map[string]any{"data": methodProgress, "progressToken": token}), 0},
		{"the method in a string only", []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"notifications/progress"}}`), 0},
		{"not JSON", []byte(`notifications/progress {`), 0},
		{"params not an object", msg(methodProgress, []int{1}), 0},
	} {
		before := w.read.Load()
		c.hearEvent(tc.data, nobody)
		if got := w.read.Load() - before; got != tc.read {
			t.Errorf("%s: counted %d, want %d", tc.name, got, tc.read)
		}
	}

	// One report read and delivered, one read and never delivered: stop
	// waits its bound and returns; a report delivered after it is dropped.
	c.deliverProgress(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1})
	c.hearEvent(msg(methodProgress, map[string]any{"progressToken": token, "progress": "garbled"}), nobody)
	stop(context.Background())
	c.deliverProgress(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 2})
	w.send(Progress{Progress: 3})
	if len(heard) != 1 || heard[0].Progress != 1 {
		t.Errorf("heard %+v, want the one report delivered while the call ran", heard)
	}
	if _, ok := c.progress.Load(token); ok {
		t.Error("the token is still watched after stop")
	}
}

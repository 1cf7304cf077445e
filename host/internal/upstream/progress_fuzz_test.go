package upstream

import (
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzProgressMessage: any message of a server's event stream, progress
// notification, log message or neither, is counted at most once for a
// watched call, goes to at most the owner it was read for, and never
// fails or hangs (the answer checks hand every message to it:
// FuzzAnswerCheck in host/internal/transport).
func FuzzProgressMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"card":"4111"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`notifications/progress`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := logConn(config.LogMessagesAll, new([]string))
		_, stop := c.watchProgress(func(Progress) {})
		heard := 0
		owner := func() logOwner {
			return logOwner{call: &Call{Log: func(*mcp.LoggingMessageParams) { heard++ }}}
		}
		c.hearEvent(data, owner)
		c.readNotification(methodProgress, data, owner)
		c.readNotification(methodLog, data, owner)
		stop(t.Context())
		if heard > 2 {
			t.Fatalf("one message heard %d times", heard)
		}
	})
}

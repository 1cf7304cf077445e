package host

import (
	"testing"
)

// FuzzProgressMessage: any message of a server's event stream, progress
// notification or not, is counted at most once for a watched call and
// never fails or hangs (the answer checks hand every message to it:
// FuzzAnswerCheck in host/internal/transport).
func FuzzProgressMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`notifications/progress`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &serverConn{}
		_, stop := c.watchProgress(func(Progress) {})
		c.readMessage(data)
		c.readProgress(data)
		stop(t.Context())
	})
}

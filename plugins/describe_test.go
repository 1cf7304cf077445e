package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/sys"
)

// TestDescribeEndedContexts: a call whose deadline passed is a timeout,
// however the runtime reports it (an exit code, or an error from before
// the guest ran, as on a loaded machine); a call its caller cancelled is
// "cancelled".
func TestDescribeEndedContexts(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	stopped, stop := context.WithCancel(context.Background())
	stop()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"deadline, exit code", expired, sys.NewExitError(sys.ExitCodeDeadlineExceeded), "timed out"},
		{"deadline, canceled exit code", expired, sys.NewExitError(sys.ExitCodeContextCanceled), "timed out"},
		{"deadline, before the guest ran", expired, errors.New("allocating the input: module closed"), "timed out"},
		{"cancelled by the caller", stopped, sys.NewExitError(sys.ExitCodeContextCanceled), "cancelled: context canceled"},
		{"cancelled before the guest ran", stopped, errors.New("module closed"), "cancelled: context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describe(tt.ctx, tt.err, "")
			if !strings.HasPrefix(got.Error(), tt.want) {
				t.Errorf("describe = %q, want %q…", got, tt.want)
			}
			if tt.want == "timed out" && !errors.Is(got, errTimedOut) {
				t.Errorf("describe = %v, not errTimedOut", got)
			}
		})
	}
}

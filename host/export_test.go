package host

import (
	"testing"
	"time"
)

// SetQuestionSweepEvery makes the sweep of dead replicas' questions run
// every d for the rest of the test (host tests do not run in parallel).
func SetQuestionSweepEvery(t testing.TB, d time.Duration) {
	old := questionSweepEvery
	questionSweepEvery = d
	t.Cleanup(func() { questionSweepEvery = old })
}

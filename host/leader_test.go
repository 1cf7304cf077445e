package host

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// Two replicas on one PostgreSQL run a once-only job: one at a time, and
// the other takes over when the leader's store closes (the replica left
// or died).
func TestWhileLeadingOneReplicaAtATime(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	open := func() *store.Store {
		s, err := store.OpenPostgres(t.Context(), dsn, nil, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	stores := []*store.Store{open(), open()}

	started := make(chan int, 16)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			whileLeading(ctx, st, slog.New(slog.DiscardHandler), "test-job", 20*time.Millisecond, func(ctx context.Context) {
				started <- i
				<-ctx.Done()
			})
		})
	}
	first := <-started
	// The other keeps trying while the first leads (the store test checks
	// that it cannot lead meanwhile). Closing the leader's store ends its
	// lease, and the other takes over.
	if err := stores[first].Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-started:
		if second == first {
			t.Fatalf("replica %d ran again on a closed store", first)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the other replica did not take the job over within 30 s of the leader's store closing")
	}
	cancel()
	wg.Wait()
}

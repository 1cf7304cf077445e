package roundrobin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Balancer is a round-robin reverse proxy over its targets.
type Balancer struct {
	next atomic.Uint64

	mu      sync.Mutex
	targets []*url.URL
	down    map[string]bool // targets whose last health check failed
}

// Set replaces the targets.
func (b *Balancer) Set(targets ...*url.URL) {
	b.mu.Lock()
	b.targets = slices.Clone(targets)
	b.mu.Unlock()
}

// InRotation returns the targets requests go to now: those whose last
// health check did not fail.
func (b *Balancer) InRotation() []*url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*url.URL
	for _, t := range b.targets {
		if !b.down[t.String()] {
			out = append(out, t)
		}
	}
	return out
}

// Check health-checks every target each interval with GET path (a 200
// passes) until ctx ends; a target whose check fails is out of rotation
// until a check passes. Each check may take at most the interval.
func (b *Balancer) Check(ctx context.Context, path string, interval time.Duration) {
	hc := &http.Client{Timeout: interval}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		b.mu.Lock()
		targets := slices.Clone(b.targets)
		b.mu.Unlock()
		down := map[string]bool{}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, u := range targets {
			wg.Go(func() {
				ok := false
				if res, err := hc.Get(u.JoinPath(path).String()); err == nil {
					ok = res.StatusCode == http.StatusOK
					res.Body.Close()
				}
				if !ok {
					mu.Lock()
					down[u.String()] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		b.mu.Lock()
		b.down = down
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ServeHTTP sends r to the next target in rotation, 502 when there is none.
func (b *Balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ts := b.InRotation()
	if len(ts) == 0 {
		http.Error(w, "no replica", http.StatusBadGateway)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	u := ts[(b.next.Add(1)-1)%uint64(len(ts))]
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
	}
	p.ServeHTTP(w, r)
}

package roundrobin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// target is a backend that answers its name, and /ready with 200 while
// healthy.
func target(t *testing.T, name string, healthy *atomic.Bool) *url.URL {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ready" && !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, name+":"+r.Host+":"+string(b))
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u
}

func get(t *testing.T, base, body string) (int, string) {
	t.Helper()
	res, err := http.Post(base+"/x", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestBalancer(t *testing.T) {
	var aOK, bOK atomic.Bool
	aOK.Store(true)
	bOK.Store(true)
	b := &Balancer{}
	lb := httptest.NewServer(b)
	defer lb.Close()
	if code, _ := get(t, lb.URL, ""); code != http.StatusBadGateway {
		t.Errorf("no targets: %d, want 502", code)
	}
	b.Set(target(t, "a", &aOK), target(t, "b", &bOK))
	host := strings.TrimPrefix(lb.URL, "http://")
	var got []string
	for i := range 4 {
		code, body := get(t, lb.URL, "body")
		if code != http.StatusOK || !strings.HasSuffix(body, ":"+host+":body") {
			t.Fatalf("request %d: %d %q; want the body and the balancer's Host passed on", i, code, body)
		}
		got = append(got, body[:1])
	}
	if strings.Join(got, "") != "abab" {
		t.Errorf("targets in turn: %v, want a b a b", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	bOK.Store(false)
	go b.Check(ctx, "/ready", 20*time.Millisecond)
	wait := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(b.InRotation()) != want; {
			if time.Now().After(deadline) {
				t.Fatalf("%d targets in rotation, want %d", len(b.InRotation()), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	wait(1)
	for range 3 {
		if _, body := get(t, lb.URL, ""); body[:1] != "a" {
			t.Fatalf("a failed health check left b in rotation: %q", body)
		}
	}
	bOK.Store(true)
	wait(2)
}

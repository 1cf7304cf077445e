package host

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/events"
)

// countingData counts how often it is encoded.
type countingData struct{ n *atomic.Int64 }

func (d countingData) MarshalJSON() ([]byte, error) {
	d.n.Add(1)
	return []byte(`{"x":1}`), nil
}

// TestPublishEncodesOnce: an event is encoded once for all the
// subscribers that see it, however many there are.
func TestPublishEncodesOnce(t *testing.T) {
	h, err := New(&config.Config{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var chans []<-chan Event
	for i := range 100 {
		ch, stop, err := h.Subscribe(Caller{Principal: Principal{Name: "p" + string(rune('a'+i%5))}})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		chans = append(chans, ch)
	}
	var n atomic.Int64
	h.publish(Event{Type: eventConfig, Data: countingData{&n}})
	if got := n.Load(); got != 1 {
		t.Errorf("encoded %d times for 100 subscribers, want 1", got)
	}
	for _, ch := range chans {
		if ev := <-ch; string(ev.JSON) != `{"x":1}` {
			t.Fatalf("subscriber got %q", ev.JSON)
		}
	}
}

// TestSlowSubscriberDropped: a subscriber that stops reading is dropped
// once its buffer is full, and the others receive every event.
func TestSlowSubscriberDropped(t *testing.T) {
	h, err := New(&config.Config{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	slow, stopSlow, err := h.Subscribe(Caller{Principal: Principal{Name: "slow"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stopSlow()
	fast, stopFast, err := h.Subscribe(Caller{Principal: Principal{Name: "fast"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stopFast()
	const published = 4 * events.SubscriberBuffer
	for i := range published {
		h.publish(Event{Type: eventConfig, Data: i})
		select {
		case ev, ok := <-fast:
			if !ok {
				t.Fatalf("the fast subscriber was dropped at event %d", i)
			}
			if string(ev.JSON) != strconv.Itoa(i) {
				t.Fatalf("event %d arrived as %s", i, ev.JSON)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d did not reach the fast subscriber", i)
		}
	}
	n := 0
	for range slow {
		n++
	}
	if n != events.SubscriberBuffer {
		t.Errorf("the slow subscriber got %d events before being dropped, want its buffer of %d", n, events.SubscriberBuffer)
	}
	if h.ev.bus.Dropped() != 1 {
		t.Errorf("dropped %d subscribers, want 1", h.ev.bus.Dropped())
	}
}

// TestSubscriberLimits: the per-principal and total bounds refuse the next
// stream, and ending one frees its place.
func TestSubscriberLimits(t *testing.T) {
	h, err := New(&config.Config{}, Options{MaxSubscribers: 3, MaxSubscribersPerPrincipal: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sub := func(name string) (func(), error) {
		_, stop, err := h.Subscribe(Caller{Principal: Principal{Name: name}})
		return stop, err
	}
	a1, _ := sub("a")
	if _, err := sub("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := sub("a"); err == nil || err.(*TooManySubscribersError).PerPrincipal != true {
		t.Fatalf("third stream of a: %v, want the per-principal refusal", err)
	}
	if _, err := sub("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := sub("c"); err == nil || err.(*TooManySubscribersError).PerPrincipal {
		t.Fatalf("fourth stream: %v, want the total refusal", err)
	}
	a1()
	a1() // twice is harmless
	if _, err := sub("c"); err != nil {
		t.Fatalf("after closing one: %v", err)
	}
}

// TestStillValid: a caller stays valid while its credential authenticates
// the same caller; a rotated token, a changed group or lost admin rights
// end it, and an in-process caller never ends.
func TestStillValid(t *testing.T) {
	cfg := func(token string, groups []string, admins []string) *config.Config {
		return &config.Config{Principals: []config.Principal{{Name: "bob", Token: token, Groups: groups}}, Admins: admins}
	}
	h, err := New(cfg("bob-token-0123456789", nil, []string{"bob"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	api, ok := h.Authenticate("bob-token-0123456789")
	if !ok || api.Origin != OriginAPI || !api.Admin {
		t.Fatalf("token: %+v %v", api, ok)
	}
	cred, ws, err := h.WebShellSignIn("bob-token-0123456789")
	if err != nil || ws.Origin != OriginUser {
		t.Fatalf("sign-in: %+v %v", ws, err)
	}
	if got, ok := h.Authenticate(cred); !ok || got.Origin != OriginUser {
		t.Fatalf("credential: %+v %v", got, ok)
	}
	for _, tc := range []struct {
		name  string
		cfg   *config.Config
		valid bool
	}{
		{"unchanged", cfg("bob-token-0123456789", nil, []string{"bob"}), true},
		{"new group", cfg("bob-token-0123456789", []string{"ops"}, []string{"bob"}), false},
		{"no longer admin", cfg("bob-token-0123456789", nil, nil), false},
		{"rotated", cfg("bob-token-rotated-0123456789", nil, []string{"bob"}), false},
		{"removed", &config.Config{}, false},
	} {
		g, _, err := h.newGeneration(t.Context(), tc.cfg, h.gen())
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Principals.StillValid(api); got != tc.valid {
			t.Errorf("%s: token valid %v, want %v", tc.name, got, tc.valid)
		}
		if got := g.Principals.StillValid(ws); got != tc.valid {
			t.Errorf("%s: credential valid %v, want %v", tc.name, got, tc.valid)
		}
		if !g.Principals.StillValid(Caller{Principal: Principal{Name: "bob"}}) {
			t.Errorf("%s: an in-process caller was revoked", tc.name)
		}
	}
}

// TestSubscribeRefusesRevoked: a caller that authenticated before a reload
// revoked its token cannot open a stream after it (the reload's revoke and
// Subscribe share the bus lock, so none slips in between).
func TestSubscribeRefusesRevoked(t *testing.T) {
	cfg := func(token string) *config.Config {
		return &config.Config{Principals: []config.Principal{{Name: "bob", Token: token}}}
	}
	h, err := New(cfg("bob-token-0123456789"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, ok := h.Authenticate("bob-token-0123456789")
	if !ok {
		t.Fatal("bob's token refused")
	}
	if _, err := h.Reload(t.Context(), cfg("bob-token-rotated-0123456789")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Subscribe(c); err != ErrRevoked {
		t.Fatalf("Subscribe after the rotation: %v, want ErrRevoked", err)
	}
}

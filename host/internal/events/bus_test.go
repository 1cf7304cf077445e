package events

import (
	"errors"
	"testing"

	"github.com/mcphost/mcphost/host/internal/identity"
)

func caller(name string, admin bool) identity.Caller {
	return identity.Caller{Principal: identity.Principal{Name: name}, Admin: admin}
}

func valid(identity.Caller) bool { return true }

// TestPublishForms: an event for one principal reaches only it; a viewed
// event reaches an admin as it is and every other caller as its view
// says, or not at all; with PublishEach the view decides for admins too.
func TestPublishForms(t *testing.T) {
	b := &Bus{Max: 10, MaxPerPrincipal: 2}
	subs := map[string]<-chan Event{}
	for _, c := range []identity.Caller{caller("admin", true), caller("alice", false), caller("bob", false)} {
		ch, _, err := b.Subscribe(c, valid)
		if err != nil {
			t.Fatal(err)
		}
		subs[c.Name] = ch
	}
	b.Publish(Event{Type: "entry", Principal: "alice", Data: "mine"}, nil)
	b.Publish(Event{Type: "server", Data: "full"}, func(c identity.Caller) (any, bool) {
		return "seen by " + c.Name, c.Name == "alice"
	})
	b.PublishEach(Event{Type: "approval", Data: "full"}, func(c identity.Caller) (any, bool) {
		return "for " + c.Name, c.Name != "bob"
	})
	tests := []struct {
		who  string
		want []string
	}{
		{"admin", []string{`"full"`, `"for admin"`}},
		{"alice", []string{`"mine"`, `"seen by alice"`, `"for alice"`}},
		{"bob", nil},
	}
	for _, tt := range tests {
		var got []string
		for len(subs[tt.who]) > 0 {
			got = append(got, string((<-subs[tt.who]).JSON))
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[len(got)-1] != tt.want[len(tt.want)-1]) {
			t.Errorf("%s got %v, want %v", tt.who, got, tt.want)
		}
	}
}

// TestSubscribeBounds: the bounds per principal and in total, a revoked
// caller, Revoke and Close.
func TestSubscribeBounds(t *testing.T) {
	b := &Bus{Max: 3, MaxPerPrincipal: 2}
	var tm *TooManySubscribersError
	for range 2 {
		if _, _, err := b.Subscribe(caller("alice", false), valid); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := b.Subscribe(caller("alice", false), valid); !errors.As(err, &tm) || !tm.PerPrincipal {
		t.Fatalf("alice's third stream: %v", err)
	}
	bob, _, err := b.Subscribe(caller("bob", false), valid)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Subscribe(caller("carol", false), valid); !errors.As(err, &tm) || tm.PerPrincipal {
		t.Fatalf("a stream past the total: %v", err)
	}
	if _, _, err := b.Subscribe(caller("dave", false), func(identity.Caller) bool { return false }); !errors.Is(err, ErrRevoked) {
		t.Fatalf("a revoked caller: %v", err)
	}
	if n := b.Revoke(func(c identity.Caller) bool { return c.Name != "bob" }); n != 1 {
		t.Fatalf("Revoke ended %d streams, want bob's", n)
	}
	if _, ok := <-bob; ok {
		t.Fatal("bob's stream is still open")
	}
	b.Close()
	late, _, err := b.Subscribe(caller("erin", false), valid)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := <-late; ok {
		t.Fatal("a stream opened after Close is open")
	}
}

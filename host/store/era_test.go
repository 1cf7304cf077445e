package store

import (
	"encoding/json"
	"testing"
)

func TestEraVerdicts(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		ctx := t.Context()
		s, reopen := bk.open(t)
		if _, ok, err := s.EraVerdict(ctx, "k"); err != nil || ok {
			t.Fatalf("empty cache: ok=%v err=%v", ok, err)
		}
		if err := s.PutEraVerdict(ctx, "k", json.RawMessage(`{"era":"legacy"}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEraVerdict(ctx, "k", json.RawMessage(`{"era":"modern"}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEraVerdict(ctx, "bad", json.RawMessage(`{`)); err == nil {
			t.Error("invalid JSON stored")
		}
		s.Close()

		s = reopen(t)
		v, ok, err := s.EraVerdict(ctx, "k")
		if err != nil || !ok || string(v) != `{"era":"modern"}` {
			t.Fatalf("after reopen: %s ok=%v err=%v", v, ok, err)
		}
		if err := s.DeleteEraVerdict(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteEraVerdict(ctx, "missing"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.EraVerdict(ctx, "k"); ok {
			t.Error("verdict still there after delete")
		}
	})
}

func TestSetDisplay(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		ctx := t.Context()
		s, _ := bk.open(t)
		sess, err := s.CreateSession(ctx, "alice", "")
		if err != nil {
			t.Fatal(err)
		}
		e := &Entry{SessionID: sess.ID, Principal: "alice", Server: "x", Tool: "y", Status: StatusOK,
			Arguments: json.RawMessage(`{}`), Display: json.RawMessage(`{"type":"mcp_app","html":"<p>x</p>"}`)}
		if err := s.AppendEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDisplay(ctx, "bob", e.ID, json.RawMessage(`{}`)); err != ErrNotFound {
			t.Errorf("another principal: err = %v, want ErrNotFound", err)
		}
		if err := s.SetDisplay(ctx, "alice", e.ID, json.RawMessage(`{`)); err == nil {
			t.Error("invalid JSON accepted")
		}
		if err := s.SetDisplay(ctx, "alice", e.ID, json.RawMessage(`{"type":"mcp_app","html":""}`)); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Entries(ctx, "alice", sess.ID, 0, 10)
		if err != nil || len(got) != 1 || string(got[0].Display) != `{"type":"mcp_app","html":""}` {
			t.Fatalf("entries = %+v, %v", got, err)
		}
	})
}

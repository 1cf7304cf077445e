package store

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestEraVerdicts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "era.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
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

	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
}

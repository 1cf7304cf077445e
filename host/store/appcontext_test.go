package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAppContext(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		sess := mustCreate(t, s, "alice", "apps")
		e := mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
		at := time.Unix(1700000000, 0).UTC()
		if _, err := s.AppContextOf(t.Context(), "alice", e.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("before any update: %v, want ErrNotFound", err)
		}
		for _, tc := range []struct {
			name, principal, entry string
			ctx                    string
			want                   string // substring of the error; "" ⇒ nil
		}{
			{"first", "alice", e.ID, `{"content":[{"type":"text","text":"one"}]}`, ""},
			{"replaced", "alice", e.ID, `{"content":[{"type":"text","text":"two"}]}`, ""},
			{"not JSON", "alice", e.ID, `{`, "not valid JSON"},
			{"too large", "alice", e.ID, `"` + strings.Repeat("x", MaxAppContextBytes) + `"`, "limit"},
			{"another principal's entry", "bob", e.ID, `{}`, "not found"},
			{"no such entry", "alice", "e_0000000000000000", `{}`, "not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := s.SetAppContext(t.Context(), tc.principal, tc.entry, json.RawMessage(tc.ctx), at)
				if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("SetAppContext = %v, want %q", err, tc.want)
				}
			})
		}
		got, err := s.AppContextOf(t.Context(), "alice", e.ID)
		if err != nil || !strings.Contains(string(got.Context), `"two"`) || !got.UpdatedAt.Equal(at) {
			t.Errorf("AppContextOf = %+v, %v; want the last update", got, err)
		}
		if _, err := s.AppContextOf(t.Context(), "bob", e.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("another principal reads it: %v", err)
		}
	})
}

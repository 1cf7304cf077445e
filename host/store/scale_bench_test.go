package store

import (
	"fmt"
	"testing"
)

// seedTranscript adds entries [from, to) straight in SQL, as a transcript
// that grew for a long time: 1,000 entries per session, sessions owned by
// ten principals in turn (p0 … p9), one audit row per entry.
func seedTranscript(tb testing.TB, s *Store, from, to int) {
	tb.Helper()
	ctx := tb.Context()
	series := `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) `
	from2 := "n"
	if s.d.name == "postgres" {
		series, from2 = "", "generate_series(?::bigint, ?::bigint - 1) AS n(i)"
	}
	stmts := []struct {
		sql        string
		start, end int
	}{
		{series + `INSERT INTO sessions (id, principal, title, created_at, updated_at, entries)
SELECT 's_' || i, 'p' || (i % 10), 'session ' || i, i, i, 1000 FROM ` + from2, from / 1000, to / 1000},
		{series + `INSERT INTO entries (id, session_id, seq, call_id, principal, origin, server, tool, arguments, status, result, error, era, protocol_version, started_at, duration_ms, display, trail)
SELECT 'e_' || i, 's_' || (i / 1000), i % 1000 + 1, 'c_' || i, 'p' || ((i / 1000) % 10), 'user', 'fx', 'echo', '{"text":"hello"}', 'ok',
	'{"content":[{"type":"text","text":"hello"}]}', '', 'legacy', '2025-11-25', i, 1.5, 'null', 'null' FROM ` + from2, from, to},
		{series + `INSERT INTO audit (id, at, principal, session_id, entry_id, call_id, origin, server, tool, phase, rule, effect, reason, error, duration_us)
SELECT i + 1, i, 'p' || ((i / 1000) % 10), 's_' || (i / 1000), 'e_' || i, 'c_' || i, 'user', 'fx', 'echo', 'call', 'r1', 'allow', '', FALSE, 12.5 FROM ` + from2, from, to},
	}
	for _, st := range stmts {
		if _, err := s.w.ExecContext(ctx, st.sql, st.start, st.end); err != nil {
			tb.Fatalf("seeding %d..%d: %v", st.start, st.end, err)
		}
	}
	// Statistics, as a database that grew over time has them.
	if _, err := s.w.ExecContext(ctx, `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTranscriptScale reads a page of 50 entries of one session and a
// page of 50 audit rows of one principal as the store grows to 10^4, 10^5
// and 10^6 entries, on SQLite and PostgreSQL. Both are index range scans
// (entries (session_id, seq), audit (principal, id)): the latency must stay
// flat as the store grows.
//
//	CI=1 go test -run '^$' -bench BenchmarkTranscriptScale -benchtime 2000x ./host/store/
func BenchmarkTranscriptScale(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			s, _ := be.open(b)
			have := 0
			for _, n := range []int{10_000, 100_000, 1_000_000} {
				seedTranscript(b, s, have, n)
				have = n
				session := n / 1000 / 2 // one in the middle
				principal := fmt.Sprintf("p%d", session%10)
				sessionID := fmt.Sprintf("s_%d", session)
				b.Run(fmt.Sprintf("entries=%d/entries-page", n), func(b *testing.B) {
					for b.Loop() {
						page, _, err := s.Entries(b.Context(), principal, sessionID, 500, 50)
						if err != nil || len(page) != 50 || page[0].Seq != 501 {
							b.Fatalf("entries page: %d entries, %v", len(page), err)
						}
					}
				})
				b.Run(fmt.Sprintf("entries=%d/audit-page", n), func(b *testing.B) {
					before := int64(session+1) * 1000 // the end of that session's rows
					for b.Loop() {
						page, err := s.AuditLog(b.Context(), principal, before, 50)
						if err != nil || len(page) != 50 {
							b.Fatalf("audit page: %d rows, %v", len(page), err)
						}
					}
				})
			}
		})
	}
}

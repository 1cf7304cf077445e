package store

import (
	"context"
	"testing"
)

// TestAudit checks that an entry's decisions land in the audit log with the
// entry, that decisions without an entry can be added, that the log is
// per principal (every principal's for an admin) and newest first, and
// that it survives a reopen.
func TestAudit(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		ctx := context.Background()
		s, reopen := bk.open(t)
		sess := mustCreate(t, s, "alice", "")
		e := sampleEntry(sess.ID, "alice", 1)
		e.Status = StatusDenied
		e.Error = "writes outside /srv/data are not allowed"
		e.Audit = []Audit{{Origin: "user", Server: "files", Tool: "write_file", Phase: "call", Rule: "no-writes", Effect: "deny", Reason: "rule no-writes matched", DurationUs: 2.5}}
		mustAppend(t, s, e)
		if err := s.AppendAudit(ctx, Audit{Principal: "alice", Origin: "api", Server: "files", Op: "resources/read", Tool: "secret", Phase: "list", Rule: "hide", Effect: "deny", Reason: "rule hide matched"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendAudit(ctx, Audit{Principal: "bob", Origin: "api", Server: "files", Tool: "x", Phase: "call", Effect: "deny", Reason: "default deny", Error: false}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)
		log, err := s.AuditLog(ctx, "alice", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 2 {
			t.Fatalf("alice has %d audit records, want 2: %+v", len(log), log)
		}
		if log[0].Tool != "secret" || log[0].Op != "resources/read" || log[1].Op != "" || log[0].EntryID != "" || log[1].EntryID != e.ID || log[1].SessionID != sess.ID || log[1].Rule != "no-writes" || log[1].DurationUs != 2.5 {
			t.Errorf("audit log = %+v", log)
		}
		older, err := s.AuditLog(ctx, "alice", log[0].ID, 10)
		if err != nil || len(older) != 1 || older[0].ID != log[1].ID {
			t.Errorf("page before %d = %+v, %v", log[0].ID, older, err)
		}
		if got, _ := s.AuditLog(ctx, "carol", 0, 0); len(got) != 0 {
			t.Errorf("carol sees %+v", got)
		}
		// Every principal's, for an admin: newest first, paged alike.
		all, err := s.AuditLogAll(ctx, 0, 0)
		if err != nil || len(all) != 3 || all[0].Principal != "bob" || all[1].ID != log[0].ID {
			t.Errorf("every record = %+v, %v", all, err)
		}
		if page, err := s.AuditLogAll(ctx, all[0].ID, 1); err != nil || len(page) != 1 || page[0].ID != all[1].ID {
			t.Errorf("a page of every record = %+v, %v", page, err)
		}
	})
}

package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

// TestClusterApprovers: an approval whose rule names approvers, raised by
// alice's call on replica A, is listed on replica B for the approver
// carol (hers to answer) and for an admin (not his), heard there by both,
// and refused there to alice herself (ErrNotApprover, on A too) and to
// bob (not found); carol's answer on B runs the call on A, and the end
// reaches carol's stream on B.
func TestClusterApprovers(t *testing.T) {
	_, dsn := clusterDB(t)
	src := strings.Replace(policySet, `message = "Write it?"`, `message = "Write it?"
  approvers = ["security"]`, 1) + `
principal "alice" {
  token  = "alice-0123456789abcdef"
  groups = ["writers"]
}
principal "bob" {
  token = "bob-0123456789abcdefgh"
}
principal "carol" {
  token  = "carol-0123456789abcdef"
  groups = ["security"]
}
`
	cfg, diags := config.Parse([]byte(src), "policies.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{remoteServer("files", config.TransportStreamableHTTP, policyServer(t))}
	a := startReplica(t, dsn, "A", cfg, host.Options{})
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{})
	carol := host.Caller{Principal: host.Principal{Name: "carol", Groups: []string{"security"}}}
	admin := host.Caller{Principal: host.Principal{Name: "root"}, Admin: true}
	carolEvents, stopCarol, err := b.h.Subscribe(carol)
	if err != nil {
		t.Fatal(err)
	}
	defer stopCarol()
	adminEvents, stopAdmin, err := b.h.Subscribe(admin)
	if err != nil {
		t.Fatal(err)
	}
	defer stopAdmin()

	type result struct {
		e   *store.Entry
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := sessionCall(t, a.h, alice, "write", `{"path":"/srv/a"}`)
		done <- result{e, err}
	}()
	ap := waitEvent(t, carolEvents, host.EventApproval).Data.(host.Approval)
	if ap.Principal != "alice" || strings.Join(ap.Approvers, ",") != "security" {
		t.Fatalf("the approval carol hears on B: %+v", ap)
	}
	if got := waitEvent(t, adminEvents, host.EventApproval).Data.(host.Approval); got.ID != ap.ID {
		t.Fatalf("the admin hears %+v", got)
	}
	for _, tc := range []struct {
		name      string
		c         host.Caller
		canAnswer bool
	}{{"carol", carol, true}, {"the admin", admin, false}, {"alice", host.Caller{Principal: alice}, false}} {
		if got := b.h.ApprovalsFor(tc.c); len(got) != 1 || got[0].ID != ap.ID || got[0].CanAnswer != tc.canAnswer {
			t.Errorf("B lists for %s: %+v, want %s with canAnswer %v", tc.name, got, ap.ID, tc.canAnswer)
		}
	}
	if got := b.h.PendingApprovals(bob); len(got) != 0 {
		t.Errorf("B lists for bob: %+v", got)
	}
	for _, r := range []replica{a, b} {
		if err := r.h.Answer(alice, ap.ID, true); !errors.Is(err, host.ErrNotApprover) {
			t.Errorf("alice approves her own call: %v, want ErrNotApprover", err)
		}
	}
	if err := b.h.AnswerApproval(admin, ap.ID, true); !errors.Is(err, host.ErrNotApprover) {
		t.Errorf("the admin approves: %v, want ErrNotApprover", err)
	}
	if err := b.h.Answer(bob, ap.ID, true); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("bob approves: %v, want ErrNotFound", err)
	}
	if err := b.h.AnswerApproval(carol, ap.ID, true); err != nil {
		t.Fatalf("carol's answer on B: %v", err)
	}
	if r := <-done; r.err != nil || r.e.Status != store.StatusOK || trailOf(t, r.e).Approval != host.ApprovalApproved {
		t.Fatalf("the call on A: %v %+v", r.err, r.e)
	}
	if d := waitEvent(t, carolEvents, host.EventApprovalDone).Data.(host.ApprovalDone); d.ID != ap.ID || d.Outcome != host.ApprovalApproved {
		t.Errorf("the end carol hears on B: %+v", d)
	}
}

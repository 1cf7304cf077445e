//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/internal/pgserver"
)

// TestClusterSmoke runs the cluster run in its smallest configuration: a
// PostgreSQL of its own, two replicas behind the round-robin balancer, two
// short load steps and a 40-second soak in which replica b is killed and
// started again and PostgreSQL is restarted. It checks that the run passed
// its own checks (no call failed outside a fault, nothing acknowledged
// lost, replica a flat) and that both faults and their recovery were
// recorded. It asserts no timing.
func TestClusterSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two replicas and PostgreSQL for about a minute")
	}
	if err := pgserver.Installed(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI is set: the cluster smoke test must not be skipped)", err)
		}
		t.Skip(err)
	}
	out := t.TempDir()
	args := []string{"-cluster", "-short", "-out", out}
	res, _ := runTool(t, out, args)
	cl := res.Cluster
	if !res.Pass || cl == nil || len(cl.Replicas) != 2 {
		t.Fatalf("pass = %v, failures %q, cluster %+v", res.Pass, res.Failures, cl)
	}
	if len(cl.Faults) != 2 || cl.FailuresOutside != 0 || cl.Orphans != 0 || cl.LiveSessionsLost != 0 {
		t.Errorf("faults %+v, %d failures outside them, %d orphans, %d sessions of replica a lost; want the replica's and PostgreSQL's, none outside, none left, none lost",
			cl.Faults, cl.FailuresOutside, cl.Orphans, cl.LiveSessionsLost)
	}
	for _, f := range cl.Faults {
		if f.EndS <= f.AtS || f.RecoveredS < f.EndS {
			t.Errorf("fault %+v: want it over after it began, and recovered after that", f)
		}
	}
	gt := res.GatewayTranscript
	if gt == nil || gt.Acknowledged < res.Soak.Calls || gt.Lost != 0 || gt.Found != gt.Acknowledged || gt.Duplicates != 0 {
		t.Errorf("the transcript through the balancer: %+v; want every acknowledged call found once", gt)
	}
	if res.Load == nil || len(res.Load.Steps) != 2 {
		t.Fatalf("load steps: %+v", res.Load)
	}
	for _, s := range res.Load.Steps {
		if s.Host.Calls == 0 || s.Host.ReplicasCPUPerCallUs <= 0 || s.Host.PostgresCPUPerCallUs <= 0 || s.Host.RoundTripsPerCall <= 0 {
			t.Errorf("step %d through the cluster: %d calls, replicas %v µs, PostgreSQL %v µs, %v round trips per call; want all measured",
				s.Concurrency, s.Host.Calls, s.Host.ReplicasCPUPerCallUs, s.Host.PostgresCPUPerCallUs, s.Host.RoundTripsPerCall)
		}
	}
	for _, name := range []string{"replica-a.log", "replica-b.log", "config.hcl", "soak.csv"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

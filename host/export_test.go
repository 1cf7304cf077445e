package host

import (
	"context"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
)

// SetQuestionSweepEvery makes the sweep of dead replicas' questions run
// every d for the rest of the test (host tests do not run in parallel).
func SetQuestionSweepEvery(t testing.TB, d time.Duration) {
	old := questionSweepEvery
	questionSweepEvery = d
	t.Cleanup(func() { questionSweepEvery = old })
}

// The event kinds, the relay's audit phase and limits, for the external
// tests (the doors never name them: the API streams them as strings).
const (
	EventServer                       = eventServer
	EventCallStarted                  = eventCallStarted
	EventEntry                        = eventEntry
	EventProgress                     = eventProgress
	EventConfig                       = eventConfig
	EventApproval                     = eventApproval
	EventApprovalDone                 = eventApprovalDone
	EventElicitation                  = eventElicitation
	EventElicitationDone              = eventElicitationDone
	PhaseRelay                        = phaseRelay
	DefaultMaxSubscribersPerPrincipal = defaultMaxSubscribersPerPrincipal
	MaxGatewayToolName                = maxGatewayToolName
)

// CallProgress is the data of an EventProgress.
type CallProgress = callProgress

// The host's own counters and steps, for the external tests.
func (h *Host) CompactApps(ctx context.Context) (int, error) { return h.compactApps(ctx) }
func (h *Host) FanIn() fanInStats                            { return h.fanIn() }
func (h *Host) CacheStats() cache.Stats                      { return h.cacheStats() }
func (h *Host) PlanReload(cfg *config.Config) ReloadPlan     { return h.planReload(cfg) }
func (h *Host) WaitListening(ctx context.Context) error      { return h.waitListening(ctx) }

// RelayPath is where a replica serves its singleton servers to the others.
const RelayPath = upstream.RelayPath
